#!/usr/bin/env bash
# Builds every on-chain program for the upstream BPF target and links it to SBPF v0 with
# sbpf-linker, then checks each .so (scripts/check-sbf.sh). Output: target/deploy/<name>.so.
# Uses Debian's rustc-web/cargo-web (1.96, LLVM 22), never the rustup toolchain.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/bin:${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
export RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1
mkdir -p target/deploy
programs=("$@")
[ ${#programs[@]} -gt 0 ] || programs=(offers pools)
for prog in "${programs[@]}"; do
  [ -d "programs/$prog" ] || continue
  /usr/bin/cargo build --quiet --release --target bpfel-unknown-none -Z build-std=core,alloc \
    -p "$prog" --features bpf-entrypoint
  cp "target/bpfel-unknown-none/release/lib$prog.so" "target/deploy/$prog.so"
  bash scripts/check-sbf.sh "target/deploy/$prog.so"
done
