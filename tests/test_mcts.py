"Tests for the readable PUCT search (santorini_az.mcts): the shared search contract, one property per test."
import math
import random
import subprocess
import sys

import pytest

from santorini_az.encoding import N_ACTIONS, action_from_index, legal_action_indices
from santorini_az.game import DOME, Placement, State, initial_state
from santorini_az.mcts import (TERMINAL_VALUE, Node, Search, SearchConfig, expand, halving_schedule, improved_policy,
                               legal_priors, node_value, run_batched, run_search, select_edge, uniform_evaluator,
                               visits_by_cell)


def position(rows: str, mine=(), theirs=(), player=0) -> State:
    "A position from a 5-line picture of levels (D for dome); `mine` are the workers of `player`."
    heights = tuple(DOME if ch == "D" else int(ch) for ch in "".join(rows.split()))
    workers = (tuple(mine), tuple(theirs)) if player == 0 else (tuple(theirs), tuple(mine))
    return State(heights, workers, player)


WIN_IN_ONE = position("00000 02300 01000 00000 00000", mine=(6, 24), theirs=(4, 20))  # climb 6 -> 7 wins
BLOCK = position("00000 00000 00030 00020 00000", mine=(6, 0), theirs=(18, 24))  # must dome cell 13
MIDGAME = position("01200 12100 02110 00120 00000", mine=(6, 17), theirs=(8, 12))


def hashed_evaluator(state):
    "A deterministic, non-uniform evaluator: logits and value depend on the position."
    seed = hash((state.heights, state.workers, state.player)) & 0xFFFFFFFF
    r = random.Random(seed)
    return [r.gauss(0, 1) for _ in range(N_ACTIONS)], r.uniform(-0.9, 0.9)


def all_nodes(root):
    "Every node in the tree under `root`, root first."
    stack, nodes = [root], []
    while stack:
        node = stack.pop()
        nodes.append(node)
        stack.extend(node.children.values())
    return nodes


def check_values_backed_up_by_player(root):
    "Every expanded edge: W = ±(child's own value + child's W), the sign by comparing players; N = child's visits."
    for node in all_nodes(root):
        for action, child in node.children.items():
            edge = node.actions.index(action)
            if child.is_expanded:
                sign = 1.0 if child.player == node.player else -1.0
                assert node.value_sums[edge] == pytest.approx(sign * (child.value + sum(child.value_sums)))
                assert node.visits[edge] == child.visit_count()


def hashed_batch(states):
    "`hashed_evaluator` over a batch: (list of logits, list of values)."
    results = [hashed_evaluator(s) for s in states]
    return [r[0] for r in results], [r[1] for r in results]


@pytest.mark.parametrize("state", [initial_state(), initial_state().apply(Placement(3)), MIDGAME, BLOCK])
@pytest.mark.parametrize("simulations", [1, 17, 100])
def test_visit_counts_sum_to_simulations(state, simulations):
    search = run_search(state, hashed_evaluator, SearchConfig(simulations=simulations))
    counts = search.visit_counts()
    assert len(counts) == N_ACTIONS and sum(counts) == simulations == search.simulations_done
    legal = set(legal_action_indices(state))
    assert all(n == 0 for a, n in enumerate(counts) if a not in legal)
    assert search.pending() is None


def test_zero_simulations_evaluates_only_the_root():
    asked = []
    search = run_search(MIDGAME, lambda s: asked.append(s) or hashed_evaluator(s), SearchConfig(simulations=0))
    assert asked == [MIDGAME] and sum(search.visit_counts()) == 0
    priors = legal_priors(hashed_evaluator(MIDGAME)[0], search.root.actions)
    assert search.choose_action() == search.root.actions[priors.index(max(priors))]  # the raw policy


def test_priors_renormalised_over_legal_actions():
    logits = [float(a % 7) for a in range(N_ACTIONS)]
    logits[0] = 1e6  # an illegal action with a huge logit takes nothing
    actions = [3, 30, 100]
    priors = legal_priors(logits, actions)
    expected = [math.exp(logits[a]) for a in actions]
    assert priors == pytest.approx([e / sum(expected) for e in expected])
    node = Node(MIDGAME)
    expand(node, logits, 0.3)
    assert len(node.priors) == len(node.actions) == len(legal_action_indices(MIDGAME))
    assert sum(node.priors) == pytest.approx(1.0)
    assert legal_priors([-math.inf] * N_ACTIONS, [1, 2]) == [0.5, 0.5]


def test_uniform_evaluator_gives_uniform_priors():
    search = run_search(MIDGAME, uniform_evaluator, SearchConfig(simulations=1))
    n = len(search.root.actions)
    assert search.root.priors == pytest.approx([1 / n] * n)


def test_first_selection_follows_the_prior_and_ties_go_to_lowest_index():
    node = Node(initial_state())
    logits = [0.0] * N_ACTIONS
    logits[9] = 1.0
    expand(node, logits, 0.0)
    assert node.actions[select_edge(node, SearchConfig())] == 9
    expand(node, [0.0] * N_ACTIONS, 0.0)
    assert select_edge(node, SearchConfig()) == 0


def test_terminal_nodes_valued_minus_one_and_never_evaluated():
    def careful(state):
        assert not state.is_over(), "the evaluator must never see a finished game"
        return uniform_evaluator(state)
    search = run_search(WIN_IN_ONE, careful, SearchConfig(simulations=200))
    root = search.root
    for action, child in root.children.items():
        edge = root.actions.index(action)
        if child.is_terminal:
            assert not child.is_expanded and child.children == {}
            assert root.value_sums[edge] == root.visits[edge]  # +1 per visit for the winner
            assert node_value(child) == TERMINAL_VALUE
    assert any(c.is_terminal for c in root.children.values())


def test_terminal_root_does_nothing():
    climb = next(a for a in legal_action_indices(WIN_IN_ONE) if action_from_index(WIN_IN_ONE, a).to == 7)
    won = WIN_IN_ONE.apply(action_from_index(WIN_IN_ONE, climb))
    assert won.is_over()
    search = Search(won, SearchConfig(simulations=10))
    assert search.pending() is None and sum(search.visit_counts()) == 0 and search.root_value() == -1.0


def test_value_sign_by_player_not_by_ply():
    "In setup one player places twice: the backed-up value keeps its sign across that ply."
    def plus_half(state): return [0.0] * N_ACTIONS, 0.5
    same = run_search(initial_state(), plus_half, SearchConfig(simulations=1))  # child: player 0 to place again
    assert same.root.children[0].player == 0 and same.root.value_sums[0] == 0.5
    second = initial_state().apply(Placement(12))
    other = run_search(second, plus_half, SearchConfig(simulations=1))  # child: player 1 to place
    assert other.root.value_sums[0] == -0.5
    # deeper: every edge's W equals the sum of its leaves' values signed by comparing players
    search = run_search(initial_state(), hashed_evaluator, SearchConfig(simulations=300))
    check_values_backed_up_by_player(search.root)


def test_subtree_reuse_keeps_counts():
    search = run_search(MIDGAME, hashed_evaluator, SearchConfig(simulations=150))
    action = search.choose_action()
    child = search.root.children[action]
    kept, kept_values = list(child.visits), list(child.value_sums)
    search.advance(action)
    assert search.root is child
    # advance() starts the next round at once, running until a position needs the evaluator: only simulations that
    # ended in a terminal position can have been added so far
    assert search.pending() is not None
    assert sum(search.root.visits) == sum(kept) + search.simulations_done
    for n, w, k, kw in zip(search.root.visits, search.root.value_sums, kept, kept_values):
        assert n >= k and (n > k or w == kw)


def test_subtree_reuse_then_continue():
    config = SearchConfig(simulations=100)
    search = run_search(MIDGAME, hashed_evaluator, config)
    action = search.choose_action()
    kept = list(search.root.children[action].visits)
    kept_values = list(search.root.children[action].value_sums)
    search.advance(action)
    # advance() starts a new round at once and stops at the first position needing the evaluator
    assert search.simulations_done < config.simulations
    search.run(hashed_evaluator)
    assert sum(search.visit_counts()) == sum(kept) + config.simulations
    assert all(n >= k for n, k in zip(search.root.visits, kept))


def test_advance_to_unexpanded_child_asks_for_it_first():
    search = run_search(initial_state(), uniform_evaluator, SearchConfig(simulations=3))
    search.advance(20)
    assert search.pending() == initial_state().apply(Placement(20))
    with pytest.raises(ValueError, match="not legal"):
        search.advance(20)  # 20 is taken now


def test_noise_changes_only_root_priors_and_respects_legality():
    config = SearchConfig(simulations=200, dirichlet_fraction=0.25)
    search = run_search(MIDGAME, hashed_evaluator, config, rng=random.Random(1))
    root = search.root
    clean = legal_priors(hashed_evaluator(MIDGAME)[0], root.actions)
    assert root.actions == legal_action_indices(MIDGAME)
    assert sum(root.priors) == pytest.approx(1.0) and min(root.priors) >= 0.75 * min(clean) - 1e-12
    assert root.priors != pytest.approx(clean)
    assert all(p >= 0.75 * c - 1e-12 for p, c in zip(root.priors, clean))
    for node in all_nodes(root)[1:]:
        if node.is_expanded:
            assert node.priors == legal_priors(hashed_evaluator(node.state)[0], node.actions)
    assert search.policy()[0] == 0.0 and all(search.visit_counts()[a] == 0 for a in range(N_ACTIONS)
                                             if a not in root.actions)


def test_noise_reapplied_to_new_root_after_advance():
    config = SearchConfig(simulations=100, dirichlet_fraction=0.25)
    search = run_search(MIDGAME, hashed_evaluator, config, rng=random.Random(2))
    action = search.choose_action()
    child = search.root.children[action]
    before = list(child.priors)
    search.advance(action)
    assert child.priors != pytest.approx(before) and sum(child.priors) == pytest.approx(1.0)


def test_deterministic_with_seeded_rng():
    config = SearchConfig(simulations=120, dirichlet_fraction=0.25)
    def play(seed):
        rng = random.Random(seed)
        search = run_search(MIDGAME, hashed_evaluator, config, rng=rng)
        return search.visit_counts(), [search.choose_action(1.0) for _ in range(5)]
    assert play(7) == play(7)
    assert play(7) != play(8)
    plain = SearchConfig(simulations=120)  # no noise: no randomness at all
    assert run_search(MIDGAME, hashed_evaluator, plain).visit_counts() == \
        run_search(MIDGAME, hashed_evaluator, plain).visit_counts()


def test_policy_and_temperature():
    search = run_search(MIDGAME, hashed_evaluator, SearchConfig(simulations=100))
    counts = search.visit_counts()
    assert search.policy(1.0) == [n / 100 for n in counts]  # exact visit fractions: the training target
    greedy = search.policy(0)
    best = counts.index(max(counts))
    assert greedy[best] == 1.0 and sum(greedy) == 1.0 and search.choose_action(0) == best
    sharp = search.policy(0.5)
    squares = sum(n * n for n in counts)
    assert sharp == pytest.approx([n * n / squares for n in counts])
    assert search.policy(1e-3)[best] == pytest.approx(1.0)  # no overflow at tiny temperatures
    draws = {search.choose_action(1.0, random.Random(s)) for s in range(200)}
    assert draws <= {a for a, n in enumerate(counts) if n > 0}


def test_root_value_is_mean_of_backed_up_values():
    search = run_search(MIDGAME, hashed_evaluator, SearchConfig(simulations=60))
    root = search.root
    assert search.root_value() == pytest.approx((root.value + sum(root.value_sums)) / 61)


@pytest.mark.parametrize("simulations", [200, 400])
def test_win_in_one_found(simulations):
    search = run_search(WIN_IN_ONE, uniform_evaluator, SearchConfig(simulations=simulations))
    best = action_from_index(WIN_IN_ONE, search.choose_action())
    assert best.to == 7 and WIN_IN_ONE.apply(best).winner() == 0
    assert search.root_value() > 0.8


@pytest.mark.parametrize("simulations", [800, 1600])
def test_block_win_in_one_found(simulations):
    search = run_search(BLOCK, uniform_evaluator, SearchConfig(simulations=simulations))
    best = action_from_index(BLOCK, search.choose_action())
    assert best.build == 13 and BLOCK.apply(best).heights[13] == DOME


def test_block_as_player_two():
    "The same threat with the colours swapped: player 2 must dome player 1's tower."
    swapped = position("00000 00000 00030 00020 00000", mine=(6, 0), theirs=(18, 24), player=1)
    search = run_search(swapped, uniform_evaluator, SearchConfig(simulations=800))
    assert action_from_index(swapped, search.choose_action()).build == 13


def test_request_resume_matches_run_search():
    config = SearchConfig(simulations=90)
    expected = run_search(MIDGAME, hashed_evaluator, config).visit_counts()
    search, asked = Search(MIDGAME, config), 0
    while (state := search.pending()) is not None:
        logits, value = hashed_evaluator(state)
        search.resume(logits, value)
        asked += 1
    assert search.visit_counts() == expected
    assert asked <= config.simulations + 1
    with pytest.raises(RuntimeError):
        search.resume([0.0] * N_ACTIONS, 0.0)


def test_batched_matches_one_by_one():
    states = [initial_state(), MIDGAME, BLOCK, WIN_IN_ONE, initial_state().apply(Placement(0))]
    config = SearchConfig(simulations=64)
    calls = []
    def batch(states):
        calls.append(len(states))
        return hashed_batch(states)
    batched = run_batched([Search(s, config) for s in states], batch)
    assert [s.visit_counts() for s in batched] == \
        [run_search(s, hashed_evaluator, config).visit_counts() for s in states]
    assert len(calls) <= config.simulations + 1 and max(calls) == len(states)


def test_visits_by_cell():
    search = run_search(BLOCK, uniform_evaluator, SearchConfig(simulations=800))
    cells = visits_by_cell(search)
    assert len(cells) == 25 and sum(cells) == 800
    assert cells[7] + cells[12] > 300  # the two cells from which the tower can be domed


def test_module_imports_no_numpy_or_torch():
    code = "import sys, santorini_az.mcts; print(any(m in sys.modules for m in ('numpy', 'torch')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"


# Gumbel at the root (root_search="gumbel"): opt-in, PUCT below the root

@pytest.mark.parametrize("state", [initial_state(), MIDGAME, BLOCK, WIN_IN_ONE])
@pytest.mark.parametrize("simulations,m", [(0, 16), (1, 16), (7, 16), (64, 16), (100, 4), (50, N_ACTIONS)])
def test_gumbel_spends_exactly_the_budget_by_sequential_halving(state, simulations, m):
    config = SearchConfig(simulations=simulations, root_search="gumbel", gumbel_actions=m)
    search = run_search(state, hashed_evaluator, config, random.Random(0))
    root, phases = search.root, search.gumbel.phases
    assert sum(root.visits) == simulations == search.simulations_done
    assert [(len(p), sum(p.values())) for p in phases] == halving_schedule(min(m, len(root.actions)), simulations)
    assert all(set(later) <= set(earlier) for earlier, later in zip(phases, phases[1:]))
    assert all(n == 0 or (phases and e in phases[0]) for e, n in enumerate(root.visits))  # only sampled moves
    assert search.choose_action() in root.actions
    policy = search.improved_policy()
    assert sum(policy) == pytest.approx(1.0)
    assert all(p == 0.0 for a, p in enumerate(policy) if a not in root.actions)


def test_gumbel_plays_the_best_scored_survivor():
    search = run_search(MIDGAME, hashed_evaluator, SearchConfig(simulations=64, root_search="gumbel"), random.Random(3))
    gumbel, scores = search.gumbel, search.gumbel.scores()
    most = max(gumbel.given[e] for e in gumbel.candidates)
    survivors = [e for e in gumbel.candidates if gumbel.given[e] == most]
    assert len(survivors) == 2 and most == 1 + 2 + 4 + 8
    assert search.choose_action() == search.root.actions[max(survivors, key=lambda e: scores[e])]


def test_gumbel_with_no_simulations_samples_from_the_prior():
    priors = legal_priors(hashed_evaluator(MIDGAME)[0], legal_action_indices(MIDGAME))
    top = legal_action_indices(MIDGAME)[priors.index(max(priors))]
    config = SearchConfig(simulations=0, root_search="gumbel")
    draws = [run_search(MIDGAME, hashed_evaluator, config, random.Random(s)).choose_action() for s in range(1000)]
    assert draws.count(top) / 1000 == pytest.approx(max(priors), abs=0.05)


def test_gumbel_below_the_root_backs_up_like_puct():
    search = run_search(initial_state(), hashed_evaluator, SearchConfig(simulations=300, root_search="gumbel"),
                        random.Random(0))
    check_values_backed_up_by_player(search.root)


def test_gumbel_is_deterministic_with_a_seed_and_batches_like_one_by_one():
    config = SearchConfig(simulations=48, root_search="gumbel")
    def play(seed): return run_search(MIDGAME, hashed_evaluator, config, random.Random(seed)).visit_counts()
    assert play(7) == play(7) and play(7) != play(8)
    states = [initial_state(), MIDGAME, BLOCK, WIN_IN_ONE]
    batched = run_batched([Search(s, config, random.Random(i)) for i, s in enumerate(states)], hashed_batch)
    alone = [run_search(s, hashed_evaluator, config, random.Random(i)) for i, s in enumerate(states)]
    assert [s.visit_counts() for s in batched] == [s.visit_counts() for s in alone]
    assert [s.choose_action() for s in batched] == [s.choose_action() for s in alone]


def test_gumbel_adds_no_dirichlet_noise():
    "Gumbel's draws are its exploration: a Dirichlet fraction changes nothing (as in the compiled engine, chapter 6)."
    plain = SearchConfig(simulations=48, root_search="gumbel")
    noisy = SearchConfig(simulations=48, root_search="gumbel", dirichlet_fraction=0.25, dirichlet_alpha=0.3)
    def search(config): return run_search(MIDGAME, hashed_evaluator, config, random.Random(3))
    a, b = search(plain), search(noisy)
    assert a.root.priors == b.root.priors and a.visit_counts() == b.visit_counts()
    assert a.choose_action() == b.choose_action()
    puct = SearchConfig(simulations=48, dirichlet_fraction=0.25, dirichlet_alpha=0.3)  # PUCT still takes the noise
    assert search(puct).root.priors != search(SearchConfig(simulations=48)).root.priors

def test_gumbel_after_advance_counts_only_the_new_round():
    config = SearchConfig(simulations=40, root_search="gumbel")
    search = run_search(MIDGAME, hashed_evaluator, config, random.Random(0))
    action = search.choose_action()
    kept = sum(search.root.children[action].visits)
    search.advance(action)
    search.run(hashed_evaluator)
    assert sum(search.root.visits) == kept + 40 and sum(search.gumbel.given) == 40


@pytest.mark.parametrize("seed", range(3))
def test_gumbel_over_every_action_finds_the_win_in_one(seed):
    config = SearchConfig(simulations=400, root_search="gumbel", gumbel_actions=N_ACTIONS)
    search = run_search(WIN_IN_ONE, uniform_evaluator, config, random.Random(seed))
    assert WIN_IN_ONE.apply(action_from_index(WIN_IN_ONE, search.choose_action())).winner() == 0
    winners = [a for a in search.root.actions if WIN_IN_ONE.apply(action_from_index(WIN_IN_ONE, a)).winner() == 0]
    assert sum(search.improved_policy()[a] for a in winners) > 0.99


def test_improved_policy_without_visits_is_the_prior():
    search = run_search(MIDGAME, hashed_evaluator, SearchConfig(simulations=0))
    assert improved_policy(search.root) == pytest.approx(search.policy())


def test_unknown_root_search_is_refused():
    with pytest.raises(ValueError, match="root_search"):
        Search(MIDGAME, SearchConfig(root_search="alphabeta"))
