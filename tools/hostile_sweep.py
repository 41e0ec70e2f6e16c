"""Try the CLI the way a careless or hostile user would, and count what goes wrong.

    .venv/bin/python tools/hostile_sweep.py [--jobs 2] [--timeout 90] [--quick]

Three families of cases, each run as a real `santorini_az` process in a scratch folder:
- bad values: every option and argument of every command, one at a time, given values no command should take
  (negative, NaN, infinite, huge, empty, not a number, 20,000 characters, a FIFO, a folder, a path under /proc);
- damaged runs: every file of a finished tiny run emptied, cut in half, overwritten with garbage or swapped with
  another file of the run, then `train --resume` and `report`;
- odd run directories: a file, a FIFO, a folder that refuses files, an over-long name.

Each case is classed: `refused` (exit 2, no traceback), `ran` (exit 0: the value was acceptable or the damage did
not matter), `traceback`, `hang` (no exit within --timeout) or `other` (any other exit status). The sweep prints the
counts and every case that is not `refused` or `ran`, and exits 1 if there was any. It never writes to a device:
a FIFO in the scratch folder stands for /dev/null.
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

CLI = str(Path(sys.executable).parent / "santorini_az")

BAD_VALUES = ["-1", "nan", "1e400", "1e12", "abc", "", "é☃", "x" * 20_000, "{fifo}", "{folder}", "/proc/no/such/file"]


@dataclass
class Case:
    family: str
    args: list[str]
    stdin: str = ""
    setup: object = None  # setup(scratch) -> None, run before the command (damages a copy of the run)

    def label(self) -> str:
        text = " ".join(a if len(a) < 60 else a[:20] + f"...({len(a)} chars)" for a in self.args)
        return f"[{self.family}] {text}"


def base_commands(scratch: Path) -> dict[str, tuple[dict[str, str], list[str], str]]:
    """Per command: valid values of its arguments and options (positional ones in capitals, in order), its flags,
    and its stdin; chosen so that the command, when it accepts a value, finishes in seconds. A command named twice
    (`arena (gods)`) is the same command with other valid values."""
    ckpt, out = str(scratch / "base" / "checkpoints" / "iter-0001.safetensors"), str(scratch / "out")
    engine = f"{CLI} engine"
    return {
        "perft": ({"POSITION": "startpos", "DEPTH": "1"}, [], ""),
        "moves": ({"POSITIONS": "startpos"}, [], ""),
        "show": ({"POSITION": "startpos"}, [], ""),
        "bench": ({"--net": "8x1", "--precision": "fp32", "--device": "cpu", "--games": "2", "--sims": "4",
                   "--workers": "1", "--threads": "1", "--seconds": "0.5", "--warmup": "0", "--checkpoint": ckpt,
                   "--backend": "torch"}, [], ""),
        "train": ({"--preset": "tiny", "--run-dir": out + "/run", "--iterations": "1", "--hours": "0", "--seed": "0",
                   "--net": "16x2", "--set": "workers=1"}, ["--quiet"], ""),
        "report": ({"RUN": str(scratch / "base")}, [], ""),
        "arena": ({"FIRST": "random", "SECOND": "greedy", "--openings": "1", "--sims": "4", "--seed": "0",
                   "--workers": "1", "--backend": "torch"}, ["--quiet"], ""),
        "arena (gods)": ({"FIRST": "mcts", "SECOND": "alphabeta1", "--gods": "apollo,pan", "--openings": "1",
                          "--sims": "4", "--seed": "0", "--workers": "1"}, ["--quiet"], ""),
        "selfplay": ({"PLAYER": "mcts", "--out": out + "/g.npz", "--games": "1", "--sims": "4", "--seed": "0",
                      "--workers": "1", "--backend": "torch"}, ["--quiet", "--force"], ""),  # each case writes g.npz
        "inspect": ({"POSITION": "startpos", "--checkpoint": ckpt, "--sims": "4", "--top": "3", "--backend": "torch"}, [], ""),
        "inspect (gods)": ({"POSITION": "0000000000000100000000000/1/artemis:C3,D4/demeter:B2,D2", "--checkpoint": "mcts",
                            "--sims": "4", "--top": "3"}, [], ""),
        "play": ({"--checkpoint": ckpt, "--side": "1", "--sims": "4", "--position": "startpos", "--backend": "torch"}, [], ""),
        "play (gods)": ({"--gods": "artemis,demeter", "--checkpoint": "mcts", "--side": "1", "--sims": "4"}, [], ""),
        "export": ({"CHECKPOINT": ckpt, "-o": out + "/m.onnx"}, ["--force"], ""),
        "match": ({"FIRST": engine, "SECOND": engine, "--openings": "1", "--depth": "1", "--seed": "0",
                   "--option1": "Hash=1", "--option2": "Hash=1"}, [], ""),
        "bench-alphabeta": ({"--depth": "1", "--positions": "1", "--seed": "0"}, [], ""),
    }


def invocation(command: str, values: dict[str, str], flags: list[str]) -> list[str]:
    "The argument list: the command, its positional values in order, then its options and flags."
    args = [command.split()[0]] + [v for k, v in values.items() if not k.startswith("-")]
    for k, v in values.items():
        if k.startswith("-"): args += [k, v]
    return args + flags


def bad_value_cases(scratch: Path) -> list[Case]:
    cases = []
    for command, (values, flags, stdin) in base_commands(scratch).items():
        for name in values:
            for bad in BAD_VALUES:
                bad = bad.format(fifo=scratch / "fifo", folder=scratch / "folder")
                cases.append(Case("bad value", invocation(command, values | {name: bad}, flags), stdin))
    cases += [Case("bad value", ["train", "--config", bad.format(fifo=scratch / "fifo", folder=scratch / "folder"),
                                 "--iterations", "1", "--quiet"]) for bad in BAD_VALUES]
    cases.append(Case("bad value", ["engine"], "position garbage\ngo depth -1\nsetoption name Hash value nan\nquit\n"))
    # serve starts a server when it accepts its arguments: only values that must be refused
    for bad in ["-1", "99999", "abc", "1e12"]:
        cases.append(Case("bad value", ["serve", str(scratch / "base"), "--port", bad]))
    for bad in [str(scratch / "fifo"), "/proc/no/run", "x" * 300]:
        cases.append(Case("bad value", ["serve", bad, "--port", "0"]))
    return cases


RUN_FILES = ["config.json", "records.jsonl", "champion.json", "elo.json", "replay.npz", "holdout.npz",
             "checkpoints/iter-0000.safetensors", "checkpoints/iter-0001.safetensors", "checkpoints/iter-0001.trainer.pt",
             "games/iter-0001.npz"]


def damage(name: str, how: str):
    "A setup that copies the finished run to scratch/run-N and damages one file of it."
    def setup(run: Path) -> None:
        path = run / name
        data = path.read_bytes()
        if how == "empty": path.write_bytes(b"")
        elif how == "half": path.write_bytes(data[: len(data) // 2])
        elif how == "garbage": path.write_bytes(random.Random(name).randbytes(max(64, len(data) // 4)))
        elif how == "swapped":
            other = run / RUN_FILES[(RUN_FILES.index(name) + 1) % len(RUN_FILES)]
            path.write_bytes(other.read_bytes())
    return setup


def damaged_run_cases() -> list[Case]:
    cases = []
    for name in RUN_FILES:
        for how in ("empty", "half", "garbage", "swapped"):
            family = f"damaged {name} ({how})"
            cases.append(Case(family, ["train", "--resume", "--quiet", "--run-dir", "{run}", "--set", "iterations=2"],
                              setup=damage(name, how)))
            if name in ("records.jsonl", "config.json"):
                cases.append(Case(family, ["report", "{run}"], setup=damage(name, how)))
    return cases


def odd_run_dir_cases(scratch: Path) -> list[Case]:
    dirs = [scratch / "afile", scratch / "fifo", "/proc/no/run", "/sys/no/run", "r" * 300, "/".join(["d" * 200] * 30),
            scratch / "afile" / "below"]
    return [Case("odd run dir", ["train", "--preset", "tiny", "--quiet", "--run-dir", str(d)]) for d in dirs]


def classify(done: subprocess.CompletedProcess | None) -> str:
    if done is None: return "hang"
    if "Traceback" in done.stdout + done.stderr: return "traceback"
    if done.returncode == 0: return "ran"
    if done.returncode == 2: return "refused"
    return "other"


def run_case(case: Case, scratch: Path, number: int, timeout: float) -> tuple[Case, str, str]:
    workdir = scratch / f"case-{number}"
    workdir.mkdir()
    args = list(case.args)
    if case.setup is not None:
        run = workdir / "run"
        shutil.copytree(scratch / "base", run)
        case.setup(run)
        args = [str(run) if a == "{run}" else a for a in args]
    try:
        done = subprocess.run([CLI, *args], cwd=workdir, input=case.stdin, capture_output=True, text=True,
                              timeout=timeout, env={**os.environ, "SANTORINI_AZ_DEBUG": ""})
    except subprocess.TimeoutExpired:
        done = None
    kind = classify(done)
    detail = "" if done is None else (done.stderr.strip().splitlines() or [""])[-1][:200]
    shutil.rmtree(workdir, ignore_errors=True)
    return case, kind, detail


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2, help="cases run at once")
    parser.add_argument("--timeout", type=float, default=90, help="seconds before a case counts as a hang")
    parser.add_argument("--quick", action="store_true", help="one case in five (for a first look)")
    parser.add_argument("--show-ran", action="store_true", help="also list the cases that ran (exit 0), to check them")
    parser.add_argument("--family", choices=["bad", "damaged", "odd"], help="only the cases of one family")
    options = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="hostile-"))
    try:
        os.mkfifo(scratch / "fifo"); (scratch / "folder").mkdir(); (scratch / "afile").write_text("not a folder")
        print("making a finished tiny run to damage ...", flush=True)
        subprocess.run([CLI, "train", "--preset", "tiny", "--iterations", "1", "--quiet", "--run-dir", str(scratch / "base")],
                       check=True, capture_output=True, timeout=600)
        cases = bad_value_cases(scratch) + damaged_run_cases() + odd_run_dir_cases(scratch)
        if options.family: cases = [c for c in cases if c.family.split()[0] == options.family]
        if options.quick: cases = cases[::5]
        print(f"{len(cases)} cases, {options.jobs} at a time", flush=True)
        results = []
        with ThreadPoolExecutor(options.jobs) as pool:
            for i, (case, kind, detail) in enumerate(pool.map(lambda nc: run_case(nc[1], scratch, nc[0], options.timeout),
                                                              enumerate(cases)), 1):
                results.append((case, kind, detail))
                if kind not in ("refused", "ran") or (kind == "ran" and options.show_ran):
                    print(f"  {kind}: {case.label()}\n      {detail}", flush=True)
                if i % 50 == 0: print(f"  ... {i}/{len(cases)}", flush=True)
        by_family = Counter((case.family.split()[0], kind) for case, kind, _ in results)
        kinds = ["refused", "ran", "traceback", "hang", "other"]
        print(f"\n{'family':<10}" + "".join(f"{k:>11}" for k in kinds))
        for family in sorted({f for f, _ in by_family}):
            print(f"{family:<10}" + "".join(f"{by_family[(family, k)]:>11}" for k in kinds))
        totals = Counter(kind for _, kind, _ in results)
        print(f"{'all':<10}" + "".join(f"{totals[k]:>11}" for k in kinds))
        assert Path("/dev/null").is_char_device(), "/dev/null is no longer a device"
        return 1 if totals["traceback"] + totals["hang"] + totals["other"] else 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
