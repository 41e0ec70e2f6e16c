"""The readable search over god nodes (santorini_az.god_search): visits add up, a mid-turn edge keeps its sign, the
search finds wins in one that need a power and blocks a threat, its turns are legal for every god, and it beats the
random player."""
import random

import pytest

import santorini_az.god_search as god_search_module
from santorini_az.god_encoding import GodNode, legal_sub_actions, play_sub_action
from santorini_az.god_search import (GodTreeNode, god_against_mortal, god_search, god_search_player,
                                     has_won_mid_turn, play_god_match, random_god_opening, random_god_player,
                                     terminal_value, turn_played)
from santorini_az.gods import GODS, format_turn, god_apply, god_legal_turns, god_winner, move, parse_god_position
from santorini_az.mcts import SearchConfig
from santorini_az.notation import parse_cell


def levels(**cells_at_level) -> str:
    "25 level digits with the named cells raised: levels(l1='C3', l4='B2') puts C3 on level 1 and domes B2."
    heights = [0] * 25
    for name, cells in cells_at_level.items():
        for cell in cells.split(): heights[parse_cell(cell)] = int(name[1:])
    return "".join(map(str, heights))


ARTEMIS = parse_god_position(levels(l1="C3", l2="C4", l3="C5") + "/1/artemis:C3,A1/mortal:E1,E2")
PAN = parse_god_position(levels(l2="C3", l1="B2 B3 B4 C4 D4 D3 C2") + "/1/pan:C3,A5/mortal:E5,A1")
THREAT = parse_god_position(levels(l2="C3", l3="D4") + "/1/mortal:E3,A5/mortal:C3,A1")
TWO_THREATS = parse_god_position(levels(l2="C3", l3="D4 D2") + "/1/demeter:E3,A5/mortal:C3,A1")


def push_position(god):
    return parse_god_position(levels(l2="B3", l3="C3") + f"/1/{god}:B3,A1/mortal:C3,E1")


def half_evaluator(position):
    return [0.0] * 126, 0.5


def wins_at_once(state) -> bool:
    "True if the player to move in `state` has a winning turn."
    return any(god_winner(god_apply(state, turn)) == state.player for turn in god_legal_turns(state))


@pytest.mark.parametrize("simulations", [1, 7, 64])
def test_visits_add_up_to_the_simulations(simulations):
    root = god_search(GodNode(ARTEMIS), config=SearchConfig(simulations=simulations))
    assert sum(root.visits) == simulations and root.visit_count() == simulations + 1


def test_a_mid_turn_edge_keeps_its_sign_and_a_turn_ending_edge_flips_it():
    one = SearchConfig(simulations=1)
    start = god_search(GodNode(ARTEMIS), half_evaluator, one)  # a move: the same player decides next
    assert start.value_sums[start.visits.index(1)] == 0.5
    two_steps = GodNode(ARTEMIS, (move(0, parse_cell("B4")), move(0, parse_cell("A5"))))  # only builds are left
    last = god_search(two_steps, half_evaluator, one)
    assert last.value_sums[last.visits.index(1)] == -0.5


def test_negating_every_edge_is_caught(monkeypatch):
    def negate_every_level(path, leaf_player, value):
        for node, edge in reversed(path):
            value = -value
            node.visits[edge] += 1
            node.value_sums[edge] += value
    monkeypatch.setattr(god_search_module, "backup", negate_every_level)
    start = god_search(GodNode(ARTEMIS), half_evaluator, SearchConfig(simulations=1))
    assert start.value_sums[start.visits.index(1)] != 0.5


def test_terminal_nodes():
    climbed = GodNode(ARTEMIS, (move(0, parse_cell("C4")), move(0, parse_cell("C5"))))
    assert has_won_mid_turn(climbed) and not has_won_mid_turn(GodNode(ARTEMIS, climbed.steps[:1]))
    assert GodTreeNode(climbed).is_terminal and terminal_value(GodTreeNode(climbed)) == 1.0
    won = play_sub_action(climbed, legal_sub_actions(climbed)[0])
    assert won.player == 1 and terminal_value(GodTreeNode(won)) == -1.0
    assert not GodTreeNode(GodNode(ARTEMIS)).is_terminal


def test_turn_played():
    assert turn_played(GodNode(ARTEMIS), 25 + parse_cell("C4")) is None
    climbed = GodNode(ARTEMIS, (move(0, parse_cell("C4")), move(0, parse_cell("C5"))))
    assert turn_played(climbed, legal_sub_actions(climbed)[0])[:2] == climbed.steps


@pytest.mark.parametrize("state, prefix", [(ARTEMIS, "C3>C4>C5^"), (PAN, "C3>D2^"),
                                           (push_position("minotaur"), "B3>C3^"), (push_position("apollo"), "B3>C3^")])
def test_wins_in_one_with_a_power(state, prefix):
    turn = god_search_player(64)(state)
    assert format_turn(state, turn).startswith(prefix)
    assert god_winner(god_apply(state, turn)) == 0


def test_a_mortal_cannot_push():
    state = push_position("mortal")
    assert "B3>C3" not in format_turn(state, god_search_player(64)(state))


def test_blocks_a_threat():
    assert wins_at_once(parse_god_position(levels(l2="C3", l3="D4") + "/2/mortal:E3,A5/mortal:C3,A1"))  # the threat
    assert not wins_at_once(god_apply(THREAT, god_search_player(64)(THREAT)))


def test_demeter_blocks_two_threats_with_a_deep_enough_search():
    assert format_turn(TWO_THREATS, god_search_player(512)(TWO_THREATS)) == "E3>D3^D4^D2"
    assert wins_at_once(god_apply(TWO_THREATS, god_search_player(64)(TWO_THREATS)))  # 64: too few for four decisions


@pytest.mark.parametrize("god", GODS)
def test_search_and_random_turns_are_legal(god):
    rng = random.Random(GODS.index(god))
    state = random_god_opening((god, "mortal"), rng)
    for _ in range(3):
        if god_winner(state) is not None: break
        assert (turn := god_search_player(8)(state)) in god_legal_turns(state)
        state = god_apply(state, turn)
        if god_winner(state) is not None: break
        assert (turn := random_god_player(state, rng)) in god_legal_turns(state)
        state = god_apply(state, turn)


def test_match_points_and_errors():
    assert sum(play_god_match(random_god_player, random_god_player, ("pan", "atlas"), 6, seed=1)) == 6
    with pytest.raises(ValueError, match="even"):
        play_god_match(random_god_player, random_god_player, ("pan", "atlas"), 3)
    assert god_against_mortal("mortal", 16, 4, seed=0) == 2  # the same deterministic player on both sides


@pytest.mark.parametrize("gods", [("mortal", "mortal"), ("artemis", "minotaur"), ("prometheus", "pan")])
def test_search_beats_random(gods):
    search_points, random_points = play_god_match(god_search_player(64), random_god_player, gods, 8, seed=2)
    assert search_points >= 7


@pytest.mark.parametrize("seed", range(3))
def test_node_winner_is_god_winner_along_random_games(seed):
    "The search's game-over test reads the cached turn tree: it must say what the rules say, at every turn of a game."
    rng = random.Random(seed)
    for _ in range(10):
        state = god_search_module.random_god_opening((rng.choice(GODS), rng.choice(GODS)), rng)
        while True:
            assert god_search_module.node_winner(state) == god_winner(state)
            if god_winner(state) is not None: break
            state = god_apply(state, rng.choice(god_legal_turns(state)))
