"Chapter 11c: the compiled god engine (tree, planes, search, self-play, strength) against chapters 02b, 03b and 10b."
import random

import numpy as np
import pytest
import torch

from santorini_az.god_alphabeta import turn_buffers
from santorini_az.god_encoding import (N_GOD_ACTIONS, N_GOD_PLANES, GodNode, encode_node, legal_sub_actions,
                                       play_sub_action, prefix_nodes, random_god_positions)
from santorini_az.engine import add_root_noise, choose_edge, expand_node
from santorini_az.god_engine import (ROOT, GodEngineConfig, add_god_child, compiled_god_selfplay,
                                     compiled_god_strength, compiled_root, empty_god_slots, encode_god_node,
                                     network_batch_evaluator, root_edges, run_god_games, search_god_nodes,
                                     uniform_batch_evaluator)
from santorini_az.god_search import GodTreeNode, god_search, random_god_opening
from santorini_az.god_training import GodNet, GodSelfPlayConfig, god_network_evaluator, god_strength
from santorini_az.gods import GODS
from santorini_az.mcts import SearchConfig
from santorini_az.network import NetConfig


def sample_nodes(seed: int, per_matchup: int, per_turn: int = 4) -> list[GodNode]:
    rng, nodes = random.Random(seed), []
    for first in GODS:
        for second in GODS:
            positions = random_god_positions((first, second), rng, 60)
            for state in rng.sample(positions, min(per_matchup, len(positions))):
                turn = prefix_nodes(state)
                nodes += rng.sample(turn, min(per_turn, len(turn)))
    return nodes


@pytest.fixture(scope="module")
def nodes():
    return sample_nodes(seed=10, per_matchup=3)


@pytest.fixture(scope="module")
def net():
    torch.manual_seed(0)
    return GodNet(NetConfig(16, 2)).eval()


def one_at_a_time(model):
    evaluate = network_batch_evaluator(model)
    def each(planes):
        answers = [evaluate(planes[i:i + 1]) for i in range(len(planes))]
        return np.concatenate([a[0] for a in answers]), np.concatenate([a[1] for a in answers])
    return each


def test_every_node_child_and_plane_equals_the_readable_tree(nodes):
    buffers = turn_buffers()
    mid_turn = 0
    for node in nodes:
        t, readable = compiled_root(node), GodTreeNode(node)
        assert bool(t.node_terminal[0, ROOT]) == readable.is_terminal, node
        if readable.is_terminal: continue
        mid_turn += bool(node.steps)
        assert root_edges(t) == legal_sub_actions(node), node
        planes = np.zeros((5, 5, N_GOD_PLANES), np.float32)
        encode_god_node(t, 0, ROOT, planes)
        assert np.array_equal(planes, encode_node(node)), node
        for e, action in enumerate(root_edges(t)):
            child = add_god_child(t, 0, ROOT, t.tree.edge_start[0, ROOT] + e, *buffers)
            after = GodTreeNode(play_sub_action(node, action))
            assert bool(t.node_terminal[0, child]) == after.is_terminal, (node, action)
            if after.is_terminal: continue
            first, count = t.tree.edge_start[0, child], t.tree.edge_count[0, child]
            assert t.tree.edge_action[0, first:first + count].tolist() == after.actions, (node, action)
            encode_god_node(t, 0, child, planes)
            assert np.array_equal(planes, encode_node(after.position)), (node, action)
    assert mid_turn > 300  # the sample reaches deep into turns, not only their starts


def test_search_equals_03b_visit_for_visit(net):
    roots = [n for n in sample_nodes(seed=11, per_matchup=1, per_turn=2)[::6] if not GodTreeNode(n).is_terminal]
    compiled = search_god_nodes(roots, one_at_a_time(net), simulations=40)
    for node, found in zip(roots, compiled):
        root = god_search(node, god_network_evaluator(net), SearchConfig(simulations=40, c_puct=1.25))
        assert (found.actions, found.visits) == (root.actions, root.visits), node
    assert len(roots) >= 30


def test_search_with_other_c_puct_and_fpu_equals_03b(net):
    roots = [GodNode(random_god_opening(("artemis", "prometheus"), random.Random(s))) for s in range(4)]
    compiled = search_god_nodes(roots, one_at_a_time(net), simulations=30, c_puct=2.5, fpu_value=-0.3)
    for node, found in zip(roots, compiled):
        root = god_search(node, god_network_evaluator(net), SearchConfig(simulations=30, c_puct=2.5, fpu_value=-0.3))
        assert found.visits == root.visits


def test_a_finished_game_cannot_be_searched():
    state = random_god_positions(("pan", "mortal"), random.Random(0), 200)[-1]
    won = [n for n in prefix_nodes(state) if GodTreeNode(n).is_terminal]
    assert won  # the seed's game has finished nodes to try
    if won:
        with pytest.raises(ValueError, match="finished game"): search_god_nodes(won[:1], uniform_batch_evaluator, 4)


def test_strength_equals_10b_match_for_match(net):
    few = [("hermes", "apollo"), ("athena", "demeter")]
    assert (compiled_god_strength(one_at_a_time(net), few, simulations=6, openings=1, seed=2)
            == god_strength(net, few, simulations=6, openings=1, seed=2))


def test_selfplay_examples():
    config = GodSelfPlayConfig(simulations=8, games_in_flight=5)
    torch.manual_seed(0)
    examples, stats = compiled_god_selfplay(GodNet(NetConfig(8, 1)), config, games=7, rng=random.Random(1))
    assert stats["games"] == 7 and len(examples) == stats["decisions"] and stats["mean_batch"] > 1
    assert examples.planes.shape[1:] == (5, 5, N_GOD_PLANES) and examples.planes.dtype == np.uint8
    assert np.allclose(examples.policy.sum(1), 1) and not (examples.policy[~examples.legal] > 0).any()
    assert set(np.unique(examples.result)) <= {-1.0, 1.0} and np.all(np.abs(examples.root_value) <= 1)


def test_results_follow_the_player_to_move():
    starts = [(random_god_opening(("artemis", "mortal"), random.Random(s)), (0, 0)) for s in range(3)]
    for game in run_god_games(starts, [uniform_batch_evaluator], GodEngineConfig(simulations=8)):
        players = game.player
        assert game.winner in (0, 1) and len(players) == len(game)
        same = players[1:] == players[:-1]  # mid-turn decisions keep the player, a finished turn passes it on
        assert same.any() and (~same).any()
        assert players[-1] == game.winner and game.result[-1] == 1.0  # a turn is whole or none: the winner moves last


def test_a_game_stopped_by_length_is_a_draw():
    starts = [(random_god_opening(("hermes", "hermes"), random.Random(s)), (0, 0)) for s in range(2)]
    games = list(run_god_games(starts, [uniform_batch_evaluator], GodEngineConfig(simulations=4, max_decisions=5)))
    assert [g.winner for g in games] == [-1, -1] and [len(g) for g in games] == [5, 5]
    assert all((g.result == 0).all() for g in games)  # a draw: value 0 for both


def test_chapter_06s_choice_on_the_god_tree():
    t = compiled_root(GodNode(random_god_opening(("demeter", "pan"), random.Random(4))))
    first, count = t.tree.edge_start[0, ROOT], t.tree.edge_count[0, ROOT]
    t.tree.edge_visits[0, first:first + count] = 0
    t.tree.edge_visits[0, first + 2], t.tree.edge_visits[0, first + 5], t.tree.edge_visits[0, first + 7] = 3, 5, 5
    assert choose_edge(t.tree, 0, 0.0, 0.0) == first + 5  # the most visited, ties to the lowest sub-action
    assert choose_edge(t.tree, 0, 1.0, 0.0) == first + 2  # a draw of 0: the first edge with visits
    assert choose_edge(t.tree, 0, 1.0, 0.25) == first + 5  # 3/13 < 0.25 < 8/13
    assert choose_edge(t.tree, 0, 1.0, 0.9999) == first + 7


def test_chapter_06s_root_noise_on_the_god_tree():
    t = compiled_root(GodNode(random_god_opening(("atlas", "minotaur"), random.Random(2))))
    slots, count = empty_god_slots(1, 2, 1), t.tree.edge_count[0, ROOT]
    expand_node(t.tree, 0, ROOT, np.zeros(N_GOD_ACTIONS, np.float32), 0.0)
    slots.slots.noise[0] = np.random.default_rng(0).gamma(0.3, 1.0, N_GOD_ACTIONS)
    add_root_noise(t.tree, slots.slots, 0, 0.25)
    priors = t.tree.edge_prior[0, :count]
    assert np.isclose(priors.sum(), 1) and priors.min() >= 0.75 / count - 1e-12 and priors.std() > 0
    assert slots.slots.noise_used[0]  # chapter 06's add_root_noise marks the draws used


def test_a_game_replays_through_the_readable_rules():
    rng = random.Random(6)
    starts = [(random_god_opening((rng.choice(GODS), rng.choice(GODS)), rng), (0, 0)) for _ in range(12)]
    torch.manual_seed(3)
    evaluate = network_batch_evaluator(GodNet(NetConfig(8, 1)))
    config = GodEngineConfig(simulations=8, dirichlet_fraction=0.25, temperature_decisions=6, games_in_flight=5)
    for game in run_god_games(starts, [evaluate], config, np.random.default_rng(0)):
        node = GodNode(starts[game.game_id][0])
        assert game.start == starts[game.game_id][0]
        for d in range(len(game)):
            assert np.array_equal(game.planes[d], encode_node(node).astype(np.uint8)), (game.game_id, d)
            assert np.array_equal(np.flatnonzero(game.legal[d]), legal_sub_actions(node)), (game.game_id, d)
            assert game.player[d] == node.player and game.policy[d, game.action[d]] > 0
            node = play_sub_action(node, int(game.action[d]))
        readable = GodTreeNode(node)
        assert readable.is_terminal  # the game ended where the readable rules end it: won mid-turn by the mover, ...
        assert game.winner == (node.player if node.steps else 1 - node.player)  # ... or lost by the player to move


def test_the_compiled_search_sees_apollos_win_with_no_cell_left_to_build_on():
    "Apollo swaps up into a corner: the move alone is the turn (chapter 01b), and it is the compiled tree's one edge."
    from santorini_az.gods import parse_god_position
    state = parse_god_position("3240044400000000004400040/1/apollo:B5,E1/mortal:A5,E5")
    found = search_god_nodes([GodNode(state)], uniform_batch_evaluator, simulations=8)[0]
    assert found.actions == legal_sub_actions(GodNode(state)) == [25]  # worker 0 to A5, the whole turn
    assert found.visits == [8] and found.value == pytest.approx(8 / 9)  # each a win (the root counts once, at 0)
