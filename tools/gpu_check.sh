#!/usr/bin/env bash
# The gpu preset's checks on a machine with one CUDA GPU (chapter 10, "On a GPU"): the package's own commands only.
# Usage: bash tools/gpu_check.sh OUTDIR [HOURS]. Needs a python3 whose torch sees the GPU and the package's
# dependencies (numba, typer, rich, safetensors, onnx); the repository itself is put on PYTHONPATH.
set -u
out=${1:?give an output folder}; hours=${2:-0.06}
mkdir -p "$out"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
sa=/tmp/santorini_az  # the CLI without installing the package (a file, so that `timeout` can run it)
printf '#!/bin/sh\nexec python3 -c "import sys; from santorini_az.cli import main; sys.argv[0] = \\"santorini_az\\"; main()" "$@"\n' > $sa
chmod +x $sa
nvidia-smi -L; nproc
python3 -c 'import torch, numba; print("torch", torch.__version__, "numba", numba.__version__, torch.cuda.get_device_name())'
echo "== 1. one small iteration of the gpu preset (does every stage run on the GPU?)"
timeout 120 $sa train --preset gpu --run-dir /tmp/smoke --iterations 1 --set selfplay.games=64 --set holdout_games=8 \
  --set arena.openings=4 --set arena.reference_openings=2 --set train.steps_per_iteration=20 2>&1 | grep -v "━"
echo "== 2. bench: self-play simulations/s on the GPU by network and worker processes, and the 16-core CPU"
for spec in "128x10 4" "128x10 8" "128x10 16" "64x6 8" "256x8 8"; do
  set -- $spec
  timeout 60 $sa bench --device cuda --net $1 --workers $2 --games 1024 --sims 128 --seconds 6 --warmup 3 --json \
    | tee -a "$out/bench.jsonl"
done
timeout 60 $sa bench --net 32x4 --backend onnxruntime --games 256 --sims 128 --seconds 6 --warmup 3 --json | tee -a "$out/bench.jsonl"
best=$(python3 -c 'import json,sys; rows=[json.loads(l) for l in open(sys.argv[1]) if "128x10" in l and "cuda" in l]; print(max(rows, key=lambda r: r["selfplay_sims_per_s"])["workers"] if rows else 8)' "$out/bench.jsonl")
echo "== 3. the gpu preset for $hours h with $best workers"
timeout 300 $sa train --preset gpu --run-dir /tmp/gpu --hours "$hours" --set workers=$best 2>&1 | grep -v "━"
cp /tmp/gpu/records.jsonl /tmp/gpu/config.json "$out"/ 2>/dev/null; cp /tmp/gpu/report/report.png "$out"/ 2>/dev/null
ls /tmp/gpu
