"""The test command for one chapter: a check in a minute or two while you work on it, instead of the whole suite's
eighteen or so. It does for the chapter what tools/test.sh does for all of them, in the same way:

1. `nbdev-export` and `nbdev-clean` (the package from the notebooks, the notebooks as the test command wants them);
2. the chapter top to bottom in a copy of nbs/ (`nbdev-test --save`, one torch thread, as the test command runs it);
3. what it printed against what nbs/ stores (tools/check_outputs.py: the docs site shows the stored text);
4. the tests of the chapter's module, on every core: tests/test_MODULE.py where there is one, else the test files that
   import the module (a chapter that exports no module has none; `--tests` names test files to run instead);
5. with `--run-all`, the chapter as a learner's "Run all" in JupyterLab runs it: every code cell in order, those
   marked `eval: false` too (Jupyter does not know nbdev's flags), and not under nbdev-test (no `IN_TEST`), so the
   long cells skip themselves (`long_cell`) and the measurements made by hand say they were not run (`by_hand`).

Cells and tests marked `slow` are skipped unless `--slow` is given. It ends with one line per step (its time, and
whether it passed) and exits 1 if one failed; a chapter or test file that does not exist is named in one sentence
(exit 2), before any work.

    python tools/check_chapter.py 05                  # nbs/05_first_loop.ipynb and tests/test_first_loop.py
    python tools/check_chapter.py 10a --slow          # with the slow cells and tests
    python tools/check_chapter.py 10 --tests tests/test_training.py
    python tools/check_chapter.py 11c --run-all       # and as JupyterLab's Run all would
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NBS, TESTS = ROOT / "nbs", ROOT / "tests"
WORK = ROOT / "_outputs"  # the chapter runs in a copy of nbs/ in WORK/check-CHAPTER (ignored by git, as the test command's)
ALONE = ("test_ray.py",)  # test files that cannot run under pytest-xdist (tools/test.sh runs them on their own)


def find_chapter(name: str) -> Path:
    "The notebook that `name` means: its key (05, 10a), its file name with or without .ipynb, or its path."
    stem = Path(name).name.removesuffix(".ipynb")
    found = sorted(NBS.glob(f"{stem}_*.ipynb")) + ([NBS / f"{stem}.ipynb"] if (NBS / f"{stem}.ipynb").exists() else [])
    if len(found) != 1:
        raise LookupError(f"no chapter {name!r} in nbs/: give its key (05, 10a) or its file name (05_first_loop.ipynb)")
    return found[0]


def exported_module(notebook: Path) -> str | None:
    "The module the chapter exports (`#| default_exp NAME`), or None."
    found = re.search(r"#\|\s*default_exp\s+(\w+)", notebook.read_text())
    return found.group(1) if found else None


def module_tests(module: str | None, tests: Path = TESTS) -> list[Path]:
    "tests/test_MODULE.py where it exists, else the test files with a statement that imports `santorini_az.MODULE`."
    if module is None: return []
    own = tests / f"test_{module}.py"
    if own.exists(): return [own]
    imports = re.compile(rf"^\s*(from santorini_az\.{module} import|import santorini_az\.{module}\b"
                         rf"|from santorini_az import [^\n]*\b{module}\b)", re.M)  # import statements, not text
    return [path for path in sorted(tests.glob("test_*.py")) if imports.search(path.read_text())]


def run_folder(notebook: Path) -> Path:
    "Where the chapter runs: WORK/check-CHAPTER, its copy of nbs/ and the IPython profile of the run."
    return WORK / f"check-{notebook.stem}"


def step(name: str, command: list[str], env: dict | None = None, unset: tuple[str, ...] = ()) -> tuple[str, float, bool]:
    "Run one step's command from the repository root, its output shown as it comes: (name, seconds, passed)."
    print(f"== {name}", flush=True)
    start = time.perf_counter()
    environment = {k: v for k, v in {**os.environ, **(env or {})}.items() if k not in unset}
    passed = subprocess.run(command, cwd=ROOT, env=environment).returncode == 0
    return name, time.perf_counter() - start, passed


def fresh_copy(folder: Path) -> Path:
    "`folder`, emptied, with a copy of nbs/ in it (and README.md beside it: chapter 12 reads ../README.md)."
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(NBS, folder / "nbs")
    shutil.copy(ROOT / "README.md", folder)
    return folder


def run_chapter(notebook: Path, slow: bool) -> tuple[str, float, bool]:
    """Step 2: the chapter in a fresh copy of nbs/ (a folder of its own: two chapters can be checked at once), on one
    torch thread at its start, as tools/test.sh runs it."""
    work = fresh_copy(run_folder(notebook))
    startup = work / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    shutil.copy(ROOT / "tools" / "fresh_kernel.py", startup)
    env = {"IPYTHONDIR": str(work / "ipython"), "SANTORINI_FRESH_THREADS": "1", "OMP_NUM_THREADS": "1",
           "OMP_WAIT_POLICY": "PASSIVE"}
    command = ["nbdev-test", str(work / "nbs"), "--file-re", f"^{re.escape(notebook.name)}$", "--save", "--timing"]
    return step(f"chapter {notebook.stem}{' (slow cells too)' if slow else ''}",
                command + (["--flags", "slow"] if slow else []), env)


def run_tests(files: list[Path], slow: bool) -> list[tuple[str, float, bool]]:
    "Step 4: the test files on every core (pytest-xdist), those that cannot share it on their own."
    flags = ["-q", "-p", "no:cacheprovider"] + (["--runslow"] if slow else [])
    shared = [str(f.relative_to(ROOT)) for f in files if f.name not in ALONE]
    alone = [str(f.relative_to(ROOT)) for f in files if f.name in ALONE]
    results = []
    if shared:
        results.append(step(f"tests: {' '.join(shared)}", [sys.executable, "-m", "pytest", *flags, "-n",
                                                             os.environ.get("PYTEST_WORKERS", "2"), "--dist", "loadgroup", *shared]))
    if alone:
        results.append(step(f"tests: {' '.join(alone)}", [sys.executable, "-m", "pytest", *flags, *alone],
                            {"OMP_WAIT_POLICY": "PASSIVE"}))
    return results


def learner_run_all(notebook: Path) -> tuple[str, float, bool]:
    "Step 5: the chapter in a copy of nbs/ of its own, every code cell in order in a plain kernel (nbconvert), as JupyterLab's Run all."
    work = fresh_copy(run_folder(notebook) / "run-all")
    command = ["jupyter", "nbconvert", "--to", "notebook", "--execute", "--ExecutePreprocessor.timeout=3600",
               "--output-dir", str(work / "ran"), str(work / "nbs" / notebook.name)]
    return step("a learner's Run all (every cell, eval: false ones too)", command, unset=("IN_TEST", "SANTORINI_LONG_CELLS"))


def check_chapter(notebook: Path, tests: list[Path], slow: bool, run_all: bool = False) -> int:
    "The steps; a line for each at the end; 0 if all passed, else 1."
    bin_dir = Path(sys.executable).parent  # nbdev's commands beside this Python (.venv/bin)
    os.environ["PATH"] = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
    results = [step("nbdev-export and nbdev-clean", ["sh", "-c", f"nbdev-export && nbdev-clean --fname {shlex.quote(str(notebook))}"])]
    results.append(run_chapter(notebook, slow))
    if results[-1][2]:  # a chapter that stopped part way printed less: the comparison would only repeat its failure
        results.append(step("stored outputs", [sys.executable, "tools/check_outputs.py",
                                               str(run_folder(notebook) / "nbs" / notebook.name)]))
    if tests: results += run_tests(tests, slow)
    else: print(f"== no tests: {notebook.name} exports no module with tests of its own (name some with --tests)")
    if run_all: results.append(learner_run_all(notebook))
    print(f"\n== {notebook.stem}: the check's steps")
    for name, seconds, passed in results:
        print(f"  {'passed' if passed else 'FAILED':6}  {seconds:6.1f} s  {name}")
    return 0 if all(passed for _, _, passed in results) else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("chapter", help="the chapter: its key (05, 10a) or its file name")
    parser.add_argument("--slow", action="store_true", help="also the cells and tests marked slow")
    parser.add_argument("--tests", nargs="+", metavar="FILE", help="these test files instead of the module's")
    parser.add_argument("--run-all", action="store_true", help="also run the chapter as JupyterLab's Run all does")
    args = parser.parse_args(argv)
    try:
        notebook = find_chapter(args.chapter)
    except LookupError as e:
        print(f"check_chapter: {e}", file=sys.stderr)
        return 2
    tests = [Path(f).resolve() for f in args.tests] if args.tests else module_tests(exported_module(notebook))
    missing = [f for f in tests if not f.is_file() or f.parent != TESTS]
    if missing:
        print(f"check_chapter: --tests: not a test file in tests/: {', '.join(map(str, missing))}", file=sys.stderr)
        return 2
    return check_chapter(notebook, tests, args.slow, args.run_all)


if __name__ == "__main__":
    sys.exit(main())
