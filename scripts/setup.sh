#!/usr/bin/env bash
# Everything the project needs, idempotently: toolchain (apt + sbpf-linker), npm packages,
# compiled programs. Quick when already present.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
bash scripts/setup-toolchain.sh
# `npm install`, not `npm ci`: npm 11 leaves other platforms' optional packages (litesvm-darwin-*,
# rollup-android-*) out of the lock file, and `npm ci` then refuses the lock as out of sync.
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ] || [ package.json -nt node_modules/.package-lock.json ]; then
  npm install --no-audit --no-fund
fi
# better-sqlite3 is compiled from source (no prebuilt download here); npm 11 runs its install
# script only because package.json's allowScripts lists it. Verify the binding loads.
node -e "require('better-sqlite3')" 2>/dev/null || npm rebuild better-sqlite3
# The validator suites (tests/rpc) run wherever the prebuilt binary of ../shared/tools is at hand
# (CI has it): unpacking takes seconds. Without it the 35-45 minute build is left to
# `npm run test:rpc`, and those suites report themselves skipped.
if ls ../shared/tools/solana-test-validator-*-x86_64-linux.xz >/dev/null 2>&1; then
  bash scripts/setup-test-validator.sh
fi
# schemathesis (PyPI) fuzzes the REST API against docs/openapi.json in tests/api/schemathesis.test.ts.
SCHEMATHESIS_VERSION=4.32.5
if [ "$(schemathesis --version 2>/dev/null)" != "schemathesis, version $SCHEMATHESIS_VERSION" ]; then
  python3 -m pip install --quiet "schemathesis==$SCHEMATHESIS_VERSION"
fi
npx tsx scripts/gen-idl.ts --check
bash scripts/build-programs.sh
echo "setup: ready in $(( $(date +%s) - started )) s"
