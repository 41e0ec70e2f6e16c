"tools/chapter_times.py: a core chapter over 5,000 words or 3 minutes of running is named, and so is a cell marked eval: false that a learner's Run all would run in earnest; the course as it stands passes both."
import shutil

from tests.tools import load_tool

chapter_times = load_tool("chapter_times")


def markdown(words: int) -> dict:
    return {"cell_type": "markdown", "source": ["word " * words]}


def test_the_course_is_lean():
    assert chapter_times.lean_problems(chapter_times.load()) == []


def test_a_core_chapter_over_the_limits_is_named(monkeypatch):
    data = {"chapters": {
        "07": {"notebook": "07_long.ipynb", "track": "core", "run_seconds": 181},
        "12": {"notebook": "12_further.ipynb", "track": "further", "run_seconds": 900},
        "08": {"notebook": "08_short.ipynb", "track": "core", "run_seconds": 180}}}
    sizes = {"07_long.ipynb": 5001, "12_further.ipynb": 20_000, "08_short.ipynb": 5000}
    monkeypatch.setattr(chapter_times, "read_notebook", lambda path: {"cells": [markdown(sizes[path.name])]})
    problems = chapter_times.lean_problems(data)
    assert len(problems) == 2, problems  # the further chapter and the one exactly at the limits pass
    assert "Chapter 07" in problems[0] and "5,001 words" in problems[0]
    assert "Chapter 07" in problems[1] and "181 s" in problems[1]


def test_a_learners_run_all_skips_every_measurement_made_by_hand():
    assert chapter_times.run_all_problems(sorted((chapter_times.ROOT / "nbs").glob("*.ipynb"))) == []


def code(text: str, cell_id: str) -> dict:
    return {"cell_type": "code", "id": cell_id, "source": text.splitlines(keepends=True)}


def test_a_measurement_that_run_all_would_run_is_named(monkeypatch, tmp_path):
    cells = [code("#| eval: false\nPath('data/x.json').write_text(measure())", "bare"),
             code("#| eval: false\nMEASURE_AGAIN = True\nif by_hand('x', 60, MEASURE_AGAIN):\n    measure()", "on"),
             code("#| eval: false\nMEASURE_AGAIN = False\nwarm_up()\nif by_hand('x', 60, MEASURE_AGAIN):\n    measure()",
                  "loose"),
             code("#| eval: false\nfrom x import by_hand\nMEASURE_AGAIN = False  # True: again\n"
                  "def helper(): pass\nif by_hand('x', 60, MEASURE_AGAIN):\n    measure()", "guarded"),
             code("#| eval: false\nbench_alphabeta(depth=6)", "bench"), code("measure()", "tested")]
    monkeypatch.setattr(chapter_times, "read_notebook", lambda path: {"cells": cells})
    problems = chapter_times.run_all_problems([tmp_path / "07_x.ipynb"])
    assert len(problems) == 3, problems
    assert "07_x.ipynb, code cell 1 (id bare)" in problems[0] and "no `if by_hand(...):`" in problems[0]
    assert "(id on)" in problems[1] and "does not set `MEASURE_AGAIN = False`" in problems[1]
    assert "(id loose)" in problems[2] and "line 3 runs outside" in problems[2]



def test_run_all_in_a_plain_kernel_skips_chapter_10bs_measurements(tmp_path, monkeypatch):
    "What JupyterLab's Run all does (every cell, `eval: false` ones too, no IN_TEST): 10b ends, its two measurements skipped."
    import nbformat
    from nbclient import NotebookClient
    nbs = tmp_path / "nbs"
    shutil.copytree(chapter_times.ROOT / "nbs" / "data", nbs / "data")
    stored = (nbs / "data" / "god_training.json").read_bytes()
    notebook = nbformat.read(chapter_times.ROOT / "nbs" / "10b_god_training.ipynb", as_version=4)
    for name in ("IN_TEST", "SANTORINI_LONG_CELLS"): monkeypatch.delenv(name, raising=False)  # the kernel inherits these
    NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(nbs)}}).execute()
    skipped = [output["text"] for cell in notebook.cells if "eval: false" in cell.source
               for output in cell.outputs if output.get("name") == "stdout"]
    assert len(skipped) == 2 and all(text.startswith("not run: ") for text in skipped), skipped
    assert (nbs / "data" / "god_training.json").read_bytes() == stored
