#!/usr/bin/env bash
# The gpu preset on a machine with one CUDA GPU (chapter 10, "On a GPU"), with the package's own commands only:
#   1. bench: the network alone, self-play, and the trees alone (a network that costs nothing), by worker count; then,
#      with the faster count, bf16 and CUDA graphs (chapter 14) against fp32 without, and the 128x10 network the fastest way;
#   2. `train --preset gpu --hours HOURS` with the fastest worker count and network settings, detached, so that it can
#      outlive one call;
#   3. the run's records, config, plan, Elo table, report, log and champion checkpoint copied to OUTDIR.
# Usage: bash tools/gpu_check.sh OUTDIR [HOURS] [DEADLINE_S]. It returns when the run has finished or DEADLINE_S
# seconds after it started (default 570); called again while the run is still going, it only waits and copies
# (each call copies everything again: a device call's output folder starts empty).
# Needs a python3 whose torch sees the GPU and the package's dependencies (numba, typer, rich, safetensors, onnx);
# the repository itself is put on PYTHONPATH. Afterwards, on any machine: `santorini_az arena OUTDIR/champion.safetensors
# champion --openings 100 --sims 800` (and `alphabeta6`) measures what the ten minutes bought.
# A dry run of the same script without a GPU: DEVICE=cpu EXTRA="--set selfplay.games=64 ..." bash tools/gpu_check.sh OUT 0.02
set -u
out=${1:?give an output folder}; hours=${2:-0.15}; deadline=${3:-570}
start=$(date +%s)
device=${DEVICE:-cuda}; extra=${EXTRA:-}
mkdir -p "$out"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
run=/tmp/gpu
sa=/tmp/santorini_az  # the CLI without installing the package (a file, so that `timeout` and `setsid` can run it)
printf '#!/bin/sh\nexec python3 -c "import sys; from santorini_az.cli import main; sys.argv[0] = \\"santorini_az\\"; main()" "$@"\n' > $sa
chmod +x $sa

collect() {
  cp $run/records.jsonl $run/config.json $run/plan.json $run/elo.json "$out"/ 2>/dev/null
  cp $run/report/report.png "$out"/ 2>/dev/null
  cp /tmp/train.log /tmp/bench.jsonl "$out"/ 2>/dev/null  # $OUT is emptied before each call: everything from /tmp
  python3 - "$run" "$out" <<'EOF'
import shutil, sys
from pathlib import Path
from santorini_az.rundir import RunDirectory
run = RunDirectory(Path(sys.argv[1]))
try: champion = run.champion()
except Exception as e: print("no champion yet:", e); sys.exit()
shutil.copy(run.checkpoint(champion), Path(sys.argv[2]) / "champion.safetensors")
print("champion: iteration", champion)
EOF
}

if [ ! -f /tmp/train.pid ]; then
  nvidia-smi -L; nproc
  python3 -c 'import torch, numba; print("torch", torch.__version__, "numba", numba.__version__, torch.cuda.is_available() and torch.cuda.get_device_name())'
  echo "== 1. bench (compiles the engine once, then): network alone, self-play and trees alone, by workers"
  for workers in 4 8; do
    timeout 120 $sa bench --device $device --net 64x6 --workers $workers --games 1536 --sims 128 --seconds 3 --warmup 2 \
      --json | tee -a /tmp/bench.jsonl
  done
  best=$(python3 -c 'import json,sys; rows=[json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]; print(max(rows, key=lambda r: r["selfplay_sims_per_s"])["workers"] if rows else 8)' /tmp/bench.jsonl)
  echo "== 1b. with $best workers: bf16, and CUDA graphs (chapter 14), against fp32 without; then 128x10"
  variants="--precision bf16"
  if [ "$device" = cuda ] && python3 - <<'EOF'
import numpy as np, torch
from santorini_az.network import NetworkEvaluator, NetConfig, SantoriniNet, random_planes
torch.manual_seed(0)
net = SantoriniNet(NetConfig(64, 6)).eval()
for precision, tolerance in (("fp32", 1e-3), ("bf16", 0.1)):
    plain, graphed = (NetworkEvaluator(net, precision, "cuda", cuda_graphs=g) for g in (False, True))
    batches = [random_planes(n, seed=n) for n in (1, 100, 8, 700, 3)]
    worst = max(float(np.abs(a - b).max()) for x in batches for a, b in zip(graphed(x), plain(x)))
    print(f"CUDA graphs against the plain evaluator, {precision}: largest difference {worst:.2g}")
    assert worst < tolerance
EOF
  then variants="$variants|--cuda-graphs|--precision bf16 --cuda-graphs"
  else echo "CUDA graphs: not benchmarked (no GPU, or their answers differ: see above)"; fi
  if [ "$device" = cuda ]; then
    IFS='|' read -ra list <<< "$variants"
    for variant in "${list[@]}"; do
      timeout 120 $sa bench --device $device --net 64x6 --workers $best --games 1536 --sims 128 --seconds 3 --warmup 2 \
        $variant --json | tee -a /tmp/bench.jsonl
    done
  fi
  network=$(python3 -c 'import json,sys; rows=[json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
rows=[r for r in rows if r["workers"]==int(sys.argv[2])]; r=max(rows, key=lambda r: r["selfplay_sims_per_s"]) if rows else {}
print("--set precision=%s --set cuda_graphs=%s" % (r.get("precision", "fp32"), str(r.get("cuda_graphs", False)).lower()))' /tmp/bench.jsonl $best)
  if [ "$device" = cuda ]; then  # the issue's figure: the network alone at 128x10, the fastest way found
    timeout 150 $sa bench --device $device --net 128x10 --workers $best --games 1536 --sims 128 --seconds 3 --warmup 2 \
      $(echo "$network" | sed 's/--set precision=/--precision /; s/ --set cuda_graphs=true/ --cuda-graphs/; s/ --set cuda_graphs=false//') \
      --json | tee -a /tmp/bench.jsonl
  fi
  echo "== 2. train --preset gpu --hours $hours with $best workers, $network (detached), after $(( $(date +%s) - start )) s"
  setsid nohup $sa train --preset gpu --run-dir $run --hours "$hours" --set workers=$best --set device=$device $network $extra \
    > /tmp/train.log 2>&1 &
  echo $! > /tmp/train.pid
fi
pid=$(cat /tmp/train.pid)
while kill -0 "$pid" 2>/dev/null && [ $(( $(date +%s) - start )) -lt "$deadline" ]; do sleep 5; done
if kill -0 "$pid" 2>/dev/null; then echo "== the run is still going after $(( $(date +%s) - start )) s: call again to collect"
else echo "== 3. the run has finished"; fi
grep -v "━" /tmp/train.log | tail -30
collect
ls -la "$out"
