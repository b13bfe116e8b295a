#!/usr/bin/env bash
# The test command (README, CI): set-up, then format, lint, typecheck, unit tests, and integration
# tests against a real Kafka broker and a real ClickHouse server that the runner starts and stops.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/setup.sh
step() { printf '\n== %s\n' "$*" >&2; }

# The four static checks are single-threaded and independent: run them two at a time (this machine
# has two cores) and print each one's output in one piece, in a fixed order. All four always run,
# so one run reports every kind of failure; the integration tests start only when all passed.
shopt -s globstar nullglob
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
checks=(lint unit typecheck format) # longest first
run_check() {
  case "$1" in
  format) npx prettier --check . --log-level warn ;;
  lint) npx eslint . --max-warnings 0 ;;
  typecheck) npx tsc -p tsconfig.json --noEmit ;;
  unit) node --import tsx --test --test-concurrency=2 test/unit/**/*.test.ts ;;
  esac
}
step "format, lint, typecheck, unit tests (two at a time)"
for c in "${checks[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n || true; done
  (
    rc=0
    run_check "$c" >"$logs/$c.log" 2>&1 || rc=$?
    echo "$rc" >"$logs/$c.rc"
  ) &
done
wait
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
