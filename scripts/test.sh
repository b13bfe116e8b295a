#!/usr/bin/env bash
# The test command (README, CI): set-up, then format, lint, typecheck, unit tests, and integration
# tests against a real Kafka broker and a real ClickHouse server that the runner starts and stops.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/setup.sh
step() { printf '\n== %s\n' "$*" >&2; }

# The three static checks are single-threaded and independent: lint on one core, typecheck then
# format on the other (this machine has two), each one's output printed in one piece, in a fixed
# order. The unit tests run after them, alone: several of them time real threads and timers, and a
# lint beside them made one fail. Every check always runs, so one run reports every kind of
# failure; the integration tests start only when all passed.
shopt -s globstar nullglob
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
checks=(lint typecheck format unit)
run_check() {
  case "$1" in
  format) npx prettier --check . --log-level warn ;;
  lint) npx eslint . --max-warnings 0 ;;
  typecheck) npx tsc -p tsconfig.json --noEmit ;;
  unit) node --import tsx --test --test-concurrency=2 test/unit/**/*.test.ts ;;
  esac
}
check() {
  local rc=0
  run_check "$1" >"$logs/$1.log" 2>&1 || rc=$?
  echo "$rc" >"$logs/$1.rc"
}
step "lint beside typecheck and format, then unit tests"
check lint &
(check typecheck; check format) &
wait
check unit
failed=()
for c in "${checks[@]}"; do
  step "$c"
  cat "$logs/$c.log" >&2
  [ "$(cat "$logs/$c.rc")" = 0 ] || failed+=("$c")
done
if [ ${#failed[@]} -gt 0 ]; then
  step "failed: ${failed[*]}"
  exit 1
fi
step "integration tests (real Kafka, real ClickHouse)"
node --import tsx scripts/run-integration-tests.ts "$@"
