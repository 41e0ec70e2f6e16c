"tools/check_chapter.py: one chapter's share of the test command; it names a chapter it cannot find, finds the tests of the chapter's module, fails, naming the cell, when the chapter no longer prints what it stores, and with --run-all fails when a learner's Run all in JupyterLab would stop."
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.tools import TOOLS, load_tool

check_chapter = load_tool("check_chapter")
ROOT = TOOLS.parent


@pytest.mark.parametrize("name, notebook", [("05", "05_first_loop.ipynb"), ("10", "10_training.ipynb"),
                                            ("10a", "10a_loop.ipynb"), ("05_first_loop.ipynb", "05_first_loop.ipynb"),
                                            ("nbs/01a_notation.ipynb", "01a_notation.ipynb"), ("index", "index.ipynb")])
def test_a_chapter_is_found_by_its_key_or_its_file(name, notebook):
    assert check_chapter.find_chapter(name).name == notebook


@pytest.mark.parametrize("name", ["5", "1", "99", "first_loop", ""])
def test_an_unknown_chapter_is_named_in_one_sentence(name, capsys):
    assert check_chapter.main([name]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"check_chapter: no chapter {name!r} in nbs/: give its key (05, 10a) or its file name (05_first_loop.ipynb)"]


def test_a_missing_test_file_is_named_before_any_work(capsys, monkeypatch):
    monkeypatch.setattr(check_chapter, "check_chapter", lambda *args: pytest.fail("the check started"))
    assert check_chapter.main(["05", "--tests", "tests/test_first_loop.py", "tests/test_nothing_here.py"]) == 2
    assert capsys.readouterr().err.strip() == f"check_chapter: --tests: not a test file in tests/: {ROOT / 'tests' / 'test_nothing_here.py'}"


def test_the_tests_of_a_module_are_its_own_file_else_its_importers(tmp_path):
    (tmp_path / "test_game.py").write_text("from santorini_az.game import initial_state\n")
    (tmp_path / "test_training.py").write_text("from santorini_az.loop import run_training\n")
    (tmp_path / "test_cli.py").write_text("from santorini_az import loop, cli\n")
    (tmp_path / "test_other.py").write_text("from santorini_az.looping import x  # another module\n")
    (tmp_path / "test_text.py").write_text('source = "from santorini_az.loop import run_training"  # text, not an import\n')
    assert check_chapter.module_tests("game", tmp_path) == [tmp_path / "test_game.py"]
    assert check_chapter.module_tests("loop", tmp_path) == [tmp_path / "test_cli.py", tmp_path / "test_training.py"]
    assert check_chapter.module_tests("report", tmp_path) == []
    assert check_chapter.module_tests(None, tmp_path) == []
    assert check_chapter.exported_module(ROOT / "nbs" / "05_first_loop.ipynb") == "first_loop"
    assert check_chapter.exported_module(ROOT / "nbs" / "12_experiments.ipynb") is None


@pytest.mark.slow
def test_a_chapter_that_prints_something_else_fails_naming_the_cell(tmp_path):
    # in a copy of the repository (the check exports the package and runs the chapter there): chapter 01a with one
    # stored output changed by hand, as a stale one would be
    for part in ("nbs", "tools", "tests", "santorini_az"):
        shutil.copytree(ROOT / part, tmp_path / part, ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    for part in ("README.md", "pyproject.toml"):
        shutil.copy(ROOT / part, tmp_path / part)
    path = tmp_path / "nbs" / "01a_notation.ipynb"
    notebook = json.loads(path.read_text())
    cells = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    number, cell = next((n, c) for n, c in enumerate(cells, 1) if any(o.get("name") == "stdout" for o in c["outputs"]))
    stream = next(o for o in cell["outputs"] if o.get("name") == "stdout")
    stream["text"] = ["something it no longer prints\n"]
    # and a cell that holds under nbdev-test only, as a check that asserts IN_TEST's answer would: Run all stops there
    notebook["cells"].append({"cell_type": "code", "id": "intest", "metadata": {}, "execution_count": None, "outputs": [],
                              "source": ["import os\n", "assert os.environ.get('IN_TEST') == '1'"]})
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n")
    done = subprocess.run([sys.executable, "tools/check_chapter.py", "01a", "--run-all"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"01a_notation.ipynb, code cell {number} (id {cell['id']}): line 1: stored 'something it no longer prints'" in done.stderr
    summary = done.stdout.split("the check's steps")[1].splitlines()[1:]
    assert [line.split()[0] for line in summary] == ["passed", "passed", "FAILED", "passed", "FAILED"]
    assert summary[1].endswith("chapter 01a_notation") and summary[3].endswith("tests: tests/test_notation.py")
    assert "a learner's Run all" in summary[4] and "AssertionError" in done.stdout + done.stderr
