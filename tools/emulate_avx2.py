"""Which chapters print something else on a CPU with AVX2 only? Runs chapters with torch held to its AVX2 kernels and
compares what each code cell printed with the outputs stored in nbs/ (tools/check_outputs.py's comparison).

The stored outputs are made on one machine, and the test command compares them only on the same kind of machine
(tools/check_outputs.py); a learner's laptop may have AVX2 and no AVX-512, where float rounding in torch's kernels
differs. This tool shows what such a learner would see differ, on this machine: torch's own kernels
(`ATEN_CPU_CAPABILITY=avx2`), oneDNN's convolutions (`ONEDNN_MAX_CPU_ISA=AVX2`), MKL's matrix products
(`MKL_ENABLE_INSTRUCTIONS=AVX2`) and numba's compiled code (`NUMBA_CPU_NAME=haswell`) are held to AVX2. It does not
reach onnxruntime's kernels, which choose by the CPU alone, nor a CPU of another vendor: a chapter that prints the
same here may still differ there, one that differs here differs on real AVX2 machines too. The chapters run with
their slow cells, two at a time, in `_outputs/avx2/` (ignored by git); all of them take about 8 minutes on 2 cores.

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


def run_chapters(names: list[str], where: Path) -> None:
    "Run the chapters `names` (all if empty) of a copy of nbs/ in `where`, saving what they print, under AVX2 kernels."
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True)
    shutil.copytree(ROOT / "nbs", where / "nbs")
    shutil.copy(ROOT / "README.md", where / "README.md")  # chapter 12 reads ../README.md
    command = ["nbdev-test", str((where / "nbs").relative_to(ROOT)), "--save", "--n-workers", "2", "--flags", "slow"]
    if names: command += ["--file-re", "^(" + "|".join(names) + r")\.ipynb$"]
    subprocess.run(command, cwd=ROOT, env={**os.environ, **AVX2, "OMP_WAIT_POLICY": "PASSIVE"}, check=True)


def main(names: list[str]) -> int:
    where = ROOT / "_outputs" / "avx2"
    names = [n.removesuffix(".ipynb").removeprefix("nbs/") for n in names]
    run_chapters(names, where)
    chapters = sorted(p for p in (where / "nbs").glob("*.ipynb") if not names or p.stem in names)
    differing = {}
    for chapter in chapters:
        found = differences(ROOT / "nbs" / chapter.name, chapter)
        if found: differing[chapter.name] = found
    for name, found in differing.items():
        print(f"{name}: {len(found)} cell{' prints' if len(found) == 1 else 's print'} something else under AVX2 kernels")
        for line in found: print("  " + line)
    print(f"{len(chapters) - len(differing)} of {len(chapters)} chapters print what nbs/ stores under AVX2 kernels")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
