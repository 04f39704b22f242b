#!/usr/bin/env bash
# The house's format and lint checks, run by the test command before the suites: prettier and
# eslint (typescript-eslint's recommended rules) for the TypeScript, rustfmt and clippy for the
# programs (host target, warnings are errors). `npm run format` rewrites what prettier and
# rustfmt would change.
set -euo pipefail
cd "$(dirname "$0")/.."
npx prettier --check --log-level warn .
npx eslint --max-warnings 0 .
cargo fmt --all --check
cargo clippy --quiet --workspace --all-targets -- -D warnings
echo "lint: ok"
