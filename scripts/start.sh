#!/usr/bin/env bash
# The main command (README): set-up, then `hamstring up` (local Kafka and ClickHouse, ready).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/setup.sh
exec node bin/hamstring.js up "$@"
