"""The pip-only path: chapters 1-6 run after `pip install` of the package alone (no apt, npm or Chromium).

A virtual environment gets torch's CPU build first, exactly as tools/setup.sh installs it on a machine without a GPU
(pinned: an unpinned torch pulls several GB of CUDA wheels), then a plain, non-editable `pip install` of a copy of the
package (no extras): tests/pip_only_venv.py, which keeps it in `.cache/pip-only/` between runs. The core chapters run
with that environment's `nbdev-test`, from a folder that holds copies of the notebooks and the project's settings but
no `santorini_az/`, with a PATH that holds only the environment's own programs: no node, npm or Chromium can be found,
and the package cannot be imported from the working tree."""
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests import pip_only_venv
from tests.tools import load_tool

check_outputs = load_tool("check_outputs")

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("pip_only")]  # one worker: its module fixture is costly to build twice

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ["01_game", "01a_notation", "02_encoding", "03_mcts", "04_network", "05_first_loop", "06_engine"]
HIDDEN = ["node", "npm", "npx", "chromium", "chromium-browser", "google-chrome", "quarto", "apt-get"]
CHAPTER_TIMEOUT_S = 900


def run(command: list, what: str, timeout: int, **kwargs) -> subprocess.CompletedProcess:
    "Run `command`; fail naming `what` and showing the end of its output if it does not succeed."
    try: return pip_only_venv.run(command, what, timeout, **kwargs)
    except pip_only_venv.BuildError as error: pytest.fail(str(error))


def course_copy(dest: Path) -> Path:
    "The notebooks (and what they read beside them) with the project's nbdev settings, but no `santorini_az/` folder."
    shutil.copytree(ROOT / "nbs", dest / "nbs", ignore=shutil.ignore_patterns(".ipynb_checkpoints", "_*", ".last_checked"))
    shutil.copy(ROOT / "pyproject.toml", dest / "pyproject.toml")
    return dest


def bare_env(venv: Path) -> dict:
    "The environment for the chapters: PATH = the venv's programs only, nothing from the working tree on PYTHONPATH."
    # PYTHONDONTWRITEBYTECODE (set on CI machines) is dropped: the venv is installed without bytecode
    # (tests/pip_only_venv.py), and the first chapter to import a module writes it for the others
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PYTHONDONTWRITEBYTECODE")}
    env.update(PATH=str(venv / "bin"), VIRTUAL_ENV=str(venv), MPLBACKEND="Agg")
    return env


@pytest.fixture(scope="module")
def venv() -> Path:
    "The pip-only venv: torch's CPU build and the package installed from a copy of the tree, alone (no extras)."
    try: return pip_only_venv.ensure_venv(say=lambda line: print("\n" + line))
    except pip_only_venv.BuildError as error: pytest.fail(str(error))


def test_nothing_outside_the_venv(venv, tmp_path):
    "The chapters' environment finds no node, npm or Chromium, and imports the installed package, not the tree's."
    env = bare_env(venv)
    for program in HIDDEN:
        assert shutil.which(program, path=env["PATH"]) is None, f"{program} is visible to the pip-only chapters"
    done = run([str(venv / "bin" / "python"), "-c", "import santorini_az, fastcore, nbdev; print(santorini_az.__file__)"],
               "importing the installed package", 120, env=env, cwd=tmp_path)
    assert Path(done.stdout.strip()).is_relative_to(venv), done.stdout
    assert shutil.which("nbdev-test", path=env["PATH"]), "nbdev-test is not installed by `pip install santorini_az`"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_runs_pip_only(venv, tmp_path, chapter):
    "Each core chapter of the first six runs top to bottom (slow cells included) in the pip-only venv."
    if not (ROOT / "nbs" / f"{chapter}.ipynb").exists():  # renamed or gone: CHAPTERS must follow, not skip it
        pytest.fail(f"nbs/{chapter}.ipynb is in test_pip_only.CHAPTERS but not in nbs/")
    course = course_copy(tmp_path / "course")
    start = time.monotonic()
    done = run([str(venv / "bin" / "nbdev-test"), f"nbs/{chapter}.ipynb", "--flags", "slow", "--do-print", "--save"],
               f"nbdev-test of {chapter} in the pip-only venv", CHAPTER_TIMEOUT_S, env=bare_env(venv), cwd=course)
    assert f"Completed {course / 'nbs' / chapter}.ipynb" in done.stdout, f"nbdev-test ran no chapter:\n{done.stdout}"
    print(f"\n{chapter}: {time.monotonic() - start:.0f} s")
    # What it printed (saved in the copy) is what the notebook stores: on any machine, but for the cells marked
    # cpu_dependent on another kind than the one that stored it (tools/check_outputs.py, run on the other chapters)
    name = f"{chapter}.ipynb"
    same_machine = check_outputs.stored_on().get(name) == check_outputs.machine()
    differ = check_outputs.differences(ROOT / "nbs" / name, course / "nbs" / name, same_machine)
    assert not differ, ("these cells no longer print what the chapter stores (store its outputs again: "
                        "python tools/store_outputs.py nbs/" + name + ", or, if only this kind of machine prints "
                        "them otherwise, mark them cpu_dependent):\n" + "\n".join(differ))
