"""Execute a chapter in place so that its stored outputs are the static pictures: the live-widget references that
executing leaves behind (random model ids, nothing to show without a kernel) are dropped, the widgets' SVG/HTML
fallbacks stay. Then run nbdev-clean. Usage: python tools/run_chapter.py nbs/07_widgets.ipynb"""
import sys

import nbformat
from nbclient import NotebookClient

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

for path in sys.argv[1:]:
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": "nbs"}}).execute()
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            output.get("data", {}).pop(WIDGET_VIEW, None)
    nb.metadata.pop("widgets", None)
    nbformat.write(nb, path)
