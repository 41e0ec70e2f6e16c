"""The test command's budget, printed at its end so that every CI log shows what the suite costs and where: the wall
time of each phase, the slowest notebooks (from `nbdev-test --timing`'s lines) and the slowest tests (from pytest's
JUnit XML files), and the test modules that cost the most in all. Printed, never asserted: timings differ between machines.

    python tools/test_budget.py --phases PHASES_FILE --notebooks NBDEV_LOG --tests JUNIT_XML [JUNIT_XML ...] [--top 10]

PHASES_FILE holds one line per phase, `name seconds`, written by tools/test.sh as each phase ends.
"""
import argparse
import re
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

NOTEBOOK_LINE = re.compile(r"^(\S+\.ipynb): (\d+) secs$")


def phases(path: Path) -> list[tuple[str, float]]:
    "The (phase, seconds) lines of the phases file, in the order they ran."
    if not path.exists(): return []
    rows = []
    for line in path.read_text().splitlines():
        name, _, seconds = line.rpartition(" ")
        if name: rows.append((name, float(seconds)))
    return rows


def notebooks(path: Path) -> list[tuple[str, float]]:
    "(notebook, seconds) from nbdev-test --timing's output, slowest first."
    if not path.exists(): return []
    found = [NOTEBOOK_LINE.match(line.strip()) for line in path.read_text(errors="replace").splitlines()]
    return sorted(((m[1], float(m[2])) for m in found if m), key=lambda row: -row[1])


def tests(path: Path) -> list[tuple[str, float]]:
    "(test id, seconds) from a pytest JUnit XML file, slowest first."
    if not path.exists(): return []
    try: root = ElementTree.parse(path).getroot()
    except ElementTree.ParseError: return []
    rows = [(f"{case.get('classname', '')}::{case.get('name', '')}", float(case.get("time", 0)))
            for case in root.iter("testcase")]
    return sorted(rows, key=lambda row: -row[1])


def modules(rows: list[tuple[str, float]]) -> list[tuple[str, float]]:
    "(test module, seconds of all its tests), the costliest first: where a cut pays most."
    totals: dict[str, float] = {}
    for test_id, seconds in rows:
        module = test_id.split("::")[0]
        totals[module] = totals.get(module, 0.0) + seconds
    return sorted(totals.items(), key=lambda row: -row[1])


def table(title: str, rows: list[tuple[str, float]], top: int, slowest: str = "slowest") -> list[str]:
    if not rows: return [f"{title}: none recorded"]
    width = max(len(name) for name, _ in rows[:top])
    return [f"{title} (the {min(top, len(rows))} {slowest} of {len(rows)}, {sum(s for _, s in rows):.0f} s in all):"] + \
           [f"  {seconds:7.1f} s  {name:<{width}}" for name, seconds in rows[:top]]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phases", type=Path, required=True)
    parser.add_argument("--notebooks", type=Path, required=True)
    parser.add_argument("--tests", type=Path, nargs="+", required=True)
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args(argv)
    rows = phases(args.phases)
    lines = ["", "== the test command's budget (15 minutes on 2 cores; printed, not asserted)"]
    lines += [f"  {seconds:7.1f} s  {name}" for name, seconds in rows]
    lines += [f"  {sum(s for _, s in rows):7.1f} s  in all ({sum(s for _, s in rows) / 60:.1f} min)"]
    lines += table("notebooks", notebooks(args.notebooks), args.top)
    every_test = sorted((row for path in args.tests for row in tests(path)), key=lambda row: -row[1])
    lines += table("tests", every_test, args.top)
    lines += table("test modules", modules(every_test), args.top, slowest="costliest")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
