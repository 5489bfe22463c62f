#!/usr/bin/env bash
# The live red-team run of docs/redteam.md ("A live run against a local model"), against any
# OpenAI-compatible server: attacks generated from an agent card by the model, run against
# the personas and the model; a slice of the built-in red team; a tree of attacks with the
# model as its own attacker; the corpus aimed at a suite's own tools. Not run in CI.
#
#   bench/live-redteam.sh BASE_URL [MODEL] [OUT]
#   bench/live-redteam.sh http://127.0.0.1:8080/v1 smollm2 live-out
#
# BASE_URL is the server's OpenAI base (ending in /v1); MODEL defaults to smollm2 (the name
# bench/local-llm.sh serves); OUT (default: live-redteam-out) receives each step's files,
# its terminal output (*.log) and its wall time. Uses `gauntlet` from PATH, or $GAUNTLET.
# Each run's exit code is printed, not fatal: a red run is a result here.
set -uo pipefail
BASE_URL=${1:?usage: bench/live-redteam.sh BASE_URL [MODEL] [OUT]}
MODEL=${2:-smollm2}
OUT=${3:-live-redteam-out}
G=${GAUNTLET:-gauntlet}
REPO=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
cd "$OUT"

# One named target for both sides (the agent under test and the attacker), and the same
# model sampling at temperature 1 as a tree's attacker (at 0 its branches are one prompt).
cat > gauntlet.yaml <<EOF
targets:
  local:
    kind: openai
    model: $MODEL
    base_url: $BASE_URL
    temperature: 0
    seed: 7
    max_tokens: 256
  local-hot:
    kind: openai
    model: $MODEL
    base_url: $BASE_URL
    temperature: 1.0
    seed: 7
    max_tokens: 256
EOF

step() { # NAME COMMAND...
  local name=$1
  shift
  local start ms
  start=$(date +%s%N)
  "$@" > "$name.log" 2>&1
  local rc=$?
  ms=$((($(date +%s%N) - start) / 1000000))
  printf '%-16s exit %d  %d.%d s\n' "$name" "$rc" $((ms / 1000)) $((ms % 1000 / 100))
}

# Slow servers: a trial may wait for the server's slots, so the per-trial limit is raised.
SLOW=(--timeout-ms 600000)

step generate "$G" redteam generate --suite "$REPO/examples/support-agent/suite.yaml" \
  --attacker local --n 6 --seed 1 -o attacks.yaml --force
step validate "$G" validate attacks.yaml
step audit "$G" audit attacks.yaml
step run-safe "$G" run attacks.yaml -t fake:safe --out run-safe
step run-vulnerable "$G" run attacks.yaml -t fake:vulnerable --out run-vulnerable
step run-model "$G" run attacks.yaml -t local -j 4 "${SLOW[@]}" -v --out run-model
step redteam-leakage "$G" redteam -t local --framework atlas:AML.T0057 --seed 7 -j 4 \
  "${SLOW[@]}" -v --out redteam-leakage
step tree-harm "$G" run builtin:harm --filter 'id:harm-vcr-*' --strategy tree --attacker local \
  -t local --max-turns 2 --max-attack-calls 6 --seed 7 -j 3 "${SLOW[@]}" -v --out tree-harm
step tree-hot "$G" run builtin:harm --filter 'id:harm-vcr-torture' --strategy tree \
  --attacker local-hot -t local --max-turns 2 --max-attack-calls 8 --seed 7 "${SLOW[@]}" -v \
  --out tree-hot
step own-tools "$G" redteam --suite "$REPO/examples/redteam-own-tools/suite.yaml" -t local \
  --filter 'tag:retargeted' --sample 6 --seed 7 -j 2 "${SLOW[@]}" -v --out own-tools

echo "Read: attacks.yaml (each case's comment says who wrote its text), the *.log files,"
echo "and each folder's report.html (the tree of attacks is drawn under its trial)."
