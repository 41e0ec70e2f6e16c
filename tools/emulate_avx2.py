"""Which chapters print something else on a CPU with AVX2 only? Runs chapters with torch held to its AVX2 kernels (and
onnxruntime given a rounding of the same size as AVX2's) and compares what each code cell printed with the outputs
stored in nbs/ (tools/check_outputs.py's comparison).

The stored outputs are made on one machine, and the test command compares them on every machine, but for the cells
marked `#| cpu_dependent` (tools/check_outputs.py); a learner's laptop may have AVX2 and no AVX-512, where float
rounding in torch's kernels differs. This tool shows what such a learner would see differ, on this machine: torch's own kernels
(`ATEN_CPU_CAPABILITY=avx2`), oneDNN's convolutions (`ONEDNN_MAX_CPU_ISA=AVX2`), MKL's matrix products
(`MKL_ENABLE_INSTRUCTIONS=AVX2`) and numba's compiled code (`NUMBA_CPU_NAME=haswell`) are held to AVX2.

onnxruntime chooses its kernels by the CPU alone, and its float32 results do differ between the two: run under
`qemu-x86_64 -cpu Haswell-v4` (Debian's qemu-user, whose emulated CPU has AVX2 and no AVX-512), the shipped champion's
policy and value differ from this machine's by up to 1.0e-6 and 8.9e-7 on 256 positions (the god champion's by 6.0e-7
and 1.0e-6): the blocked (NCHWc) convolutions its graph optimizations bring in work on 16 channels at a time with
AVX-512 and on 8 with AVX2, which sums in another order, and its softmax differs too (without those optimizations the
values were the same bits on both, and the network 2.5-3× slower here). qemu emulates far too slowly to
run chapters, so this tool gives onnxruntime another rounding of the same size instead: every session a chapter
opens (in its worker processes too, through `sitecustomize`) moves each float32 number it returns by up to 8 units in
its last place (at most 9.5e-7 for a value or a probability; not where qemu found the same bits, see
ONNXRUNTIME_ROUNDING). A chapter whose printed numbers survive that survives AVX2's rounding as likely.

Nor does it reach a CPU of another vendor: a chapter that prints the same here may still differ there, one that
differs here differs on real AVX2 machines too. A cell that differs must be marked `#| cpu_dependent` (the test
command compares it only on the kind of machine that stored it), or print less precision: the tool exits 1 if one
is not. The chapters run with their slow cells, two at a time, in `_outputs/avx2/` (ignored by git); all of them
take about 8 minutes on 2 cores.

    python tools/emulate_avx2.py                          # every chapter
    python tools/emulate_avx2.py 10_training 10a_loop     # some
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from check_outputs import differences  # noqa: E402

AVX2 = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_ENABLE_INSTRUCTIONS": "AVX2",
        "NUMBA_CPU_NAME": "haswell"}

# Imported by every Python process of the chapters (PYTHONPATH, as `sitecustomize`): every onnxruntime session's
# float32 outputs move by a few units in their last place (up to 8 ulps, from a seeded generator); for the values and
# probabilities at most 9.5e-7, the size of AVX2's differences. The network runs at its own speed, so a cell that
# times it or fills a time budget prints what it would print here anyway. Two kinds of session are left exact, as
# measured under qemu: one asked for less than level ALL (as onnxruntime's int8 calibration is), whose values were the
# same bits on both CPUs, and an int8 network, whose integer sums are exact on both with 7-bit weights (chapter 31):
# the shipped champion's int8 copy, calibrated and checked under qemu, gave the same figures as here.
ONNXRUNTIME_ROUNDING = '''
import numpy as np
import onnx
import onnxruntime

ULPS = np.random.default_rng(0)

def quantized(path_or_bytes) -> bool:
    model = onnx.load_from_string(path_or_bytes) if isinstance(path_or_bytes, bytes) else onnx.load(str(path_or_bytes))
    return any(node.op_type in ("QuantizeLinear", "QLinearConv", "QLinearMatMul") for node in model.graph.node)

def rounded_otherwise(output):
    if not (isinstance(output, np.ndarray) and output.dtype == np.float32): return output
    return (output + ULPS.integers(-8, 9, output.shape) * np.spacing(output)).astype(np.float32)

class InferenceSession(onnxruntime.InferenceSession):
    def __init__(self, path_or_bytes, sess_options=None, *args, **kwargs):
        super().__init__(path_or_bytes, sess_options, *args, **kwargs)
        level = (sess_options or onnxruntime.SessionOptions()).graph_optimization_level
        self.exact = level != onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL or quantized(path_or_bytes)

    def run(self, output_names, input_feed, run_options=None):
        outputs = super().run(output_names, input_feed, run_options)
        return outputs if self.exact else [rounded_otherwise(o) for o in outputs]

onnxruntime.InferenceSession = InferenceSession
'''


def run_chapters(names: list[str], where: Path) -> bool:
    """Run the chapters `names` (all if empty) of a copy of nbs/ in `where`, saving what they print, under AVX2 kernels;
    whether every chapter ran to its end (nbdev-test names the cell of one that did not)."""
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True)
    shutil.copytree(ROOT / "nbs", where / "nbs")
    shutil.copy(ROOT / "README.md", where / "README.md")  # chapter 12 reads ../README.md
    command = ["nbdev-test", str((where / "nbs").relative_to(ROOT)), "--save", "--n-workers", "2", "--flags", "slow"]
    if names: command += ["--file-re", "^(" + "|".join(names) + r")\.ipynb$"]
    (where / "site").mkdir()
    (where / "site" / "sitecustomize.py").write_text(ONNXRUNTIME_ROUNDING)
    path = os.pathsep.join(filter(None, [str(where / "site"), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, **AVX2, "OMP_WAIT_POLICY": "PASSIVE", "PYTHONPATH": path}
    return subprocess.run(command, cwd=ROOT, env=env).returncode == 0


def main(names: list[str]) -> int:
    where = ROOT / "_outputs" / "avx2"
    names = [n.removesuffix(".ipynb").removeprefix("nbs/") for n in names]
    ran = run_chapters(names, where)
    chapters = sorted(p for p in (where / "nbs").glob("*.ipynb") if not names or p.stem in names)
    differing, unmarked = {}, 0
    for chapter in chapters:
        found = differences(ROOT / "nbs" / chapter.name, chapter)
        if not found: continue
        differing[chapter.name] = found
        unmarked += len(differences(ROOT / "nbs" / chapter.name, chapter, same_machine=False))
    for name, found in differing.items():
        print(f"{name}: {len(found)} cell{' prints' if len(found) == 1 else 's print'} something else under AVX2 kernels")
        for line in found: print("  " + line)
    print(f"{len(chapters) - len(differing)} of {len(chapters)} chapters print what nbs/ stores under AVX2 kernels; "
          f"{unmarked} of the cells that do not are not marked cpu_dependent")
    if not ran: print("and a chapter failed under AVX2 kernels: nbdev-test named it and its cell above")
    if unmarked: print("a cell not marked cpu_dependent is compared on every machine (tools/check_outputs.py): print "
                       "less precision or a range, or mark it and say in the prose what varies")
    return 0 if ran and not unmarked else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
