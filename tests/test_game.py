"Property tests of the rules: random games never reach an illegal state."
from hypothesis import given, settings

from santorini_az.game import (CELLS, DOME, WIN_LEVEL, Move, Placement, State, in_setup, is_over, legal_actions,
                               winner)
from tests.strategies import games


def check_invariants(before: State, action, after: State):
    # The constructor validates every position (distinct cells, no worker on a dome, setup order), so building
    # `after` already proved those; here we check what an action may change.
    assert sum(after.heights) >= sum(before.heights)
    changed = [c for c in range(CELLS) if after.heights[c] != before.heights[c]]
    if isinstance(action, Placement):
        assert changed == [] and len(after.workers[before.player]) == len(before.workers[before.player]) + 1
        return
    mover = before.player
    assert after.player == 1 - mover
    assert after.workers[1 - mover] == before.workers[1 - mover], "the opponent's workers never move"
    here = before.workers[mover][action.worker]
    assert after.workers[mover][1 - action.worker] == before.workers[mover][1 - action.worker], "worker identity"
    assert before.heights[action.to] <= before.heights[here] + 1 and before.heights[action.to] != DOME
    if before.heights[action.to] == WIN_LEVEL:
        assert changed == [] and winner(after) == mover
    else:
        assert changed == [action.build] and after.heights[action.build] == before.heights[action.build] + 1


@settings(max_examples=300, deadline=None)
@given(games())
def test_random_games_stay_legal(states):
    for before, after in zip(states, states[1:]):
        action = next(a for a in legal_actions(before) if before.apply(a) == after)
        check_invariants(before, action, after)
    last = states[-1]
    if is_over(last):
        assert winner(last) == 1 - last.player and legal_actions(last) == []
        assert not in_setup(last)


@settings(max_examples=300, deadline=None)
@given(games())
def test_game_ends_only_by_climb_or_blocked(states):
    for state in states[:-1]:
        assert not is_over(state)
    last = states[-1]
    if legal_actions(last) == []:
        assert is_over(last) and winner(last) == 1 - last.player


def test_every_legal_move_lands_in_a_valid_state():
    # A dense, hand-built middle game: every action must construct a valid State (the constructor checks it).
    heights = tuple([0, 1, 2, 3, DOME] * 5)
    state = State(heights, ((1, 7), (13, 22)), 0)
    for action in legal_actions(state):
        assert isinstance(action, Move)
        state.apply(action)
