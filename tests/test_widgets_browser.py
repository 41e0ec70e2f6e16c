"""The widgets in a real browser: JupyterLab on 127.0.0.1, Debian's Chromium driven by Playwright, a game played by
clicks on the board against the engine. JupyterLab is always shut down, whatever happens.

Needs /usr/bin/chromium (tools/setup.sh installs it with apt-get) and the `playwright` Python package; no
browser is downloaded. On failure a screenshot of the page is saved (the path is in the failure message); set
SANTORINI_SCREENSHOT_DIR to keep the screenshots of a passing run too."""
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import require

from santorini_az.game import initial_state
from santorini_az.notation import play_moves

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("widgets_browser")]  # one worker: its module fixture is costly to build twice
CHROMIUM = "/usr/bin/chromium"
START_TIMEOUT_S = 120  # JupyterLab's first start builds nothing, but a busy 2-core machine is slow
STEP_TIMEOUT_MS = 60_000
BOARD = ".saz-board"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_cells(path: Path, cells: list[str]) -> None:
    "Write a Python 3 notebook of code `cells` to `path`."
    nb = {"nbformat": 4, "nbformat_minor": 5,
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
          "cells": [{"cell_type": "code", "id": f"cell{i}", "metadata": {}, "execution_count": None, "outputs": [],
                     "source": source} for i, source in enumerate(cells)]}
    path.write_text(json.dumps(nb))


def write_notebook(path: Path, simulations: int) -> None:
    """The notebook of the play test: a game against the engine, then a slow engine beside a cell that must still run,
    whose cell runs again while it thinks (the old search must stop)."""
    cells = ["from santorini_az.widgets import PlayWidget",
             f"game = PlayWidget('mcts', human=0, simulations={simulations})\ngame",
             "slow = PlayWidget('mcts', human=1, simulations=10**6)  # the engine moves first, and thinks for long\n"
             "slows = globals().setdefault('slows', []); slows.append(slow)\nslow",
             "print('the kernel answers:', 6 * 7)",
             "slow.side.value = 0\nslow.new_game()  # drops the long search",
             "slows[0]._thread.join(30)  # its view went when its cell ran again: its search stops without a move\n"
             "print('the first engine stopped:', not slows[0]._thread.is_alive() and not slows[0].board.thinking "
             "and slows[0].board.moves == [] and len(slows) == 2)"]
    write_cells(path, cells)


@pytest.fixture
def jupyterlab(tmp_path):
    "A JupyterLab serving `tmp_path` on a free port with a random token: (base url, token); killed afterwards."
    require(CHROMIUM, Path(CHROMIUM).exists())
    require("playwright", importlib.util.find_spec("playwright") is not None)
    write_notebook(tmp_path / "play.ipynb", simulations=16)
    token, port = os.urandom(16).hex(), free_port()
    home = tmp_path / "jupyter"
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(home / "config"), "JUPYTER_DATA_DIR": str(home / "data"),
           "JUPYTER_RUNTIME_DIR": str(home / "runtime"), "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces")}
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
               f"--ServerApp.port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
               f"--ServerApp.root_dir={tmp_path}", "--LabApp.expose_app_in_browser=True",
               "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    if os.geteuid() == 0: command.append("--allow-root")  # containers and CI often run as root
    log = open(tmp_path / "jupyterlab.log", "w")
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=tmp_path,
                              start_new_session=True)  # its own process group: the kernel dies with it
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if server.poll() is not None:
                pytest.fail(f"JupyterLab exited with {server.returncode}: {(tmp_path / 'jupyterlab.log').read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5) as answer:
                    if answer.status == 200: break
            except OSError:
                pass
            if time.monotonic() > deadline: pytest.fail(f"JupyterLab did not answer within {START_TIMEOUT_S} s")
            time.sleep(0.5)
        yield base, token
    finally:
        server.send_signal(signal.SIGTERM)  # a clean shutdown also stops the kernel it started
        try: server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)  # the group we created for it: the server and its kernel
            server.wait(timeout=10)
        log.close()


class Board:
    "The board widget in the page, and what the test reads from it."
    def __init__(self, page):
        self.page = page
        self.root = page.locator(BOARD).first

    def moves(self) -> list[str]: return self.root.locator(".saz-moves li").all_inner_texts()
    def message(self) -> str: return self.root.locator(".saz-message").inner_text()
    def status(self) -> str: return self.root.locator(".saz-status").inner_text()
    def targets(self) -> list[int]:
        return [int(c) for c in self.root.locator(".saz-hit.saz-target").evaluate_all(
            "nodes => nodes.map(n => n.getAttribute('data-cell'))")]
    def workers(self, player: int) -> set[int]:
        return {int(c) for c in self.root.locator(f".saz-worker.saz-player{player + 1}").evaluate_all(
            "nodes => nodes.map(n => n.getAttribute('data-at'))")}
    def levels(self) -> list[int]:
        return [int(c) for c in self.root.locator(".saz-hit").evaluate_all(
            "nodes => nodes.map(n => n.getAttribute('data-level'))")]
    def click(self, cell: int) -> None: self.root.locator(f'.saz-hit[data-cell="{cell}"]').click()

    def wait(self, condition: str, arg=None) -> None:
        "Wait until the JavaScript `condition(board, arg)` holds for the board element."
        self.page.wait_for_function(f"([arg]) => {{ const board = document.querySelector('{BOARD}'); "
                                    f"return board && ({condition}); }}", arg=[arg], timeout=STEP_TIMEOUT_MS)

    def wait_moves(self, count: int) -> None:
        self.wait("board.querySelectorAll('.saz-moves li').length === arg", count)

    def wait_message(self, text: str) -> None:
        self.wait("board.querySelector('.saz-message').textContent.includes(arg)", text)

    def over(self) -> bool: return "has won" in self.status()

    def check_matches_record(self) -> None:
        "The workers and levels drawn are those of the position that the move list leads to."
        state = play_moves(initial_state(), self.moves())
        assert self.workers(0) == set(state.workers[0]) and self.workers(1) == set(state.workers[1]), self.moves()
        assert self.levels() == list(state.heights), self.moves()


def run_cell(page, index: int) -> None:
    "Run the notebook's cell number `index`, as Shift+Enter would (without moving on)."
    page.evaluate("i => { const panel = window.jupyterapp.shell.currentWidget; panel.content.activeCellIndex = i; "
                  "return window.jupyterapp.commands.execute('notebook:run-cell'); }", index)


def play_a_turn(board: Board) -> int:
    "Play one move by clicks: a worker, a destination, a build (always the first highlighted cell); the move count after it."
    before = len(board.moves())
    board.click(board.targets()[0])
    board.wait_message("choose where it moves")
    board.click(board.targets()[0])
    board.wait(f"board.querySelectorAll('.saz-moves li').length > {before} || "
               "board.querySelector('.saz-message').textContent.includes('choose where it builds')")
    if len(board.moves()) == before:  # not a winning climb: the build is the third click
        board.click(board.targets()[0])
    board.wait(f"board.querySelectorAll('.saz-moves li').length > {before}")
    return before + 1


def screenshot_dir(tmp_path: Path) -> Path:
    "Where screenshots go: SANTORINI_SCREENSHOT_DIR if set (kept), else the test's `tmp_path`."
    return Path(os.environ.get("SANTORINI_SCREENSHOT_DIR", tmp_path))


def screenshot_widget(page, path: Path) -> None:
    "Save the output of the notebook's second cell (the whole widget, controls included) to `path`."
    page.locator(".jp-Cell").nth(1).locator(".jp-OutputArea-output").screenshot(path=str(path))


@contextmanager
def board_in_lab(jupyterlab, notebook: str, failure_shot: Path):
    "Open `notebook` in Chromium, run its first two cells: (page, board); on failure, a screenshot to `failure_shot`."
    from playwright.sync_api import sync_playwright
    base, token = jupyterlab
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        try:
            page.goto(f"{base}/lab/tree/{notebook}?token={token}")
            page.wait_for_function("() => window.jupyterapp?.shell?.currentWidget?.sessionContext?.session?.kernel"
                                   "?.status === 'idle'", timeout=START_TIMEOUT_S * 1000)
            run_cell(page, 0); run_cell(page, 1)
            board = Board(page)
            board.root.wait_for(timeout=STEP_TIMEOUT_MS)
            yield page, board
        except Exception as e:
            failure_shot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(failure_shot), full_page=True)
            raise AssertionError(f"{e}\n(screenshot: {failure_shot})") from e
        finally:
            browser.close()


def test_play_against_the_engine_by_clicking_in_jupyterlab(jupyterlab, tmp_path):
    shots = screenshot_dir(tmp_path)
    started = time.monotonic()
    with board_in_lab(jupyterlab, "play.ipynb", shots / "widgets_failure.png") as (page, board):
        board.wait("board.querySelectorAll('.saz-hit.saz-target').length === 25")

        board.click(12)  # C3: a placement takes one click
        board.wait_moves(1)
        assert board.moves() == ["C3"] and board.workers(0) == {12}
        board.click(12)  # taken: refused, with the reason, and nothing changes
        board.wait("board.querySelector('.saz-message').classList.contains('saz-refused')")
        assert "taken" in board.message() and board.moves() == ["C3"]
        board.click(board.targets()[0])
        board.wait_moves(4)  # the engine places its two workers
        board.check_matches_record()
        assert len(board.workers(1)) == 2 and "your turn" in board.message()

        for _ in range(5):
            mine = play_a_turn(board)
            board.wait(f"board.querySelectorAll('.saz-moves li').length > {mine} || "
                       "board.querySelector('.saz-status').textContent.includes('has won')")
            board.check_matches_record()
            if board.over(): break
        played = board.moves()
        assert len(played) >= 6 and (board.over() or len(played) == 14), played
        rows = board.root.locator(".saz-moves").evaluate(
            "n => { const s = getComputedStyle(n); return parseFloat(s.maxHeight) / parseFloat(s.lineHeight); }")
        assert rows == 6, rows  # a list scrolled to its end shows six whole lines, not a top line cut in half

        board.root.locator(".saz-undo").click()  # back to the human's previous turn
        board.wait(f"board.querySelectorAll('.saz-moves li').length < {len(played)}")
        after = play_moves(initial_state(), board.moves())
        assert after.player == 0 and board.moves() == played[:len(board.moves())]
        assert len(played) - len(board.moves()) in (1, 2)
        assert "player 1" in board.status() and "to move" in board.status()
        board.check_matches_record()
        if shots != tmp_path:  # the whole widget, controls included, as the reader sees it
            screenshot_widget(page, shots / "widgets_play.png")

        # While an engine thinks (progress bar shown), another cell runs: the kernel is not frozen.
        run_cell(page, 2)
        page.wait_for_function(f"() => {{ const b = document.querySelectorAll('{BOARD}')[1]; return b && "
                               "b.querySelector('.saz-progress').style.visibility === 'visible' && "
                               "parseFloat(b.querySelector('.saz-progress-fill').style.width) > 0; }",
                               timeout=STEP_TIMEOUT_MS)
        run_cell(page, 3)
        page.locator(".jp-OutputArea-output", has_text="the kernel answers: 42").wait_for(timeout=STEP_TIMEOUT_MS)
        slow = page.locator(BOARD).nth(1)
        assert slow.locator(".saz-progress").evaluate("n => n.style.visibility") == "visible"  # still thinking
        assert slow.evaluate("b => Math.abs(b.querySelector('.saz-progress').getBoundingClientRect().width - "
                             "b.querySelector('svg').getBoundingClientRect().width) < 1")  # the board's width
        if shots != tmp_path: slow.screenshot(path=str(shots / "widgets_thinking.png"))
        # The same cell again while its engine thinks: the old board's view goes, and the browser tells the kernel.
        run_cell(page, 2)
        run_cell(page, 5)
        page.locator(".jp-OutputArea-output", has_text="the first engine stopped: True").wait_for(timeout=STEP_TIMEOUT_MS)
        run_cell(page, 4)
        page.wait_for_function(f"() => document.querySelectorAll('{BOARD}')[1].querySelector('.saz-progress')"
                               ".style.visibility === 'hidden'", timeout=STEP_TIMEOUT_MS)
    print(f"browser: {len(played)} moves by clicks, one undo, a responsive kernel while thinking, in "
          f"{time.monotonic() - started:.1f} s")


def test_pick_two_gods_and_play_a_turn_by_clicking_in_jupyterlab(jupyterlab, tmp_path):
    from santorini_az.gods import god_start, play_turns
    write_cells(tmp_path / "gods.ipynb", ["from santorini_az.widgets import GodPlayWidget",
                                          "game = GodPlayWidget(('mortal', 'mortal'), human=0, simulations=16)\ngame"])
    shots = screenshot_dir(tmp_path)
    with board_in_lab(jupyterlab, "gods.ipynb", shots / "widgets_gods_failure.png") as (page, board):
        pickers = page.locator(".widget-dropdown select")
        pickers.nth(0).select_option(label="Demeter")
        pickers.nth(1).select_option(label="Atlas")
        page.locator(".widget-html", has_text="Demeter").wait_for(timeout=STEP_TIMEOUT_MS)  # the power lines follow
        assert "build one additional time" in page.locator(".widget-html").first.inner_text()
        page.locator("button", has_text="new game").click()
        board.wait("board.querySelector('.saz-title').textContent.startsWith('Demeter (red) against Atlas (blue)')")
        assert "Demeter" in board.status()

        board.click(12)  # C3, then a second worker on the first highlighted cell
        board.wait_moves(1)
        board.click(board.targets()[0])
        board.wait_moves(4)  # the engine places its two
        end = board.root.locator(".saz-end")
        assert end.is_visible() and end.is_disabled()
        board.click(12)  # the worker on C3 ...
        board.wait_message("choose where it moves")
        board.click(board.targets()[0])  # ... steps, ...
        board.wait_message("click where to build")
        first = board.targets()[0]
        board.click(first)  # ... builds, and Demeter may build again or end the turn
        board.wait("!board.querySelector('.saz-end').disabled")
        board.click(first)  # not on the same square: refused, with the reason
        board.wait("board.querySelector('.saz-message').classList.contains('saz-refused')")
        assert "Demeter's second build" in board.message()
        end.click()
        board.wait_moves(6)  # the human's turn, then the engine's (Atlas) reply
        moves = board.moves()
        gods = ("demeter", "atlas")
        state = play_turns(god_start(gods), moves)  # every turn legal
        assert board.workers(0) == set(state.board.workers[0]) and board.workers(1) == set(state.board.workers[1])
        assert board.levels() == list(state.board.heights) and "^" in moves[4] and moves[4].count("^") == 1
        if shots != tmp_path:
            screenshot_widget(page, shots / "widgets_gods.png")
        # the kernel restarted, the board stays on the page: a click on it says the kernel has gone (it threw unseen)
        page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.restart()")
        page.wait_for_function("() => window.jupyterapp?.shell?.currentWidget?.sessionContext?.session?.kernel"
                               "?.status === 'idle'", timeout=START_TIMEOUT_S * 1000)
        board.click(board.targets()[0] if board.targets() else 0)
        board.wait_message("the kernel behind this board has gone")
