"""Write README.md from nbs/index.ipynb (the home page), as nbdev-readme would with Quarto.

Quarto cannot be installed on every machine, so this small converter keeps README.md in sync anywhere: markdown cells
are copied, code cells become fenced Python blocks (nbdev directives removed, `#| hide` cells skipped), and the
outputs stored in the notebook follow as text blocks. Links to chapters point into nbs/, where README.md finds them.

Before that it writes the chapter times into the route tables of nbs/index.ipynb from their one source,
nbs/data/chapter_times.json (see tools/chapter_times.py), and it fails, naming the chapter and both times, when a
chapter's header states another time than the data file, or when a core chapter outgrows the core track (over 5,000
words of markdown, or over 3 minutes of running: tools/chapter_times.py's `lean_problems`).
"""
import json
import re
import sys
from pathlib import Path

import chapter_times

ROOT = Path(__file__).resolve().parent.parent


def cell_markdown(cell: dict) -> str:
    source = "".join(cell["source"])
    if cell["cell_type"] == "markdown":
        return source
    lines = source.splitlines()
    if any(line.strip() in ("#| hide", "#|hide") for line in lines):
        return ""
    code = "\n".join(line for line in lines if not line.startswith("#|")).strip()
    parts = [f"```python\n{code}\n```"] if code else []
    for output in cell.get("outputs", []):
        text = output.get("text") or output.get("data", {}).get("text/plain")
        if text:
            parts.append("```\n" + "".join(text).rstrip() + "\n```")
    return "\n\n".join(parts)


def chapter_links_from_root(text: str) -> str:
    "The home page links chapters as `(05_first_loop.ipynb)`, beside them in nbs/; README.md sits a folder up."
    return re.sub(r"\]\((?![a-z]+:|#|/|nbs/)([^)\s]+\.ipynb(?:#[^)]*)?)\)", r"](nbs/\1)", text)


def main() -> int:
    times = chapter_times.update_data()
    chapter_times.update_index(times)
    notebook = json.loads((ROOT / "nbs" / "index.ipynb").read_text())
    blocks = [cell_markdown(cell) for cell in notebook["cells"]]
    text = chapter_links_from_root("\n\n".join(b for b in blocks if b.strip()) + "\n")
    (ROOT / "README.md").write_text(text)
    problems = chapter_times.header_problems(times) + chapter_times.lean_problems(times)
    for problem in problems: print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
