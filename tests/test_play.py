"Terminal play (`santorini_az play`, `play_game`) driven by scripted input: help, legend, moves, undo, bad entries."
import subprocess
import sys
from pathlib import Path

from santorini_az.play import play_game

SCRIPT = Path(sys.executable).parent / "santorini_az"
AFTER_SETUP = "0000000000000000000000000/1/C3,B2/D2,E1"  # player 1 to make the first move


def play_cli(lines, *args):
    "Run `santorini_az play` against the uniform MCTS with `lines` typed on stdin."
    return subprocess.run([str(SCRIPT), "play", "--checkpoint", "mcts", "--sims", "4", *args],
                          input="".join(line + "\n" for line in lines), capture_output=True, text=True, timeout=60)


def play_scripted(lines, **kwargs):
    "Play `play_game` with `lines` typed; what was written, one entry per call, and the result."
    said, typed = [], iter(lines)
    result = play_game("mcts", simulations=4, read=lambda prompt: next(typed), write=said.append, seed=0, **kwargs)
    return said, result


def test_cli_help_legend_moves_undo_and_quit():
    result = play_cli(["help", "?", "moves", "C3", "undo", "undo", "quit"])
    out = result.stdout
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert out.count("Legend:") == 3  # once at the start, then with each help
    assert out.index("Legend:") < out.index("your move")  # before the first question
    assert out.count("C3>C4^D5    move your worker from C3 to C4, then build on D5") == 2
    assert all(f"  {command} " in out for command in ("help", "moves", "undo", "quit"))
    assert "a b       your first and second workers (player 1)" in out and "x y       the engine's first and second (player 2)" in out
    assert "25 legal placements: A1 A2" in out
    assert "took back your C3\n" in out
    assert "nothing to undo: you have not moved yet" in out
    assert "is not a cell" not in out
    assert out.rstrip().endswith("game abandoned")


def test_cli_bad_entry_is_one_sentence_and_the_game_goes_on():
    result = play_cli(["help me", "quit"])
    assert result.returncode == 0 and "Traceback" not in result.stderr
    answers = [line for line in result.stdout.splitlines() if "help me" in line]  # after the prompt, on its line
    assert len(answers) == 1 and answers[0].endswith(
        "  'help me' is neither a move nor a command: expected a placement like C3, or help"), answers
    assert result.stdout.count("your move") == 2 and result.stdout.rstrip().endswith("game abandoned")


def test_cli_a_winning_move_ends_the_game():
    result = play_cli(["A5>B5^A5"], "--position", "2300000000000000000000000/1/A5,E1/C3,D3")
    assert result.returncode == 0 and "player 1 has won" in result.stdout
    assert result.stdout.rstrip().endswith("you win")  # the board above says "player 1 has won"


def test_undo_takes_back_the_move_and_the_engines_reply():
    from santorini_az.notation import parse_position
    said, result = play_scripted(["C3>C4^D5", "undo", "exit"], start=parse_position(AFTER_SETUP))
    assert result is None
    taken = [line for line in said if line.startswith("took back")]
    assert len(taken) == 1 and taken[0].startswith("took back your C3>C4^D5 and the engine's "), taken
    assert said[-1] == f"position {AFTER_SETUP}"  # back where the human was


def test_undo_as_player_2_before_moving():
    said, result = play_scripted(["undo", "q"], human=1)
    assert result is None
    assert said.count("  nothing to undo: you have not moved yet") == 1
    assert sum(line.startswith("engine plays") for line in said) == 2  # player 1 placed both its workers first


def test_moves_lists_every_legal_move_by_step():
    from santorini_az.game import legal_actions
    from santorini_az.notation import parse_position
    said, _ = play_scripted(["moves", "quit"], start=parse_position(AFTER_SETUP))
    listing = next(line for line in said if "legal moves" in line).split("\n")
    count = len(legal_actions(parse_position(AFTER_SETUP)))
    assert listing[0] == f"{count} legal moves (FROM>TO^BUILD):"
    assert sum(len(line.split()) for line in listing[1:]) == count
    assert all(len({move.partition("^")[0] for move in line.split()}) == 1 for line in listing[1:])


def test_bad_entries_name_what_was_typed_and_what_is_expected():
    from santorini_az.notation import parse_position
    entries = ["", "hepl", "Z9", "C3", "C3>C4", "C3>C3^C4"]
    said, _ = play_scripted(entries + ["quit"], start=parse_position(AFTER_SETUP))
    answers = [line for line in said if line.startswith("  ")][-len(entries):]
    assert answers == ["  nothing typed: expected a move FROM>TO^BUILD like C3>C4^D5, or help",
                       "  'hepl' is neither a move nor a command: expected a move FROM>TO^BUILD like C3>C4^D5, or help",
                       "  'Z9' is not a move, and every worker is placed: expected a move FROM>TO^BUILD like C3>C4^D5",
                       "  'C3' is not a move, and every worker is placed: expected a move FROM>TO^BUILD like C3>C4^D5",
                       "  'C3>C4' is not a move: expected FROM>TO^BUILD, like C3>C4^B5 (moves lists the legal ones)",
                       f"  'C3>C3^C4' is not a legal move in {AFTER_SETUP}: the worker stands on C3: it must move, one square "
                       "(moves lists the legal ones)"], answers


def test_a_whole_god_game_in_the_terminal():
    """With gods: the human (Hermes, second) types the first legal turn of each position the game writes, the engine
    (Prometheus, uniform prior) answers; the game ends with a winner, and every turn was legal by chapter 01b's rules."""
    from santorini_az.gods import format_turn, god_apply, god_legal_turns, god_start, god_winner, parse_god_position
    said = []
    def first_legal_turn(prompt):
        state = parse_god_position(next(line for line in reversed(said) if line.startswith("position "))[9:])
        return sorted(format_turn(state, turn) for turn in god_legal_turns(state))[0]
    start = god_start(("prometheus", "hermes"))
    result = play_game("mcts", human=1, simulations=8, start=start, read=first_legal_turn, write=said.append)
    positions = [parse_god_position(line[9:]) for line in said if line.startswith("position ")]
    assert result in (0, 1) and len(positions) > 8 and god_winner(positions[-1]) == result
    for before, after in zip(positions, positions[1:]):  # each position follows the one before by a legal turn
        assert after in {god_apply(before, turn) for turn in god_legal_turns(before)}


def test_cli_plays_with_gods_and_refuses_bad_ones():
    done = play_cli(["C3", "D4", "moves", "help", "quit"], "--gods", "artemis,demeter")
    assert done.returncode == 0, done.stderr
    assert "player 1 (Artemis) to place" in done.stdout and "gods: player 1 Artemis, player 2 Demeter" in done.stdout
    assert "a second move (Artemis)" in done.stdout and "legal turns:" in done.stdout and "game abandoned" in done.stdout
    # the powers at the start and with each help: yours, then the engine's card
    assert done.stdout.count("You play Artemis: Your worker may move one additional time") == 2, done.stdout
    assert done.stdout.count("The engine plays Demeter, whose card says: Your worker may build one") == 2
    for gods, start in (("artemis,zeus", "error: --gods: no god 'zeus'"), ("artemis", "error: --gods takes two gods"),
                        ("artemis,pan,atlas", "error: --gods takes two gods")):  # the unknown god named alone
        refused = play_cli([], "--gods", gods)
        assert refused.returncode == 2 and refused.stderr.startswith(start) and "Traceback" not in refused.stderr, refused.stderr
    both = play_cli([], "--position", "0000000000000000000000000/1/artemis:A5,E1/demeter:A1,E5", "--gods", "apollo,pan")
    assert both.returncode == 2 and both.stderr.startswith("error: --gods and a god --position both name the gods"), both.stderr


def test_help_and_legend_fit_an_80_column_terminal():
    from santorini_az.gods import GODS
    from santorini_az.play import help_text, legend, powers_text
    powers = [powers_text((mine, theirs), human) for mine in GODS for theirs in GODS for human in (0, 1)]
    for text in (help_text(), help_text(gods=True), legend(0), legend(1), *powers):
        too_wide = [line for line in text.splitlines() if len(line) > 80]
        assert not too_wide, too_wide



def test_ctrl_c_abandons_the_game_with_the_status_of_an_interrupted_command():
    "Ctrl-C at the prompt: 'game abandoned', no traceback, exit status 130 (Ctrl-D, the end of the input, stays 0)."
    import os, signal, threading, time
    game = subprocess.Popen([str(SCRIPT), "play", "--checkpoint", "mcts", "--sims", "4"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # as a terminal's Ctrl-C
    # (a pytest-xdist worker ignores SIGINT, and a child inherits that: Python then installs no KeyboardInterrupt)
    try:
        os.set_blocking(game.stdout.fileno(), False)
        shown, deadline = b"", time.monotonic() + 60
        while b"your move" not in shown and time.monotonic() < deadline:  # the prompt: it waits for a move now
            try: shown += os.read(game.stdout.fileno(), 65536)
            except BlockingIOError: time.sleep(0.05)  # nothing new yet
        assert b"your move" in shown, shown
        os.set_blocking(game.stdout.fileno(), True)
        read = {}  # both pipes read to the end as it goes, so that neither fills up; stdin stays open (its end is Ctrl-D)
        readers = [threading.Thread(target=lambda name=name: read.update({name: getattr(game, name).read()}))
                   for name in ("stdout", "stderr")]
        for reader in readers: reader.start()
        game.send_signal(signal.SIGINT)
        game.wait(timeout=120)
        for reader in readers: reader.join(timeout=30)
        out, err = shown + read["stdout"], read["stderr"]
    finally:
        if game.poll() is None: game.kill()
    assert game.returncode == 130 and out.rstrip().endswith(b"game abandoned") and b"Traceback" not in err, (out, err)


def test_inspect_prints_no_negative_zero():
    "A value that rounds to zero reads +0.000 in the inspect table (the uniform search's root often does)."
    from santorini_az.play import signed
    assert [signed(x) for x in (-0.0, -0.0004, 0.0004, -0.0006, 0.415)] == ["+0.000", "+0.000", "+0.000", "-0.001", "+0.415"]
    from rich.console import Console
    from santorini_az.play import inspect_table
    console = Console(record=True, width=120)
    console.print(inspect_table({"value": -0.0, "search_value": -0.0001, "pv": [],
                                 "rows": [{"move": "C3", "prior": 0.5, "visits": 3, "share": 0.5, "q": -0.0004}]}))
    shown = console.export_text()
    assert "-0.000" not in shown and shown.count("+0.000") == 3, shown


def test_god_champion_is_the_shipped_god_network_everywhere():
    "export's name for the shipped god network works where god positions take 'champion' (play, inspect, arena)."
    from santorini_az.play import god_evaluator, god_player
    from santorini_az.gods import from_mortal
    from santorini_az.game import initial_state
    from santorini_az.god_training import GodNode
    node = GodNode(from_mortal(initial_state(), ("apollo", "pan")))
    assert god_evaluator("god_champion")(node) == god_evaluator("champion")(node)
    assert vars(god_player("god_champion").factory) == vars(god_player("champion").factory)
