"""Run chapters top to bottom and store their outputs in the notebooks (cells marked `slow` are skipped, as in
`nbdev-test`), then let `nbdev-clean` strip execution counts and metadata. Outputs must be deterministic: seed
everything, keep timings and progress bars out of stored outputs.

    python tools/store_outputs.py nbs/03_mcts.ipynb nbs/05_engine.ipynb ...
"""
import sys
from pathlib import Path

from nbdev.test import test_nb

for name in sys.argv[1:]:
    ok, seconds = test_nb(Path(name).resolve(), skip_flags=["slow"], save=True)
    print(f"{name}: {'stored' if ok else 'FAILED (nothing stored)'} in {seconds:.0f}s")
    if not ok: sys.exit(1)
