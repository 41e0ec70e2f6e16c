"tools/chapter_times.py: a core chapter over 5,000 words or 3 minutes of running is named, and so is a cell marked eval: false that a learner's Run all would run in earnest; the course as it stands passes both."
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


def test_every_measurement_cell_run_as_run_all_reaches_it_only_says_what_it_skipped(capsys, monkeypatch, tmp_path):
    "Each `eval: false` cell as JupyterLab's Run all runs it: its imports work, its guard prints one line, nothing is written."
    monkeypatch.chdir(tmp_path)  # a cell that did its work would write data/ here
    cells = chapter_times.measurement_cells(sorted((chapter_times.ROOT / "nbs").glob("*.ipynb")))
    assert len(cells) >= 7, cells  # 03b, 09a, 10b (two), 11b, 11c and 12 in 2026-12
    for path, number, cell in cells:
        exec(compile(chapter_times.source(cell), f"{path.name}, code cell {number}", "exec"), {})
        printed = capsys.readouterr().out.splitlines()
        assert len(printed) == 1 and printed[0].startswith("not run: "), (path.name, number, printed)
    assert list(tmp_path.iterdir()) == []
