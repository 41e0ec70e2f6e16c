"""README.md, written from nbs/index.ipynb by tools/make_readme.py, is read on its own (on a code host, in the package's
metadata): each of its relative links must reach a file from the repository root, where it sits."""
import re
import sys
from pathlib import Path

from tests.tools import TOOLS, load_tool

ROOT = Path(__file__).resolve().parent.parent


def make_readme():
    "tools/make_readme.py as a module (it imports its sibling chapter_times)."
    sys.path.insert(0, str(TOOLS))
    try: return load_tool("make_readme")
    finally: sys.path.remove(str(TOOLS))


def relative_links(text: str) -> list[str]:
    return [target for target in re.findall(r"\]\(([^)\s]+)\)", text) if not re.match(r"[a-z]+:|#", target)]


def test_every_relative_link_of_the_readme_reaches_a_file():
    links = relative_links((ROOT / "README.md").read_text())
    assert len(links) >= 40, links  # the route tables link every chapter
    missing = [link for link in links if not (ROOT / link.split("#")[0]).exists()]
    assert not missing, f"README.md links to files that are not there: {missing}"


def test_chapter_links_are_moved_into_nbs_and_nothing_else_is():
    text = ("[ch 5](05_first_loop.ipynb) [anchor](10_training.ipynb#on-a-gpu) [site](https://x.org/a.ipynb) "
            "[here](#top) [done](nbs/03_mcts.ipynb)")
    assert make_readme().chapter_links_from_root(text) == (
        "[ch 5](nbs/05_first_loop.ipynb) [anchor](nbs/10_training.ipynb#on-a-gpu) [site](https://x.org/a.ipynb) "
        "[here](#top) [done](nbs/03_mcts.ipynb)")
