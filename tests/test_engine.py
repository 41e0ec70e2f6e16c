"Checks of the compiled self-play engine against the game, encoding and readable-search chapters."
import os
import random
from functools import partial
import subprocess
import sys

import numpy as np
import pytest

from santorini_az import mcts
from santorini_az.encoding import N_ACTIONS, action_from_index, action_index, encode, legal_action_indices
from santorini_az.engine import (MAX_LEGAL, LinearEvaluator, SelfPlay, apply_action, arrays_to_state,
                                 encode_position, fast_perft, gumbel_choice, improved_policy, legal_actions_into,
                                 play_games, search_batch, search_positions, state_to_arrays)
from santorini_az.evaluator import state_evaluator
from santorini_az.game import DOME, State, apply, initial_state, legal_actions, random_openings
from santorini_az.mcts import SearchConfig

SELFPLAY = dict(dirichlet_fraction=0.25, temperature_plies=12)  # the engine's self-play settings of these tests


def random_board(rng) -> State:
    "A position with random levels and randomly placed workers (any number placed, setup or not)."
    heights = [int(h) for h in rng.choice(5, size=25, p=[0.35, 0.25, 0.18, 0.12, 0.10])]
    free = [c for c in range(25) if heights[c] != DOME]
    placed = int(rng.choice([0, 1, 2, 3, 4, 4, 4, 4]))
    cells = [int(c) for c in rng.choice(free, size=placed, replace=False)]
    counts = {0: (0, 0), 1: (1, 0), 2: (2, 0), 3: (2, 1), 4: (2, 2)}[placed]
    workers = (tuple(cells[:counts[0]]), tuple(cells[counts[0]:]))
    player = 0 if placed < 2 else 1 if placed < 4 else int(rng.integers(2))
    if placed < 4: heights = [min(h, 2) for h in heights]  # setup positions come from an unbuilt board
    return State(tuple(heights), workers, player)


def random_positions(n, seed):
    "Every position of random playouts from the start and from random boards, until `n` positions."
    rng = np.random.default_rng(seed)
    positions = []
    while len(positions) < n:
        state = initial_state() if rng.random() < 0.5 else random_board(rng)
        while True:
            positions.append(state)
            actions = legal_actions(state)
            if not actions: break
            state = apply(state, actions[rng.integers(len(actions))])
    return positions


def compiled_legal(state):
    heights, workers, player = state_to_arrays(state)
    out = np.empty(MAX_LEGAL, np.int16)
    return out[:legal_actions_into(heights, workers, player, out)].tolist()


def test_rules_match_the_game_and_encoding_chapters():
    positions = random_positions(5000, seed=1)
    assert sum(not legal_actions(s) for s in positions) > 50  # finished games are covered too
    planes = np.empty((5, 5, 9), np.float32)
    for state in positions:
        legal = compiled_legal(state)
        assert legal == legal_action_indices(state), state
        heights, workers, player = state_to_arrays(state)
        encode_position(heights, workers, player, planes)
        np.testing.assert_array_equal(planes, encode(state))
        assert arrays_to_state(heights, workers, player) == state
        for index in legal[:: max(1, len(legal) // 8)]:  # a spread of the legal actions
            h, w = heights.copy(), workers.copy()
            after = apply_action(h, w, player, index)
            assert arrays_to_state(h, w, after) == apply(state, action_from_index(state, index))


def test_perft():
    assert [fast_perft(initial_state(), d) for d in range(6)] == [1, 25, 600, 13_800, 303_600, 17_252_928]


def test_perft_matches_the_game_chapter_from_random_positions():
    from santorini_az.game import perft
    for state in random_positions(40, seed=2)[::4]:
        assert fast_perft(state, 2) == perft(state, 2)


def readable_search(state, evaluator, config):
    search = mcts.run_search(state, state_evaluator(evaluator), config)
    return search.visit_counts(), search.root_value()


@pytest.mark.parametrize("simulations, c_puct, fpu_value, scale", [(200, 1.25, 0.0, 1.0), (64, 3.0, -0.5, 0.25)])
def test_same_visit_counts_as_the_readable_search(simulations, c_puct, fpu_value, scale):
    rng = np.random.default_rng(3)
    states = ([initial_state()] + random_openings(12, rng) + random_openings(12, rng, random_moves=10)
              + random_openings(12, rng, random_moves=25))
    evaluator = LinearEvaluator(seed=4, scale=scale)
    config = SearchConfig(simulations=simulations, c_puct=c_puct, fpu_value=fpu_value)
    counts, values = search_positions(states, evaluator, config)
    for i, state in enumerate(states):
        expected_counts, expected_value = readable_search(state, evaluator, config)
        assert counts[i].tolist() == expected_counts, i
        assert values[i] == expected_value, i


def test_a_whole_game_with_tree_reuse_matches_the_readable_search():
    evaluator, config = LinearEvaluator(seed=5), SearchConfig(simulations=48)
    start = random_openings(1, np.random.default_rng(6))[0]
    record = SelfPlay(evaluator, config, slots=1).play([(0, start, (0, 0))])[0]
    search = mcts.Search(start, mcts.SearchConfig(simulations=48))
    for t, action in enumerate(record.action.tolist()):
        search.run(state_evaluator(evaluator))
        counts = search.visit_counts()
        np.testing.assert_array_equal(record.policy[t], np.float32(np.array(counts) / sum(counts)))
        assert record.root_value[t] == np.float32(search.root_value())
        assert action == search.choose_action(0.0)
        search.advance(action)
    assert search.root.is_terminal and record.winner == 1 - search.root.player


def test_game_records_are_consistent():
    config = SearchConfig(simulations=24, **SELFPLAY)
    starts = random_openings(3, np.random.default_rng(7)) + [initial_state()] * 3
    records = play_games(partial(LinearEvaluator, seed=8), 6, config, games_in_flight=6, start_positions=starts,
                         workers=1)
    assert [r.game_id for r in records] == list(range(6))
    for record, start in zip(records, starts):
        states = record.states()
        assert states[0] == start and states[-1].winner() == record.winner
        assert all(s.winner() is None for s in states[:-1])
        for t, state in enumerate(states[:-1]):
            np.testing.assert_array_equal(record.planes[t], encode(state))
            assert np.flatnonzero(record.legal[t]).tolist() == legal_action_indices(state)
            assert record.player[t] == state.player
            assert record.legal[t, record.action[t]]
        assert np.allclose(record.policy.sum(1), 1.0) and not (record.policy * ~record.legal).any()
        assert np.all(np.abs(record.root_value) <= 1)
        assert set(record.result.tolist()) <= {-1.0, 1.0} and record.result[-1] == 1.0  # the last mover won
        assert len(record.samples()) == len(record) and len(record.samples()[0]) == 5


def test_a_finished_start_position_gives_an_empty_record():
    heights = [0] * 25
    heights[1] = 3
    won = State(tuple(heights), ((0, 24), (1, 20)), player=0)  # player 2 stands on level 3: player 1 to move has lost
    record = play_games(LinearEvaluator, 1, SearchConfig(simulations=8, **SELFPLAY), start_positions=[won], workers=1)[0]
    assert (len(record), record.winner) == (0, 1)


def searched_at_most(policy: np.ndarray, visits: int) -> bool:
    "Whether the visit shares `policy` [153] can come from a root of at most `visits` visits (shares k / n, n <= visits)."
    shares = policy[policy > 0].astype(np.float64)
    return any(np.allclose(shares * n, np.round(shares * n), atol=1e-3) for n in range(1, visits + 1))

def test_small_trees_restart_when_the_kept_subtree_would_not_fit():
    "Room for 45 nodes and 40 simulations: a kept subtree of more than 5 nodes is dropped, so no root has over 44 visits."
    def roots(max_nodes):
        config = SearchConfig(simulations=40, max_nodes=max_nodes, **SELFPLAY)
        records = play_games(partial(LinearEvaluator, seed=9), 4, config, games_in_flight=4, workers=1)
        for record in records:
            assert record.states()[-1].winner() == record.winner
            assert np.allclose(record.policy.sum(1), 1.0)
        return np.concatenate([record.policy for record in records])
    assert all(searched_at_most(policy, 40 + 4) for policy in roots(45))
    assert not all(searched_at_most(policy, 40 + 4) for policy in roots(0))  # with room, kept subtrees add visits


def test_arena_games_use_each_players_evaluator():
    "Player 0 searches with A and player 1 with B; no tree reuse, so each move is a fresh readable search."
    a, b = LinearEvaluator(seed=10), LinearEvaluator(seed=11)
    seen = {0: 0, 1: 0}
    def counting(k, evaluate):
        def wrapped(planes):
            seen[k] += len(planes)
            return evaluate(planes)
        return wrapped
    config = SearchConfig(simulations=24, reuse_tree=False)
    start = random_openings(1, np.random.default_rng(12))[0]
    engine = SelfPlay([counting(0, a), counting(1, b)], config, slots=2)
    records = engine.play([(0, start, (0, 1)), (1, start, (1, 0))])
    assert seen[0] > 0 and seen[1] > 0
    for record, seats in zip(records, [(a, b), (b, a)]):
        state = start
        for t, action in enumerate(record.action.tolist()):
            search = mcts.run_search(state, state_evaluator(seats[state.player]), SearchConfig(simulations=24))
            counts = search.visit_counts()
            np.testing.assert_array_equal(record.policy[t], np.float32(np.array(counts) / sum(counts)))
            assert action == search.choose_action(0.0)
            state = apply(state, action_from_index(state, action))
        assert state.winner() == record.winner


def test_noise_and_temperature_are_seeded():
    config = SearchConfig(simulations=16, **SELFPLAY)
    first = play_games(LinearEvaluator, 3, config, games_in_flight=3, seed=3, workers=1)
    second = play_games(LinearEvaluator, 3, config, games_in_flight=3, seed=3, workers=1)
    assert all(np.array_equal(x.action, y.action) for x, y in zip(first, second))
    other = play_games(LinearEvaluator, 3, config, games_in_flight=3, seed=4, workers=1)
    assert not all(np.array_equal(x.action, y.action) for x, y in zip(first, other))


def test_fast_searches_carry_no_root_noise():
    """Fast searches (full_search_share 0: all but the first move) search as the network says: their moves' visits and
    values are the same with root noise as without (each search on a fresh tree, so that none inherits a noisy one)."""
    fast = dict(simulations=16, full_search_share=0.0, fast_simulations=8, temperature_plies=0, reuse_tree=False)
    noisy = play_games(LinearEvaluator, 3, SearchConfig(dirichlet_fraction=0.25, **fast), games_in_flight=3, seed=3, workers=1)
    plain = play_games(LinearEvaluator, 3, SearchConfig(dirichlet_fraction=0.0, **fast), games_in_flight=3, seed=3, workers=1)
    for x, y in zip(noisy, plain):
        quick = ~x.full_search
        assert np.array_equal(x.action, y.action) and quick.sum() > 30
        assert np.array_equal(x.policy[quick], y.policy[quick]) and np.array_equal(x.root_value[quick], y.root_value[quick])
    full = play_games(LinearEvaluator, 3, SearchConfig(dirichlet_fraction=0.25, **{**fast, "full_search_share": 1.0}),
                      games_in_flight=3, seed=3, workers=1)
    assert not all(np.array_equal(x.action, y.action) for x, y in zip(full, plain))  # where it searches in full, it does


def test_worker_processes():
    config = SearchConfig(simulations=12, **SELFPLAY)
    done = []
    records = play_games(partial(LinearEvaluator, seed=1), 5, config, games_in_flight=4, workers=2,
                         progress=lambda r, n, total: done.append(n))
    assert [r.game_id for r in records] == list(range(5)) and done == [1, 2, 3, 4, 5]
    assert all(r.states()[-1].winner() == r.winner for r in records)



def test_the_worker_pool_is_reused_and_replaced_when_a_worker_dies():
    """Two calls share one pool (same processes, same games for the same seed); a killed worker fails the call, and
    the next call starts a fresh pool."""
    import os, signal
    from santorini_az.engine import worker_pool
    config = SearchConfig(simulations=8, **SELFPLAY)
    factory = partial(LinearEvaluator, seed=2)
    first = play_games(factory, 4, config, games_in_flight=4, workers=2, seed=9)
    pool = worker_pool(2)
    pids = [p.pid for p in pool.processes]
    again = play_games(factory, 4, config, games_in_flight=4, workers=2, seed=9)
    assert [p.pid for p in worker_pool(2).processes] == pids  # no new processes
    assert all(np.array_equal(a.action, b.action) for a, b in zip(first, again))
    os.kill(pids[0], signal.SIGKILL)
    pool.processes[0].join(5)
    with pytest.raises(RuntimeError, match="exited with code"):
        pool.play([factory], config, 2, 9, [(0, initial_state(), (0, 0))] * 2, 1, print)
    fresh = play_games(factory, 4, config, games_in_flight=4, workers=2, seed=9)
    assert all(p.pid not in pids for p in worker_pool(2).processes)
    assert all(np.array_equal(a.action, b.action) for a, b in zip(first, fresh))


def _square_job(x, *, worker, progress):
    "A pool job for the test below: reports its input, returns its square (and fails on a negative one)."
    if x < 0: raise ValueError("negative")
    progress(x)
    return x * x


def test_a_pool_runs_any_module_level_job_by_share():
    "WorkerPool.run: one share per worker, results by share, reported items streamed, a failing share raises."
    from santorini_az.engine import worker_pool
    pool, reported = worker_pool(2), []
    assert pool.run(_square_job, [(3,), (4,)], reported.append) == [9, 16]
    assert sorted(reported) == [3, 4]
    with pytest.raises(RuntimeError, match="(?s)a worker failed:.*ValueError: negative"):
        pool.run(_square_job, [(2,), (-1,)])
    with pytest.raises(ValueError, match="3 shares for a pool of 2 workers"):
        worker_pool(2).run(_square_job, [(1,), (2,), (3,)])


DISABLED_JIT_SCRIPT = """
import numpy as np, numba
from santorini_az.engine import LinearEvaluator, search_positions, fast_perft
from santorini_az.game import initial_state, random_openings
from santorini_az.mcts import SearchConfig
assert numba.config.DISABLE_JIT
assert [fast_perft(initial_state(), d) for d in range(4)] == [1, 25, 600, 13800]
states = random_openings(2, np.random.default_rng(0), random_moves=3)
counts, values = search_positions(states, LinearEvaluator(), SearchConfig(simulations=20))
print(counts.tolist(), values.tolist())
"""


def test_runs_as_plain_python_with_the_jit_disabled():
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    result = subprocess.run([sys.executable, "-c", DISABLED_JIT_SCRIPT], env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    states = random_openings(2, np.random.default_rng(0), random_moves=3)
    counts, values = search_positions(states, LinearEvaluator(), SearchConfig(simulations=20))
    assert result.stdout.strip() == f"{counts.tolist()} {values.tolist()}"


def test_multiply_adds_counts_every_convolution_and_linear_layer():
    # 16x1 by hand, on each of the 25 cells: the stem (9 -> 16, 3x3), one block's two 3x3 convolutions (16 -> 16) and
    # the heads' 1x1 convolutions (16 -> 2, 16 -> 1); then the heads' linear layers (50 -> 153; 25 -> 64 -> 1)
    from santorini_az.bench import multiply_adds
    from santorini_az.network import NetConfig, SantoriniNet, random_planes
    by_hand = 25 * (9 * 9 * 16 + 2 * 16 * 9 * 16 + 16 * 2 + 16 * 1) + 50 * 153 + 25 * 64 + 64
    assert multiply_adds(SantoriniNet(NetConfig(16, 1)).eval(), random_planes(3, seed=0)) == by_hand
    # a layer the network does not use costs nothing, and batch normalisation is not counted
    import torch
    model = torch.nn.Sequential(torch.nn.Conv2d(2, 4, 3, padding=1, groups=2), torch.nn.BatchNorm2d(4))
    assert multiply_adds(model, np.zeros((5, 2, 5, 5), np.float32)) == 25 * 4 * (2 // 2) * 9


def test_matmul_rate_is_measured_and_leaves_torch_threads_alone():
    import torch
    from santorini_az.bench import matmul_gflops
    before = torch.get_num_threads()
    assert matmul_gflops(1, seconds=0.05) > 0
    assert torch.get_num_threads() == before


@pytest.mark.slow
def test_bench_compile_path_runs():
    # The --compile path compiles in each worker before timing; check it runs and reports itself.
    from santorini_az.bench import BenchConfig, run_bench
    result = run_bench(BenchConfig(net="16x1", games=8, sims=8, workers=1, seconds=0.3, warmup=0.3, compile=True))
    assert result["compile"] is True and result["network_positions_per_s"] > 0 and result["selfplay_sims_per_s"] > 0


@pytest.mark.slow
def test_bench_onnxruntime_backend_runs():
    # The onnxruntime path exports the (seeded random) network once and times the same layout as torch.
    from santorini_az.bench import BenchConfig, run_bench
    result = run_bench(BenchConfig(net="16x1", games=8, sims=8, workers=1, seconds=0.3, warmup=0.3, backend="onnxruntime"))
    assert result["backend"] == "onnxruntime" and result["network_positions_per_s"] > 0 and result["selfplay_sims_per_s"] > 0
    # its arithmetic: the 16x1 network's multiply-adds at the rate it ran, beside fp32's matrix multiply
    assert result["network_gflops"] == pytest.approx(2 * result["multiply_adds"] * result["network_positions_per_s"] / 1e9, abs=0.1)
    assert result["matmul_precision"] == "fp32" and result["matmul_gflops"] > 0
    with pytest.raises(ValueError, match="runs fp32 or int8 on the CPU"):
        BenchConfig(backend="onnxruntime", precision="bf16")
    with pytest.raises(ValueError, match="add --backend onnxruntime"):
        BenchConfig(precision="int8")


@pytest.mark.slow
def test_bench_int8_runs_the_quantized_export():
    # --precision int8 times onnxruntime's static int8 copy of the export, and says so.
    import onnx
    from santorini_az.bench import BenchConfig, run_bench
    result = run_bench(BenchConfig(net="16x1", games=8, sims=8, workers=1, seconds=0.3, warmup=0.3, backend="onnxruntime",
                                   precision="int8"))
    assert result["precision"] == "int8" and result["network_positions_per_s"] > 0 and result["selfplay_sims_per_s"] > 0
    assert any(node.op_type == "QuantizeLinear" for node in onnx.load(result["onnx"]).graph.node)


# Gumbel at the root (root_search="gumbel"): the compiled engine against chapter 3's readable GumbelRoot

class RootEdgeSearch(mcts.Search):
    "Chapter 3's search, noting the root edge (its position in `root.actions`) of each simulation, in order."
    def __init__(self, *args, **kwargs):
        self.root_edges = []
        super().__init__(*args, **kwargs)

    def _select(self):
        path, leaf = super()._select()
        self.root_edges.append(path[0][1])
        return path, leaf


def uniform_planes(planes):
    "The engine's uniform evaluator: equal logits, value 0 (chapter 3's `uniform_evaluator`)."
    return np.zeros((len(planes), N_ACTIONS), np.float32), np.zeros(len(planes), np.float32)


def gumbel_both_ways(states, evaluator, readable_evaluate, config):
    "Each state searched by the readable search (seeded) and, with the same Gumbel draws, by the engine."
    readable = [RootEdgeSearch(s, config, random.Random(i)).run(readable_evaluate)
                for i, s in enumerate(states)]
    draws = np.zeros((len(states), MAX_LEGAL))
    for i, search in enumerate(readable): draws[i, :len(search.gumbel.gumbel)] = search.gumbel.gumbel
    return readable, search_batch(states, evaluator, config, gumbel_draws=draws)


def gumbel_mismatches(readable, engine, config):
    "The positions where the engine's root choice, root edges or improved policy differ from the readable search's."
    wrong = []
    for i, search in enumerate(readable):
        choice = engine.tree.edge_action[i, gumbel_choice(engine.tree, engine.games, i, config.c_visit, config.c_scale)]
        policy = np.zeros(N_ACTIONS)
        improved_policy(engine.tree, i, config.c_visit, config.c_scale, policy)
        same = (int(choice) == search.choose_action()
                and engine.games.root_edges[i, :config.simulations].tolist() == search.root_edges
                and np.allclose(policy, search.improved_policy(), rtol=0, atol=1e-12))
        if not same: wrong.append(i)
    return wrong


def gumbel_positions():
    rng = np.random.default_rng(11)
    return ([initial_state()] + random_openings(6, rng) + random_openings(6, rng, random_moves=10)
            + random_openings(6, rng, random_moves=25))


@pytest.mark.parametrize("simulations, m, uniform", [(64, 16, False), (50, 8, True), (200, 16, False), (30, 4, False)])
def test_gumbel_root_matches_the_readable_search(simulations, m, uniform):
    config = SearchConfig(simulations=simulations, root_search="gumbel", gumbel_actions=m)
    evaluator = uniform_planes if uniform else LinearEvaluator(seed=4)
    readable_evaluate = mcts.uniform_evaluator if uniform else state_evaluator(evaluator)
    readable, engine = gumbel_both_ways(gumbel_positions(), evaluator, readable_evaluate, config)
    assert all(len(s.root_edges) == simulations for s in readable)
    assert gumbel_mismatches(readable, engine, config) == []


def test_gumbel_equivalence_fails_with_a_perturbed_schedule(monkeypatch):
    "The check above can fail: move one simulation of the last phase to the first, and the root edges differ."
    from santorini_az import engine as engine_module
    def perturbed(m, simulations):
        schedule = mcts.halving_schedule(m, simulations)
        if len(schedule) < 2: return schedule
        (n0, v0), (nk, vk) = schedule[0], schedule[-1]
        return [(n0, v0 + 1)] + schedule[1:-1] + ([(nk, vk - 1)] if vk > 1 else [])
    monkeypatch.setattr(engine_module, "halving_schedule", perturbed)
    config = SearchConfig(simulations=64, root_search="gumbel")
    evaluator = LinearEvaluator(seed=4)
    readable, engine = gumbel_both_ways(gumbel_positions(), evaluator, state_evaluator(evaluator), config)
    assert len(gumbel_mismatches(readable, engine, config)) == len(readable)


@pytest.mark.parametrize("gumbel_value", ["root_mean", "improved"])
def test_a_whole_gumbel_game_with_tree_reuse_matches_the_readable_search(monkeypatch, gumbel_value):
    "Move by move, with the engine's draws handed to chapter 3's search: the same moves, targets and root values."
    evaluator = LinearEvaluator(seed=5)
    config = SearchConfig(simulations=48, root_search="gumbel", gumbel_value=gumbel_value)
    draws = []
    class RecordingSelfPlay(SelfPlay):
        def draw_gumbel(self):
            fresh = bool(self.games.gumbel_used[0])
            super().draw_gumbel()
            if fresh: draws.append(self.games.gumbel[0].copy())
    start = random_openings(1, np.random.default_rng(6))[0]
    record = RecordingSelfPlay(evaluator, config, slots=1).play([(0, start, (0, 0))])[0]
    monkeypatch.setattr(mcts, "gumbel_draws", lambda count, rng: draws.pop(0)[:count].tolist())
    search, means = mcts.Search(start, config), []
    for t, action in enumerate(record.action.tolist()):
        search.run(state_evaluator(evaluator))
        np.testing.assert_allclose(record.policy[t], search.improved_policy(), rtol=0, atol=1e-7)
        assert abs(record.root_value[t] - search.target_value()) <= 1e-6  # float32 of the same float64 sum
        means.append(search.root_value())
        assert action == search.choose_action()
        search.advance(action)
    assert search.root.is_terminal and record.winner == 1 - search.root.player
    differ = np.abs(record.root_value - np.float32(means)) > 1e-3  # the improved value is not the mean
    assert differ.any() if gumbel_value == "improved" else not differ.any()


def test_gumbel_selfplay_ignores_root_noise_and_temperature_and_targets_the_improved_policy():
    gumbel = SearchConfig(simulations=24, root_search="gumbel", gumbel_actions=8)
    noisy = SearchConfig(simulations=24, root_search="gumbel", gumbel_actions=8, **SELFPLAY)
    plain = play_games(partial(LinearEvaluator, seed=8), 4, gumbel, games_in_flight=4, workers=1)
    noised = play_games(partial(LinearEvaluator, seed=8), 4, noisy, games_in_flight=4, workers=1)
    assert [r.action.tolist() for r in plain] == [r.action.tolist() for r in noised]
    for record in plain:
        np.testing.assert_allclose(record.policy.sum(axis=1), 1.0, atol=1e-5)
        assert ((record.policy > 0) == record.legal).all()  # a softmax over every legal action, not visit counts


def test_gumbel_noise_opening_draws_only_for_the_first_temperature_plies():
    config = SearchConfig(simulations=8, root_search="gumbel", gumbel_actions=4, temperature_plies=3,
                          gumbel_noise="opening")
    engine = SelfPlay(LinearEvaluator(seed=2), config, slots=4, rng=np.random.default_rng(0))
    for slot in range(4): engine.start_game(slot, initial_state(), slot)
    drawn, zero = set(), set()  # the plies whose roots searched with draws, and without
    while engine.in_flight:
        engine.step()
        games = engine.games
        for g in np.flatnonzero(games.slots.active & ~games.gumbel_used):  # roots still searching with their draws
            (zero if not games.gumbel[g].any() else drawn).add(int(games.plies[g]))
    assert drawn == {0, 1, 2} and min(zero) == 3 and len(zero) > 10


def test_gumbel_with_fast_searches_of_no_simulations_plays_whole_games():
    config = SearchConfig(simulations=16, root_search="gumbel", full_search_share=0.5, fast_simulations=0)
    records = play_games(LinearEvaluator, 4, config, games_in_flight=4, workers=1)
    assert all(r.states()[-1].winner() == r.winner for r in records)
    assert 0 < np.mean(np.concatenate([r.full_search for r in records])) < 1


def test_compile_engines_stale_empties_the_cache_when_a_compiled_module_changes(tmp_path, monkeypatch):
    """numba checks a cached function against its own file only, so the setup's first step drops every cached function
    when any compiled module changed (god_engine.py's functions hold their own copy of god_alphabeta.py's)."""
    import importlib.util
    from pathlib import Path
    tools = Path(__file__).resolve().parent.parent / "tools"
    spec = importlib.util.spec_from_file_location("compile_engines", tools / "compile_engines.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    package = tmp_path / "santorini_az"
    (package / "__pycache__").mkdir(parents=True)
    for name in tool.COMPILED_MODULES: (package / name).write_text(f"# {name}\n")
    monkeypatch.setattr(tool, "PACKAGE", package)
    cached = lambda: sorted(f.name for f in (package / "__pycache__").glob("*.nb[ic]"))
    def compile_some():
        for name in ("god_engine.play-10.py311.nbi", "god_engine.play-10.py311.1.nbc"): (package / "__pycache__" / name).touch()
    compile_some()
    tool.stale()  # no digest yet: the cache may be from any version
    assert cached() == []
    compile_some()
    tool.stale()  # nothing changed
    assert len(cached()) == 2
    (package / "god_alphabeta.py").write_text("# emit_builds changed\n")
    tool.stale()
    assert cached() == []


def test_a_small_figure_in_the_bench_table_keeps_its_digits():
    "A small network's GFLOP/s and its share of the matrix multiply read 0 and 0% in the table."
    from santorini_az.bench import _figure
    assert [_figure(x) for x in (209.3, 45.6, 4.23, 0.456, 1234.5)] == ["209", "46", "4.2", "0.46", "1,234"]
