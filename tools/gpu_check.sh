#!/usr/bin/env bash
# Issue 44's GPU measurements on a machine with one CUDA GPU (chapter 14, "A ten-minute run on one GPU"), with the package's own commands
# only, in the order that keeps the scarce part safe: the ten-minute run first, the benchmarks after it.
#   1. the engines compiled (as tools/setup.sh does at install); with LAYOUT=gpu, CUDA graphs checked against the
#      plain evaluator on the GPU (chapter 14): the run uses them only if they agree;
#   2. the ten-minute run, `train --hours HOURS` (plus $RECIPE), detached, so that it can outlive one call, in one of two
#      layouts. LAYOUT=cores (the default): the shipped champion's own recipe (the `cpu` preset with the threat maps,
#      chapter 12), its searches on every core (the int8 copy where the CPU has VNNI, else onnxruntime's fp32) and its
#      training on the GPU (`--set device=cuda` with an onnxruntime backend): the champion took 200 iterations of it on
#      2 cores; if 16 cores play its games about 8 times as fast (the first bench line below measures them), ten
#      minutes on this machine hold most of those generations, and generations are what the gpu preset's run lacked.
#      LAYOUT=gpu: `--preset gpu` (64x6, searches on the GPU with CUDA graphs), measured on the H200 on 2026-12-04: 16
#      iterations, 23.5% against the shipped champion;
#   3. the run's records, config, plan, Elo table, log and champion checkpoint copied to OUTDIR;
#   4. once the run has finished: `bench`, each line appended to OUTDIR/bench.jsonl as soon as it is measured: the
#      preset's own layout (64x6, 8 workers, CUDA graphs) with the trees alone (a network that costs nothing), an
#      arena's 40 games at 64 simulations in 8 processes and in one (the arena took 21% of the H200 run), 16 workers;
#      the `cpu` preset for two minutes on the cores alone (stage shares and cores busy, cpu16.tar.gz); then the H200's
#      figures again: the 128x10 network alone in one process at a large batch (bf16 with graphs,
#      fp32, bf16) and the preset's layout without graphs. A line measured once is not measured again by a later call.
# Usage: bash tools/gpu_check.sh OUTDIR [HOURS] [DEADLINE_S]. It returns when everything is done or DEADLINE_S seconds
# after it started (default 570); called again while the run is still going, it waits, copies and then benchmarks
# (each call copies everything again: a device call's output folder starts empty).
# Needs a python3 whose torch sees the GPU and the package's dependencies (numba, typer, rich, safetensors, onnx);
# the repository itself is put on PYTHONPATH. Afterwards, on any machine, what the ten minutes bought (chapter 14):
# `santorini_az arena OUTDIR/champion.safetensors champion --openings 100 --sims 800 --workers 1`, and alphabeta6.
# A dry run without a GPU: DEVICE=cpu RECIPE="--set selfplay.games=64 ..." bash tools/gpu_check.sh OUT 0.02
# (the cores layout, dry-run so on a 2-core AMX machine on 2026-12-05: 4 iterations in 0.02 h, its int8 searches on
# both cores; its first bench line gave 105k self-play simulations/s, 53k a core, the trees alone 272k a core)
# Measured on an H200 (2026-12-04, chapter 14): two calls, 577 s and 129 s, 12.5 minutes of device time with the start.
# In a session of 15 minutes: `bash tools/gpu_check.sh $OUT 0.15 585`, then at once `bash tools/gpu_check.sh $OUT 0.15
# 260` (the second call's bench lines take about 90 s, the cpu preset's two minutes on the cores 150 s).
set -u
out=${1:?give an output folder}; hours=${2:-0.15}; deadline=${3:-570}
start=$(date +%s)
device=${DEVICE:-cuda}
recipe=${RECIPE:-}  # settings beyond the layout's, e.g. "--set selfplay.games=256"
layout=${LAYOUT:-cores}
mkdir -p "$out"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
run=/tmp/gpu
sa=/tmp/santorini_az  # the CLI without installing the package (a file, so that `timeout` and `setsid` can run it)
printf '#!/bin/sh\nexec python3 -c "import sys; from santorini_az.cli import main; sys.argv[0] = \\"santorini_az\\"; main()" "$@"\n' > $sa
chmod +x $sa
left() { echo $(( deadline - ($(date +%s) - start) )); }

collect() {
  # three files at most (a device call brings back eight): the run's small files in one archive, the bench lines, the
  # champion; $OUT is emptied before each call, so everything comes from /tmp
  mkdir -p /tmp/files; cp $run/records.jsonl $run/config.json $run/plan.json $run/elo.json /tmp/files/ 2>/dev/null
  for log in train train-graphs setup; do [ -f /tmp/$log.log ] && grep -v "━" /tmp/$log.log > /tmp/files/$log.log; done
  tar -czf "$out"/run.tar.gz -C /tmp/files .
  cp /tmp/bench.jsonl "$out"/ 2>/dev/null
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
  {
    nvidia-smi -L; nproc
    python3 -c 'import torch, numba; print("torch", torch.__version__, "numba", numba.__version__, torch.cuda.is_available() and torch.cuda.get_device_name())'
    # the engines' numba functions compiled once, as tools/setup.sh does at install, so that the run's minutes do
    # not go to 8 workers compiling them at once (42 s of the H200 run's holdout stage, 2026-12-04)
    python3 tools/compile_engines.py mortal
  } 2>&1 | tee /tmp/setup.log
  if [ "$layout" = cores ]; then  # the champion's recipe; the searches on the cores, as fast as this CPU runs them
    int8=$(python3 -c "from santorini_az.config import cpu_has_vnni; print('onnxruntime-int8' if cpu_has_vnni() else 'onnxruntime')")
    settings="--preset cpu --set train.threat_loss_weight=1.0 --set backend=$int8"
  else settings="--preset gpu"; fi
  graphs="--set cuda_graphs=false"  # the gpu preset replays the network as CUDA graphs: only where they agree with plain calls
  if [ "$layout" = gpu ] && [ "$device" = cuda ] && python3 - 2>&1 <<'EOF' | tee -a /tmp/setup.log
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
  then graphs="--set cuda_graphs=true"
  else echo "CUDA graphs: not used (no GPU, or their answers differ: see above)" | tee -a /tmp/setup.log; fi
  train() {
    echo "== train $settings --hours $hours --set device=$device $recipe $graphs (detached), after $(( $(date +%s) - start )) s" | tee -a /tmp/setup.log
    setsid nohup $sa train $settings --run-dir $run --hours "$hours" --set device=$device $recipe $graphs \
      > /tmp/train.log 2>&1 &
    echo $! > /tmp/train.pid
  }
  train
  if [ "$graphs" = "--set cuda_graphs=true" ]; then  # a run that fails in its first two minutes with CUDA graphs starts again without them
    for _ in $(seq 24); do kill -0 "$(cat /tmp/train.pid)" 2>/dev/null || break; sleep 5; done
    if ! kill -0 "$(cat /tmp/train.pid)" 2>/dev/null && ! grep -q "^run: " /tmp/train.log; then
      tail -20 /tmp/train.log | tee -a /tmp/setup.log; mv /tmp/train.log /tmp/train-graphs.log; rm -rf $run
      echo "the run with CUDA graphs failed (above): again without them" | tee -a /tmp/setup.log
      graphs="--set cuda_graphs=false"; train
    fi
  fi
fi
pid=$(cat /tmp/train.pid)
while kill -0 "$pid" 2>/dev/null && [ "$(left)" -gt 0 ]; do sleep 5; done
if kill -0 "$pid" 2>/dev/null; then echo "== the run is still going after $(( $(date +%s) - start )) s: call again to collect"
else echo "== the run has finished"; fi
grep -v "━" /tmp/train.log | tail -25
collect
if ! kill -0 "$pid" 2>/dev/null; then
  echo "== bench, $(left) s left"
  bench() {  # one bench line, unless an earlier call measured it or under 40 s are left; copied out at once
    local dev=$device; if [ "$1" = --cpu ]; then dev=cpu; shift; fi  # --cpu: the searches on the cores
    local done=/tmp/bench-$dev-$(echo "$*" | tr -c 'a-z0-9' _).done
    [ -f "$done" ] && return
    [ "$(left)" -gt 40 ] || { echo "skipped (time; call again): $*"; return; }
    local line
    line=$(timeout $(( $(left) - 5 )) $sa bench --device $dev --sims 128 --seconds 3 --warmup 2 --json "$@" | grep '^{')
    if [ -n "$line" ]; then echo "$line" | tee -a /tmp/bench.jsonl; touch "$done"; fi
    cp /tmp/bench.jsonl "$out"/ 2>/dev/null
  }
  cpu_run() {  # two minutes of the cpu preset on this machine's cores, no GPU: stage shares and cores busy (cpu16.tar.gz)
    [ -f /tmp/cpu16.done ] && return
    [ "$(left)" -gt 170 ] || { echo "skipped (time; call again): the cpu preset on $(nproc) cores"; return; }
    local backend=""  # the preset's own choice (backend=auto) where onnxruntime is installed, else torch's
    python3 -c "import onnxruntime" 2>/dev/null || backend="--set backend=torch"
    echo "== train --preset cpu --hours 0.03 --set device=cpu $backend, on $(nproc) cores"
    rm -rf /tmp/cpu16 /tmp/files16; mkdir -p /tmp/files16
    setsid $sa train --preset cpu --run-dir /tmp/cpu16 --hours 0.03 --set device=cpu $backend > /tmp/cpu16.log 2>&1 &
    local p=$!  # its own process group: a deadline stops its worker processes too
    while kill -0 $p 2>/dev/null && [ "$(left)" -gt 15 ]; do sleep 2; done
    if kill -0 $p 2>/dev/null; then kill -TERM -- -$p; sleep 2; kill -KILL -- -$p 2>/dev/null; echo "stopped at the deadline"
    else wait $p && touch /tmp/cpu16.done; fi
    cp /tmp/cpu16/records.jsonl /tmp/cpu16/config.json /tmp/cpu16/plan.json /tmp/files16/ 2>/dev/null
    grep -v "━" /tmp/cpu16.log > /tmp/files16/train.log; tail -4 /tmp/files16/train.log
    tar -czf "$out"/cpu16.tar.gz -C /tmp/files16 .
  }
  # first the cores layout's self-play on every core (the champion's 32x4 network, as its searches ran) and its trees
  # alone, then what the H200 session (2026-12-04) left open, then its figures again
  cores=$(python3 -c "from santorini_az.config import cpu_has_vnni; print('--precision int8' if cpu_has_vnni() else '')")
  bench --cpu --net 32x4 --backend onnxruntime $cores --workers 0 --games 128
  bench --net 64x6 --workers 8 --games 1536 --cuda-graphs  # the preset's layout, and its trees alone
  # an arena's 40 games at 64 simulations in 8 processes (as the run plays them: 21% of the H200 run) and in one
  bench --net 64x6 --workers 8 --games 40 --sims 64 --cuda-graphs
  bench --net 64x6 --workers 1 --games 40 --sims 64 --cuda-graphs
  bench --net 64x6 --workers 16 --games 1536 --cuda-graphs  # more of the 16 cores busy (the run kept 6.2 busy)?
  cpu_run  # the cpu preset on the cores alone: issue 44's 16-core shares, never measured since the issue was filed
  big="--net 128x10 --workers 1 --games 4096"  # the network alone at a large batch, one process
  bench $big --precision bf16 --cuda-graphs
  bench $big
  bench $big --precision bf16
  bench --net 64x6 --workers 8 --games 1536
fi
ls -la "$out"
