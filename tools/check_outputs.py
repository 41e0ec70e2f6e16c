"""Do the chapters still print what they store? The docs site shows the outputs committed in nbs/, so a chapter whose
code changed but whose outputs were not stored again (tools/store_outputs.py) shows a learner something a rerun no
longer gives. The test command runs every chapter in a copy of nbs/ with `nbdev-test --save`; this compares the text
each code cell printed there with the text stored in nbs/, cell by cell, and names every cell that differs.

Float rounding differs between CPUs (their vector units and torch's kernels for them), and a few cells print numbers
that show it: the last losses of a short training, a difference measured to two digits. Such a cell is marked
`#| cpu_dependent` (the prose beside it states what varies), and it is compared only on the kind of machine its
chapter was stored on: store_outputs.py records that kind for each chapter in nbs/data/stored_outputs.json
(`machine()`). Every other cell is compared on every machine, so a number that a learner's rerun on another CPU does
not give fails here, on the first machine of that kind the test command runs on. Measured 2026-12-04: the chapters
stored on an AMD EPYC (Zen 4, AVX-512) printed the same on an Intel Xeon (AVX-512, AMX) but for 7 cells in 5 chapters.

Compared: printed text and the text forms of results (plain, markdown, HTML), not pictures (PNG and SVG bytes depend on
the plotting libraries' versions, not on what the chapter computes), and not the cells marked `slow` (their outputs are
not stored, see store_outputs.py).

    python tools/check_outputs.py _outputs/nbs/10a_loop.ipynb ...    # chapters run; the stored ones are read from ./nbs
"""
import json
import platform
import sys
from pathlib import Path

TEXT_KINDS = ("text/plain", "text/markdown", "text/html", "text/latex")
RECORD = Path(__file__).resolve().parent.parent / "nbs" / "data" / "stored_outputs.json"  # chapter -> its machine


def machine() -> str:
    "The kind of machine, as far as float rounding goes: the CPU model, torch's CPU path, the cores torch uses, torch."
    import torch
    from santorini_az.bench import cpu_path
    cpu = {}
    if Path("/proc/cpuinfo").exists():
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            cpu.setdefault(key.strip(), value.strip())
    model = f"{cpu.get('model name', platform.processor())} (family {cpu.get('cpu family', '?')}, model {cpu.get('model', '?')})"
    return f"{model}, {cpu_path()}, {torch.get_num_threads()} threads, torch {torch.__version__}"


def stored_on(record: Path = RECORD) -> dict[str, str]:
    "The machine each chapter's outputs were stored on (empty before any was recorded)."
    return json.loads(record.read_text())["chapters"] if record.exists() else {}


def record_stored(chapter: str, record: Path = RECORD) -> None:
    "Note in `record` that `chapter`'s outputs were just stored on this machine."
    chapters = {**stored_on(record), chapter: machine()}
    record.write_text(json.dumps({"about": "The machine each chapter's stored outputs were made on (tools/store_outputs.py "
                                  "writes it, tools/check_outputs.py compares a chapter only on the same kind).",
                                  "chapters": dict(sorted(chapters.items()))}, indent=1) + "\n")


def marked(cell: dict, flag: str) -> bool:
    "Does the cell carry the directive `#| flag`?"
    return any(line.strip().replace(" ", "") == "#|" + flag for line in "".join(cell["source"]).splitlines())


def is_slow(cell: dict) -> bool:
    "Is the cell marked `#| slow` (run by the test command, its outputs not stored)?"
    return marked(cell, "slow")


def is_cpu_dependent(cell: dict) -> bool:
    "Is the cell marked `#| cpu_dependent` (what it prints varies with the CPU's float rounding)?"
    return marked(cell, "cpu_dependent")


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


def differences(stored_path: Path, run_path: Path, same_machine: bool = True) -> list[str]:
    """A sentence for each code cell of the chapter whose printed text differs between the two notebooks (on another
    kind of machine than the one that stored it, `same_machine` False, the cells marked `#| cpu_dependent` aside)."""
    stored = {c.get("id"): c for c in json.loads(stored_path.read_text())["cells"] if c["cell_type"] == "code"}
    found = []
    for number, cell in enumerate(c for c in json.loads(run_path.read_text())["cells"] if c["cell_type"] == "code"):
        before = stored.get(cell.get("id"))
        if before is None or is_slow(before) or (not same_machine and is_cpu_dependent(before)): continue
        if printed(before) != printed(cell):
            found.append(f"{stored_path}, code cell {number + 1} (id {cell.get('id')}): "
                         f"{first_difference(printed(before), printed(cell))}")
    return found


def main(run_paths: list[Path], stored_dir: Path = Path("nbs"), record: Path = RECORD, here: str | None = None) -> int:
    """Print what differs between the chapters run (`run_paths`) and the same chapters stored in `stored_dir`: every
    cell on the kind of machine that `record` says stored the chapter (`here`, this machine by default), all but those
    marked `#| cpu_dependent` on another; 1 if anything does."""
    here, machines = here or machine(), stored_on(record)
    found, same, elsewhere, set_aside = [], 0, {}, 0
    for run_path in sorted(run_paths):
        stored_path = stored_dir / run_path.name
        if not stored_path.exists(): continue
        on = machines.get(run_path.name, "a machine not recorded")
        found += differences(stored_path, run_path, same_machine=on == here)
        if on == here: same += 1
        else:
            elsewhere.setdefault(on, []).append(run_path.name)
            set_aside += sum(is_cpu_dependent(c) and not is_slow(c) for c in json.loads(stored_path.read_text())["cells"])
    for other, names in elsewhere.items():
        print(f"stored outputs: {len(names)} chapter{'' if len(names) == 1 else 's'} stored on {other} (this is {here}): "
              f"{', '.join(names)}")
    if not found:
        cells = f"the {set_aside} cell{'' if set_aside == 1 else 's'} marked cpu_dependent {'was' if set_aside == 1 else 'were'}"
        print(f"stored outputs: each of the {same + sum(map(len, elsewhere.values()))} chapters printed what "
              f"{stored_dir} stores ({same} stored on this kind of machine; on the others, {cells} not compared)")
        return 0
    print("FAIL: these cells no longer print what their chapter stores (the docs site shows the stored text):", file=sys.stderr)
    for line in found: print("  " + line, file=sys.stderr)
    print("Store the chapter's outputs again (python tools/store_outputs.py nbs/CHAPTER.ipynb) and commit them. A chapter "
          "must print the same on a rerun: seed what it draws, and keep timings out of what it prints. If it printed "
          "the same on the machine that stored it and differs on this one only by the CPU's float rounding, print less "
          "precision or a range, or mark the cell `#| cpu_dependent` and say in the prose what varies.", file=sys.stderr)
    return 1


if __name__ == "__main__":
    paths = [Path(a) for a in sys.argv[1:]]
    missing = [str(p) for p in paths if p.suffix != ".ipynb" or not p.is_file()]
    if not paths or missing:
        print(f"check_outputs: expected the chapters that ran, as .ipynb files; not such a file: "
              f"{', '.join(missing) or '(no argument)'}", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(paths))
