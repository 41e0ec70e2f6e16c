"""The god encoding (santorini_az.god_encoding): sub-actions round-trip to exactly the legal turns for every god pair,
the planes are sufficient (and each mid-turn plane is needed), the symmetries commute, mortal = chapter 02, and random
games over sub-actions always end with a winner."""
import random
from itertools import product

import numpy as np
import pytest

from santorini_az.encoding import encode, legal_action_indices, transform_planes
from santorini_az.game import random_openings
from santorini_az.god_encoding import (END_ACTION, GOD_ACTION_PERMUTATIONS, GOD_PLANE_NAMES, N_GOD_ACTIONS,
                                       N_GOD_PLANES, GodNode, encode_node, god_legal_mask, legal_sub_actions,
                                       plane_conflict, play_sub_action, prefix_nodes, random_god_game,
                                       random_god_positions, step_of, sub_action, sub_actions_of_action,
                                       sub_actions_of_turn, transform_god_policy, transform_node, turn_tree, walk_turns)
from santorini_az.gods import GODS, from_mortal, god_apply, god_legal_turns, god_start, god_winner, turn_of_action

PAIRS = list(product(GODS, GODS))


def positions_of(gods, seed, turns=16, every=5):
    "Unfinished positions of one random game between `gods`: the start, setup, and a few middle-game ones."
    return random_god_positions(gods, random.Random(seed), turns)[::every]


@pytest.fixture(scope="module")
def all_positions():
    return [state for k, gods in enumerate(PAIRS) for state in positions_of(gods, k)]


@pytest.fixture(scope="module")
def all_nodes(all_positions):
    return [node for state in all_positions for node in prefix_nodes(state)]


def test_numbering_round_trip():
    assert N_GOD_ACTIONS == 126 and END_ACTION == 125
    assert [sub_action(step_of(i)) for i in range(END_ACTION)] == list(range(END_ACTION))


def test_sub_actions_give_exactly_the_legal_turns(all_positions):
    "For every god pair: walking the sub-actions from the empty prefix completes each legal turn once, no dead end."
    pairs_seen = set()
    for state in all_positions:
        walked = walk_turns(state)  # raises on a dead end
        turns = god_legal_turns(state)
        assert sorted(t for _, t in walked) == sorted(turns), state
        assert len({played for played, _ in walked}) == len(walked)
        for played, turn in walked:
            assert played == sub_actions_of_turn(state, turn)
        pairs_seen.add(state.gods)
    assert len(pairs_seen) == 121


def test_playing_the_sub_actions_of_a_turn_is_god_apply(all_positions):
    for state in all_positions[::3]:
        for turn in god_legal_turns(state)[::7]:
            node = GodNode(state)
            for index in sub_actions_of_turn(state, turn): node = play_sub_action(node, index)
            assert node == GodNode(god_apply(state, turn))


def test_planes_are_sufficient(all_nodes):
    assert len({n.state.gods for n in all_nodes}) == 121
    assert plane_conflict(all_nodes) is None


def test_a_plane_dropped_breaks_sufficiency(all_nodes):
    "The test above can fail: without VIA, Artemis's one-step and two-step nodes collide."
    keep = [i for i, name in enumerate(GOD_PLANE_NAMES) if name != "VIA"]
    one, other = plane_conflict(all_nodes, keep)
    assert legal_sub_actions(one) != legal_sub_actions(other)
    assert "artemis" == one.state.gods[one.player]


def test_symmetries_commute(all_nodes):
    rng = random.Random(5)
    for node in rng.sample(all_nodes, 400):
        planes, mask = encode_node(node), god_legal_mask(node)
        for s in range(8):
            turned = transform_node(node, s)
            assert (encode_node(turned) == transform_planes(planes, s)).all()
            assert god_legal_mask(turned) == transform_god_policy(mask, s)
            assert sorted(GOD_ACTION_PERMUTATIONS[s][a] for a in legal_sub_actions(node)) == legal_sub_actions(turned)


def test_start_of_turn_planes_are_chapter_02s(all_positions):
    for state in all_positions[::4]:
        planes = encode_node(GodNode(state))
        assert planes.shape == (5, 5, N_GOD_PLANES)
        assert (planes[..., :9] == encode(state.board)).all()
        assert planes[..., GOD_PLANE_NAMES.index("MOVED"):].sum() == 0


def test_mortal_is_chapter_02():
    "A mortal-vs-mortal node's turns are chapter 02's legal actions, one for one."
    for board in random_openings(300, np.random.default_rng(11), random_moves=20):
        state, actions = from_mortal(board), legal_action_indices(board)
        played = [sub_actions_of_action(board, i) for i in actions]
        assert len(set(played)) == len(actions)
        assert sorted(played) == sorted(sub_actions_of_turn(state, t) for t in god_legal_turns(state))
        assert all(len(p) in (1, 2) and END_ACTION not in p for p in played)


@pytest.mark.parametrize("gods", [("mortal", "mortal"), ("hermes", "artemis"), ("prometheus", "demeter"),
                                  ("minotaur", "apollo"), ("hephaestus", "atlas"), ("pan", "athena")])
def test_random_games_end_with_a_winner(gods):
    "Random sub-actions play whole legal turns, one at a time, until the rules name a winner: the one the game returns."
    rng = random.Random(3)
    for _ in range(12):
        replay = random.Random()
        replay.setstate(rng.getstate())  # the same choices, walked here a sub-action at a time
        winner, played = random_god_game(gods, rng)
        node, turn, count = GodNode(god_start(gods)), (), 0
        while god_winner(node.state) is None:
            before, index = node.state, replay.choice(legal_sub_actions(node))
            node, count = play_sub_action(node, index), count + 1
            turn += () if index == END_ACTION else (step_of(index),)
            if node.state is not before:  # the turn is whole: one of the rules' turns, applied as the rules apply it
                assert turn in turn_tree(before).turns and node.state == god_apply(before, turn), (gods, turn)
                turn = ()
        assert (winner, played) == (god_winner(node.state), count) and count >= 4
