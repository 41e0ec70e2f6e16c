#!/usr/bin/env bash
# Create .venv and install santorini_az with its development tools.
# On a machine without an NVIDIA GPU torch is pinned to the CPU build (2.13.0) first, so that nothing later
# pulls several GB of CUDA wheels; with a GPU the newest CUDA build is taken instead.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
VPY=.venv/bin/python
"$VPY" -m pip install -q --upgrade pip
if ! "$VPY" -c 'import torch' 2>/dev/null; then
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    "$VPY" -m pip install -q torch
  else
    "$VPY" -m pip install -q torch==2.13.0
  fi
fi
"$VPY" -m pip install -q -e ".[dev]"
