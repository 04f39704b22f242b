#!/usr/bin/env bash
# The test command: sets everything up (scripts/setup.sh), then runs the Rust unit tests of the
# on-chain math, the type check, the format and lint checks (scripts/lint.sh), and every vitest
# suite against the compiled programs (bankrun and LiteSVM), ending with one plain
# "N passed, N failed" line.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo test --quiet --workspace
npx tsc --noEmit -p .
bash scripts/lint.sh
mkdir -p target
status=0
npx vitest run --reporter=default --reporter=json --outputFile=target/vitest-report.json "$@" || status=$?
# One plain closing line for tools that do not read vitest's summary.
node -e 'const r = require("./target/vitest-report.json"); console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests} skipped`)' || true
exit $status
