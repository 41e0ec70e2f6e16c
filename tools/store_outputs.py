"""Run chapters top to bottom and store their outputs in the notebooks (cells marked `slow` are skipped, as in
`nbdev-test`), then run `nbdev-clean`. Live-widget references (a random model id that shows nothing without a kernel)
are dropped; the widgets' static SVG/HTML pictures stay, so the docs site shows them. Outputs must be deterministic:
seed everything, keep timings and progress bars out of stored outputs; running this twice must change nothing. Each
chapter runs in a process of its own, and the machine it ran on is noted in nbs/data/stored_outputs.json (the test
command compares a chapter's stored outputs with a rerun's on every machine, and its cells marked `#| cpu_dependent`
only on that kind of machine: tools/check_outputs.py).

    python tools/store_outputs.py nbs/03_mcts.ipynb nbs/29_widgets.ipynb ...
    python tools/store_outputs.py --slow nbs/28_cluster.ipynb    # run the `slow` cells too, and store theirs
"""
import json
import subprocess
import sys
from pathlib import Path

from nbdev.clean import nbdev_clean
from nbdev.test import test_nb

from check_outputs import record_stored

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def drop_widget_views(path: Path) -> None:
    notebook = json.loads(path.read_text())
    for cell in notebook["cells"]:
        for output in cell.get("outputs", []):
            output.get("data", {}).pop(WIDGET_VIEW, None)
    notebook["metadata"].pop("widgets", None)
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n")


def store(name: str, slow: bool) -> None:
    "Run the chapter `name` top to bottom and store its outputs (exit naming it if a cell fails)."
    path = Path(name).resolve()
    ok, seconds = test_nb(path, skip_flags=[] if slow else ["slow"], save=True)
    if not ok: sys.exit(f"{name}: FAILED (nothing stored)")
    drop_widget_views(path)
    nbdev_clean(fname=str(path))
    print(f"{name}: stored in {seconds:.0f}s")


if __name__ == "__main__":
    slow = "--slow" in sys.argv
    names = [a for a in sys.argv[1:] if a not in ("--slow", "--here")]
    if "--here" in sys.argv: store(names[0], slow)  # one chapter, in this process (as run by the loop below)
    else:
        for name in names:
            # Each chapter in a process of its own, as a learner's fresh kernel runs it: a chapter may change its
            # process's state (torch's thread count, above all), and the next chapter's float rounding with it.
            done = subprocess.run([sys.executable, __file__, "--here", name] + (["--slow"] if slow else []))
            if done.returncode: sys.exit(done.returncode)
            record_stored(Path(name).name)  # what tools/check_outputs.py compares it on
