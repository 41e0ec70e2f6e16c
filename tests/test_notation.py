"Notation round trips and the errors bad input gets."
import pytest
from hypothesis import given, settings

from santorini_az.game import CELLS, DOME, STEPS, Move, Placement, legal_actions
from santorini_az.notation import (NotationError, format_action, format_position, parse_action, parse_cell, parse_position,
                                   why_illegal)
from tests.strategies import played_positions


@settings(max_examples=400, deadline=None)
@given(played_positions())
def test_positions_round_trip(state):
    text = format_position(state)
    assert parse_position(text) == state
    assert format_position(parse_position(text)) == text


@settings(max_examples=200, deadline=None)
@given(played_positions())
def test_actions_round_trip(state):
    for action in legal_actions(state):
        assert parse_action(state, format_action(state, action)) == action


@pytest.mark.parametrize("text, message", [
    ("", "not a position"),
    ("startpos/1", "not a position"),
    ("000000000000000000000000/1//", "25 digits"),
    ("0000000000000000000000005/1//", "25 digits"),
    ("0000000000000000000000000/0//", "must be 1 or 2"),
    ("0000000000000000000000000/1/A1,B1,C1/", "at most 2 workers"),
    ("0000000000000000000000000/1/A6/", "not a cell"),
    ("0000000000000000000000000/2//", "cannot be to move"),
    ("4000000000000000000000000/1/A5,B5/C1,D1", "dome"),
])
def test_bad_positions_name_the_problem(text, message):
    with pytest.raises(NotationError, match=message):
        parse_position(text)


@pytest.mark.parametrize("text, message", [
    ("A1>A2", r"FROM>TO\^BUILD"), ("Q1>A2^A3", "not a cell"), ("E1>D1^E1", "no worker on E1"),
    ("C3>D4^C3", "not a legal move"), ("C3", "not a legal placement"),
])
def test_bad_moves_name_the_problem(text, message):
    state = parse_position("0000000000000000000000000/1/C3,D4/B2,D2")
    with pytest.raises(NotationError, match=message):
        parse_action(state, text)


def _check_reason(state, action, reason):
    "The rule `why_illegal` names is broken, read back from its words and the board."
    cells = [parse_cell(word.strip(":,")) for word in reason.split() if len(word.strip(":,")) == 2
             and word[0] in "ABCDE" and word[1] in "12345"]
    taken = {c for workers in state.workers for c in workers}
    here = state.workers[state.player][action.worker] if isinstance(action, Move) else None
    if reason.endswith("has a dome"): assert state.heights[cells[0]] == DOME
    elif "is taken" in reason or "is occupied" in reason:
        assert cells[0] in taken - ({here} if cells[0] == getattr(action, "build", None) else set())
    elif "is not next to" in reason: assert cells[0] not in STEPS[cells[1]]
    elif "climbs one level at most" in reason: assert state.heights[action.to] > state.heights[here] + 1
    elif "where it stands" in reason: assert action.build == action.to
    elif "it must move" in reason: assert action.to == here
    elif "is at level 3" in reason: assert state.heights[cells[0]] == 3
    else: assert reason in ("every worker is placed: a turn is a move and a build, FROM>TO^BUILD",
                            "the workers are still being placed", "the game is over"), reason


@settings(max_examples=150, deadline=None)
@given(played_positions())
def test_every_illegal_action_is_told_a_rule_it_breaks(state):
    "Every placement and move that the rules refuse gets a reason, and the reason is true of the board."
    legal = set(legal_actions(state))
    actions = [Placement(c) for c in range(CELLS)] + [Move(w, to, build) for w in range(len(state.workers[state.player]))
                                                      for to in range(CELLS) for build in range(CELLS)]
    for action in actions:
        if action not in legal: _check_reason(state, action, why_illegal(state, action))
