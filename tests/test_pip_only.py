"""The pip-only path: chapters 1-6 run after `pip install` of the package alone (no apt, npm or Chromium).

A virtual environment gets torch's CPU build first, exactly as tools/setup.sh installs it on a machine without a GPU
(pinned: an unpinned torch pulls several GB of CUDA wheels), then a plain, non-editable `pip install` of a copy of the
package (no extras). The core chapters run with that environment's `nbdev-test`, from a folder that holds copies of
the notebooks and the project's settings but no `santorini_az/`, with a PATH that holds only the environment's own
programs: no node, npm or Chromium can be found, and the package cannot be imported from the working tree.

The environment is kept in `.cache/pip-only/` between runs, with the digests of what it was built from: it is built
again from nothing when the Python, torch's pin or pyproject.toml change, and the package alone is reinstalled
(`--no-deps`) when any of its files change, so a second run pays neither the install nor numba's compile of an
unchanged package. A clean clone (CI) always builds it fresh; so does `SANTORINI_FRESH_VENV=1`."""
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("pip_only")]  # one worker: its module fixture is costly to build twice

ROOT = Path(__file__).resolve().parent.parent
TORCH_CPU = "torch==2.13.0"  # the pin of tools/setup.sh on a machine without a GPU
CHAPTERS = ["01_game", "01a_notation", "02_encoding", "03_mcts", "04_network", "05_first_loop", "06_engine"]
HIDDEN = ["node", "npm", "npx", "chromium", "chromium-browser", "google-chrome", "quarto", "apt-get"]
INSTALL_TIMEOUT_S = 1500
CHAPTER_TIMEOUT_S = 900


def run(command: list, what: str, timeout: int, **kwargs) -> subprocess.CompletedProcess:
    "Run `command`; fail naming `what` and showing the end of its output if it does not succeed."
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, **kwargs)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{what} took over {timeout} s")
    if done.returncode != 0:
        pytest.fail(f"{what} failed ({done.returncode}):\n{(done.stdout + done.stderr)[-4000:]}")
    return done


def package_copy(dest: Path) -> Path:
    "What `pip install .` needs (the package, pyproject.toml, README, LICENSE), copied so no build files land in the tree."
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "santorini_az", dest / "santorini_az", ignore=ignore)
    for name in ("pyproject.toml", "README.md", "LICENSE"): shutil.copy(ROOT / name, dest / name)
    return dest


def course_copy(dest: Path) -> Path:
    "The notebooks (and what they read beside them) with the project's nbdev settings, but no `santorini_az/` folder."
    shutil.copytree(ROOT / "nbs", dest / "nbs", ignore=shutil.ignore_patterns(".ipynb_checkpoints", "_*", ".last_checked"))
    shutil.copy(ROOT / "pyproject.toml", dest / "pyproject.toml")
    return dest


def bare_env(venv: Path) -> dict:
    "The environment for the chapters: PATH = the venv's programs only, nothing from the working tree on PYTHONPATH."
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update(PATH=str(venv / "bin"), VIRTUAL_ENV=str(venv), MPLBACKEND="Agg")
    return env


def digest(*parts) -> str:
    "A short hash of strings and files' contents (folders: every file under them but caches, in a fixed order)."
    h = hashlib.sha256()
    for part in parts:
        if isinstance(part, Path):
            files = sorted(f for f in part.rglob("*") if f.is_file() and "__pycache__" not in f.parts) if part.is_dir() else [part]
            for f in files: h.update(str(f.relative_to(part.parent)).encode()); h.update(f.read_bytes())
        else: h.update(str(part).encode())
    return h.hexdigest()[:16]


def build_venv(venv: Path, src: Path, env: dict, package_only: bool) -> None:
    "Create `venv` with torch's CPU build and the package from `src`; or, if only the package changed, reinstall it alone."
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    if package_only:
        run(pip + ["--no-deps", "--force-reinstall", str(src)], "pip reinstall of the changed package", INSTALL_TIMEOUT_S, env=env)
        return
    shutil.rmtree(venv, ignore_errors=True)
    run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", str(venv)], "creating the venv", 120)
    run(pip + [TORCH_CPU], f"pip install {TORCH_CPU}", INSTALL_TIMEOUT_S, env=env)
    run(pip + [str(src)], "pip install of the package", INSTALL_TIMEOUT_S, env=env)


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    "The pip-only venv: torch's CPU build and the package installed from a copy of the tree, alone (no extras)."
    cache = ROOT / ".cache" / "pip-only"
    cache.mkdir(parents=True, exist_ok=True)
    venv, stamp = cache / "venv", cache / "built-from.txt"
    src = package_copy(tmp_path_factory.mktemp("pip_only") / "src")
    wanted = [digest(sys.version, TORCH_CPU, ROOT / "pyproject.toml"), digest(src / "santorini_az", src / "README.md")]
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("PYTHONPATH", None)
    with open(cache / "lock", "w") as lock:  # one test run builds it at a time
        fcntl.flock(lock, fcntl.LOCK_EX)
        have = stamp.read_text().split() if stamp.exists() and (venv / "bin" / "python").exists() else []
        fresh = os.environ.get("SANTORINI_FRESH_VENV") == "1"
        if fresh or have != wanted:
            start = time.monotonic()
            stamp.unlink(missing_ok=True)
            package_only = not fresh and len(have) == 2 and have[0] == wanted[0]
            build_venv(venv, src, env, package_only)
            stamp.write_text(" ".join(wanted))
            print(f"\npip-only venv {'package reinstalled' if package_only else 'built'} in {time.monotonic() - start:.0f} s")
    return venv


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
    if not (ROOT / "nbs" / f"{chapter}.ipynb").exists():
        pytest.skip(f"nbs/{chapter}.ipynb is not in the tree yet")
    course = course_copy(tmp_path / "course")
    start = time.monotonic()
    done = run([str(venv / "bin" / "nbdev-test"), f"nbs/{chapter}.ipynb", "--flags", "slow", "--do-print"],
               f"nbdev-test of {chapter} in the pip-only venv", CHAPTER_TIMEOUT_S, env=bare_env(venv), cwd=course)
    assert f"Completed {course / 'nbs' / chapter}.ipynb" in done.stdout, f"nbdev-test ran no chapter:\n{done.stdout}"
    print(f"\n{chapter}: {time.monotonic() - start:.0f} s")
