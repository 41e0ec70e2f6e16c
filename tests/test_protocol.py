"The engine protocol, spoken to a real engine subprocess; the match runner between two of them."
import ctypes
import mmap
import queue
import shlex
import subprocess
import sys
import threading
import time

import numpy as np

import pytest

from santorini_az.notation import parse_position, play_moves, parse_action
from santorini_az.protocol import play_match

ENGINE_ARGS = [sys.executable, "-c", "from santorini_az.cli import main; main()", "engine"]  # `santorini_az engine`, by this Python


class Engine:
    "A `santorini_az engine` subprocess with a line queue, so that every read has a timeout."

    def __init__(self):
        self.process = subprocess.Popen(ENGINE_ARGS, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, bufsize=1)
        self.lines = queue.Queue()
        threading.Thread(target=lambda: [self.lines.put(l.rstrip("\n")) for l in self.process.stdout], daemon=True).start()

    def send(self, line):
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def read(self, timeout=60):
        return self.lines.get(timeout=timeout)

    def until(self, word, timeout=60):
        "Every line up to and including the first that starts with `word`."
        lines = []
        while not (lines and lines[-1].split()[:1] == [word]): lines.append(self.read(timeout))
        return lines

    def quiet(self, seconds=0.3):
        "Nothing more is written within `seconds`."
        try: line = self.lines.get(timeout=seconds)
        except queue.Empty: return True
        pytest.fail(f"unexpected output {line!r}")

    def quit(self):
        "Send `quit`: the engine exits with status 0."
        self.send("quit")
        assert self.process.wait(10) == 0

    def check_no_traceback(self):
        "Nothing the engine wrote to stderr is a traceback."
        assert "Traceback" not in self.process.stderr.read()


@pytest.fixture
def engine():
    e = Engine()
    yield e
    if e.process.poll() is None:
        e.process.kill()
    e.process.wait(10)


def searched_nodes(info):
    "The node count an `info` line reports."
    return int(info.split(" nodes ")[1].split()[0])


def searched_ms(info):
    "The search time, in ms, an `info` line reports."
    return int(info.split(" time ")[1].split()[0])


def check_refused(engine, command, culprit=""):
    "`command` gets one error line (naming `culprit`) and nothing more; a `go` also its `bestmove (none)`."
    engine.send(command)
    line = engine.read()
    assert line.startswith("info string error: ") and culprit in line, (command, line)
    if command.split()[0] == "go": assert engine.read() == "bestmove (none)", command  # a GUI waits for it
    engine.quiet()


def check_answers(engine, *commands):
    "After `commands`, the last of them a `go`, the engine answers with a bestmove."
    for command in commands: engine.send(command)
    assert engine.until("bestmove")[-1].startswith("bestmove ")


def check_game_over(engine, position):
    "`go` on the finished `position` gets an error line and `bestmove (none)`."
    engine.send(position)
    engine.send("go")
    assert engine.read().startswith("info string error: the game is over")
    assert engine.read() == "bestmove (none)"


def test_handshake_search_and_quit(engine):
    engine.send("uci")
    lines = engine.until("uciok")
    assert lines[0].startswith("id name santorini_az")
    options = {l.split()[2] for l in lines if l.startswith("option name")}
    assert {"Checkpoint", "Simulations", "Engine", "Threads"} <= options
    engine.send("isready")
    assert engine.read() == "readyok"
    engine.send("ucinewgame")
    engine.send("position startpos moves C3 D4 B2 D2")
    engine.send("go depth 3")
    lines = engine.until("bestmove")
    infos = [l for l in lines if l.startswith("info depth")]
    assert len(infos) == 3 and all(" score " in l and " nodes " in l and " pv " in l for l in infos)
    state = play_moves(parse_position("startpos"), "C3 D4 B2 D2")
    parse_action(state, lines[-1].split()[1])  # a legal move, or NotationError
    engine.send("position fen 0000000230000000000000000/1/C4,A1/E1,E2")
    engine.send("go nodes 5000")
    lines = engine.until("bestmove")
    assert "score win 1" in lines[-2] and lines[-1] == "bestmove C4>D4^C4"
    engine.quit()
    engine.check_no_traceback()


def test_go_infinite_answers_only_after_stop(engine):
    engine.send("position startpos moves C3 D4 B2 D2")
    engine.send("go infinite")
    assert engine.read().startswith("info depth 1")
    engine.send("isready")  # answered while searching
    assert "readyok" in engine.until("readyok")[-1]
    engine.send("stop")
    lines = engine.until("bestmove")
    assert not any(l.startswith("info string error") for l in lines)
    check_answers(engine, "go movetime 200")
    engine.quit()


def test_alphazero_plays_the_shipped_network_unless_told_otherwise():
    """`Engine alphazero` searches with the network the course ships (a GUI user who picks it gets the strong engine, as
    with GodCheckpoint); `Checkpoint <empty>` is the uniform prior."""
    from santorini_az.protocol import EngineSession, uniform_planes_evaluator
    session = EngineSession(lambda line: None)
    session.handle("setoption name Engine value alphazero")
    assert session._searcher().evaluate is not uniform_planes_evaluator
    session.handle("setoption name Checkpoint value <empty>")
    assert session._searcher().evaluate is uniform_planes_evaluator


def test_the_checkpoint_option_takes_a_run_directory(tmp_path):
    "`Checkpoint RUN` searches with the run's champion (chapter 32's network_spec); a run with no champion is named."
    import json
    import torch
    from santorini_az.network import NetConfig, SantoriniNet, save_checkpoint
    (tmp_path / "run" / "checkpoints").mkdir(parents=True)
    save_checkpoint(tmp_path / "run" / "checkpoints" / "iter-0001.safetensors", SantoriniNet(NetConfig(8, 1)), iteration=1)
    (tmp_path / "run" / "champion.json").write_text(json.dumps({"iteration": 1, "checkpoint": "checkpoints/iter-0001.safetensors"}))
    (tmp_path / "new").mkdir()
    (tmp_path / "new" / "config.json").write_text("{}")
    answers = session_answers("setoption name Engine value alphazero", "setoption name Search value readable",
                              f"setoption name Checkpoint value {tmp_path / 'run'}",
                              f"setoption name Checkpoint value {tmp_path / 'new'}")
    errors = [a for a in answers if "error" in a]
    assert errors == [f"info string error: {tmp_path / 'new'} is a run directory with no champion yet: its first stage "
                      "has not finished"], answers


def test_a_checkpoint_that_cannot_be_read_is_named_without_an_export(tmp_path):
    "The engine loads a checkpoint to play it: its error names the file and says nothing of an export (it did)."
    (tmp_path / "notes.safetensors").write_text("not a network")
    answers = session_answers("setoption name Engine value alphazero",  # the default search: through its ONNX export
                              f"setoption name Checkpoint value {tmp_path / 'notes.safetensors'}",
                              f"setoption name Checkpoint value {tmp_path}")
    errors = [a for a in answers if "error" in a]
    assert len(errors) == 2 and not any("export" in e for e in errors), answers
    assert errors[0].startswith(f"info string error: {tmp_path / 'notes.safetensors'} is not a readable safetensors file")
    assert errors[1].startswith(f"info string error: {tmp_path} is a folder"), errors

def test_alphazero_engine_uniform_prior(engine):
    engine.send("setoption name Engine value alphazero")
    engine.send("setoption name Checkpoint value <empty>")
    engine.send("setoption name Simulations value 50")
    engine.send("position fen 0000000230000000000000000/1/C4,A1/E1,E2")
    engine.send("go")
    lines = engine.until("bestmove")
    assert "nodes 50" in lines[-2]
    engine.send("go nodes 20")
    assert "nodes 20" in engine.until("bestmove")[-2]
    engine.quit()


def test_alphazero_reports_a_move_that_wins_at_once_as_win_1_as_alphabeta_does():
    """Both AlphaZero searches (readable and compiled) score a move that wins at once 'win 1', as α-β and the god
    searchers do (the root value said 'cp 999', which a GUI shows as an advantage, not a won game); other moves keep
    the root value in cp."""
    win = "position fen 0000000230000000000000000/1/C4,A1/E1,E2"  # C4>D4 climbs to level 3
    for search in ("readable", "compiled"):
        answers = session_answers("setoption name Engine value alphazero", f"setoption name Search value {search}",
                                  "setoption name Checkpoint value <empty>", win, "go nodes 50", "position startpos",
                                  "go nodes 50")
        infos = [a for a in answers if a.startswith("info depth")]
        assert " score win 1 " in infos[0] and " pv C4>D4" in infos[0], (search, infos)
        assert " score cp " in infos[-1], (search, infos)
        bestmoves = [a for a in answers if a.startswith("bestmove")]
        assert bestmoves[0].startswith("bestmove C4>D4"), (search, bestmoves)


def test_alphazero_movetime_is_a_time_budget(engine):
    "`go movetime` gives the AlphaZero engine the clock, not its Simulations option: equal-time matches depend on it."
    engine.send("setoption name Engine value alphazero")
    engine.send("setoption name Simulations value 1")
    engine.send("position startpos moves C3 D4 B2 D2")
    engine.send("go movetime 300")
    info = engine.until("bestmove")[-2]
    assert searched_nodes(info) > 1, info  # stopped by the time, not by Simulations=1
    engine.send("go")
    assert " nodes 1 " in engine.until("bestmove")[-2]  # without a time, Simulations still sets the budget
    engine.quit()


@pytest.mark.parametrize("search, checkpoint", [("compiled", "champion"), ("readable", "the shipped file's path")])
def test_alphazero_with_the_champion_on_either_search(engine, search, checkpoint):
    """Both searches behind `Engine alphazero` load a checkpoint (the compiled one through its ONNX export), named
    `champion` or by its path, and obey nodes."""
    from santorini_az.arena import CHAMPION
    engine.send("setoption name Engine value alphazero")
    engine.send(f"setoption name Search value {search}")
    engine.send(f"setoption name Checkpoint value {CHAMPION if checkpoint.endswith('path') else checkpoint}")
    engine.send("isready")
    assert engine.read(timeout=120) == "readyok"
    engine.send("position fen 0000000230000000000000000/1/C4,A1/E1,E2")  # C4 on level 2 beside a level-3 tower
    engine.send("go nodes 64")
    *lines, bestmove = engine.until("bestmove")
    assert "nodes 64" in lines[-1] and bestmove.startswith("bestmove C4>D4^"), (lines, bestmove)  # the win
    engine.quit()


BAD_COMMANDS = [
    "hello", "go depth -1", "go nodes", "go sideways 3", "position", "position startpos moves C3 C3",
    "position fen 00/1//", "position fen 0000000000000000000000000/3//", "position startpos moves Z9",
    "position fen 3000000000000000000000000/1/A5,E1/C3,D2",  # player 1, to move, on level 3: no game gets there
    "position fen 3000000000000000000000000/1/mortal:A5,E1/mortal:C3,D2",
    "setoption name Nonsense value 1", "setoption name Hash value lots", "setoption name Engine value stockfish",
    "setoption name Search value fast",
    "setoption name GodCheckpoint value /no/such/god.safetensors",
    "setoption name Checkpoint value /no/such/checkpoint.safetensors", "setoption", "ucinewgam", "position moves C3",
    "setoption name Brain value /", "setoption name Brain value /no/such/folder/brain.txt"]


def test_each_bad_command_gives_one_error_line_and_the_engine_keeps_running(engine):
    "Every bad command in turn, in one session: one error line, then the engine answers as if nothing had happened."
    for command in BAD_COMMANDS:
        check_refused(engine, command)
        engine.send("isready")
        assert engine.read() == "readyok", command
        check_answers(engine, "position startpos", "go depth 1")
    engine.quit()
    engine.check_no_traceback()


def test_commands_sent_right_after_stop_wait_for_the_search(engine):
    "A GUI that sends stop, a new position and go at once gets two bestmoves, the second a move of the new position."
    engine.send("position startpos moves C3 D4 B2 D2")
    engine.send("go infinite")
    assert engine.read().startswith("info depth 1")
    for line in ("stop", "position startpos moves C3 D4 B2 D2 C3>B3^C3", "go depth 2"): engine.send(line)
    first, second = engine.until("bestmove"), engine.until("bestmove")
    assert not [l for l in first + second if l.startswith("info string error")], first + second
    position = play_moves(parse_position("0000000000000000000000000/1//"), "C3 D4 B2 D2 C3>B3^C3".split())
    parse_action(position, second[-1].split()[1])  # legal for player 2, who is to move there
    engine.quit()


def test_mortal_gods_without_marks_are_the_mortal_position():
    "`mortal:` is accepted and ignored: such a fen is the mortal position, and only a god or a mark makes a god one."
    from santorini_az.gods import GodState
    from santorini_az.protocol import parse_any_position
    mortal = parse_position("0000000000000000000000000/1/C3,D4/B2,E5")
    assert parse_any_position("0000000000000000000000000/1/mortal:C3,D4/mortal:B2,E5") == mortal
    assert parse_any_position("0000000000000000000000000/1/C3,D4/B2,E5/") == mortal
    assert isinstance(parse_any_position("0000000000000000000000000/1/pan:C3,D4/mortal:B2,E5"), GodState)
    assert isinstance(parse_any_position("0000000000003000000000000/2/mortal:C3,D4/mortal:B2,E5/won"), GodState)


def test_go_on_a_finished_game(engine):
    check_game_over(engine, "position fen 0000000030000000000000000/2/D4,A1/E1,E2")
    engine.quit()


def test_end_of_input_ends_the_engine():
    done = subprocess.run(ENGINE_ARGS, input="isready\n", capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == "readyok\n" and "Traceback" not in done.stderr


def test_match_between_two_engine_subprocesses():
    command = shlex.join(ENGINE_ARGS)
    match = play_match(command, command, openings=1, go="depth 3", go_second="depth 1", seed=1)
    assert match.wins + match.losses == 2 and len(match.games) == 2
    assert {colour for _, colour, _, _, _ in match.games} == {0, 1}
    assert all(note == "" for *_, note in match.games)  # nobody forfeited
    assert "score" in match.summary()


def test_a_move_out_of_time_forfeits_and_its_late_answer_is_not_read_in_the_next_game():
    "An engine that runs past the match's clock is stopped; its late bestmove must not become the next game's move."
    command = shlex.join(ENGINE_ARGS)
    # the first engine overruns in both games; in the second its stale answer to the first game would come in time
    match = play_match(command, command, openings=1, go="movetime 1500", go_second="depth 1", move_timeout=1, seed=1)
    notes = [note for *_, note in match.games]
    assert notes == ["the first engine forfeits: engine 'first' sent no 'bestmove' in time (1 s)"] * 2, notes


# answers uci and isready, and exits at its first go
EXITS_AT_GO = ("import sys\nfor line in sys.stdin:\n    word = line.split()[:1]\n"
               "    if word == ['uci']: print('uciok', flush=True)\n"
               "    elif word == ['isready']: print('readyok', flush=True)\n"
               "    elif word == ['go']: sys.exit(3)\n")


def test_an_engine_that_exits_ends_the_match_after_that_game_and_the_games_played_are_summed_up(capsys):
    "The engine that exits loses that game, and the match ends there: its summary, then one error naming the engine."
    from santorini_az.protocol import ProtocolError, match_command
    exits = f"{sys.executable} -c {shlex.quote(EXITS_AT_GO)}"
    match = play_match(exits, exits, openings=2, go="depth 1")
    assert len(match.games) == 1 and "the first engine forfeits: engine 'first'" in match.games[0][4]
    assert match.stopped.startswith("engine 'first'") and match.stopped.endswith("exited with status 3")
    with pytest.raises(ProtocolError, match=r"(?s)the match ended after 1 of 4 games: engine 'first' .* exited with status 3"):
        match_command(exits, exits, openings=2, depth=1)
    assert "+0 -1 in 1 games" in capsys.readouterr().out  # the summary of what was played, first
    with pytest.raises(ProtocolError, match="--go-second infinite: a match needs searches that end by themselves"):
        match_command(exits, exits, go_second="infinite")


# plays the first legal move: at once, then exits; or, given 'slow', after half a second
FIRST_LEGAL_MOVE = ("import sys, time\nfrom santorini_az.protocol import _parse_position\n"
                    "from santorini_az.game import legal_actions\nfrom santorini_az.notation import format_action\n"
                    "slow, state = sys.argv[1:] == ['slow'], None\nfor line in sys.stdin:\n    word = line.split()\n"
                    "    if word[:1] == ['uci']: print('uciok', flush=True)\n"
                    "    elif word[:1] == ['isready']: print('readyok', flush=True)\n"
                    "    elif word[:1] == ['position']: state = _parse_position(word[1:])\n"
                    "    elif word[:1] == ['go']:\n        time.sleep(0.5 * slow)\n"
                    "        print('bestmove', format_action(state, legal_actions(state)[0]), flush=True)\n"
                    "        if not slow: sys.exit(5)\n")


def test_an_engine_that_exits_between_its_moves_loses_that_game():
    "It is gone when its next position is sent (the other engine took its time): that game is its forfeit, then the end."
    program = f"{sys.executable} -c {shlex.quote(FIRST_LEGAL_MOVE)}"
    match = play_match(program, f"{program} slow", openings=1, go="depth 1")
    assert [(colour, winner) for _, colour, winner, _, _ in match.games] == [(0, 1)]
    assert "the first engine forfeits: engine 'first'" in match.games[0][4] and match.stopped.endswith("exited with status 5")


# answers every go with `bestmove` and the words given on its command line (none: a bare 'bestmove'), after an error
ANSWERS_NO_MOVE = ("import sys\nfor line in sys.stdin:\n    word = line.split()[:1]\n"
                   "    if word == ['uci']: print('uciok', flush=True)\n"
                   "    elif word == ['isready']: print('readyok', flush=True)\n"
                   "    elif word == ['go']:\n        print('info string error: this engine knows no gods', flush=True)\n"
                   "        print(' '.join(['bestmove', *sys.argv[1:]]), flush=True)\n")


@pytest.mark.parametrize("answer, why", [("", "it answered 'bestmove' with no move"),
                                         ("(none)", "it answered 'bestmove (none)' in a position with legal moves")])
def test_a_bestmove_without_a_move_forfeits_naming_it_and_what_the_engine_said(capsys, answer, why):
    """A forfeit says what the engine answered, and quotes the error it sent before (which may name the real cause);
    the game's line separates the forfeit from the result, and counts one move in the singular (a bare 'bestmove'
    gave 'first forfeits: list index out of range', run on after '... wins in 0 moves')."""
    program = f"{sys.executable} -c {shlex.quote(ANSWERS_NO_MOVE)} {answer}"
    match = play_match(program, shlex.join(ENGINE_ARGS), openings=1, go="depth 1", echo=print)
    note = f"the first engine forfeits: {why} (it said 'error: this engine knows no gods')"
    assert [(colour, winner, len(moves), n) for _, colour, winner, moves, n in match.games] == [(0, 1, 0, note), (1, 0, 1, note)]
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == f"game 2: first engine plays player 2, the second engine (player 1) wins in 1 move; {note}", lines


# plays the first legal move after a pause of argv[1] seconds, writing each go line it reads to the file argv[2]
CLOCKED_FIRST_MOVE = ("import sys, time\nfrom santorini_az.protocol import _parse_position\n"
                      "from santorini_az.game import legal_actions\nfrom santorini_az.notation import format_action\n"
                      "pause, log, state = float(sys.argv[1]), open(sys.argv[2], 'a'), None\nfor line in sys.stdin:\n"
                      "    word = line.split()\n    if word[:1] == ['uci']: print('uciok', flush=True)\n"
                      "    elif word[:1] == ['isready']: print('readyok', flush=True)\n"
                      "    elif word[:1] == ['position']: state = _parse_position(word[1:])\n"
                      "    elif word[:1] == ['go']:\n        log.write(line); log.flush(); time.sleep(pause)\n"
                      "        print('bestmove', format_action(state, legal_actions(state)[0]), flush=True)\n")


def test_a_match_on_a_clock_sends_the_times_left_and_a_fallen_flag_loses(tmp_path):
    """A match on a clock (`match --clock 5+0.2`): each go carries both players' time left and the increments, a move's
    time taken off its player's and the increment added; an engine whose time runs out loses that game. (A match had
    budgets a move only, and a clock given through --go-second never ran down.)"""
    from santorini_az.protocol import MatchClock
    program = lambda pause, log: f"{sys.executable} -c {shlex.quote(CLOCKED_FIRST_MOVE)} {pause} {tmp_path / log}"
    match = play_match(program(0.05, "first"), program(0.05, "second"), openings=1, clock=MatchClock(5, 0.2))
    assert [note for *_, note in match.games] == ["", ""]
    goes = [line.split() for line in (tmp_path / "first").read_text().splitlines()]
    assert goes[0] == "go wtime 5000 btime 5000 winc 200 binc 200".split(), goes[0]
    wtime, btime = int(goes[1][2]), int(goes[1][4])  # a move of each since: 50 ms and a little more off, 200 ms back
    assert 5000 < wtime <= 5150 and 5000 < btime <= 5150, goes[1]
    slow = play_match(program(0.7, "slow"), program(0, "quick"), openings=1, clock=MatchClock(1))
    assert [(colour, winner) for _, colour, winner, _, _ in slow.games] == [(0, 1), (1, 0)]  # its second move, both games
    assert all(note.startswith("the first engine forfeits: its time ran out (") for *_, note in slow.games), slow.games


@pytest.mark.parametrize("arguments, message", [
    ({"clock": "60", "depth": 3}, "give one of --movetime, --nodes, --depth, --clock"),
    ({"clock": "5", "go_second": "nodes 5"}, "--go-second with --clock: the clock is both engines' budget"),
    ({"clock": "a minute"}, "--clock takes SECONDS or SECONDS+INCREMENT, e.g. 60+0.5, got 'a minute'"),
    ({"clock": "0+1"}, "--clock 0+1: the seconds must be above 0"), ({"clock": "5+-1"}, "the increment 0 or more")])
def test_a_bad_clock_is_refused_before_any_engine_starts(arguments, message):
    from santorini_az.protocol import ProtocolError, match_command
    with pytest.raises(ProtocolError) as refused: match_command("no-such-engine", "no-such-engine", **arguments)
    assert message in str(refused.value), str(refused.value)


def test_option_values_are_read_in_any_case():
    "As option names are: setoption name engine value AlphaZero sets alphazero."
    from santorini_az.protocol import EngineSession
    said = []
    session = EngineSession(said.append)
    session.handle("setoption name engine value AlphaZero")
    assert session.options["Engine"] == "alphazero" and said == []


def resident_share(array) -> float:
    "The share of `array`'s memory pages the process holds now (mincore(2)): 0 for pages never written."
    page = mmap.PAGESIZE
    start = array.ctypes.data // page * page
    length = array.ctypes.data + array.nbytes - start
    pages = (ctypes.c_ubyte * ((length + page - 1) // page))()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.mincore(ctypes.c_void_p(start), ctypes.c_size_t(length), pages) != 0:
        raise OSError(ctypes.get_errno(), "mincore")
    return sum(p & 1 for p in pages) / len(pages)


def test_a_large_hash_is_written_when_made_not_during_the_first_search():
    """The transposition table's memory is written as it is made (np.zeros left it to be mapped on first write, which
    made a 4 GB Hash's first search seconds long): every page of the table is in memory at once. (Asked of the table's
    own pages: the process's size, measured before, moved with what other tests' threads freed meanwhile.)"""
    from santorini_az.alphabeta import make_tables
    from santorini_az.god_alphabeta import make_god_tables
    assert resident_share(np.zeros(2**24)) < 0.01  # the measure sees a table left to be mapped on first write
    for make in (make_tables, make_god_tables):
        tables = make(256)
        tt = {field: getattr(tables, field) for field in tables._fields if field.startswith("tt_")}
        assert sum(table.nbytes for table in tt.values()) >= 2**27, make.__name__
        for field, table in tt.items(): assert resident_share(table) > 0.99, (make.__name__, field, resident_share(table))


def test_a_new_game_empties_the_table_it_has_and_searches_as_a_fresh_engine():
    "ucinewgame keeps the table's memory and empties it (a new 4 GB one took seconds to come); the search is a fresh one's."
    from santorini_az.alphabeta import AlphaBeta, AlphaBetaConfig
    from santorini_az.god_alphabeta import GodAlphaBeta, GodAlphaBetaConfig
    state = play_moves(parse_position("startpos"), "C3 D4 B2 D2")
    engine = AlphaBeta(AlphaBetaConfig(hash_mb=1))
    first = engine.search(state, depth=3)
    key = engine.tables.tt_key
    assert key.any()
    engine.new_game()
    assert engine.tables.tt_key is key and not key.any() and not engine.tables.tt_data.any()
    again, fresh = engine.search(state, depth=3), AlphaBeta(AlphaBetaConfig(hash_mb=1)).search(state, depth=3)
    same = lambda result: (result.action, result.score, result.nodes)
    assert same(again) == same(fresh) == same(first)
    gods = GodAlphaBeta(GodAlphaBetaConfig(hash_mb=1))
    score = gods.tables.tt_score
    gods.new_game()
    assert gods.tables.tt_score is score


def test_a_program_that_is_no_engine_is_named_soon_and_stopped(monkeypatch):
    "A command that never answers 'uci' (here `cat`, which only echoes it) is named within UCI_SECONDS, and not left running."
    from santorini_az import protocol
    monkeypatch.setattr(protocol, "UCI_SECONDS", 1)
    started, popen = [], subprocess.Popen
    monkeypatch.setattr(protocol.subprocess, "Popen", lambda *a, **k: started.append(popen(*a, **k)) or started[-1])
    with pytest.raises(protocol.EngineTimeout, match=r"engine 'second' \(cat\) sent no 'uciok' in time \(1 s\)"):
        protocol.EngineProcess("cat", name="second")  # its slot in a match, and the command that fills it
    assert started[0].poll() is not None  # it was stopped


def test_an_engine_that_exits_is_named_with_its_status_and_its_last_words():
    """A command that exits at once (as `santorini_az engin` would) is reported with its exit status and its stderr's
    last line, read however it is encoded."""
    from santorini_az import protocol
    program = f"{sys.executable} -c \"import sys; print('no such engine here', file=sys.stderr); sys.exit(3)\""
    with pytest.raises(protocol.ProtocolError) as refused:
        protocol.EngineProcess(program, name="second")
    assert str(refused.value) == f"engine 'second' ({program}) exited with status 3: no such engine here"
    latin = f"{sys.executable} -c \"import sys; sys.stderr.buffer.write(b'caf\\xe9 missing'); sys.exit(4)\""
    with pytest.raises(protocol.ProtocolError, match="exited with status 4: caf\ufffd missing"):
        protocol.EngineProcess(latin, name="latin")


@pytest.mark.parametrize("engine_name", ["alphabeta", "alphazero"])
def test_isready_prepares_the_engine(engine_name):
    "`isready` makes the searcher and runs it once (α-β compiles then), so the first timed move gets its whole clock."
    from santorini_az.protocol import EngineSession
    answers = []
    session = EngineSession(answers.append)
    session.handle(f"setoption name Engine value {engine_name}")
    assert session.alphabeta is None and session.alphazero is None
    session.handle("isready")
    assert answers == ["readyok"]
    searcher = session.alphabeta if engine_name == "alphabeta" else session.alphazero
    assert searcher is not None and searcher is session._searcher()  # the go that follows uses this one


@pytest.mark.parametrize("engine_name", ["alphabeta", "alphazero"])
def test_a_first_go_movetime_without_isready_warms_up_on_its_own_clock(monkeypatch, engine_name):
    """Without `isready`, the first search warms up first (α-β loads its compiled functions, the network runs once),
    and `movetime` counts from the `go`: the warm-up is taken out of the move's time, not added to it. A warm-up
    made 1.5 s slower by the test must not make a 3-second move answer later (a second of slack for a loaded machine)."""
    from santorini_az.protocol import EngineSession
    answers, warmed = [], []
    session = EngineSession(answers.append)
    def slow_warm_up(searcher):
        if searcher not in session.warmed_up: time.sleep(1.5)
        warmed.append(searcher)
        EngineSession._warm_up(session, searcher)
    monkeypatch.setattr(session, "_warm_up", slow_warm_up)
    session.handle(f"setoption name Engine value {engine_name}")
    session.handle("position startpos moves C3 D4 B2 D2")
    start = time.monotonic()
    session.handle("go movetime 3000")
    session.thread.join(30)
    took = time.monotonic() - start
    assert answers[-1].startswith("bestmove ") and answers[-1] != "bestmove (none)", answers
    assert took < 4, f"the first go movetime 3000 answered after {took:.2f} s"  # 4.5 s at least if the warm-up were extra
    assert warmed == [session._searcher()] and session._searcher() in session.warmed_up
    answers.clear()
    session.handle("go movetime 300")  # warm now: no second warm-up
    session.thread.join(30)
    assert answers[-1].startswith("bestmove ") and len(warmed) == 2 and len(session.warmed_up) == 1


def test_isready_answers_even_when_preparing_fails(monkeypatch):
    from santorini_az.protocol import EngineSession
    answers = []
    session = EngineSession(answers.append)
    monkeypatch.setattr(EngineSession, "_prepare", lambda self: 1 / 0)
    session.handle("isready")
    assert answers[-1] == "readyok" and answers[0].startswith("info string error"), answers


# --- positions with gods -------------------------------------------------------------------------------------------

from santorini_az.gods import format_god_position, god_start, god_winner, parse_god_position, play_turns

GOD_OPENING = "position startpos gods apollo pan moves C3 D4 B2 E5"  # player 1: Apollo on C3, D4; player 2: Pan


def god_position(command):
    "The god position a `position` command sets (startpos gods or fen), its moves played."
    tokens = command.split()
    moves = tokens[tokens.index("moves") + 1:] if "moves" in tokens else []
    start = god_start(tuple(tokens[3:5])) if tokens[1:3] == ["startpos", "gods"] else parse_god_position(tokens[2])
    return play_turns(start, moves)


def stop_promptly(engine):
    "Send `stop`: the bestmove comes within 3 s. The lines before it, and the bestmove."
    start = time.monotonic()
    engine.send("stop")
    *lines, bestmove = engine.until("bestmove", timeout=10)
    assert time.monotonic() - start < 3
    return lines, bestmove


def test_a_god_game_over_the_protocol(engine):
    "The engine plays a whole Apollo-Pan game against itself; every turn it answers is legal and its info names it."
    engine.send("setoption name Engine value alphazero")
    engine.send("setoption name Simulations value 20")
    moves, state = [], god_start(("apollo", "pan"))
    while god_winner(state) is None and len(moves) < 200:
        engine.send("position startpos gods apollo pan" + (" moves " + " ".join(moves) if moves else ""))
        engine.send("go")
        *lines, bestmove = engine.until("bestmove")
        turn = bestmove.split()[1]
        info = [l for l in lines if l.startswith("info depth")][-1]
        assert info.endswith(f" pv {turn}") and searched_nodes(info) >= 20, info
        assert not any(l.startswith("info string") for l in lines), lines
        state = play_turns(state, [turn])  # a legal turn, or NotationError
        moves.append(turn)
    assert god_winner(state) is not None and len(moves) > 4
    engine.quit()
    engine.check_no_traceback()


def test_a_god_position_in_fen_and_its_winning_turn(engine):
    "Artemis on level 2 reaches the level-3 tower in two steps: the engine finds the turn and calls it a win."
    engine.send("setoption name Engine value alphazero")
    engine.send("position fen 0000000223000000000000000/1/artemis:C4,A1/mortal:E1,E2")
    engine.send("go nodes 100")
    *lines, bestmove = engine.until("bestmove")
    assert bestmove.startswith("bestmove C4>D4>E4^") and "score win 1" in lines[-1], (lines, bestmove)
    engine.send("position fen 0000000223000000000000000/1/C4,A1/E1,E2")  # no gods: a mortal position, no such win
    engine.send("go nodes 100")
    *lines, bestmove = engine.until("bestmove")
    mortal = parse_position("0000000223000000000000000/1/C4,A1/E1,E2")
    parse_action(mortal, bestmove.split()[1])  # a mortal move, or NotationError
    assert "score win" not in lines[-1], lines
    engine.quit()


def test_god_movetime_is_honoured(engine):
    "`go movetime` bounds the whole turn (all its decisions), not each decision, and not by Simulations."
    engine.send("setoption name Engine value alphazero")
    engine.send("setoption name Simulations value 1")
    engine.send("isready")  # as a GUI does: the god network loads now, not on the clock
    assert engine.read(timeout=120) == "readyok"
    command = GOD_OPENING + " C3>C4^C3 B2>B3^A3"
    engine.send(command)
    start = time.monotonic()
    engine.send("go movetime 400")
    *lines, bestmove = engine.until("bestmove")
    elapsed = time.monotonic() - start
    info = lines[-1]
    assert searched_nodes(info) > 2, info  # the clock stopped it, not Simulations=1
    assert 0.3 < elapsed < 2.0, elapsed
    assert 300 <= searched_ms(info) <= 650, info  # the turn shares the time: not 400 per decision
    play_turns(god_position(command), [bestmove.split()[1]])
    engine.quit()


def test_god_stop_is_honoured(engine):
    "`go infinite` on a god position thinks until stop, answers isready meanwhile, then gives a whole legal turn."
    engine.send("setoption name Engine value alphazero")
    engine.send(GOD_OPENING)
    engine.send("go infinite")
    engine.quiet(0.5)  # still thinking
    engine.send("isready")
    assert engine.read() == "readyok"
    lines, bestmove = stop_promptly(engine)
    assert not any(l.startswith("info string error") for l in lines), lines
    assert searched_nodes(lines[-1]) > 1
    play_turns(god_position(GOD_OPENING), [bestmove.split()[1]])
    engine.quit()


def test_the_default_engine_searches_gods_with_the_god_alphabeta(engine):
    "Engine alphabeta (the default) searches god positions with chapter 11b's α-β: depths, a pv of whole turns, no note."
    engine.send(GOD_OPENING)
    engine.send("go depth 3")
    lines = engine.until("bestmove")
    assert not any(l.startswith("info string") for l in lines), lines
    infos = [l for l in lines if l.startswith("info depth")]
    assert [int(l.split()[2]) for l in infos] == [1, 2, 3], infos
    state = god_position(GOD_OPENING)
    assert infos[-1].split(" pv ")[1].split()[0] == lines[-1].split()[1]
    play_turns(state, infos[-1].split(" pv ")[1].split())  # the pv: three legal turns in a row
    engine.send("position fen 0000000223000000000000000/1/artemis:C4,A1/mortal:E1,E2")
    engine.send("go depth 2")
    *lines, bestmove = engine.until("bestmove")
    assert bestmove.startswith("bestmove C4>D4>E4^") and "score win 1" in lines[-1], (lines, bestmove)
    engine.quit()


def test_the_god_alphabeta_honours_movetime_and_stop(engine):
    engine.send("isready")
    assert engine.read() == "readyok"  # the god α-β's compiled functions are loaded here, not in the first go
    engine.send(GOD_OPENING)
    start = time.monotonic()
    engine.send("go movetime 300")
    *lines, bestmove = engine.until("bestmove")
    assert time.monotonic() - start < 1.5, lines
    assert searched_ms(lines[-1]) <= 400, lines
    play_turns(god_position(GOD_OPENING), [bestmove.split()[1]])
    engine.send("go infinite")
    time.sleep(0.5)
    assert not any(l.startswith("bestmove") for l in list(engine.lines.queue)), "go infinite answered before stop"
    lines, bestmove = stop_promptly(engine)
    play_turns(god_position(GOD_OPENING), [bestmove.split()[1]])
    engine.quit()


BAD_GOD_COMMANDS = [  # (the command, what its error line must name)
    ("position startpos gods apollo zeus", "'zeus'"),
    ("position startpos gods apollo", "two gods"),
    ("position startpos gods", "two gods"),
    ("position startpos gods apollo pan moves C3 D4 B2 E5 C3>C4>C5^D5", "'C3>C4>C5^D5'"),
    ("position startpos gods apollo pan moves C3 D4 B2 E5 C3>C4", "'C3>C4'"),
    ("position startpos gods apollo pan moves C3 D4 B2 E5 A1>A2^A3", "A1"),
    ("position startpos gods apollo pan moves C3 D4 B2 E5 C3>C4^C3 Z9", "'Z9'"),
    ("position fen 0000000000000000000000000/1/apollo:C3,D4/hades:B2,E5", "'hades'"),
    ("position fen 0000000000000000000000000/1/apollo:C3,D4/pan:B2,E5/sleepy", "'sleepy'"),
    ("position fen 0000000000000000000000000/1/apollo:C3,D4/pan:B2,E5/athena-up", "Athena"),
]


def test_each_bad_god_command_names_its_culprit_and_the_engine_keeps_running(engine):
    "Every bad god command in turn, in one session: an error line naming the culprit, then the network plays on."
    engine.send("setoption name Engine value alphazero")
    for command, culprit in BAD_GOD_COMMANDS:
        check_refused(engine, command, culprit)
        check_answers(engine, GOD_OPENING, "go nodes 5")
    engine.quit()
    engine.check_no_traceback()


def test_go_on_a_finished_god_game(engine):
    check_game_over(engine, "position fen 0000000030000000000000000/2/pan:D4,A1/mortal:E1,E2/won")
    check_answers(engine, GOD_OPENING, "setoption name Engine value alphazero", "go nodes 5")  # the session goes on
    engine.quit()


def test_god_match_between_two_engine_subprocesses():
    "A short `match` with gods finishes, each engine plays each side, and every game replays as legal god turns."
    command = shlex.join(ENGINE_ARGS)
    match = play_match(command, command, openings=1, go="nodes 20", go_second="nodes 5", seed=2,
                       options={"Engine": "alphazero"}, gods=("apollo", "pan"))
    assert len(match.games) == 2 and {colour for _, colour, _, _, _ in match.games} == {0, 1}
    for opening, colour, winner, turns, note in match.games:
        assert note == ""  # nobody forfeited
        start = parse_god_position(opening)
        assert start.gods == ("apollo", "pan") and format_god_position(start) == opening
        assert god_winner(play_turns(start, turns)) == winner
    assert "apollo as player 1, pan as player 2" in match.summary()


def test_a_search_stopped_before_its_first_simulation_plays_the_networks_choice():
    """A stop that arrives before the first simulation (a GUI's instant stop, a clock with nothing left) still has the
    root evaluated: both AlphaZero searches answer the network's highest prior and its value (they answered the first
    legal move, the uniform search's choice, with a score of 0)."""
    from santorini_az.encoding import N_ACTIONS, action_index
    from santorini_az.protocol import AlphaZeroSearcher, CompiledAlphaZeroSearcher
    state = play_moves(parse_position("0000000000000000000000000/1//"), ["C3", "D4", "B2", "D2"])
    favourite = max(action_index(state, a) for a in state.legal_actions())  # the last legal action, not the first
    logits = np.zeros(N_ACTIONS, np.float32)
    logits[favourite] = 3.0
    readable = AlphaZeroSearcher(lambda s: (logits.tolist(), 0.25))
    compiled = CompiledAlphaZeroSearcher(lambda planes: (np.tile(logits, (len(planes), 1)), np.full(len(planes), 0.25, np.float32)))
    for searcher in (readable, compiled):
        searcher.stop()
        result = searcher.search(state, nodes=0, reset_stop=False)
        assert (result.nodes, result.action, result.score) == (0, favourite, 250), (type(searcher).__name__, result)


def test_help_lists_every_command_the_engine_takes():
    "`help` answers in info strings, naming each command the session has a handler for (and quit)."
    from santorini_az.protocol import EngineSession
    answers = []
    EngineSession(answers.append).handle("help")
    assert answers and all(line.startswith("info string ") for line in answers)
    commands = {name[len("_cmd_"):] for name in dir(EngineSession) if name.startswith("_cmd_")} | {"quit"}
    text = " ".join(answers)
    assert all(f" {command}" in f" {text.replace(';', ' ')}" for command in commands), (commands, answers)
    from santorini_az.protocol import OPTIONS  # and what each option means (uci gives types and ranges only)
    assert [a.split(":")[0] for a in answers if a.startswith("info string option ")] == [f"info string option {o}" for o in OPTIONS]


def test_setoption_out_of_order_says_the_order():
    "A setoption whose words are out of order says the order (it said: option Hash needs an integer, got '')."
    from santorini_az.protocol import EngineSession
    for line in ("setoption value 5 name Hash", "setoption Hash 5", "setoption name"):
        answers = []
        EngineSession(answers.append).handle(line)
        expected = "unknown option ''" if line == "setoption name" else "setoption needs 'name <Name> value <v>', in that order"
        assert len(answers) == 1 and expected in answers[0], (line, answers)


def test_a_clock_gives_each_move_its_share_of_the_players_time():
    "UCI's `go wtime btime [winc binc] [movestogo]`: the player to move's time over the moves to go, plus 0.8 of its increment."
    from santorini_az.protocol import ProtocolError, _parse_go, clock_movetime
    clock = _parse_go("wtime 30000 btime 1500 winc 1000 binc 0".split())["clock"]
    assert clock_movetime(clock, 0) == 30000 // 30 + 800 and clock_movetime(clock, 1) == 1500 // 30
    assert clock_movetime(_parse_go("wtime 9000 btime 9000 movestogo 3".split())["clock"], 1) == 3000
    assert clock_movetime({"wtime": 60, "winc": 5000}, 0) == 10  # never more than what is left, less 50 ms
    assert clock_movetime({"wtime": 20}, 0) == 1
    for bad, words in [("wtime 100 btime", "needs a number"), ("wtime 100 sideways 5", "alone or together"),
                       ("wtime 1 wtime 2", "each once"), ("wtime x btime 5", "whole numbers"), ("wtime --5", "whole numbers"),
                       ("wtime 5 movestogo 0", "positive"), ("nodes 99999999999999999999", "at most 2147483647"),
                       ("movetime 99999999999999999999", "at most 2147483647"), ("depth ²", "positive integer"),
                       ("depth -1", "positive integer"), ("nodes", "needs a number"), ("depth infinite", "needs a number")]:
        with pytest.raises(ProtocolError, match=words): _parse_go(bad.split())
    # UCI sends all of go's words in one line: a clock with a depth or nodes (as tournament managers add them), and a
    # clock a little below zero (a GUI's margin overran) counts as no time left: the move takes 1 ms, it is not refused
    assert _parse_go("wtime 60000 btime -20 movestogo 40 depth 5 nodes 900".split()) == {
        "depth": 5, "nodes": 900, "clock": {"wtime": 60000, "btime": 0, "movestogo": 40}}
    assert _parse_go("infinite depth 3".split()) == {"infinite": True, "depth": 3}
    assert clock_movetime({"wtime": 0}, 0) == 1
    with pytest.raises(ProtocolError, match="no time for player 2"): clock_movetime({"wtime": 100}, 1)


def session_answers(*lines, timeout=60):
    "What an in-process `EngineSession` answers to `lines`, each search waited for."
    from santorini_az.protocol import EngineSession
    answers = []
    session = EngineSession(answers.append)
    for line in lines:
        session.handle(line)
        if session.thread is not None: session.thread.join(timeout)
    return answers


def test_a_go_after_a_refused_position_answers_no_move_for_the_position_before():
    "A GUI reads every bestmove as the answer to the position it sent last: after a refused one, go gives no move."
    before, typo = "position startpos moves C3 D4 B2 D2", "position startpos moves C3 D4 B2 D2 C3>B3^C3 D4>D3^D5"
    mended = typo.replace("D4>D3^D5", "B2>A1^A2")  # player 2's workers are on B2 and D2
    answers = session_answers(before, "go depth 2", typo, "go depth 2", mended, "go depth 2")
    bestmoves = [a for a in answers if a.startswith("bestmove")]
    assert len(bestmoves) == 3 and bestmoves[1] == "bestmove (none)", answers
    assert any("no position to search: the last position was refused" in a for a in answers), answers
    after = play_moves(parse_position("0000000000000000000000000/1//"), mended.split()[3:])
    assert parse_action(after, bestmoves[2].split()[1]) in after.legal_actions()  # the position sent again, answered


def test_go_with_several_limits_keeps_each():
    "go wtime btime depth: α-β stops at the depth, within the clock's share; a movetime beside a clock caps its share."
    answers = session_answers("position startpos moves C3 D4 B2 D2", "go wtime 600000 btime 600000 depth 2",
                              "go wtime 600000 btime 600000 movetime 100")
    first = answers.index(next(a for a in answers if a.startswith("bestmove")))
    depths = [int(a.split()[2]) for a in answers[:first] if a.startswith("info depth")]
    assert max(depths) == 2 and answers[first] != "bestmove (none)", answers
    timed = [a for a in answers[first + 1:] if a.startswith("info depth")]  # 100 ms, not 600000/30 = 20 s
    assert timed and max(int(a.split(" time ")[1].split()[0]) for a in timed) < 1000 and answers[-1] != "bestmove (none)", answers


def test_a_byte_order_mark_a_long_line_and_bytes_that_are_not_utf8_are_answered_in_one_line():
    "A BOM before uci still gets uciok; 100 KB of garbage an error line of at most 300 characters of it; a byte that is not UTF-8 is no crash."
    answers = session_answers("\ufeffuci", "x" * 100_000)
    assert "uciok" in answers and len(answers[-1]) < 350 and answers[-1].startswith("info string error: unknown command"), answers[-1][:400]
    done = subprocess.run(ENGINE_ARGS, input=b"position startpos moves caf\xe9\nisready\nquit\n", capture_output=True,
                          timeout=120, env={**__import__("os").environ, "PYTHONIOENCODING": "utf-8:strict"})
    out = done.stdout.decode()
    assert done.returncode == 0 and "info string error:" in out and "readyok" in out, (out, done.stderr.decode()[-500:])


def test_an_alphabeta_move_from_a_cut_iteration_has_its_info_line():
    """The last info line before bestmove shows the move played, also when a node budget cut an iteration that changed
    it, and the nodes the search took, the cut iteration's included."""
    from santorini_az.alphabeta import AlphaBeta, AlphaBetaConfig
    from santorini_az.notation import format_position
    from santorini_az.game import random_openings
    from santorini_az.protocol import OPTIONS
    import numpy as np
    states, changed = random_openings(10, np.random.default_rng(3)), 0
    for state in states:  # the same search as the engine's (a fresh session's α-β: its Hash, nothing in its table)
        reported = []
        result = AlphaBeta(AlphaBetaConfig(hash_mb=OPTIONS["Hash"][1])).search(state, nodes=5000, on_iteration=reported.append)
        changed += result.action != reported[-1].action
        answers = session_answers(f"position fen {format_position(state)}", "go nodes 5000")
        last_info = [a for a in answers if a.startswith("info depth")][-1]
        assert last_info.split(" pv ")[1].split()[0] == answers[-1].split()[1], (last_info, answers[-1])
        assert " nodes 5000 " in last_info, last_info  # the cut iteration's nodes too (the last whole one's before)
    assert changed >= 3, changed  # the budget does cut iterations that change the move (4 of these 10)


def test_go_infinite_keeps_its_depth_and_a_position_refused_meanwhile_leaves_no_position():
    "go infinite depth 3 stops deepening at 3 and answers at stop; a position refused while it ran is no position after."
    from santorini_az.protocol import EngineSession
    answers = []
    session = EngineSession(answers.append)
    session.handle("position startpos moves C3 D4 B2 D2")
    session.handle("go infinite depth 3")
    deadline = time.monotonic() + 30
    while not any(a.startswith("info depth 3 ") for a in answers) and time.monotonic() < deadline: time.sleep(0.05)
    time.sleep(0.3)  # time for a depth 4 that must not come
    session.handle("position startpos")  # during go infinite: refused, send stop first
    assert not any(a.startswith("bestmove") for a in answers), answers  # infinite: no answer before stop
    session.handle("stop")
    session.thread.join(30)
    assert max(int(a.split()[2]) for a in answers if a.startswith("info depth")) == 3, answers
    assert any("send stop first" in a for a in answers) and answers[-1].startswith("bestmove ") and answers[-1] != "bestmove (none)"
    session.handle("go depth 1")
    assert answers[-1] == "bestmove (none)" and "no position to search" in answers[-2], answers[-3:]


def test_an_alphazero_budget_whose_tree_would_not_fit_in_memory_is_refused():
    from santorini_az.game import initial_state
    from santorini_az.protocol import CompiledAlphaZeroSearcher
    with pytest.raises(ValueError, match="GiB for the search trees, more than the .* GiB they may take"):
        CompiledAlphaZeroSearcher().search(initial_state(), nodes=2_000_000_000)


@pytest.mark.parametrize("searcher", ["readable", "compiled"])
def test_an_alphazero_search_stopped_before_its_first_simulation_plays_a_legal_move_at_depth_0(searcher):
    "A stop already set (reset_stop=False, as a queued `stop` leaves it): no evaluation at all, yet an answer."
    from santorini_az.game import initial_state
    from santorini_az.encoding import legal_action_indices
    from santorini_az.protocol import AlphaZeroSearcher, CompiledAlphaZeroSearcher
    engine = AlphaZeroSearcher() if searcher == "readable" else CompiledAlphaZeroSearcher()
    engine.stop()
    result = engine.search(initial_state(), nodes=100, reset_stop=False)
    assert (result.depth, result.nodes, result.score) == (0, 0, 0), result
    assert result.action in legal_action_indices(initial_state()) and result.pv == [result.action]


def test_go_with_a_clock_answers_within_its_share():
    from santorini_az.protocol import EngineSession
    answers = []
    session = EngineSession(answers.append)
    for line in ["isready", "position startpos moves C3 D4 B2 D2", "go wtime 3000 btime 3000"]: session.handle(line)
    session.thread.join(30)
    assert answers[-1].startswith("bestmove ") and answers[-1] != "bestmove (none)", answers
    session.handle("go btime 100")  # player 1 to move, and the clock names only player 2's time
    session.thread is None or session.thread.join(30)
    assert "no time for player 1 (wtime)" in " ".join(answers) and answers[-1] == "bestmove (none)", answers


def test_a_stop_is_read_while_a_command_waits_for_the_search():
    "A command sent during an endless-seeming search waits for it, but the stop sent after it still ends it at once."
    proc = subprocess.Popen(ENGINE_ARGS, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        proc.stdin.write("position startpos moves C3 D4 B2 D2\ngo depth 60\n"); proc.stdin.flush()
        assert proc.stdout.readline().startswith("info depth 1 ")  # searching
        proc.stdin.write("position startpos\nstop\nisready\nquit\n"); proc.stdin.flush()
        out, _ = proc.communicate(timeout=60)  # depth 60 would take years: only the stop ends it
    finally:
        proc.kill()
    lines = out.splitlines()
    assert proc.returncode == 0 and lines[-2].startswith("bestmove ") and lines[-1] == "readyok", out


def test_piped_commands_wait_for_a_search_with_an_end():
    "Commands piped after a finite go wait for its bestmove (none is refused), and quit or end of input lets it finish."
    two_searches = ("position startpos moves C3 D4 B2 D2\ngo depth 2\n"
                    "position startpos moves C3 D4 B2 E5\ngo depth 2\nquit\n")
    done = subprocess.run(ENGINE_ARGS, input=two_searches, capture_output=True, text=True, timeout=120)
    assert len([l for l in done.stdout.splitlines() if l.startswith("bestmove")]) == 2, done.stdout
    assert "error" not in done.stdout, done.stdout
    for end in ("", "quit\n"):  # end of input, or quit at once: the search with an end finishes either way
        piped = subprocess.run(ENGINE_ARGS, input="position startpos moves C3 D4 B2 D2\ngo depth 3\n" + end,
                               capture_output=True, text=True, timeout=120)
        depths = [l.split()[2] for l in piped.stdout.splitlines() if l.startswith("info depth")]
        assert depths == ["1", "2", "3"] and piped.stdout.splitlines()[-1].startswith("bestmove "), (end, piped.stdout)
    nodes = subprocess.run(ENGINE_ARGS, input="setoption name Engine value alphazero\nposition startpos\ngo nodes 200\nquit\n",
                           capture_output=True, text=True, timeout=120)
    assert " nodes 200 " in nodes.stdout and nodes.stdout.splitlines()[-1].startswith("bestmove "), nodes.stdout
