#!/usr/bin/env bash
# Installs what building the on-chain programs needs (and the browser tests' chromium), without Solana's downloadable
# platform-tools: Debian's rustc-web (1.96, LLVM 22) with core/alloc sources, LLVM 22,
# and sbpf-linker 0.1.9 built against that LLVM. Idempotent; a warm machine returns in
# well under a second.
set -euo pipefail

APT_PKGS=(rustc-web cargo-web rust-web-src llvm-22 llvm-22-dev)
# The browser suites (share pages, GraphiQL) drive Debian's chromium through playwright-core:
# Playwright's own browser download is not available here.
APT_PKGS+=(chromium)
LINKER_VERSION=0.1.9

missing=()
for p in "${APT_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup-toolchain: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

CARGO_BIN="${CARGO_HOME:-$HOME/.cargo}/bin"
# `sbpf-linker --version` prints on stderr and exits non-zero, hence the capture.
installed=$("$CARGO_BIN/sbpf-linker" --version 2>&1 || true)
if [[ "$installed" != *"sbpf-linker $LINKER_VERSION"* ]]; then
  echo "setup-toolchain: building sbpf-linker $LINKER_VERSION (a few minutes, once)"
  # The host build uses whichever cargo is first on PATH; LLVM is found through LLVM_PREFIX.
  LLVM_PREFIX=/usr/lib/llvm-22 LLVM_SYS_221_PREFIX=/usr/lib/llvm-22 \
    cargo install --locked sbpf-linker --version "$LINKER_VERSION" \
      --no-default-features --features upstream-gallery-22
fi
