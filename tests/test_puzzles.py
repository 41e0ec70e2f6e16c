"""The fixed puzzle set is right by the rules, and its scoring counts what it says."""
import numpy as np
import pytest

from santorini_az.encoding import N_ACTIONS, action_index, legal_action_indices
from santorini_az.game import State, apply, in_setup, is_over, legal_actions, winner
from santorini_az.puzzles import (KINDS, PUZZLE_LINES, PUZZLES, Puzzle, chance_accuracy, puzzle_accuracy,
                                  puzzle_from_line)


# The definitions again, written with nothing but the game's own `winner`, independently of the module's shortcuts.
def wins_now(state):
    return {a for a in legal_actions(state) if winner(apply(state, a)) == state.player}

def forced_wins(state):
    return {a for a in legal_actions(state) if winner(apply(state, a)) is None
            and all(wins_now(apply(apply(state, a), b)) for b in legal_actions(apply(state, a)))}

def blocks(state):
    return {a for a in legal_actions(state)
            if winner(apply(state, a)) is None and not wins_now(apply(state, a))}

def threat(state):
    return bool(wins_now(State(state.heights, state.workers, 1 - state.player)))

def indices(state, actions): return tuple(sorted(action_index(state, a) for a in actions))


def test_the_set_is_balanced_and_distinct():
    assert len(PUZZLES) == len(PUZZLE_LINES) >= 60
    counts = {k: sum(p.kind == k for p in PUZZLES) for k in KINDS}
    assert min(counts.values()) >= 20 and max(counts.values()) - min(counts.values()) <= 5, counts
    assert len({p.position for p in PUZZLES}) == len(PUZZLES)
    assert [p.line() for p in PUZZLES] == PUZZLE_LINES


@pytest.mark.slow
@pytest.mark.parametrize("line", PUZZLE_LINES)
def test_every_puzzle_is_solved_right(line):
    puzzle = puzzle_from_line(line)
    state = puzzle.state
    assert not in_setup(state) and not is_over(state)
    legal = set(legal_action_indices(state))
    assert set(puzzle.answers) <= legal and puzzle.answers
    now = wins_now(state)
    if puzzle.kind == "win1":
        assert indices(state, now) == puzzle.answers
        return
    assert not now, "a position with a win in 1 is a win-in-1 puzzle"
    forced = forced_wins(state)
    if puzzle.kind == "win3":
        assert indices(state, forced) == puzzle.answers
        return
    assert puzzle.kind == "block" and not forced and threat(state)
    good = blocks(state)
    assert indices(state, good) == puzzle.answers and len(good) <= len(legal) // 2


def test_accuracy_counts_the_argmax_over_legal_actions():
    states = [p.state for p in PUZZLES]
    def pick(choose):
        def evaluate(planes):
            logits = np.full((len(planes), N_ACTIONS), -5.0, np.float32)
            for i, p in enumerate(PUZZLES): logits[i, choose(p, states[i])] = 10.0
            logits[:, 0] = 50.0  # an illegal action with the highest logit must be ignored (0 is a placement)
            return logits, np.zeros(len(planes), np.float32)
        return evaluate
    right = puzzle_accuracy(pick(lambda p, s: p.answers[0]), PUZZLES)
    assert right == {k: 1.0 for k in KINDS}
    wrong = puzzle_accuracy(pick(lambda p, s: next(i for i in legal_action_indices(s) if i not in p.answers)), PUZZLES)
    assert wrong == {k: 0.0 for k in KINDS}


def test_chance_accuracy_is_the_mean_share_of_right_answers():
    chance = chance_accuracy(PUZZLES)
    for kind in KINDS:
        shares = [len(p.answers) / len(legal_action_indices(p.state)) for p in PUZZLES if p.kind == kind]
        assert chance[kind] == pytest.approx(np.mean(shares))
        assert 0 < chance[kind] < 0.5
