"Perft from the start: the standard proof of a move generator."
import pytest

from santorini_az.game import initial_state, perft

KNOWN = {1: 25, 2: 600, 3: 13_800, 4: 303_600, 5: 17_252_928}


@pytest.mark.parametrize("depth", [1, 2, 3, 4, 5])
def test_perft_from_start(depth):
    assert perft(initial_state(), depth) == KNOWN[depth]


# --- Mid-game positions, cross-checked by a counter written independently of santorini_az.game -------------------
# It works on a 5x5 grid of levels with (row, col) coordinates and make/unmake, and shares nothing with the package
# but the position it is given. Conventions it must agree on: a move that climbs onto level 3 wins at once and builds
# nothing, yet each of its build squares is a distinct action (the action is (worker, destination, build)); a
# player with no move has lost; workers are placed only on levels below 3.

import numpy as np

from santorini_az.engine import fast_perft
from santorini_az.game import State, legal_actions, random_openings
from santorini_az.notation import parse_position
from tests.positions import HAND_BUILT


def independent_perft(state: State, depth: int) -> int:
    grid = np.array(state.heights).reshape(5, 5)
    workers = [[divmod(c, 5) for c in state.workers[p]] for p in (0, 1)]

    def neighbours(r, c):
        for dr in (-1, 0, 1):
            for dc in (-1, 0, 1):
                if (dr or dc) and 0 <= r + dr < 5 and 0 <= c + dc < 5:
                    yield r + dr, c + dc

    def count(player, depth, just_climbed):
        if just_climbed: return 0 if depth else 1  # the game ended on the last action
        if depth == 0: return 1
        taken = {w for p in workers for w in p}
        if len(workers[player]) < 2:  # setup
            total = 0
            for r in range(5):
                for c in range(5):
                    if (r, c) in taken or grid[r, c] >= 3: continue
                    workers[player].append((r, c))
                    nxt = player if len(workers[player]) < 2 else 1 - player
                    total += count(nxt, depth - 1, False)
                    workers[player].pop()
            return total
        total = 0
        for i, (r, c) in enumerate(list(workers[player])):
            for to in neighbours(r, c):
                if to in taken or grid[to] == 4 or grid[to] > grid[r, c] + 1: continue
                workers[player][i] = to
                for build in neighbours(*to):
                    if grid[build] == 4 or (build in taken and build != (r, c)): continue
                    if grid[to] == 3:
                        total += count(1 - player, depth - 1, True)
                        continue
                    grid[build] += 1
                    total += count(1 - player, depth - 1, False)
                    grid[build] -= 1
                workers[player][i] = (r, c)
        return total  # no move at all: the player to move has lost, no sequence continues

    climbed = any(state.heights[c] == 3 for c in state.workers[1 - state.player])
    return count(state.player, depth, climbed)


def late_positions(n, seed, min_domes=1):
    "Positions from random games that have domes, level-3 towers and a worker on level 2 (threats to climb)."
    rng, out = np.random.default_rng(seed), []
    while len(out) < n:
        for state in random_openings(1, rng, random_moves=int(rng.integers(25, 45)), distinct=False):
            h = state.heights
            if sum(x == 4 for x in h) >= min_domes and 3 in h and any(h[c] == 2 for w in state.workers for c in w):
                out.append(state)
    return out


@pytest.mark.parametrize("text", HAND_BUILT)
def test_hand_built_positions_agree(text):
    state = parse_position(text)
    for depth in (1, 2, 3):
        expected = independent_perft(state, depth)
        assert perft(state, depth) == expected == fast_perft(state, depth), (text, depth)


def test_mid_game_perft_with_domes_and_towers_agrees_with_an_independent_count():
    for state in late_positions(6, seed=11):
        for depth in (1, 2):
            expected = independent_perft(state, depth)
            assert perft(state, depth) == expected == fast_perft(state, depth), (state, depth)
        assert len(legal_actions(state)) == independent_perft(state, 1)


@pytest.mark.slow
def test_mid_game_perft_depth_3():
    for state in late_positions(3, seed=12):
        assert perft(state, 3) == independent_perft(state, 3) == fast_perft(state, 3)
