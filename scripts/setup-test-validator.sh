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

# The prebuilt binary of ../shared/tools (same crate, same version, built on this machine kind by
# this script, then stripped) saves the 35-45 minute build wherever the steering folder sits
# beside the clone, as in CI. Its checksum is checked; the build below stays the fallback.
PREBUILT="${PREBUILT_VALIDATOR:-$(cd "$(dirname "$0")/.." && pwd)/../shared/tools/solana-test-validator-$AGAVE_VERSION-x86_64-linux.xz}"
PREBUILT_SHA256=1c951396fd4985a6b3514b291cd2fe9eb1762cf2b6680133a95268065a43708a
if [ -f "$PREBUILT" ] && [ "$AGAVE_VERSION" = 4.2.2 ] && [ "$(uname -m)" = x86_64 ]; then
  mkdir -p "$AGAVE_ROOT/bin"
  xz -dc "$PREBUILT" > "$BIN.tmp"
  if [ "$(sha256sum "$BIN.tmp" | cut -d' ' -f1)" = "$PREBUILT_SHA256" ]; then
    chmod +x "$BIN.tmp" && mv "$BIN.tmp" "$BIN"
    if "$BIN" --version >/dev/null 2>&1; then
      echo "setup-test-validator: unpacked the prebuilt $AGAVE_VERSION from $PREBUILT" >&2
      [ "${1:-}" = "--print-path" ] && echo "$BIN"
      exit 0
    fi
  fi
  echo "setup-test-validator: prebuilt binary unusable (checksum or start), building instead" >&2
  rm -f "$BIN.tmp" "$BIN"
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
