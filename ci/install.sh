#!/usr/bin/env bash
# Installs gauntlet for the composite action (action.yml): a release's binary, checked
# against the release's SHA-256, or a build of the action's own source when the action is
# used at a commit that is not a release.
#
#   ci/install.sh plan                 what to install: key=value lines for GITHUB_OUTPUT
#   ci/install.sh release VERSION DIR  download the release archive for this machine, check
#                                      its SHA-256, put the binary in DIR/bin
#   ci/install.sh source DIR           cargo install the action's source into DIR/bin
#
# `plan` reads (all optional):
#   INPUT_VERSION   ''       the release of the action's own version tag (uses: ...@v0.2.0 or
#                            @v0), else a build of the action's source
#                   X.Y.Z    that release (also vX.Y.Z); a missing one is an error
#                   source   always a build of the action's source
#   ACTION_REF      the ref the action is used at (github.action_ref)
#   RUNNER_OS, RUNNER_ARCH, RUNNER_TOOL_CACHE   set by GitHub Actions
# and prints `how` (release or source), `version`, `strict` (true when the version was
# asked for by name: no fallback to a build), `key` (the cache key: version or source hash,
# OS and architecture) and `dir` (where the binary goes, under DIR/bin).
#
# `release` reads GAUNTLET_RELEASES (the download base URL, default GitHub's for this
# repository) and GAUNTLET_TARGET (the target triple, default this machine's).
# Exit codes: 0 done; 1 the release or its archive for this machine is not there (a build
# may stand in); 2 usage; 3 the archive does not match its checksum (never fall back: the
# download is not what was released).
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
releases="${GAUNTLET_RELEASES:-https://github.com/gauntlet-dev/gauntlet/releases/download}"

die() {
  echo "install: $2" >&2
  exit "$1"
}

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$@"
  else
    shasum -a 256 "$@"
  fi
}

# The workspace version in the action's own Cargo.toml.
own_version() {
  sed -n '/^\[workspace\.package\]/,/^\[/s/^version *= *"\([^"]*\)".*/\1/p' "$here/Cargo.toml" | head -n 1
}

# The Rust target triple of the release archive this machine runs.
target_triple() {
  if [ -n "${GAUNTLET_TARGET:-}" ]; then
    echo "$GAUNTLET_TARGET"
    return
  fi
  local os="${RUNNER_OS:-$(uname -s)}" arch="${RUNNER_ARCH:-$(uname -m)}"
  case "$arch" in
    X64|x86_64|amd64) arch=x86_64 ;;
    ARM64|arm64|aarch64) arch=aarch64 ;;
    *) die 1 "no release archive for the $arch architecture" ;;
  esac
  case "$os" in
    Linux) echo "$arch-unknown-linux-musl" ;;
    macOS|Darwin) echo "$arch-apple-darwin" ;;
    # The x86_64 build also runs on Windows on Arm, emulated.
    Windows|MINGW*|MSYS*|CYGWIN*) echo "x86_64-pc-windows-msvc" ;;
    *) die 1 "no release archive for $os" ;;
  esac
}

# A hash of what a source build compiles, so a cached build is reused only for the same code.
source_hash() {
  (cd "$here" && find Cargo.toml Cargo.lock crates -type f -print0 | LC_ALL=C sort -z \
    | xargs -0 cat | sha256 | cut -c1-16)
}

plan() {
  local want="${INPUT_VERSION:-}" ref="${ACTION_REF:-}" how version="" strict=false key
  want="${want#v}"
  if [ "$want" = source ]; then
    how=source
  elif [ -n "$want" ]; then
    [[ "$want" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.]+)?$ ]] \
      || die 2 "version is X.Y.Z, vX.Y.Z or source, not '$INPUT_VERSION'"
    how=release version="$want" strict=true
  else
    # At a version tag the action's source is that release, so the release's binary is the
    # same program; a moving major tag (v0, v1.2) names the release its Cargo.toml says.
    local own
    own="$(own_version)"
    ref="${ref#v}"
    how=source
    if [[ "$ref" =~ ^[0-9]+(\.[0-9]+){0,2}(-[0-9A-Za-z.]+)?$ ]] \
      && { [ "$own" = "$ref" ] || [[ "$own" == "$ref".* ]]; }; then
      how=release version="$own"
    fi
  fi
  local os="${RUNNER_OS:-$(uname -s)}" arch="${RUNNER_ARCH:-$(uname -m)}"
  if [ "$how" = release ]; then
    key="gauntlet-v$version-$os-$arch"
  else
    key="gauntlet-src-$(source_hash)-$os-$arch"
  fi
  local base="${RUNNER_TOOL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}}"
  echo "how=$how"
  echo "version=$version"
  echo "strict=$strict"
  echo "key=$key"
  echo "dir=$base/gauntlet/$key"
}

release() {
  local version="${1#v}" dir="$2" triple
  triple="$(target_triple)"
  local name="gauntlet-v$version-$triple" ext=tar.gz
  case "$triple" in *windows*) ext=zip ;; esac
  local url="$releases/v$version/$name.$ext"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  echo "install: downloading $url" >&2
  curl -fsSL --retry 3 -o "$tmp/$name.$ext" "$url" \
    || die 1 "gauntlet v$version has no archive for $triple at $url"
  curl -fsSL --retry 3 -o "$tmp/$name.$ext.sha256" "$url.sha256" \
    || die 1 "gauntlet v$version has no checksum file at $url.sha256"
  local want got
  want="$(tr -d '\r' < "$tmp/$name.$ext.sha256" | cut -d' ' -f1 | tr 'A-F' 'a-f')"
  got="$(sha256 "$tmp/$name.$ext" | cut -d' ' -f1)"
  [[ "$want" =~ ^[0-9a-f]{64}$ ]] || die 3 "$url.sha256 holds no SHA-256"
  [ "$want" = "$got" ] \
    || die 3 "$name.$ext has SHA-256 $got, but the release says $want: not installed"
  echo "install: SHA-256 $got matches the release's" >&2
  if [ "$ext" = zip ]; then
    if command -v unzip >/dev/null 2>&1; then
      unzip -q "$tmp/$name.$ext" -d "$tmp"
    else
      7z x -y -o"$tmp" "$tmp/$name.$ext" >/dev/null
    fi
  else
    tar -xzf "$tmp/$name.$ext" -C "$tmp"
  fi
  local exe=gauntlet
  [ "$ext" = zip ] && exe=gauntlet.exe
  [ -f "$tmp/$name/$exe" ] || die 1 "$name.$ext holds no $name/$exe"
  mkdir -p "$dir/bin"
  cp "$tmp/$name/$exe" "$dir/bin/$exe"
  chmod +x "$dir/bin/$exe"
}

source_build() {
  local dir="$1"
  command -v cargo >/dev/null 2>&1 \
    || die 2 "building gauntlet from source needs cargo (dtolnay/rust-toolchain), or pin a release with the action's version input"
  echo "install: building gauntlet from the action's source (cargo install --profile dist)" >&2
  cargo install --locked --profile dist --features mcp,otel --root "$dir" --path "$here/crates/gauntlet"
}

case "${1:-}" in
  plan) plan ;;
  release)
    [ "$#" -eq 3 ] || die 2 "usage: ci/install.sh release VERSION DIR"
    release "$2" "$3"
    ;;
  source)
    [ "$#" -eq 2 ] || die 2 "usage: ci/install.sh source DIR"
    source_build "$2"
    ;;
  *) die 2 "usage: ci/install.sh plan | release VERSION DIR | source DIR" ;;
esac
