"""Fail if a chapter has a cell that the docs build would execute out of context.

nbdev's docs pre-processing runs every exported cell and every cell that contains an import, without the cells around
it. A cell that imports and then does work (a test, a plot, a benchmark) therefore runs out of context, and fails or
wastes time. Imports go in cells of their own. This reuses nbdev's own rule (nbdev.processors._do_eval).
"""
import ast
import sys
from pathlib import Path

from nbdev.process import NBProcessor
from nbdev.processors import _do_eval

ROOT = Path(__file__).resolve().parent.parent
SHOWN_DIRECTIVES = {"export", "exports", "exporti", "exec_doc"}


def offending_cells(path: Path):
    for cell in NBProcessor(path, procs=[]).nb.cells:
        if cell.cell_type != "code" or not _do_eval(cell) or cell.directives_.keys() & SHOWN_DIRECTIVES:
            continue
        if not all(isinstance(node, (ast.Import, ast.ImportFrom)) for node in cell.parsed_()):
            yield cell


def main() -> int:
    bad = [(path, cell) for path in sorted((ROOT / "nbs").glob("*.ipynb")) for cell in offending_cells(path)]
    for path, cell in bad:
        print(f"{path.relative_to(ROOT)} cell {cell.idx_}: imports mixed with other code "
              f"(the docs build would run it out of context): {cell.source.splitlines()[0]!r}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
