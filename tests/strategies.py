"Hypothesis strategies shared by the test suites: random positions reached by legal play."
from hypothesis import strategies as st

from santorini_az.game import initial_state, legal_actions


@st.composite
def played_positions(draw, max_plies=60):
    "A position reached from the start by up to `max_plies` random legal actions (possibly a finished game)."
    state = initial_state()
    for _ in range(draw(st.integers(0, max_plies))):
        actions = legal_actions(state)
        if not actions:
            break
        state = state.apply(actions[draw(st.integers(0, len(actions) - 1))])
    return state


@st.composite
def games(draw, max_plies=120):
    "A list of the positions of one random game, start first."
    states = [initial_state()]
    for _ in range(max_plies):
        actions = legal_actions(states[-1])
        if not actions:
            break
        states.append(states[-1].apply(actions[draw(st.integers(0, len(actions) - 1))]))
    return states
