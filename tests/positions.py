"Positions shared by the rule tests: hand-built corner cases of the mortal game, and random god games."
import random

from santorini_az.gods import GodState, god_apply, god_legal_turns, god_start

HAND_BUILT = [
    # player 1 to move with a worker on level 2 beside a level-3 tower: winning moves, each with its 8 build squares
    "0000002300000000000000000/1/B4,A1/C5,E1",
    # domes ring player 2's worker in the corner, one step up is its only way out; the other worker moves freely
    "0400041000000000000000000/2/C3,D3/A5,E1",
    # player 2 just climbed onto level 3: the game is over
    "3000000000000000000000000/1/D4,E5/A5,E1",
    # player 1 places its second worker beside a level-3 tower and a level-2 block: anywhere free but on the tower
    "0000000300000200000000000/1/C3/",
]


def random_god_game(gods, rng: random.Random, turns: int = 40) -> list[GodState]:
    "The positions of a random game between `gods` from the empty board: at most `turns` turns, the end included."
    state, seen = god_start(gods), []
    for _ in range(turns):
        seen.append(state)
        legal = god_legal_turns(state)
        if not legal: break
        state = god_apply(state, rng.choice(legal))
    return seen + [state]
