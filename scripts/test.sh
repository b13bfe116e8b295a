#!/usr/bin/env bash
# The test command (README, CI): set-up, then format, lint, typecheck, unit tests, and integration
# tests against a real Kafka broker and a real ClickHouse server that the runner starts and stops.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/setup.sh
step() { printf '\n== %s\n' "$*" >&2; }
step "format"; npx prettier --check . --log-level warn
step "lint"; npx eslint . --max-warnings 0
step "typecheck"; npx tsc -p tsconfig.json --noEmit
step "unit tests"
shopt -s globstar nullglob
node --import tsx --test --test-concurrency=2 test/unit/**/*.test.ts
step "integration tests (real Kafka, real ClickHouse)"
node --import tsx scripts/run-integration-tests.ts "$@"
