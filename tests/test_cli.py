"The console script, run as a real process."
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).parent / "santorini_az"


def run(*args):
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, timeout=120)


def test_perft_startpos_4():
    result = run("perft", "startpos", "4")
    assert result.returncode == 0 and result.stdout.strip() == "303600"


def test_moves_one_line_per_position():
    finished = "0000030000000000000000000/2/A5,A4/E1,D1"  # player 1 stands on level 3 (A4): game over
    result = run("moves", "startpos", "0000000000000000000000000/1/A5,E1/A1,E5", finished)
    lines = result.stdout.split("\n")
    assert result.returncode == 0
    assert lines[0].split() == sorted(f"{f}{r}" for f in "ABCDE" for r in "12345")
    assert lines[1].split() == sorted(lines[1].split()) and all(">" in m and "^" in m for m in lines[1].split())
    assert lines[2] == ""


def test_show_reports_result():
    result = run("show", "0000030000000000000000000/2/A5,A4/E1,D1")
    assert result.returncode == 0 and "player 1 has won" in result.stdout


@pytest.mark.parametrize("args", [("show", "garbage"), ("perft", "startpos", "x"), ("moves", "1111/1//"),
                                  ("perft", "0000000000000000000000000/1/A1,A1/", "1"),
                                  ("arena", "champion", "alphabeta13", "--openings", "1")])
def test_bad_input_is_one_clear_line(args):
    result = run(*args)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr and result.stderr.strip()


def test_an_unexpected_error_is_one_line_unless_debugging():
    "A bug shows as one line naming the error; SANTORINI_AZ_DEBUG=1 brings the traceback back."
    import os
    code = ("import santorini_az.cli as cli\n"
            "def broken(): raise RuntimeError('boom ' * 1000)\n"
            "cli.app = broken\n"
            "cli.main()")
    quiet = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert quiet.returncode == 1 and "Traceback" not in quiet.stderr
    assert quiet.stderr.startswith("error: RuntimeError: boom") and len(quiet.stderr) < 600, quiet.stderr
    loud = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "SANTORINI_AZ_DEBUG": "1"})
    assert "Traceback" in loud.stderr
