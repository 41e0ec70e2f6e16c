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
    "The worker's contract, from Python: float32 planes bytes -> (softmax policy bytes, value bytes)."
    def evaluate(planes, n):
        logits, values = evaluator.evaluate(np.frombuffer(planes, np.float32).reshape(n, 5, 5, 9))
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
