#!/usr/bin/env bash
# Which model family generalises to unseen DGA families: gradient-boosted trees on the detector's
# features (LightGBM), a character-level convolutional network on the raw name (PyTorch), and their
# ensembles, on the folds of `npm run eval:dga`. Installs its Python packages from PyPI into its own
# virtual environment (once, under ~/.cache/hamstring; PyPI's torch brings its CUDA libraries, about
# 5 GB, though only the CPU is used). Prints one line per model; takes 2-5 minutes on 2 idle cores.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
venv=${HAMSTRING_CACHE_DIR:-$HOME/.cache/hamstring}/dga-net-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import torch, lightgbm, pandas, sklearn' 2>/dev/null; then
  if ! python3 -m venv "$venv" 2>/dev/null; then
    apt-get install -y -qq python3-venv >/dev/null
    python3 -m venv "$venv"
  fi
  "$venv/bin/pip" install -q 'torch==2.*' 'lightgbm==4.*' 'pandas==2.*' 'scikit-learn==1.*' 'numpy<3'
fi
mkdir -p "$root/var/dga-net"
(cd "$root" && node --import tsx bench/dga-net/export.ts var/dga-net/samples.csv)
exec "$venv/bin/python" "$here/experiment.py" "$root/var/dga-net/samples.csv"
