"""Do the chapters still print what they store? The docs site shows the outputs committed in nbs/, so a chapter whose
code changed but whose outputs were not stored again (tools/store_outputs.py) shows a learner something a rerun no
longer gives. The test command runs every chapter in a copy of nbs/ with `nbdev-test --save`; this compares the text
each code cell printed there with the text stored in nbs/, cell by cell, and names every cell that differs.

Compared: printed text and the text forms of results (plain, markdown, HTML), not pictures (PNG and SVG bytes depend on
the plotting libraries' versions, not on what the chapter computes). Not compared: cells marked `slow` (their outputs
are not stored, see store_outputs.py), chapters the copy did not run (unchanged there), and the cells in `VARIES`,
whose figures come from float32 training and so differ from one CPU to another (the same CPU reruns them exactly).

    python tools/check_outputs.py _outputs/nbs      # the executed copies; the stored chapters are read from ./nbs
"""
import json
import sys
from pathlib import Path

TEXT_KINDS = ("text/plain", "text/markdown", "text/html", "text/latex")

# (chapter, cell id) -> what in it depends on the CPU's float32 rounding. Keep it short: a cell belongs here only if a
# rerun on another CPU changes it, never because it was not stored again.
VARIES = {
    ("10_training.ipynb", "e1ad949f"): "the tiny run's stage lines",
    ("10_training.ipynb", "2991553e"): "the tiny run's champion and Elo table",
    ("10a_loop.ipynb", "76b4f149"): "a one-iteration tiny run's stage lines",
    ("10b_god_training.ipynb", "c31bb9f2"): "losses after 60 training steps",
}


def is_slow(cell: dict) -> bool:
    "Is the cell marked `#| slow` (run by the test command, its outputs not stored)?"
    return any(line.strip().replace(" ", "") == "#|slow" for line in "".join(cell["source"]).splitlines())


def printed(cell: dict) -> list[str]:
    "The text a code cell showed, one string per output, in order (pictures left out)."
    texts = []
    for output in cell.get("outputs", []):
        if output["output_type"] == "stream": texts.append("".join(output["text"]))
        elif output["output_type"] == "error": texts.append(f"{output['ename']}: {output['evalue']}")
        else:
            data = output.get("data", {})
            texts.extend("".join(data[kind]) for kind in TEXT_KINDS if kind in data)
    return texts


def first_difference(stored: list[str], now: list[str]) -> str:
    "The first line where the two differ, both versions, shortened."
    old, new = "".join(stored).splitlines(), "".join(now).splitlines()
    for i in range(max(len(old), len(new))):
        a, b = (old[i] if i < len(old) else "(nothing)"), (new[i] if i < len(new) else "(nothing)")
        if a != b: return f"line {i + 1}: stored {a[:100]!r}, now {b[:100]!r}"
    return "the same lines, split into outputs differently"


def differences(stored_path: Path, run_path: Path) -> list[str]:
    "A sentence for each code cell of the chapter whose printed text differs between the two notebooks."
    stored = {c.get("id"): c for c in json.loads(stored_path.read_text())["cells"] if c["cell_type"] == "code"}
    found = []
    for number, cell in enumerate(c for c in json.loads(run_path.read_text())["cells"] if c["cell_type"] == "code"):
        before = stored.get(cell.get("id"))
        if before is None or is_slow(before) or (stored_path.name, cell.get("id")) in VARIES: continue
        if printed(before) != printed(cell):
            found.append(f"{stored_path}, code cell {number + 1} (id {cell.get('id')}): "
                         f"{first_difference(printed(before), printed(cell))}")
    return found


def main(run_dir: Path, stored_dir: Path = Path("nbs")) -> int:
    "Print what differs between the chapters run in `run_dir` and those stored in `stored_dir`; 1 if anything does."
    found = []
    for run_path in sorted(run_dir.glob("*.ipynb")):
        stored_path = stored_dir / run_path.name
        if stored_path.exists(): found += differences(stored_path, run_path)
    if not found:
        print(f"stored outputs: every chapter run in {run_dir} printed what nbs/ stores")
        return 0
    print("FAIL: these cells no longer print what their chapter stores (the docs site shows the stored text):", file=sys.stderr)
    for line in found: print("  " + line, file=sys.stderr)
    print("Store the chapter's outputs again (python tools/store_outputs.py nbs/CHAPTER.ipynb) and commit them; if a cell's "
          "figures depend on the CPU's float rounding, add it to VARIES in tools/check_outputs.py.", file=sys.stderr)
    return 1


if __name__ == "__main__":
    if len(sys.argv) != 2: sys.exit(__doc__)
    sys.exit(main(Path(sys.argv[1])))
