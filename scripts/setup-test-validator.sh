#!/usr/bin/env bash
# Builds `solana-test-validator` from the agave-validator crate on crates.io, for the indexer's RPC
# suite (tests/rpc). Solana's release binaries are not downloadable here, so it is compiled:
# about 930 crates including RocksDB, protoc and jemalloc from C/C++ sources. On this 2-core
# machine that takes long (see README, "RPC source"), so the ordinary test command does not run
# this; `npm run test:rpc` does, and later runs find the binary and return at once.
#
# Where it goes: $AGAVE_ROOT (default ~/.cache/offers-tools/agave-<version>), its bin/ holds the
# binary. The build directory is kept beside it so an interrupted build resumes.
set -euo pipefail

AGAVE_VERSION="${AGAVE_VERSION:-4.2.2}"
AGAVE_ROOT="${AGAVE_ROOT:-$HOME/.cache/offers-tools/agave-$AGAVE_VERSION}"
BIN="$AGAVE_ROOT/bin/solana-test-validator"

if [ -x "$BIN" ] && "$BIN" --version >/dev/null 2>&1; then
  [ "${1:-}" = "--print-path" ] && echo "$BIN"
  exit 0
fi

# bindgen (RocksDB bindings) needs libclang; the C/C++ dependencies need a compiler, make, cmake.
APT_PKGS=(clang libclang-dev cmake make g++ pkg-config libssl-dev zlib1g-dev)
missing=()
for p in "${APT_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup-test-validator: installing ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

echo "setup-test-validator: building solana-test-validator $AGAVE_VERSION into $AGAVE_ROOT (long, once)" >&2
mkdir -p "$AGAVE_ROOT"
start=$(date +%s)
# The machine's rustup toolchain (not Debian's rustc-web, which is only for the BPF target).
CARGO_TARGET_DIR="$AGAVE_ROOT/build" \
  cargo install --locked agave-validator --version "$AGAVE_VERSION" \
    --bin solana-test-validator --root "$AGAVE_ROOT" >&2
echo "setup-test-validator: built in $(( $(date +%s) - start )) s" >&2
[ "${1:-}" = "--print-path" ] && echo "$BIN"
exit 0
