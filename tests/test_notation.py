"Notation round trips and the errors bad input gets."
import pytest
from hypothesis import given, settings

from santorini_az.game import legal_actions
from santorini_az.notation import (NotationError, format_action, format_position, parse_action, parse_position)
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
