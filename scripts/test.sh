#!/usr/bin/env bash
# The test command (README, CI): set-up, then format, lint, typecheck, unit tests, and integration
# tests against a real Kafka broker and a real ClickHouse server that the runner starts and stops.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
began=$(date +%s)
phase_start=$began
timings=()
# Each phase's wall time, printed again at the end so that a slow run says where its time went.
phase_done() {
  local now
  now=$(date +%s)
  timings+=("$(printf '%5d s  %s' $((now - phase_start)) "$1")")
  phase_start=$now
}
print_timings() {
  printf '\n== wall time by phase (%d s in all)\n' $(($(date +%s) - began)) >&2
  printf '%s\n' "${timings[@]}" >&2
}
bash scripts/setup.sh
phase_done setup
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
  unit) unit_tests ;;
  esac
}
# The unit test files in three processes (scripts/unit-shard.ts), not one each: a process per file
# spent more time starting node and compiling the modules under test than running the tests.
unit_tests() {
  local files=(test/unit/**/*.test.ts) pids=() rc=0 i
  for i in 0 1 2; do
    node --import tsx scripts/unit-shard.ts "$i" 3 "${files[@]}" >"$logs/unit-$i.log" 2>&1 &
    pids+=($!)
  done
  for i in 0 1 2; do
    wait "${pids[$i]}" || rc=1
    cat "$logs/unit-$i.log"
  done
  return "$rc"
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
phase_done 'lint, typecheck, format'
check unit
phase_done 'unit tests'
failed=()
for c in "${checks[@]}"; do
  step "$c"
  cat "$logs/$c.log" >&2
  [ "$(cat "$logs/$c.rc")" = 0 ] || failed+=("$c")
done
if [ ${#failed[@]} -gt 0 ]; then
  step "failed: ${failed[*]}"
  print_timings
  exit 1
fi
step "integration tests (real Kafka, real ClickHouse)"
rc=0
node --import tsx scripts/run-integration-tests.ts "$@" || rc=$?
phase_done 'integration tests'
print_timings
exit "$rc"
