"""The widgets' Python half, headless: clicks play exactly the legal moves, refusals say why, undo restores, the
engine answers legally, and the inspection agrees with the `inspect` command."""
import json
import random
import xml.etree.ElementTree as ET

import pytest
import torch

from santorini_az.game import CELLS, WIN_LEVEL, Move, Placement, apply, initial_state, legal_actions, winner
from santorini_az.rundir import Record
from santorini_az.network import NetConfig, SantoriniNet, save_checkpoint
from santorini_az.notation import format_action, format_position, parse_action, parse_position, play_moves
from santorini_az.play import inspect_position
from santorini_az.widgets import (BoardWidget, InspectWidget, PlayWidget, TrainingDashboard, WidgetError,
                                  click_targets, clickable_outcomes, inspect, load_evaluator, run_summary)


def clicks_for(state, action) -> list[int]:
    "The cells a player clicks to play `action`, derived from the action alone (not from the widget's rules)."
    if isinstance(action, Placement): return [action.cell]
    here = state.workers[state.player][action.worker]
    return [here, action.to] if state.heights[action.to] == WIN_LEVEL else [here, action.to, action.build]


def random_positions(games: int, seed: int):
    rng = random.Random(seed)
    for _ in range(games):
        state = initial_state()
        while legal_actions(state):
            yield state
            state = apply(state, rng.choice(legal_actions(state)))
        yield state  # the finished game too


def test_the_click_rules_reach_exactly_the_legal_positions():
    for state in random_positions(30, seed=1):
        assert set(clickable_outcomes(state)) == {apply(state, a) for a in legal_actions(state)}


def test_clicking_the_widget_plays_every_legal_action():
    for state in random_positions(3, seed=1):
        actions = legal_actions(state)
        board = BoardWidget(state)
        for action in actions:
            board.reset(state)
            for cell in clicks_for(state, action):
                assert not board.refused, board.message
                board.click(cell)
            assert board.state == apply(state, action), (format_position(state), action)
            if isinstance(action, Placement) or state.heights[action.to] != WIN_LEVEL:
                assert board.moves == [format_action(state, action)]
            assert board.selection == [] and not board.refused


def test_every_cell_outside_the_targets_is_refused_with_a_reason():
    for state in random_positions(3, seed=2):
        board = BoardWidget(state)
        selections = [()]
        moves = [a for a in legal_actions(state) if isinstance(a, Move) and state.heights[a.to] != WIN_LEVEL]
        if moves:
            move = moves[0]
            here = state.workers[state.player][move.worker]
            selections += [(here,), (here, move.to)]
        for selection in selections:
            targets = click_targets(state, selection)
            for cell in range(CELLS):
                if cell in targets or (selection and cell == selection[-1]): continue
                if len(selection) == 1 and cell in click_targets(state): continue  # switching worker is allowed
                board.reset(state)
                for chosen in selection: board.click(chosen)
                message = board.click(cell)
                assert board.refused and message and board.message == message
                assert board.state == state and board.moves == [] and board.selection == list(selection)


def test_refusals_name_the_rule():
    s = play_moves(initial_state(), "A5 B5 D2 E1")
    board = BoardWidget(s)
    assert "player 2's worker" in board.click(18)
    assert "choose one of your workers first" in board.click(12)
    board.click(0)
    assert "not next to A5" in board.click(10)
    tall = parse_position("0000000200000000000000000/1/B5,A5/D2,E1")  # C4 at level 2, from level 0
    board = BoardWidget(tall)
    board.click(1)
    assert "too high" in board.click(7)
    board = BoardWidget(play_moves(initial_state(), "A5"))
    assert "taken" in board.click(0)


def test_clicks_arrive_from_the_browser_as_messages():
    board = BoardWidget()
    board._on_message(board, {"event": "click", "cell": 12}, [])
    assert board.moves == ["C3"]
    board._on_message(board, {"event": "undo"}, [])
    assert board.moves == [] and board.state == initial_state()
    assert "no cell" in board.click(99) and board.refused


def test_undo_restores_every_position():
    rng = random.Random(3)
    board, seen = BoardWidget(), [initial_state()]
    while legal_actions(board.state):
        action = rng.choice(legal_actions(board.state))
        for cell in clicks_for(board.state, action): board.click(cell)
        seen.append(board.state)
    while seen:
        assert board.state == seen.pop() and len(board.moves) == len(seen)
        board.undo()
    assert board.message == "nothing to undo" and board.refused


def test_play_and_record_round_trip():
    record = "C3 B2 D2 E1 C3>C4^D5 E1>E2^E1"
    board = BoardWidget(moves=record)
    assert board.record == record
    assert board.state == play_moves(initial_state(), record)
    with pytest.raises(WidgetError, match="not a legal"):
        board.play("A1")  # the placements are over
    with pytest.raises(WidgetError):
        BoardWidget("not a position")


def test_the_engine_replies_legally_and_the_game_ends_announced():
    game = PlayWidget("mcts", human=0, simulations=16)
    rng = random.Random(4)
    while winner(game.board.state) is None:
        state = game.board.state
        assert state.player == 0
        action = rng.choice(legal_actions(state))
        for cell in clicks_for(state, action): game.board.click(cell)
        game.wait(timeout=60)
        assert not game.board.thinking
    replayed = initial_state()
    for text in game.record.split(): replayed = apply(replayed, parse_action(replayed, text))  # every move legal
    assert replayed == game.board.state
    assert ("you win" in game.board.message) or ("the engine wins" in game.board.message)


def test_the_engine_moves_first_when_the_human_plays_second_and_undo_returns_to_the_human():
    game = PlayWidget("mcts", human=1, simulations=8)
    game.wait()
    assert len(game.board.moves) == 2 and game.board.state.player == 1
    assert "not your turn" not in game.board.message
    game.board.click(click_targets(game.board.state)[0]); game.board.click(click_targets(game.board.state)[0])
    game.wait()
    assert len(game.board.moves) == 5  # two placements each, then the engine's first move
    game.board.undo()  # back over the engine's move and the human's second placement, to the human's turn
    assert len(game.board.moves) == 3 and game.board.state.player == 1


def test_clicks_wait_while_the_engine_thinks_and_new_game_drops_a_stale_search():
    game = PlayWidget("mcts", human=1, simulations=200_000)
    assert game.board.thinking
    assert "thinking" in game.board.click(12) and game.board.refused
    game.side.value = 0
    game.new_game()
    game.wait(timeout=60)  # the old search notices it was cancelled
    assert game.board.moves == [] and not game.board.thinking


def test_a_bad_opponent_is_reported_on_the_board(tmp_path):
    game = PlayWidget(str(tmp_path / "missing.safetensors"), human=0, simulations=8)
    assert game.board.refused and "no such checkpoint" in game.board.message
    bad = tmp_path / "bad.safetensors"
    bad.write_text("not a checkpoint")
    with pytest.raises(WidgetError, match="cannot load"):
        load_evaluator(str(bad))


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("net") / "net.safetensors"
    save_checkpoint(path, SantoriniNet(NetConfig(16, 1)))
    return str(path)


@pytest.mark.parametrize("moves", ["C3 B2 D2 E1", "C3 B2 D2 E1 C3>C4^D5 E1>E2^E1", "A5"])
def test_inspection_numbers_equal_inspect_position(checkpoint, moves):
    state = play_moves(initial_state(), moves)
    for spec in ("mcts", checkpoint):
        theirs = inspect_position(state, spec, simulations=64, top=500)
        ours = inspect(state, load_evaluator(spec), simulations=64)
        assert ours.value == pytest.approx(theirs["value"], abs=1e-6)
        assert ours.search_value == pytest.approx(theirs["search_value"], abs=1e-6)
        assert [r["move"] for r in ours.rows(500)] == [r["move"] for r in theirs["rows"]]
        for mine, their in zip(ours.rows(500), theirs["rows"]):
            assert mine["visits"] == their["visits"] and mine["share"] == pytest.approx(their["share"])
            assert mine["prior"] == pytest.approx(their["prior"], abs=1e-6)
            assert (mine["q"] is None) == (their["q"] is None)
            if mine["q"] is not None: assert mine["q"] == pytest.approx(their["q"], abs=1e-6)
        assert ours.pv and ours.pv[0] == theirs["rows"][0]["move"]


def test_inspect_widget_steps_through_a_record_and_compares(checkpoint):
    record = "C3 B2 D2 E1 C3>C4^D5 E1>E2^E1"
    look = InspectWidget(moves=record, specs=["mcts", checkpoint], simulations=32, ply=4)
    assert look.rows[0]["prior"].position == format_position(play_moves(initial_state(), "C3 B2 D2 E1"))
    share = look.rows[1]["share"]
    assert len(share.heat) == CELLS and max(share.heat) == pytest.approx(1.0) and share.arrows
    look.slider.value = 6
    assert look.rows[0]["share"].last and look.rows[0]["share"].position == format_position(play_moves(initial_state(), record))
    ET.fromstring(look.to_svg())


def test_static_pictures_are_svg_and_deterministic():
    a, b = BoardWidget(moves="C3 B2 D2 E1"), BoardWidget(moves="C3 B2 D2 E1")
    a.click(12); b.click(12)
    assert a.to_svg() == b.to_svg()
    root = ET.fromstring(a.to_svg())
    assert root.tag.endswith("svg")
    game = PlayWidget("mcts", simulations=8)
    ET.fromstring(game.to_svg())


def write_records(path, records):
    with open(path, "a") as f:
        for r in records: f.write(json.dumps(r.__dict__) + "\n")


def test_dashboard_follows_a_run(tmp_path):
    dash = TrainingDashboard(tmp_path, interval=0.05, follow=False)
    assert run_summary(dash.records) == {"status": "no records yet"} and "waiting for" in dash.html.value
    write_records(tmp_path / "records.jsonl", [
        Record("selfplay", 1, 5.0, 1.0, {"games": 8, "games_per_hour": 1234.0}),
        Record("train", 1, 5.0, 2.0, {"policy_loss": 3.5, "value_loss": 0.9, "lr": 1e-3})])
    dash.start()
    try:
        for _ in range(400):  # the thread refreshes every 0.05 s; give it up to 20 s on a busy machine
            if "1234" in dash.html.value: break
            dash._stop.wait(0.05)
        assert len(dash.records) == 2
        assert "1234" in dash.html.value and "3.500 / 0.900" in dash.html.value
    finally:
        dash.stop()
    assert not dash._thread.is_alive()
    ET.fromstring(dash.to_svg())
