"tools/chapter_times.py: a core chapter over 5,000 words or 3 minutes of running is named; the course as it stands is not."
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
