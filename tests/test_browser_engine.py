"The browser's Python driver (web/py/browser_engine.py), run here in CPython: batched search with a virtual loss."
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from santorini_az.encoding import action_index, encode
from santorini_az.export import OnnxEvaluator, export_onnx
from santorini_az.game import initial_state, legal_actions
from santorini_az.mcts import Search, SearchConfig, uniform_evaluator
from santorini_az.network import NetConfig, SantoriniNet
from santorini_az.notation import format_action, format_position, parse_action, parse_position, play_moves

spec = importlib.util.spec_from_file_location("browser_engine", Path(__file__).parent.parent / "web" / "py" / "browser_engine.py")
engine = importlib.util.module_from_spec(spec)
spec.loader.exec_module(engine)

POSITIONS = ["0000000000000000000000000/1//", "0000000000000000000000000/1/C3,D3/B2,C4",
             "0000001000012100001000000/2/B4,D2/C4,C2", "0100001200012210001200000/1/B4,D2/C4,C2"]


@pytest.fixture(scope="module")
def onnx_model(tmp_path_factory):
    torch.manual_seed(0)
    net = SantoriniNet(NetConfig(16, 2))
    with torch.no_grad(): net.policy_fc.weight.mul_(8.0); net.value_fc2.weight.mul_(3.0)
    return OnnxEvaluator(export_onnx(net.eval(), tmp_path_factory.mktemp("m") / "net.onnx"))


def network(evaluator):
    "The worker's contract, from Python: float32 planes bytes -> (softmax policy bytes, value bytes), 9 or 36 planes."
    def evaluate(planes, n):
        logits, values = evaluator.evaluate(np.frombuffer(planes, np.float32).reshape(n, 5, 5, evaluator.planes))
        return np.exp(logits).astype(np.float32).tobytes(), values.astype(np.float32).tobytes()
    return evaluate


def check_tree(node):
    "Every edge's visits equal its child's (no virtual loss left behind), and none is negative."
    for edge, action in enumerate(node.actions):
        assert node.visits[edge] >= 0
        child = node.children.get(action)
        if child is not None and child.is_expanded:
            assert node.visits[edge] == sum(child.visits) + 1
            check_tree(child)


@pytest.mark.parametrize("position", POSITIONS)
def test_batch_of_one_is_the_readable_search(position):
    batched = engine.run_search(position, simulations=200, batch_size=1)
    readable = Search(parse_position(position), SearchConfig(simulations=200)).run(uniform_evaluator)
    assert batched.root.visits == readable.root.visits


def test_batch_of_one_with_a_network_is_the_readable_search(onnx_model):
    def evaluate(state):
        logits, values = onnx_model.evaluate(encode(state)[None])
        return logits[0], float(values[0])
    for position in POSITIONS:
        batched = engine.run_search(position, network(onnx_model), simulations=150, batch_size=1)
        readable = Search(parse_position(position), SearchConfig(simulations=150)).run(evaluate)
        assert batched.root.visits == readable.root.visits
        np.testing.assert_allclose(batched.root.priors, readable.root.priors, rtol=1e-5)


@pytest.mark.parametrize("batch_size,in_flight", [(8, 1), (16, 2), (32, 3)])
def test_batched_searches_keep_the_tree_consistent(onnx_model, batch_size, in_flight):
    for position in POSITIONS:
        search = engine.run_search(position, network(onnx_model), simulations=400, batch_size=batch_size, in_flight=in_flight)
        assert search.done() and sum(search.root.visits) == search.simulations_done == 400
        assert search.batches < 400 // batch_size * 3, "batches are mostly full"
        check_tree(search.root)
        result = json.loads(search.result())
        state = parse_position(position)
        assert parse_action(state, result["move"]) in legal_actions(state)
        assert abs(sum(m["share"] for m in result["top_visits"])) <= 1.0 + 1e-9
        assert abs(sum(c["share"] for c in result["cells"]) - 1.0) < 1e-9


def test_finished_game_and_zero_simulations():
    placed = format_position(play_moves(initial_state(), "C3 D3 B2 C4"))
    result = json.loads(engine.run_search(placed, simulations=0).result())  # the network alone: the move of the top prior
    assert result["simulations"] == 0 and result["move"] in {a["text"] for a in json.loads(engine.position_info(placed))["legal"]}
    won = "0000000000003000000000000/2/C3,D3/B2,C4"  # player 1 stands on level 3
    assert engine.BatchedSearch(won).done() and json.loads(engine.run_search(won).result())["move"] is None


def test_a_search_whose_leaves_all_end_the_game_finishes():
    "A network sure of the winning move: every simulation ends the game at once, nothing is left to evaluate."
    position = "1121131130323130001002110/2/B2,E2/C5,A2"  # player 2 wins by climbing to C4's level 3
    state = parse_position(position)
    win = next(a for a in legal_actions(state) if state.apply(a).is_over())
    def sure_of_the_win(planes, n):
        policy = np.full((n, 153), 1e-9, np.float32)
        policy[:, action_index(state, win)] = 1.0
        return policy.tobytes(), np.zeros(n, np.float32).tobytes()
    for in_flight in (1, 2):
        search = engine.run_search(position, sure_of_the_win, in_flight=in_flight, simulations=100, batch_size=16)
        result = json.loads(search.result())
        assert search.simulations_done == 100 and search.evaluations == 1  # the root alone went to the network
        assert result["move"] == format_action(state, win) and result["top_visits"][0]["visits"] == 100


def test_positions_and_moves_for_the_page():
    info = json.loads(engine.position_info("startpos"))
    assert info["setup"] and len(info["legal"]) == 25 and info["winner"] is None
    after = json.loads(engine.play(info["position"], "C3"))["position"]
    assert after == format_position(play_moves(initial_state(), "C3"))
    assert "error" in json.loads(engine.play(after, "C3"))  # taken
    assert "error" in json.loads(engine.position_info("not a position"))
    start = parse_position(engine.random_start(7))
    assert start.player == 0 and all(len(w) == 2 for w in start.workers)
    planes = np.frombuffer(engine.encode_position_texts(json.dumps(POSITIONS)), np.float32).reshape(-1, 5, 5, 9)
    np.testing.assert_array_equal(planes, np.stack([encode(parse_position(p)) for p in POSITIONS]))
    state = parse_position(POSITIONS[1])
    for action in json.loads(engine.position_info(POSITIONS[1]))["legal"]:
        assert parse_action(state, action["text"]) in legal_actions(state)


BLOCKED = "0400044000000000004400040/1/A5,E1/A3,C3"  # player 1 to move, both workers walled in by domes and player 2


def test_a_win_by_blocking_is_told_apart_from_a_climb():
    "The page says why a game ended: the loser to move cannot move (`stuck`), or the winner climbed (not stuck)."
    blocked = json.loads(engine.position_info(BLOCKED))
    assert blocked["winner"] == 1 and blocked["stuck"] and not blocked["legal"]
    climbed = json.loads(engine.position_info("0000000000003000000000000/2/C3,A1/E5,E1"))
    assert climbed["winner"] == 0 and not climbed["stuck"]
    assert not json.loads(engine.position_info("startpos"))["stuck"]
    god = json.loads(engine.god_info(json.loads(engine.god_start_position("pan", "apollo", BLOCKED))["position"]))
    assert god["winner"] == 1 and god["stuck"]
    from santorini_az.gods import from_mortal  # the words of the terminal, the widgets and the page agree
    from santorini_az.widgets import god_status_line, status_line
    assert str(parse_position(BLOCKED)).endswith("player 2 has won: player 1 cannot move")
    assert str(from_mortal(parse_position(BLOCKED), ("pan", "apollo"))).splitlines()[-2].endswith("has won: player 1 has no legal turn")
    assert status_line(parse_position(BLOCKED)).endswith("has won: player 1 cannot move")
    assert god_status_line(from_mortal(parse_position(BLOCKED), ("pan", "apollo"))).endswith("has won: player 1 has no legal turn")
    assert str(parse_position("0000000000003000000000000/2/C3,A1/E5,E1")).endswith("player 1 has won")  # a climb


# ---- god powers: the page's sub-action API and the engine's god turn ------------------------------------------------
from santorini_az.god_encoding import END_ACTION, GodNode, legal_sub_actions, sub_action  # noqa: E402
from santorini_az.gods import god_apply, god_legal_turns, move, parse_god_position, parse_turn  # noqa: E402

ARTEMIS_DEMETER = "0000000000000000000000000/1/artemis:C3,D3/demeter:B2,C4"


def test_god_start_and_bad_gods():
    start = json.loads(engine.god_start_position("Artemis", "demeter"))["position"]
    assert start == "0000000000000000000000000/1/artemis:/demeter:"
    assert json.loads(engine.god_start_position("artemis", "demeter", POSITIONS[1]))["position"] == ARTEMIS_DEMETER
    assert "zeus" in json.loads(engine.god_start_position("zeus", "pan"))["error"]
    assert "error" in json.loads(engine.god_info("not a position"))
    assert "error" in json.loads(engine.god_info(ARTEMIS_DEMETER, "[124]"))  # a dome Artemis may not build


def test_god_info_lists_the_legal_sub_actions():
    info = json.loads(engine.god_info(ARTEMIS_DEMETER))
    node = GodNode(parse_god_position(ARTEMIS_DEMETER))
    assert [a["index"] for a in info["legal"]] == legal_sub_actions(node)
    assert info["gods"] == ["artemis", "demeter"] and info["player"] == 0 and info["winner"] is None
    moves = [a for a in info["legal"] if a["kind"] == "move"]
    assert moves and all(a["index"] == 25 + 25 * a["worker"] + a["cell"] for a in moves)
    assert {a["from"] for a in moves} == {12, 13}  # the workers on C3 and D3
    # After a first move, the board is drawn as the move left it, and the same worker may move on or build.
    first = next(a["index"] for a in moves if a["worker"] == 0 and a["cell"] == 6)  # C3 to B4
    assert first == sub_action(move(0, 6))
    info = json.loads(engine.god_info(ARTEMIS_DEMETER, json.dumps([first])))
    assert info["workers"][0] == [6, 13] and info["steps"] == ["move 1 B4"]
    kinds = {a["kind"] for a in info["legal"]}
    assert kinds == {"move", "build"} and all(a["worker"] == 0 for a in info["legal"] if a["kind"] == "move")
    assert all(a["cell"] != 12 for a in info["legal"] if a["kind"] == "move")  # not back to where it started


def test_playing_a_multi_step_turn():
    # Artemis moves twice (C3>B4>A5) and builds; the position after is the rules' own.
    steps, text = [], ARTEMIS_DEMETER
    for index in (25 + 6, 25 + 0):
        reply = json.loads(engine.god_play(text, json.dumps(steps), index))
        steps = reply["steps"]
    reply = json.loads(engine.god_play(text, json.dumps(steps), 75 + 1))
    state = parse_god_position(text)
    assert reply["turn"] == "C3>B4>A5^B5" and reply["sub_actions"] == [31, 25, 76]
    assert reply["position"] == engine.format_god_position(god_apply(state, parse_turn(state, "C3>B4>A5^B5")))
    # Demeter then builds once and declines the second build with END.
    after = reply["position"]
    demeter = json.loads(engine.god_info(after))["legal"]
    worker_move = next(a for a in demeter if a["kind"] == "move")
    steps = json.loads(engine.god_play(after, "[]", worker_move["index"]))["steps"]
    build = next(a for a in json.loads(engine.god_info(after, json.dumps(steps)))["legal"] if a["kind"] == "build")
    steps = json.loads(engine.god_play(after, json.dumps(steps), build["index"]))["steps"]
    assert END_ACTION in [a["index"] for a in json.loads(engine.god_info(after, json.dumps(steps)))["legal"]]
    done = json.loads(engine.god_play(after, json.dumps(steps), END_ACTION))
    assert done["position"].split("/")[1] == "1" and "," not in done["turn"]
    assert "error" in json.loads(engine.god_play(after, "[]", END_ACTION))  # END is no legal first step


def test_a_winning_move_ends_the_turn_without_its_build():
    text = "0000000000002300000000000/1/mortal:C3,A1/mortal:E5,E1"  # C3 (2) next to D3 (3): a climb wins
    reply = json.loads(engine.god_play(text, "[]", 25 + 13))
    assert reply["turn"].startswith("C3>D3^") and reply["position"].endswith("/won")
    assert json.loads(engine.god_info(reply["position"]))["winner"] == 0


@pytest.mark.parametrize("gods", [("artemis", "demeter"), ("atlas", "prometheus"), ("hermes", "minotaur")])
def test_the_engine_plays_a_legal_god_turn(gods):
    state = parse_god_position(json.loads(engine.god_start_position(*gods, POSITIONS[2]))["position"])
    text = engine.format_god_position(state)
    search = engine.run_god_turn(text, simulations=40, seed=3)
    result = json.loads(search.result())
    turn = parse_turn(state, result["move"])  # NotationError if it is no legal turn
    assert turn in god_legal_turns(state)
    assert result["position"] == engine.format_god_position(god_apply(state, turn))
    assert all(d["simulations"] <= 40 for d in result["decisions"]) and result["simulations"] > 0
    assert sum(m["share"] for m in result["top_visits"]) <= 1.0 + 1e-9
    # the count the page prints beside the tables is theirs, the first decision's (it added up the turn's, less those
    # that ended on a won game: 6 simulations beside shares in sixteenths)
    first = result["decisions"][0]["simulations"]
    assert result["simulations"] == first and sum(m["visits"] for m in result["top_visits"]) <= first


def test_a_god_hint_is_one_decision_and_a_finished_game_has_no_move():
    search = engine.drive(engine.GodTurnSearch(ARTEMIS_DEMETER, simulations=30, decisions=1, batch_size=7))
    result = json.loads(search.result())
    assert len(result["decisions"]) == 1 and result["position"] is None
    assert result["move"] in [a["text"] for a in json.loads(engine.god_info(ARTEMIS_DEMETER))["legal"]]
    won = json.loads(engine.god_play("0000000000002300000000000/1/mortal:C3,A1/mortal:E5,E1", "[]", 38))["position"]
    assert json.loads(engine.run_god_turn(won, simulations=10).result())["move"] is None


# ---- the god network in the worker: chapter 02b's 36 planes written by the worker's numpy-free view ------------------

@pytest.fixture(scope="module")
def god_onnx_model(tmp_path_factory):
    "A small god network with decided outputs, exported as the browser loads it."
    from santorini_az.god_training import GodNet
    torch.manual_seed(1)
    net = GodNet(NetConfig(16, 2))
    with torch.no_grad(): net.policy_fc.weight.mul_(8.0); net.value_fc2.weight.mul_(3.0)
    return OnnxEvaluator(export_onnx(net.eval(), tmp_path_factory.mktemp("g") / "god.onnx"))


GOD_NODES = [(ARTEMIS_DEMETER, []), ("0000001000012100001000000/2/hermes:B4,D2/athena:C4,C2", []),
             ("0000001000012100001000000/1/prometheus:B4,D2/atlas:C4,C2", [75 + 2])]


@pytest.mark.parametrize("text,steps", GOD_NODES)
def test_the_worker_encodes_god_nodes_as_chapter_02b(text, steps):
    from santorini_az.god_encoding import encode_node
    node = engine.god_node(text, steps)
    planes = np.frombuffer(engine.encode_god_nodes([node, node]), np.float32).reshape(2, 5, 5, 36)
    np.testing.assert_array_equal(planes[1], encode_node(node))
    assert planes[0].sum() > 25  # the god planes cover the board: more than one mark per cell


def test_a_god_decision_with_batches_of_one_is_chapter_03b_with_the_network(god_onnx_model):
    from santorini_az.god_search import god_search
    def evaluate(node):
        from santorini_az.god_encoding import encode_node
        logits, values = god_onnx_model.evaluate(encode_node(node)[None])
        return logits[0], float(values[0])
    for text, steps in GOD_NODES:
        search = engine.run_god_turn(text, network(god_onnx_model), simulations=120, batch_size=1, decisions=1,
                                     steps_json=json.dumps(steps))
        readable = god_search(engine.god_node(text, steps), evaluate, SearchConfig(simulations=120))
        root = search.decisions[0]["moves"]
        assert [m["visits"] for m in root] == readable.visits
        np.testing.assert_allclose([m["prior"] for m in root], readable.priors, rtol=1e-5)


@pytest.mark.parametrize("in_flight", [1, 2])
def test_a_god_turn_with_the_network_in_batches(god_onnx_model, in_flight):
    for text, steps in GOD_NODES:
        search = engine.run_god_turn(text, network(god_onnx_model), in_flight=in_flight, simulations=200,
                                     batch_size=16, steps_json=json.dumps(steps))
        result = json.loads(search.result())
        state = parse_god_position(text)
        turn = parse_turn(state, result["move"])
        assert turn in god_legal_turns(state) and result["position"] == engine.format_god_position(god_apply(state, turn))
        assert search.evaluations < search.simulations_done + len(result["decisions"])  # every leaf evaluated once
        assert search.batches < search.simulations_done // 4, "batches are mostly full"
        assert result["network_value"] != 0.0  # the network valued the first decision's root


def test_a_god_decision_whose_leaves_all_end_the_game_is_decided():
    "A network sure of the winning move: every simulation after the root's ends the game, and the turn is still played."
    text = "0000000000002300000000000/1/artemis:C3,A1/mortal:E5,E1"  # C3 (2) next to D3 (3): moving there wins
    def sure_of_the_win(planes, n):
        policy = np.full((n, 126), 1e-9, np.float32)
        policy[:, 25 + 13] = 1.0  # move worker 1 to D3
        return policy.tobytes(), np.zeros(n, np.float32).tobytes()
    for in_flight in (1, 2):
        search = engine.run_god_turn(text, sure_of_the_win, in_flight=in_flight, simulations=50, batch_size=16)
        result = json.loads(search.result())
        assert result["move"].startswith("C3>D3") and result["position"].endswith("/won")
        assert search.evaluations == 1 and result["decisions"][0]["simulations"] == 50
