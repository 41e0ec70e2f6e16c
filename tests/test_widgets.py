"""The widgets' Python half, headless: clicks play exactly the legal moves, refusals say why, undo restores, the
engine answers legally, and the inspection agrees with the `inspect` command."""
import json
import random
import shutil
import time
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import torch

from santorini_az.encoding import action_from_index, encode, legal_action_indices
from santorini_az.evaluator import state_evaluator
from santorini_az.mcts import Search, SearchConfig
from santorini_az.game import CELLS, WIN_LEVEL, Move, Placement, apply, initial_state, legal_actions, winner
from santorini_az.rundir import Record
from santorini_az.network import NetConfig, SantoriniNet, load_checkpoint, save_checkpoint
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
    assert game.board.message == f"the engine played {game.board.moves[0]} and {game.board.moves[1]}: your turn"
    assert "not your turn" not in game.board.message
    game.board.click(click_targets(game.board.state)[0])
    assert game.board.message == f"you played {game.board.moves[-1]}"  # not 'player 2': one side is clicked for
    game.board.click(click_targets(game.board.state)[0])
    game.wait()
    assert len(game.board.moves) == 5  # two placements each, then the engine's first move
    game.board.undo()  # back over the engine's move and the human's second placement, to the human's turn
    assert len(game.board.moves) == 3 and game.board.state.player == 1


def test_clicks_wait_while_the_engine_thinks_and_new_game_drops_a_stale_search():
    game = PlayWidget("mcts", human=1, simulations=1_000_000)
    assert game.board.thinking
    assert "thinking" in game.board.click(12) and game.board.refused
    game.side.value = 0
    game.new_game()
    game.wait(timeout=60)  # the old search notices it was cancelled
    assert game.board.moves == [] and not game.board.thinking


def test_a_board_changed_in_code_while_the_engine_thinks_gets_a_move_for_the_position_it_has():
    "A reset or a play in code during the engine's search stops that search: the engine searches the new position."
    game = PlayWidget("mcts", human=1, simulations=1_000_000)  # the engine (player 1) opens: a long search of the empty board
    assert game.board.thinking
    game._simulations = 16  # the searches from now on (the running one read its 200,000 already)
    game.board.reset("0000000000000000000000000/1/A1,B1/C1,D1")  # player 1, the engine, to move in another position
    game.wait(timeout=60)
    assert not game.board.thinking and len(game.board.moves) == 1 and game.board.state.player == 1  # the human's turn
    assert parse_action(parse_position("0000000000000000000000000/1/A1,B1/C1,D1"), game.board.moves[0])  # legal there
    game = PlayWidget("mcts", human=1, simulations=1_000_000)
    game._simulations = 16
    game.board.play("C3")  # player 1's first placement, made in code: the engine places its second worker after it
    game.wait(timeout=60)
    assert game.board.moves[0] == "C3" and len(game.board.moves) == 2 and game.board.state.player == 1
    assert game.board.message == f"the engine played {game.board.moves[1]}: your turn"  # C3 was played in code, not by it
    gods = GodPlayWidget(("artemis", "athena"), human=1, simulations=1_000_000)
    gods._simulations = 8
    gods.board.reset(god_start(("apollo", "minotaur")))
    gods.wait(timeout=60)
    assert gods.board.state.gods == ("apollo", "minotaur") and len(gods.board.moves) == 2 and gods.board.state.player == 1
    assert gods.board.message.startswith(f"the engine played {gods.board.moves[0]} and {gods.board.moves[1]}: your turn")


def test_atlas_dome_switch_shows_whenever_a_click_plays_atlas():
    "The dome switch is shown on a two-player board too, on Atlas's turns only."
    board = GodBoardWidget(god_start(("artemis", "atlas")))
    shown = []
    for name in ["C3", "B2", "D2", "D4"]:  # the placements: no switch, a dome is a build
        shown.append(board.dome_shown)
        board.click(at(name))
    assert shown == [False] * 4
    shown = []
    for _ in range(2):  # Artemis's turn, then Atlas's
        shown.append(board.dome_shown)
        board.play(format_turn(board.state, god_legal_turns(board.state)[0]))
    assert shown == [False, True]
    board.dome = True  # switched on for Atlas's build, then the turn is taken back: it does not wait for a later turn
    board.click(board.targets[0])
    board.undo()
    assert not board.dome
    board.dome = True
    board.reset(god_start(("artemis", "atlas")))  # nor for a new game
    assert not board.dome


def test_a_learners_mistake_in_code_is_one_sentence_and_changes_nothing():
    "Wrong arguments name themselves; a refused reset leaves the board as it was; Jupyter shows a WidgetError's sentence alone."
    for make, words in [(lambda: PlayWidget("mcts", human=2), "human must be 0"),
                        (lambda: GodPlayWidget(("zeus", "apollo")), "unknown god 'zeus'"),
                        (lambda: GodPlayWidget("artemis"), "gods must be two names"),
                        (lambda: GodPlayWidget(opponent="alphabeta"), "opponent must be 'network' or 'uniform'")]:
        with pytest.raises(WidgetError, match=words): make()
    board = BoardWidget(moves="C3")
    with pytest.raises(WidgetError, match="play takes a move in notation"): board.play(12)  # a cell, not a move
    with pytest.raises(WidgetError, match="A1 is taken"): board.reset(None, "A1 A1")
    assert board.moves == ["C3"] and board.state == play_moves(initial_state(), ["C3"])
    gods = GodBoardWidget(god_start(("artemis", "atlas")), "C3 B2")
    with pytest.raises(WidgetError, match="C3 is taken"): gods.reset(god_start(("apollo", "pan")), "C3 C3")
    assert gods.moves == ["C3", "B2"] and gods.state.gods == ("artemis", "atlas")
    assert WidgetError("a sentence")._render_traceback_() == ["WidgetError: a sentence"]


def test_the_controls_take_effect_at_new_game():
    "Changing the side (or the simulations) mid-game does not stop the engine: the game keeps its own until new game."
    game = PlayWidget("mcts", human=0, simulations=8)
    for _ in range(2): game.board.click(click_targets(game.board.state)[0])  # our two placements
    game.wait()
    assert game.pending.value == ""
    game.side.value, game.simulations.value = 1, 50
    assert game.human == 0 and "8 simulations" in game.board.title
    assert "for the next game: press new game" in game.pending.value  # said under the controls until then
    for cell in clicks_for(game.board.state, legal_actions(game.board.state)[0]): game.board.click(cell)
    game.wait()
    assert len(game.board.moves) == 6 and game.board.state.player == 0  # the engine answered our first move
    game.new_game()
    game.wait()
    assert game.human == 1 and len(game.board.moves) == 2 and "50 simulations" in game.board.title
    assert game.pending.value == ""


def test_mid_move_the_worker_is_drawn_where_it_goes():
    "After choosing a worker and its cell, the board shows the worker there: a click on the cell it left builds there."
    board = BoardWidget(moves="C3 B2 D2 E1")
    board.click(12)  # the worker on C3 ...
    board.click(7)  # ... to C4: not played yet, but drawn there
    assert board.position == "0000000000000000000000000/1/C4,B2/D2,E1"
    assert board.state.workers[0] == (12, 16)  # the rules' position is unchanged until the build
    board.click(7)  # the worker again: the destination is let go, and the worker drawn back
    assert board.position == format_position(board.state)


def test_a_bad_opponent_is_reported_on_the_board(tmp_path):
    game = PlayWidget(str(tmp_path / "missing.safetensors"), human=0, simulations=8)
    assert game.board.refused and "no such checkpoint" in game.board.message
    assert game.board.click(12).endswith("then press new game") and game.board.moves == []  # no engine: no game
    bad = tmp_path / "bad.safetensors"
    bad.write_text("not a checkpoint")
    with pytest.raises(WidgetError, match="cannot load"):
        load_evaluator(str(bad))
    for player in ("random", "greedy", "alphabeta2"):  # the arena's players choose moves: no network to search with
        with pytest.raises(WidgetError, match=f"'{player}' is one of the arena's players, not a network") as refused:
            load_evaluator(player)
        assert "or use champion, random" not in str(refused.value)  # it once offered the names it had just refused
    assert load_evaluator("Champion") is not None and load_evaluator("MCTS") is not None
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "config.json").write_text("{}")  # a run directory with no champion yet: said on the board
    assert "no champion yet" in PlayWidget(str(tmp_path / "run"), human=0, simulations=8).board.message


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


@pytest.mark.parametrize("moves", ["C3 B2 D2 E1 C3>C4^D5 E1>E2^E1", "A5"])
def test_inspection_is_the_networks_softmax_and_a_search_run_here(checkpoint, moves):
    "The table rebuilt without `inspect`: the checkpoint's own logits, a softmax over the legal moves, and a search's root."
    state = play_moves(initial_state(), moves)
    evaluate = load_evaluator(checkpoint)
    model, _ = load_checkpoint(checkpoint)
    with torch.inference_mode(): logits, value = model(torch.from_numpy(encode(state)[None]))
    np.testing.assert_allclose(evaluate(encode(state)[None])[0], logits.numpy(), atol=1e-4)  # the widget's network is the file's
    legal = legal_action_indices(state)
    prior = torch.softmax(logits[0, legal].double(), 0).tolist()
    search = Search(state, SearchConfig(simulations=64)).run(state_evaluator(evaluate))
    root = search.root
    assert root.actions == legal
    expected = {format_action(state, action_from_index(state, a)): (p, n, w / n if n else None)
                for a, p, n, w in zip(legal, prior, root.visits, root.value_sums)}
    seen = inspect(state, evaluate, simulations=64)
    assert sorted(seen.moves) == sorted(expected) and len(seen.moves) == len(legal)
    assert seen.visits == sorted(seen.visits, reverse=True) and sum(seen.visits) == sum(root.visits)
    for move, p, n, q in zip(seen.moves, seen.prior, seen.visits, seen.q):
        assert (p, n) == (pytest.approx(expected[move][0], abs=1e-6), expected[move][1]), move
        assert q == (None if expected[move][2] is None else pytest.approx(expected[move][2], abs=1e-9)), move
    assert seen.value == pytest.approx(float(value[0]), abs=1e-4)
    assert seen.search_value == pytest.approx(search.root_value(), abs=1e-9) and seen.pv[0] == seen.moves[0]


def test_inspect_widget_steps_through_a_record_and_compares(checkpoint):
    record = "C3 B2 D2 E1 C3>C4^D5 E1>E2^E1"
    assert InspectWidget(moves=record, simulations=8).ply == 6  # an unfinished game opens on its last position
    look = InspectWidget(moves=record, specs=["mcts", checkpoint], simulations=32, ply=4)
    assert look.rows[0]["prior"].position == format_position(play_moves(initial_state(), "C3 B2 D2 E1"))
    share = look.rows[1]["share"]
    assert len(share.heat) == CELLS and max(share.heat) == pytest.approx(1.0) and share.arrows
    assert look.rows[0]["prior"].title == "mcts: uniform prior" and "uniform prior's value" in look.rows[0]["side"].value
    assert look.rows[1]["prior"].title == "net: network prior" and "network value" in look.rows[1]["side"].value
    # ply 4: player 2's setup turn marked whole, both placements (only the second was, where the play board had both)
    assert sorted(look.rows[0]["share"].last) == sorted([parse_cell("D2"), parse_cell("E1")])
    look.slider.value = 6
    assert look.rows[0]["share"].last and look.rows[0]["share"].position == format_position(play_moves(initial_state(), record))
    ET.fromstring(look.to_svg())


@pytest.mark.parametrize("settings, culprit", [({"specs": []}, "specs must name one or two"),
                                                ({"specs": ["mcts"] * 3}, "specs must name one or two"),
                                                ({"ply": 7}, "ply must be between 0 and 6"),
                                                ({"ply": -1}, "ply must be between 0 and 6")])
def test_the_inspect_widget_names_a_setting_it_cannot_show(settings, culprit):
    "No evaluator, three, or a ply past the record's end: one sentence naming the setting, not an empty or clamped view."
    with pytest.raises(WidgetError, match=culprit):
        InspectWidget(moves="C3 B2 D2 E1 C3>C4^D5 E1>E2^E1", simulations=8, **settings)


def test_the_inspect_widget_names_a_runs_checkpoint_after_its_run(checkpoint, tmp_path):
    "A checkpoint of a run's checkpoints/ folder is titled as the arena names it (RUN/iter-NNNN), not as a bare iteration."
    run_checkpoint = tmp_path / "cpu-run" / "checkpoints" / "iter-0003.safetensors"
    run_checkpoint.parent.mkdir(parents=True)
    shutil.copy(checkpoint, run_checkpoint)
    look = InspectWidget(moves="C3 B2 D2 E1", specs=[str(run_checkpoint)], simulations=8)
    assert look.rows[0]["prior"].title == "cpu-run/iter-0003: network prior"
    assert look.rows[0]["share"].title == "cpu-run/iter-0003: search visits"


def test_an_arrow_starts_off_the_mark_of_the_worker_it_moves():
    "The arrows of a search's moves leave the moving worker's letter readable: the line starts outside its disc."
    board = BoardWidget(moves="C3 B2 D2 E1", interactive=False)
    board.arrows = [{"from": 12, "to": 7, "build": None, "weight": 1.0}]  # C3's worker to C4
    root = ET.fromstring(board.to_svg())
    line = next(e for e in root.iter() if e.tag.endswith("line") and e.get("stroke") == "#7b3fbf")
    discs = [e for e in root.iter() if e.tag.endswith("circle") and e.get("stroke") == "#222"]  # the workers
    x, y = float(line.get("x1")), float(line.get("y1"))
    nearest = min(discs, key=lambda d: (float(d.get("cx")) - x) ** 2 + (float(d.get("cy")) - y) ** 2)
    assert ((float(nearest.get("cx")) - x) ** 2 + (float(nearest.get("cy")) - y) ** 2) ** 0.5 >= float(nearest.get("r"))


def test_static_pictures_scale_down_in_a_narrow_column():
    "Every picture's viewBox is its own size, so a docs column narrower than the picture scales it instead of cropping."
    from santorini_az.game import board_svg
    from santorini_az.god_encoding import sub_actions_svg
    look = InspectWidget(moves="C3 B2 D2 E1", simulations=8)
    for svg in (board_svg(initial_state()), sub_actions_svg(), BoardWidget(moves="C3 B2").to_svg(), look.to_svg()):
        root = ET.fromstring(svg)
        assert root.get("viewBox") == f"0 0 {root.get('width')} {root.get('height')}", root.attrib


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


def test_a_dashboard_waiting_names_the_full_path_and_a_missing_folder(tmp_path, monkeypatch):
    "watch_training('runs/cpu') from a notebook in nbs/ waited on nbs/runs/cpu, saying only 'runs/cpu/records.jsonl'."
    monkeypatch.chdir(tmp_path)
    dash = TrainingDashboard("runs/cpu", interval=0.05, follow=False)
    assert f"waiting for {tmp_path / 'runs' / 'cpu' / 'records.jsonl'} (no such folder yet" in dash.html.value


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
    svg = ET.fromstring(dash.to_svg()).attrib  # the report's proportions, laid out at the size drawn, and it scales down
    assert "max-width: 100%" in svg["style"]
    from santorini_az.report import report_figure
    import matplotlib.pyplot as plt
    report = report_figure(dash.records)
    width, height = report.get_size_inches()
    plt.close(report)
    assert abs(float(svg["width"][:-2]) / float(svg["height"][:-2]) - width / height) < 0.01, (svg, width, height)


def test_the_dashboard_pauses_when_no_view_is_left_and_follows_again_when_shown(tmp_path):
    """The browser counts the dashboard's views: with none left (its cell ran again), the follower ends and the run is
    not read; shown again, the run is read at once and followed; a dashboard stopped by `stop()` stays stopped."""
    selfplay = lambda i, rate: Record("selfplay", i, 5.0, float(i), {"games": 8, "games_per_hour": rate})
    write_records(tmp_path / "records.jsonl", [selfplay(1, 1111.0)])
    dash = TrainingDashboard(tmp_path, interval=0.02)
    first = dash._thread
    try:
        assert first.is_alive() and "1111" in dash.html.value
        dash.view._view_count = 1  # what the browser sends when it shows the dashboard ...
        dash.view._view_count = 0  # ... and when the view is removed
        first.join(30)
        assert not first.is_alive() and dash.following
        write_records(tmp_path / "records.jsonl", [selfplay(2, 2222.0)])
        time.sleep(0.2)  # ten intervals: a follower still reading would have redrawn
        assert "2222" not in dash.html.value
        dash.view._view_count = 1
        assert "2222" in dash.html.value and dash._thread is not first and dash._thread.is_alive()
        write_records(tmp_path / "records.jsonl", [selfplay(3, 3333.0)])
        for _ in range(1000):  # up to 20 s on a busy machine
            if "3333" in dash.html.value: break
            time.sleep(0.02)
        assert "3333" in dash.html.value
    finally:
        dash.stop()
    dash.view._view_count = 0
    dash.view._view_count = 1
    assert not dash.following and not dash._thread.is_alive()


# --- Playing with gods -------------------------------------------------------------------------------------------

from santorini_az.god_encoding import END_ACTION, GodNode, legal_sub_actions, play_sub_action, step_of, turn_tree
from santorini_az.gods import (GODS, Step, build, dome, format_god_position, format_turn, god_apply, god_legal_turns,
                               god_start, god_winner, move, parse_god_position, parse_turn, place, play_turns)
from santorini_az.god_search import god_search_player
from santorini_az.notation import parse_cell
from santorini_az.widgets import (POWER_TEXT, GodBoardWidget, GodClick, GodInspectWidget, GodPlayWidget, god_click, god_click_targets,
                                  god_end_turn, god_engine_turn, god_refusal)

FLAT = "0" * 25


def cells(*names): return [parse_cell(n) for n in names]
def at(name): return parse_cell(name)
def node_of(text, steps=()): return GodNode(parse_god_position(text), tuple(steps))
def level(text, **levels):
    "A 25-digit level string from `text`, with the named cells set: level(FLAT, C4=1)."
    digits = list(text)
    for name, value in levels.items(): digits[parse_cell(name)] = str(value)
    return "".join(digits)


def clicks_for_turn(state, turn, turns):
    "The clicks (a cell and the dome switch, or 'end') that play `turn` of `turns` (the legal turns), from the steps alone."
    mine, clicks = list(state.board.workers[state.player]), []
    for step in turn:
        if step.kind == "move":
            clicks += [(mine[step.worker], False), (step.cell, False)]
            mine[step.worker] = step.cell
        else: clicks.append((step.cell, step.kind == "dome"))
    goes_on = any(len(t) > len(turn) and t[:len(turn)] == turn for t in turns)
    return clicks + (["end"] if goes_on else [])


def play_by_clicks(board, turn, turns=None):
    "Click `turn` on `board` (stopping when the turn is over, as after a winning move); the messages shown."
    before, messages = len(board.turns), []
    for click in clicks_for_turn(board.state, turn, turns or god_legal_turns(board.state)):
        assert len(board.turns) == before, (turn, messages)  # not over too soon, except ...
        if click == "end": messages.append(board.end_turn())
        else:
            board.dome = click[1]
            messages.append(board.click(click[0]))
        assert not board.refused, (turn, messages)
        if len(board.turns) > before: break  # a winning move: the build is named by the board, not clicked
    return messages


def god_positions(gods, games, seed, turns=12):
    rng = random.Random(seed)
    for _ in range(games):
        state = god_start(gods)
        for _ in range(turns):
            if god_winner(state) is not None: break
            yield state
            state = god_apply(state, rng.choice(god_legal_turns(state)))


def test_power_text_has_one_sentence_per_god():
    assert set(POWER_TEXT) == set(GODS)
    assert all(text.endswith(".") and text.count(". ") == 0 for text in POWER_TEXT.values())


@pytest.mark.parametrize("god", GODS)
def test_clicking_plays_every_legal_turn_of_every_god(god):
    for state in list(god_positions((god, "apollo"), games=2, seed=GODS.index(god), turns=8))[4::2]:
        turns = god_legal_turns(state)
        board = GodBoardWidget(state)
        for turn in turns if len(turns) < 200 else random.Random(0).sample(turns, 200):  # Hermes: thousands
            board.reset(state)
            play_by_clicks(board, turn, turns)
            won = god_apply(state, turn).won
            if won: assert board.turns[-1][:-1] == turn[:-1]  # the never-made build is the board's choice
            else: assert board.turns == [turn], (format_turn(state, turn), board.message)
            assert board.state == god_apply(state, board.turns[-1])


def reachable_turns(state):
    "Every turn the pure click rules complete from `state`, exploring every target, the dome switch and `end`."
    found, stack = set(), [(GodNode(state), None)]
    while stack:
        node, pending = stack.pop()
        options = [god_click(node, pending, c, d) for c in god_click_targets(node, pending) for d in (False, True)]
        options.append(god_end_turn(node))
        for result in options:
            if result.refused: continue
            if result.action is None: stack.append((node, result.pending)); continue
            after = play_sub_action(node, result.action)
            if after.state is not node.state: found.add(node.steps + ((step_of(result.action),) if result.action != END_ACTION else ()))
            else: stack.append((after, None))
    return found


@pytest.mark.parametrize("god", GODS)
def test_the_click_rules_reach_exactly_the_legal_turns(god):
    positions = list(god_positions((god, "minotaur"), games=1, seed=7, turns=10))[4:]
    for state in positions[:2] if god == "hermes" else positions:  # Hermes: thousands of turns per position
        assert reachable_turns(state) == set(god_legal_turns(state)), god


def test_every_cell_outside_the_targets_is_refused_with_a_reason():
    for gods in [("artemis", "apollo"), ("demeter", "athena"), ("prometheus", "minotaur"), ("atlas", "hermes")]:
        for state in list(god_positions(gods, games=1, seed=3, turns=10))[3:]:
            node = GodNode(state)
            for pending in (None, 0):
                if pending == 0 and not god_click_targets(node, 0): continue
                targets = god_click_targets(node, pending)
                for cell in range(25):
                    result = god_click(node, pending, cell)
                    if cell in targets or result.pending != pending: continue  # a target, or choosing a worker
                    assert result.refused and result.message and result.action is None, (gods, cell)


def test_artemis_second_move_is_optional_and_never_back():
    node = node_of(f"{FLAT}/1/artemis:C3,B2/mortal:D1,E1")
    assert god_click(node, None, at("C3")) == GodClick(0, None, "worker on C3: choose where it moves")
    first = play_sub_action(node, god_click(node, 0, at("C4")).action)
    assert step_of(god_click(first, None, at("C5")).action) == build(at("C5"))  # the ordinary turn: build now
    assert god_click(first, None, at("C4")).pending == 0  # or ask for the second step
    assert "may not step back to C3" in god_click(first, 0, at("C3")).message
    assert step_of(god_click(first, 0, at("D5")).action) == move(0, at("D5"))
    assert god_end_turn(first).refused  # a move alone is no turn
    board = GodBoardWidget(node.state)
    for name in ["C3", "C4", "C4", "D5", "C4"]: board.click(at(name))
    assert board.turns == [(move(0, at("C4")), move(0, at("D5")), build(at("C4")))] and board.moves == ["C3>C4>D5^C4"]


def test_demeter_builds_again_elsewhere_or_ends():
    board = GodBoardWidget(f"{FLAT}/1/demeter:C3,B2/mortal:D1,E1")
    for name in ["C3", "C4", "C5"]: board.click(at(name))
    assert board.can_end and "end the turn" in board.message
    assert "must not be on C5 again" in board.click(at("C5")) and board.refused
    board.click(at("D5"))
    assert board.moves == ["C3>C4^C5^D5"] and not board.can_end
    board = GodBoardWidget(f"{FLAT}/1/demeter:C3,B2/mortal:D1,E1")
    assert "cannot end" in board.end_turn() and board.refused
    for name in ["C3", "C4", "C5"]: board.click(at(name))
    board.end_turn()
    assert board.moves == ["C3>C4^C5"]


def test_hephaestus_second_block_goes_on_the_first():
    board = GodBoardWidget(f"{FLAT}/1/hephaestus:C3,B2/mortal:D1,E1")
    for name in ["C3", "C4", "C5"]: board.click(at(name))
    assert "goes on C5" in board.click(at("D5")) and board.refused
    board.click(at("C5"))
    assert board.moves == ["C3>C4^C5^C5"] and board.state.board.heights[at("C5")] == 2
    tall = GodBoardWidget(f"{level(FLAT, C5=2)}/1/hephaestus:C3,B2/mortal:D1,E1")
    for name in ["C3", "C4", "C5"]: tall.click(at(name))
    assert tall.moves == ["C3>C4^C5"]  # level 3: a second block would be a dome, so the turn is over


def test_prometheus_builds_before_moving_and_then_may_not_climb():
    start = node_of(f"{level(FLAT, C4=1)}/1/prometheus:C3,A1/mortal:D1,E1")
    assert step_of(god_click(start, None, at("D3")).action) == build(at("D3"))  # no worker chosen: build first
    built = play_sub_action(start, god_click(start, None, at("D3")).action)
    assert god_click(built, None, at("C3")).pending == 0
    assert "Prometheus may not move up" in god_click(built, 0, at("C4")).message
    assert "cannot move after this build" in god_click(built, None, at("A1")).message  # not next to D3
    board = GodBoardWidget(start.state)
    for name in ["D3", "C3", "B3", "C3"]: board.click(at(name))
    assert board.moves == ["C3^D3>B3^C3"]
    board = GodBoardWidget(start.state)
    for name in ["C3", "C4", "D3"]: board.click(at(name))  # the ordinary turn, climbing, is still there
    assert board.moves == ["C3>C4^D3"]


def test_atlas_dome_switch():
    node = node_of(f"{level(FLAT, D5=3)}/1/atlas:C3,B2/mortal:D1,E1", [move(0, at("C4"))])
    assert step_of(god_click(node, None, at("C5"), dome=True).action) == dome(at("C5"))
    assert step_of(god_click(node, None, at("C5")).action) == build(at("C5"))
    assert step_of(god_click(node, None, at("D5"), dome=True).action) == build(at("D5"))  # on level 3 a block is a dome
    board = GodBoardWidget(node.state)
    for name in ["C3", "C4"]: board.click(at(name))
    assert "with the 'dome' switch on, a dome" in board.message
    board.dome = True
    board.click(at("C5"))
    assert board.moves == ["C3>C4@C5"] and board.state.board.heights[at("C5")] == 4
    assert not board.dome  # the switch is for one build: the next turn builds blocks again


def test_apollo_swaps_and_minotaur_pushes_onto_an_opponent():
    apollo = GodBoardWidget(f"{level(FLAT, B4=2)}/1/apollo:C3,A1/mortal:C4,B4")
    apollo.click(at("C3"))
    assert "too high" in apollo.click(at("B4"))
    apollo.click(at("C4")); apollo.click(at("D4"))
    assert apollo.moves == ["C3>C4^D4"] and apollo.state.board.workers == ((at("C4"), at("A1")), (at("C3"), at("B4")))
    minotaur = GodBoardWidget(f"{FLAT}/1/minotaur:C3,A1/mortal:C4,D4")
    minotaur.click(at("C3"))
    assert "Minotaur cannot push from D4" not in minotaur.click(at("C4"))  # C5 behind C4 is free: the push is on
    assert minotaur.node.steps == (move(0, at("C4")),) and minotaur.message.startswith("moved to C4")
    minotaur.click(at("D3"))
    assert minotaur.state.board.workers[1] == (at("C5"), at("D4"))
    blocked = node_of(f"{level(FLAT, E5=4)}/1/minotaur:C3,A1/mortal:C4,D4")
    assert "straight behind must be free" in god_click(blocked, 0, at("D4")).message  # E5 has a dome
    mortal = node_of(f"{FLAT}/1/mortal:C3,A1/apollo:C4,D4")
    assert "only Apollo and Minotaur" in god_click(mortal, 0, at("C4")).message


def test_hermes_walks_then_builds_or_builds_without_moving():
    ring = level(FLAT, C3=2, C4=2, D3=2)  # a level-2 block in the middle; the rim is level 0
    node = node_of(f"{ring}/1/hermes:A5,E1/mortal:E5,A1")
    a = god_click(node, None, at("A5"))
    assert a.pending == 0 and at("A3") in god_click_targets(node, 0)  # a walk, not a step
    walked = play_sub_action(node, god_click(node, 0, at("A3")).action)
    assert god_click(walked, None, at("E1")).pending == 1  # the other worker may walk too
    assert "Hermes walks worker a before b" in god_refusal(play_sub_action(node, god_click(node, 1, at("C1")).action), None, at("A5"))
    assert "off the walk" in god_click(node, 0, at("C3")).message
    board = GodBoardWidget(node.state)
    for name in ["A5", "A3", "E1", "C1", "B3"]: board.click(at(name))
    assert board.moves == ["A5>A3,E1>C1^B3"]
    board = GodBoardWidget(node.state)
    board.click(at("B5"))  # no worker chosen: a build without moving
    assert board.moves == ["^B5"]


def test_god_refusals_name_the_rule():
    athena = node_of(f"{level(FLAT, C4=1, E1=1)}/1/mortal:C3,A1/athena:D1,E1/athena-up")  # she moved up onto E1
    assert "Athena moved up" in god_click(athena, 0, at("C4")).message
    assert "player 2's worker" in god_click(athena, None, at("D1")).message
    assert "choose one of your workers first" in god_click(athena, None, at("C5")).message
    assert "not next to C3" in god_click(athena, 0, at("A3")).message
    after_move = GodNode(athena.state, (move(0, at("C2")),))
    assert "cannot move now" in god_click(after_move, None, at("A1")).message
    assert "not a build now" in god_click(after_move, None, at("A5")).message
    over = god_start(("pan", "mortal"))
    over = play_turns(over, "C3 B2 D1 E1")
    board = GodBoardWidget(over)
    assert "no cell" in board.click(99) and board.refused
    board = GodBoardWidget(f"{level(FLAT, C3=3)}/2/mortal:C3,A1/mortal:D1,E1/won")  # player 1 climbed onto C3
    assert "the game is over" in board.click(at("D1"))


def test_god_undo_takes_back_steps_then_turns():
    board = GodBoardWidget(f"{FLAT}/1/demeter:C3,B2/mortal:D1,E1")
    start = board.state
    for name in ["C3", "C4", "C5"]: board.click(at(name))
    assert "took back this turn's steps" in board.undo() and board.node == GodNode(start)
    for name in ["C3", "C4", "C5", "D5"]: board.click(at(name))
    assert len(board.turns) == 1
    board.undo()
    assert board.state == start and board.turns == [] and "nothing to undo" in board.undo()


def test_the_engine_turn_is_the_god_search_players():
    state = play_turns(god_start(("prometheus", "hermes")), "C3 B2 D2 E1")
    assert god_engine_turn(state, 24) == god_search_player(24)(state, None)
    seen = []
    god_engine_turn(state, 24, on_progress=seen.append)
    assert seen and all(0 <= p <= 1 for p in seen)
    assert god_engine_turn(state, 24, cancelled=lambda: True) is None


@pytest.mark.parametrize("gods", [("artemis", "minotaur"), ("hermes", "atlas"), ("prometheus", "athena")])
def test_a_god_game_against_the_engine_finishes_legally(gods):
    game = GodPlayWidget(gods, human=0, simulations=8)
    rng = random.Random(5)
    while god_winner(game.board.state) is None:
        state = game.board.state
        assert state.player == 0 and not game.board.thinking
        play_by_clicks(game.board, rng.choice(god_legal_turns(state)))
        game.wait(timeout=60)
    assert play_turns(god_start(gods), game.record) == game.board.state  # every turn legal, replayed from the record
    assert "you win" in game.board.message or "the engine wins" in game.board.message


def test_god_game_engine_first_new_game_and_picture():
    game = GodPlayWidget(("apollo", "pan"), human=1, simulations=1_000_000)
    assert game.board.thinking and "thinking" in game.board.click(12)
    game.side.value = 0
    game.god_pickers[0].value = "atlas"
    assert "Atlas" in game.powers.value  # the power line follows the picker at once ...
    assert "for the next game" in game.powers.value and game.gods == ("apollo", "pan") and game.human == 1  # ... not the game
    game.new_game()
    assert "for the next game" not in game.powers.value and game.gods == ("atlas", "pan")
    game.simulations.value = 300  # the side, the engine and the simulations too wait for new game, and say so
    assert "for the next game" in game.powers.value
    game.simulations.value = 1_000_000
    assert "for the next game" not in game.powers.value
    game.wait(timeout=60)
    assert not game.board.thinking and game.board.moves == [] and game.board.state.gods == ("atlas", "pan")
    assert not game.board.dome_shown  # Atlas places his workers: the switch comes with his first build
    a, b = GodPlayWidget(("artemis", "athena"), simulations=8), GodPlayWidget(("artemis", "athena"), simulations=8)
    for w in (a, b):
        for name in ["C3", "B2"]: w.board.click(at(name))
        w.wait()
        w.board.click(at("C3"))
    assert a.to_svg() == b.to_svg()
    root = ET.fromstring(a.to_svg())
    assert "Artemis" in a.to_svg() and POWER_TEXT["athena"][:30] in a.to_svg()


@pytest.mark.parametrize("opponent", ["network", "uniform"])
def test_god_game_engine_plays_the_chosen_engine(opponent):
    "The engine control picks the prior: the shipped god network's search, or the uniform search, turn for turn."
    from santorini_az.god_engine import god_champion_evaluator
    from santorini_az.god_search import uniform_god_evaluator
    evaluate = god_champion_evaluator() if opponent == "network" else uniform_god_evaluator
    game = GodPlayWidget(("artemis", "minotaur"), human=0, simulations=24, opponent=opponent)
    rng, checked = random.Random(2), 0
    for _ in range(5):
        mine = len(game.board.moves)
        play_by_clicks(game.board, rng.choice(god_legal_turns(game.board.state)))
        game.wait(timeout=60)
        for k in range(mine + 1, len(game.board.moves)):  # the engine's turns (a placement is a turn of its own)
            before = play_turns(god_start(game.gods), game.board.moves[:k])
            assert game.board.moves[k] == format_turn(before, god_search_player(24, evaluate)(before))
            checked += 1
    assert checked >= 3
    assert ("the god network" if opponent == "network" else "the uniform prior") in game.board.title


@pytest.mark.parametrize("make", [lambda: PlayWidget("mcts", human=1, simulations=1_000_000),
                                  lambda: GodPlayWidget(("apollo", "pan"), human=1, simulations=1_000_000)],
                         ids=["mortal", "gods"])
def test_the_engine_stops_when_no_view_is_left_and_thinks_again_when_shown(make):
    """The browser counts the board's views: when the last one goes (the cell ran again, or its output was cleared),
    the engine's search stops without playing; when the board is shown again, the engine searches its turn again."""
    game = make()
    board, first = game.board, game._thread
    assert board.thinking and first.is_alive()
    board._view_count = 1  # what the browser sends when it shows the board ...
    board._view_count = 0  # ... and when the view is removed
    first.join(30)
    assert not first.is_alive() and not board.thinking and board.moves == []
    board._view_count = 1
    assert board.thinking and game._thread is not first and game._thread.is_alive()
    board._view_count = 0
    game._thread.join(30)
    assert not game._thread.is_alive() and board.moves == []


def test_god_inspection_is_the_inspect_commands_and_draws_the_first_decision():
    "GodInspectWidget's numbers are `santorini_az inspect`'s; its heat lies on exactly the cells the first sub-actions reach."
    state = play_turns(god_start(("artemis", "demeter")), "C3 B2 D2 E1 C3>C4^D4 D2>D3^E3")
    look = GodInspectWidget(state, specs=["mcts", "champion"], simulations=48)
    for row, spec in enumerate(["mcts", "champion"]):
        ours, theirs = look.inspection(0, row), inspect_position(state, spec, simulations=48, top=500)
        assert [(r["move"], r["visits"]) for r in ours.rows(500)] == [(r["move"], r["visits"]) for r in theirs["rows"]]
        assert [r["prior"] for r in ours.rows(500)] == pytest.approx([r["prior"] for r in theirs["rows"]], abs=1e-6)
        assert (ours.value, ours.search_value) == pytest.approx((theirs["value"], theirs["search_value"]), abs=1e-6)
        assert ours.pv == theirs["pv"]
    first = legal_sub_actions(GodNode(state))
    prior = look.rows[0]["prior"]  # the uniform prior: every legal first step gets some
    assert prior.position == format_position(state.board)
    assert {c for c, heat in enumerate(prior.heat) if heat > 0} == {step_of(a).cell for a in first}
    assert prior.arrows and {a["from"] for a in prior.arrows} <= set(state.board.workers[state.player])
    assert "Artemis" in look.header.value and "Demeter" in look.to_html()
    ET.fromstring(look.to_svg())


def test_god_inspect_widget_steps_through_a_whole_game():
    rng, state, record = random.Random(3), god_start(("apollo", "pan")), []
    while god_winner(state) is None:
        turn = rng.choice(god_legal_turns(state))
        record.append(format_turn(state, turn)); state = god_apply(state, turn)
    look = GodInspectWidget(god_start(("apollo", "pan")), " ".join(record), specs="mcts", simulations=8)
    # it opens on the last decision (after the last turn the game is over: nothing to search, two empty boards)
    assert look.ply == len(record) - 1 and look.inspection(len(record)) is None and look.inspection(look.ply)
    look.slider.value = len(record)
    assert "has won" in look.to_html()
    for ply in range(1, len(record) + 1):
        look.slider.value = ply
        before = look.states[ply - 1]
        board = look.rows[0]["share"]
        assert board.position == format_position(look.states[ply].board)
        assert {step.cell for step in parse_turn(before, record[ply - 1])} <= set(board.last)


@pytest.mark.parametrize("spec, culprit", [("missing.safetensors", "missing.safetensors"), ("mortal", "is not a god network")])
def test_god_inspect_widget_refuses_what_is_not_a_god_evaluator(tmp_path, spec, culprit):
    if spec == "mortal":
        spec = str(tmp_path / "mortal.safetensors")
        save_checkpoint(spec, SantoriniNet(NetConfig(8, 1)))
    with pytest.raises(WidgetError, match=culprit):
        GodInspectWidget(specs=spec)


def test_the_engine_turns_progress_runs_once_per_search(monkeypatch):
    """The bar's progress starts again with each decision's search and only grows during it, even where simulations end
    the game without calling the evaluator (a count over the whole turn wrapped around in the middle of a search)."""
    import santorini_az.god_search
    import santorini_az.widgets
    seen, real_search = [], santorini_az.god_search.god_search
    def marked_search(*args, **kwargs):
        seen.append("search")
        return real_search(*args, **kwargs)
    monkeypatch.setattr(santorini_az.god_search, "god_search", marked_search)
    monkeypatch.setattr(santorini_az.widgets, "god_search", marked_search, raising=False)
    rng, state, searches = random.Random(3), god_start(("artemis", "minotaur")), 0
    while god_winner(state) is None:
        seen.clear()
        turn = god_engine_turn(state, 24, on_progress=seen.append)
        runs = []  # the progress reported during each search
        for item in seen:
            if item == "search": runs.append([])
            else: runs[-1].append(item)
        searches += len(runs)
        for values in runs:
            assert values == sorted(values) and all(0 <= v <= 1 for v in values), (format_god_position(state), values)
        state = god_apply(state, rng.choice(god_legal_turns(state)) if rng.random() < 0.5 else turn)
    assert searches > 20


def test_the_status_line_says_how_a_game_was_won():
    "A climb names the cell climbed; Pan's drop says so; a player left without a move was said before."
    from santorini_az.gods import from_mortal
    from santorini_az.widgets import god_status_line, status_line
    climb = parse_position("0000000000002300000000000/1/C3,A1/E5,E4")  # C3 on level 2, D3 on level 3
    assert status_line(play_moves(climb, ["C3>D3^C4"])) == "player 1 (red) has won: climbed onto level 3 on D3"
    artemis = from_mortal(climb, ("artemis", "athena"))
    assert god_status_line(god_apply(artemis, parse_turn(artemis, "C3>D3^C4"))).endswith("has won: climbed onto level 3 on D3")
    pan = from_mortal(parse_position("0000000000002000000000000/1/C3,A1/E5,E4"), ("pan", "athena"))  # Pan on level 2
    assert god_status_line(god_apply(pan, parse_turn(pan, "C3>B4^A5"))) == "player 1 (red, Pan) has won: moved down two or more levels"


def test_the_last_turn_is_marked_whole_both_placements_of_a_setup_turn():
    "A setup turn places two workers: both are marked as the last turn (the engine's first placement was unmarked)."
    for board in (BoardWidget(moves="C3 B2"), GodBoardWidget(god_start(("apollo", "pan")), "C3 B2")):
        assert sorted(board.last) == sorted([at("C3"), at("B2")]), type(board).__name__
        board.play("D2")
        assert board.last == [at("D2")]  # the other player's first placement only
    board = BoardWidget(moves="C3 B2 D2 E1 C3>C4^D5")
    assert sorted(board.last) == sorted([at("C3"), at("C4"), at("D5")])  # after the setup, one move a turn


def test_a_dome_is_drawn_unlike_a_worker():
    "A dome is a disc with a white ring inside and no letter (the web app's ◉), a worker a lettered disc in its colour."
    board = BoardWidget("4000000000000000000000000/1/C3,B2/D2,E1")  # a dome on A5
    root = ET.fromstring(board.to_svg())
    ns = "{http://www.w3.org/2000/svg}"
    px, gutter = board.cell_px, 18
    centre = (gutter + px / 2, px / 2)  # A5: the top left cell
    at_dome = [c for c in root.iter(f"{ns}circle") if (float(c.get("cx")), float(c.get("cy"))) == centre]
    assert [(c.get("fill"), c.get("stroke")) for c in at_dome] == [("#1f4e99", None), ("none", "white")]
    worker_fills = {c.get("fill") for c in root.iter(f"{ns}circle") if c.get("stroke") == "#222"}
    assert worker_fills == {"#d9534f", "#2c7be5"} and "#1f4e99" not in worker_fills
    letters = [t for t in root.iter(f"{ns}text") if t.text in ("a", "b", "x", "y")]
    assert len(letters) == 4 and all((float(t.get("x")), float(t.get("y")) - 5) != centre for t in letters)


def test_an_engine_that_fails_says_so_once_and_waits_for_a_new_game(monkeypatch):
    "The engine's error stays on the board; no search starts again at once (it looped, a core busy, before)."
    import santorini_az.god_engine as god_engine
    from pathlib import Path
    monkeypatch.setattr(god_engine, "GOD_CHAMPION", Path("/nonexistent/god.safetensors"))
    game = GodPlayWidget(("artemis", "athena"), human=1, simulations=8, opponent="network")
    game.wait()
    assert not game.board.thinking and game.board.message.startswith("the engine failed: ") and game.board.refused
    assert game.board.click(3).endswith("press new game to try again")  # refused, naming why
    game.opponent.value = "uniform"
    game.new_game()
    game.wait()
    assert not game.board.unavailable and len(game.board.moves) == 2  # the uniform engine placed its workers


@pytest.mark.parametrize("widget", ["mortal", "gods"])
def test_a_winning_click_is_announced(widget):
    "Your winning move ends with the result, not with 'you played ...' (the engine's wins were the only ones said)."
    if widget == "gods":
        game = GodPlayWidget(("mortal", "mortal"), human=0, simulations=4, opponent="uniform")
        game.board.reset("0000000300002000000000000/1/mortal:C3,A1/mortal:E5,E4")
    else:
        game = PlayWidget("mcts", human=0, simulations=4)
        game.board.reset("0000000300002000000000000/1/C3,A1/E5,E4")
    game.wait()
    game.board.click(12); game.board.click(7)  # C3 (level 2) to C4 (level 3)
    game.wait()
    assert game.board.message.startswith("you win after 1 "), game.board.message


def test_how_a_god_game_was_won_is_read_from_the_last_turn():
    "A worker Minotaur pushed onto level 3 is not a climb: Pan's drop won (the board alone said 'climbed')."
    heights = ["0"] * 25; heights[8], heights[10] = "2", "3"  # D4 on level 2, A3 on level 3
    board = GodBoardWidget("".join(heights) + "/2/pan:D4,B3/minotaur:C3,E1")
    for cell in ("C3", "B3", "C2", "D4", "D5"): board.click(parse_cell(cell))  # push Pan's B3 onto A3; Pan drops D4 to D5
    assert board.status == "player 1 (red, Pan) has won: moved down two or more levels", board.status
    inspect = GodInspectWidget("".join(heights) + "/2/pan:D4,B3/minotaur:C3,E1", "C3>B3^C2", simulations=4)
    assert inspect.ply == 1  # Pan stands on level 3, pushed there, and has not won: the boards say whose turn it is
    assert all("has won" not in row[kind].status for row in inspect.rows for kind in ("prior", "share"))


@pytest.mark.parametrize("make", [lambda: PlayWidget("mcts", simulations=0), lambda: GodPlayWidget(simulations=2.5),
                                  lambda: InspectWidget(simulations=-7), lambda: InspectWidget(top=0)])
def test_counts_out_of_range_are_refused_not_coerced(make):
    with pytest.raises(WidgetError, match="must be a whole number from 1 to"): make()


def test_boards_take_numpy_cells_refuse_booleans_and_the_other_games_positions():
    import numpy as np
    from santorini_az.gods import god_start
    board = BoardWidget()
    assert board.click(np.int64(12)) == "player 1 played C3" and board.click(True) == "there is no cell True: cells are 0-24"
    with pytest.raises(WidgetError, match="a GodBoardWidget plays god positions"): BoardWidget(god_start(("apollo", "pan")))
    assert GodBoardWidget(initial_state()).state.gods == ("mortal", "mortal")  # chapter 01's position, two mortals
    assert GodPlayWidget(("Apollo", "athena"), simulations=4, opponent="uniform").gods == ("apollo", "athena")


@pytest.mark.parametrize("interval", [0, -1, "5", True])
def test_a_dashboard_refuses_an_interval_that_would_spin_or_crash(tmp_path, interval):
    with pytest.raises(WidgetError, match="interval must be a number of seconds"): TrainingDashboard(tmp_path, interval)


def test_a_dashboard_pointed_at_a_file_says_so(tmp_path):
    (tmp_path / "records.jsonl").write_text("")
    with pytest.raises(WidgetError, match="is a file: give the run directory"): TrainingDashboard(tmp_path / "records.jsonl")
