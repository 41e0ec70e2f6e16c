"""How long each chapter of the route takes, from one data file: nbs/data/chapter_times.json.

A chapter's time is what a learner spends on it, in three parts, each derived rather than guessed:

- reading: the words of the chapter's markdown cells at 200 words a minute (rounded, at least 1 minute);
- running: the chapter's run time top to bottom as the test command measures it on an idle 2-core machine (slow
  cells included: a learner's "Run all" skips the long ones, so it is no longer), whole minutes rounded up; the data file keeps the seconds measured (`run_seconds`), and a chapter not measured runs in
  under a minute and counts as 1 minute;
- exercises: 10 minutes for each exercise the learner writes and the package checks, that is each `check_*(my_...)`
  call in the code cells of the chapter's "Exercises" section (the reference solution's `check_*(reference_...)`
  is the same exercise and does not count again).

The total is their sum rounded to 5 minutes. `python tools/make_readme.py` recomputes reading and exercises from the
notebooks (rewriting the data file when they changed), writes the route tables' time column and the hours in the
route's prose in nbs/index.ipynb, and fails, naming the chapter and both times, when a chapter's header
(`*Time:* about N minutes`) disagrees with the data file. A learner's "Run all" in JupyterLab runs every cell, those
marked `eval: false` too: `run_all_problems` names each such cell that would do its work there instead of skipping it
(`by_hand`, chapter 25). Run this file alone to print the table:

    python tools/chapter_times.py
"""
import ast
import json
import math
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "nbs" / "data" / "chapter_times.json"
INDEX = ROOT / "nbs" / "index.ipynb"
HEADER_TIME = re.compile(r"\*Time:\*\s+about\s+(\d+)\s+minutes")
LEARNER_CHECK = re.compile(r"\bcheck_\w+\(\s*my_")
CORE_WORDS, CORE_RUN_SECONDS = 5000, 180  # a core chapter is one idea: at most this many words, run in at most 3 minutes
NUMBER_WORDS = "zero one two three four five six seven eight nine ten eleven twelve".split()


def read_notebook(path: Path) -> dict:
    return json.loads(path.read_text())


def write_notebook(path: Path, notebook: dict) -> None:
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n")


def source(cell: dict) -> str:
    return "".join(cell["source"])


def measure(notebook: dict) -> tuple[int, int]:
    "(markdown words, checked exercises) of a chapter."
    words, exercises, in_exercises = 0, 0, False
    for cell in notebook["cells"]:
        text = source(cell)
        if cell["cell_type"] == "markdown":
            words += len(text.split())
            section = re.match(r"##\s+(.+)", text)  # a level-2 heading starts a section; ### stays inside it
            if section: in_exercises = section.group(1).strip().lower().startswith("exercise")
        elif in_exercises:
            exercises += len(LEARNER_CHECK.findall(text))
    return words, exercises


def derive(data: dict, chapter: dict) -> dict:
    "The chapter's entry with reading, running, exercises and total recomputed (minutes)."
    words, checked = measure(read_notebook(ROOT / "nbs" / chapter["notebook"]))
    seconds = chapter.get("run_seconds")
    reading = max(1, round(words / data["words_per_minute"]))
    running = max(1, math.ceil(seconds / 60)) if seconds else 1
    exercises = checked * data["minutes_per_exercise"]
    step = data["round_total_to"]
    total = max(step, step * round((reading + running + exercises) / step))
    return {**chapter, "reading": reading, "running": running, "checked_exercises": checked, "exercises": exercises,
            "total": total}


def load() -> dict:
    return json.loads(DATA.read_text())


def update_data() -> dict:
    "Recompute every chapter from its notebook; rewrite the data file only if something changed."
    data = load()
    new = {**data, "chapters": {key: derive(data, c) for key, c in data["chapters"].items()}}
    if new != data: DATA.write_text(json.dumps(new, indent=1, ensure_ascii=False) + "\n")
    return new


def hours(minutes: int) -> str:
    "'about three hours', 'about two and a half hours': to the nearest half hour, in words."
    halves = max(1, round(minutes / 30))
    whole, half = divmod(halves, 2)
    number = NUMBER_WORDS[whole] if whole < len(NUMBER_WORDS) else str(whole)
    if whole == 0: return "about half an hour"
    if half: return f"about {number} and a half hours"
    return f"about {number} hour" + ("s" if whole > 1 else "")


def track_minutes(data: dict, track: str, last: str | None = None) -> int:
    "Minutes of a track's chapters, in route order, up to and including `last`."
    total = 0
    for key, chapter in data["chapters"].items():
        if chapter["track"] != track: continue
        total += chapter["total"]
        if key == last: break
    return total


def route_text(text: str, data: dict) -> str:
    "The route section with each table row's time and the prose's hours written from `data`."
    def row(match):
        key = match.group(1)
        if key not in data["chapters"]: return match.group(0)
        return f"{match.group(0)[:match.start(2) - match.start(0)]}{data['chapters'][key]['total']} min |"
    text = re.sub(r"^\| (\w+) \|.*\| (\d+) min \|$", row, text, flags=re.M)
    core = (r"About [a-z ]+ hours? in all; chapters 01–05 \(about [a-z ]+ hours?\)",
            f"{hours(track_minutes(data, 'core')).capitalize()} in all; chapters 01–05 "
            f"({hours(track_minutes(data, 'core', '05'))})")
    gods = (r"The gods track takes about [a-z ]+ hours? in all\.",
            f"The gods track takes {hours(track_minutes(data, 'gods'))} in all.")
    for pattern, replacement in (core, gods):
        text, found = re.subn(pattern, replacement, text)
        if found != 1: raise SystemExit(f"nbs/index.ipynb: the route's sentence matching {pattern!r} is missing")
    return text


def table_keys(text: str) -> set[str]:
    return set(re.findall(r"^\| (\w+) \|.*\| \d+ min \|$", text, flags=re.M))


def update_index(data: dict) -> None:
    "Write the route tables' times and hours into nbs/index.ipynb (only if they changed)."
    notebook = read_notebook(INDEX)
    changed = False
    for cell in notebook["cells"]:
        text = source(cell)
        if cell["cell_type"] != "markdown" or not text.startswith("## The route"): continue
        missing = set(data["chapters"]) ^ table_keys(text)
        if missing:
            raise SystemExit(f"nbs/index.ipynb's route tables and {DATA.relative_to(ROOT)} list different chapters: "
                             f"{', '.join(sorted(missing))}")
        new = route_text(text, data)
        if new != text: cell["source"], changed = new.splitlines(keepends=True), True
    if changed: write_notebook(INDEX, notebook)


def header_minutes(notebook: dict) -> int | None:
    "The minutes a chapter's header states (`*Time:* about N minutes`), or None."
    for cell in notebook["cells"][:4]:
        found = HEADER_TIME.search(source(cell)) if cell["cell_type"] == "markdown" else None
        if found: return int(found.group(1))
    return None


def header_problems(data: dict) -> list[str]:
    "One sentence for each chapter whose header's time is not the data file's."
    problems = []
    for key, chapter in data["chapters"].items():
        stated = header_minutes(read_notebook(ROOT / "nbs" / chapter["notebook"]))
        if stated != chapter["total"]:
            says = f"says about {stated} minutes" if stated else "states no time (`*Time:* about N minutes`)"
            problems.append(f"Chapter {key}'s header (nbs/{chapter['notebook']}) {says}, but "
                            f"{DATA.relative_to(ROOT)} gives {chapter['total']} minutes.")
    return problems


def lean_problems(data: dict) -> list[str]:
    "One sentence for each core chapter over CORE_WORDS words of markdown or CORE_RUN_SECONDS of running."
    problems = []
    for key, chapter in data["chapters"].items():
        if chapter["track"] != "core": continue
        words, _ = measure(read_notebook(ROOT / "nbs" / chapter["notebook"]))
        if words > CORE_WORDS:
            problems.append(f"Chapter {key} (nbs/{chapter['notebook']}) has {words:,} words of markdown, over the core "
                            f"track's {CORE_WORDS:,}: move an experiment to a 'going further' chapter or chapter 12.")
        if (chapter.get("run_seconds") or 0) > CORE_RUN_SECONDS:
            problems.append(f"Chapter {key} (nbs/{chapter['notebook']}) runs in {chapter['run_seconds']} s "
                            f"({DATA.relative_to(ROOT)}), over the core track's {CORE_RUN_SECONDS} s.")
    return problems


BENCHMARKS = {"bench_alphabeta(depth=6)"}  # eval: false cells of a few seconds, whose timings change every run


def is_guard(statement: ast.stmt) -> bool:
    "`if by_hand(...):`"
    return (isinstance(statement, ast.If) and isinstance(statement.test, ast.Call)
            and getattr(statement.test.func, "id", None) == "by_hand")


def is_flag_off(statement: ast.stmt) -> bool:
    "`MEASURE_AGAIN = False`"
    return (isinstance(statement, ast.Assign) and [getattr(t, "id", None) for t in statement.targets] == ["MEASURE_AGAIN"]
            and isinstance(statement.value, ast.Constant) and statement.value.value is False)


def run_all_problem(code: str) -> str | None:
    "Why a Run all would do the work of this `eval: false` cell, or None if it would skip it."
    statements = ast.parse(code).body
    if not any(map(is_guard, statements)): return "it has no `if by_hand(...):`"
    if not any(map(is_flag_off, statements)): return "it does not set `MEASURE_AGAIN = False`"
    loose = [s for s in statements
             if not (is_guard(s) or is_flag_off(s) or isinstance(s, (ast.Import, ast.ImportFrom, ast.FunctionDef)))]
    return f"line {loose[0].lineno} runs outside `if by_hand(...):`" if loose else None


def measurement_cells(notebooks: list[Path]) -> list[tuple[Path, int, dict]]:
    "(chapter, code cell number, cell) of each cell marked `eval: false` but the short benchmarks (BENCHMARKS)."
    found = []
    for path in notebooks:
        code_cells = [cell for cell in read_notebook(path)["cells"] if cell["cell_type"] == "code"]
        for number, cell in enumerate(code_cells, 1):
            code = source(cell)
            if not re.search(r"^#\|\s*eval:\s*false", code, re.M): continue
            if "\n".join(line for line in code.splitlines() if not line.startswith("#|")).strip() in BENCHMARKS: continue
            found.append((path, number, cell))
    return found


def run_all_problems(notebooks: list[Path]) -> list[str]:
    """One sentence for each cell marked `eval: false` that a learner's "Run all" in JupyterLab would run in earnest
    (Jupyter does not know the flag): such a cell must do its work under `if by_hand(...):` (chapter 25) after
    `MEASURE_AGAIN = False`, with nothing else but imports and definitions, unless it is a short benchmark."""
    problems = []
    for path, number, cell in measurement_cells(notebooks):
        why = run_all_problem(source(cell))
        if why: problems.append(f"{path.name}, code cell {number} (id {cell.get('id')}): marked `eval: false`, so "
                                f"JupyterLab's Run all runs it, and {why}: guard its work with "
                                f"`if by_hand(what, seconds, MEASURE_AGAIN):` (chapter 25).")
    return problems


def main() -> None:
    data = load()
    print(f"{'chapter':8} {'reading':>7} {'running':>7} {'exercises':>9} {'total':>5}  header")
    for key, chapter in data["chapters"].items():
        c = derive(data, chapter)
        stated = header_minutes(read_notebook(ROOT / "nbs" / c["notebook"]))
        print(f"{key:8} {c['reading']:7} {c['running']:7} {c['exercises']:9} {c['total']:5}  {stated}")


if __name__ == "__main__":
    main()
