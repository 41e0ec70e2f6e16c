"Properties of the action numbering, the planes and the symmetries over random positions."
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from santorini_az.encoding import (ACTION_PERMUTATIONS, INVERSE_SYMMETRY, N_ACTIONS, action_from_index, action_index,
                                   encode, legal_action_indices, legal_mask, transform_action, transform_planes,
                                   transform_policy, transform_state)
from santorini_az.game import legal_actions
from tests.strategies import played_positions


def test_action_permutations_are_permutations():
    for perm in ACTION_PERMUTATIONS:
        assert sorted(perm) == list(range(N_ACTIONS))


@settings(max_examples=300, deadline=None)
@given(played_positions())
def test_action_index_round_trips(state):
    for action in legal_actions(state):
        index = action_index(state, action)
        assert 0 <= index < N_ACTIONS and action_from_index(state, index) == action
    assert len(set(legal_action_indices(state))) == len(legal_actions(state))


@settings(max_examples=300, deadline=None)
@given(played_positions(), st.integers(0, 7))
def test_legal_set_commutes_with_symmetry(state, s):
    moved = transform_state(state, s)
    assert sorted(transform_action(a, s) for a in legal_action_indices(state)) == legal_action_indices(moved)
    assert np.array_equal(transform_policy(np.array(legal_mask(state)), s), np.array(legal_mask(moved)))


@settings(max_examples=300, deadline=None)
@given(played_positions(), st.integers(0, 7))
def test_symmetries_round_trip(state, s):
    back = INVERSE_SYMMETRY[s]
    assert transform_state(transform_state(state, s), back) == state
    planes = encode(state)
    assert np.array_equal(encode(transform_state(state, s)), transform_planes(planes, s))
    assert np.array_equal(transform_planes(transform_planes(planes, s), back), planes)
    policy = np.random.default_rng(0).random(N_ACTIONS)
    assert np.array_equal(transform_policy(transform_policy(policy, s), back), policy)
    assert transform_policy(list(policy), s) == list(transform_policy(policy, s))


@settings(max_examples=200, deadline=None)
@given(played_positions())
def test_planes_are_one_hot(state):
    x = encode(state)
    assert x.shape == (5, 5, 9) and x.dtype == np.float32
    assert (x[..., :5].sum(-1) == 1).all()
    assert x[..., 5:].sum() == sum(len(w) for w in state.workers)
    for plane, cell in [(5 + w, c) for w, c in enumerate(state.workers[state.player])] + \
                       [(7 + w, c) for w, c in enumerate(state.workers[1 - state.player])]:
        assert x[cell // 5, cell % 5, plane] == 1, (plane, cell)  # planes 5-6: the player to move's workers, 7-8: the other's


@settings(max_examples=300, deadline=None)
@given(played_positions(), st.integers(0, 7))
def test_symmetry_commutes_with_playing_a_move(state, s):
    "apply(t(state), t(action)) == t(apply(state, action)) for every legal action: the rules do not see the symmetry."
    from santorini_az.game import apply, winner
    moved = transform_state(state, s)
    for action in legal_actions(state):
        mapped = action_from_index(moved, transform_action(action_index(state, action), s))
        assert apply(moved, mapped) == transform_state(apply(state, action), s)
    assert winner(moved) == winner(state)
