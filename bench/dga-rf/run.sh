#!/usr/bin/env bash
# The random-forest anchor: installs scikit-learn from PyPI into its own virtual environment (once,
# under ~/.cache/hamstring), then scores the folds `npm run eval:dga` wrote into the given folder.
set -euo pipefail
dir=${1:?usage: run.sh <folds folder>}
venv=${HAMSTRING_CACHE_DIR:-$HOME/.cache/hamstring}/dga-rf-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import sklearn' 2>/dev/null; then
  if ! python3 -m venv "$venv" 2>/dev/null; then
    apt-get install -y -qq python3-venv >/dev/null
    python3 -m venv "$venv"
  fi
  "$venv/bin/pip" install -q 'scikit-learn==1.7.*' 'numpy<3'
fi
exec "$venv/bin/python" "$(dirname "$0")/rf.py" "$dir"
