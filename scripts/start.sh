#!/usr/bin/env bash
# The main command (README): idempotent set-up, then `hamstring up --demo`: local Kafka and
# ClickHouse (reused when they run), every stage and the monitoring agent, generated traffic, the
# dashboard and the terminal view, until Ctrl-C or the end of the traffic. Options go to `up`
# (npm start -- --rate 500 --duration 600 --hosts 300 --seed 7).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/setup.sh
# bin/hamstring execs node in its place: no launcher process stays beside the pipeline.
exec bin/hamstring up --demo "$@"
