"""God powers (santorini_az.gods): an independent brute force agrees turn for turn, mortal against mortal is chapter
01, every rule detail on a hand-built position, and the text forms read back."""
import json
import re
import random
from pathlib import Path

import numpy as np
import pytest

from santorini_az.game import DOME, State, has_climbed, in_setup, initial_state, legal_actions, perft, random_openings
from santorini_az.gods import (GODS, GodState, format_god_position, format_turn, from_mortal, god_apply,
                               god_legal_turns, god_perft, god_start, god_winner, parse_god_position, parse_turn,
                               play_turns, turn_of_action)
from santorini_az.notation import NotationError, parse_position
from tests.positions import HAND_BUILT, random_god_game

# --- An independent brute force, written from the rule text ---------------------------------------------------------
# It shares only the data types (GodState, the mortal State) with santorini_az.gods: it works on (row, col) squares,
# tries every square of the board for every step of every shape a god's turn can take, checks each step against
# the rule as the rule book states it, and plays the steps itself to get the position after the turn.

SQUARES = [(r, c) for r in range(5) for c in range(5)]
SHAPES = {  # the kinds of steps a turn may have, from each god's card; every god may also take the mortal turn
    "artemis": ["MMB"], "atlas": ["MD"], "demeter": ["MBB"], "hephaestus": ["MBB"], "prometheus": ["BMB"],
}


def square(cell): return divmod(cell, 5)
def number(sq): return sq[0] * 5 + sq[1]
def touching(a, b): return a != b and max(abs(a[0] - b[0]), abs(a[1] - b[1])) == 1


def brute_turns(state: GodState) -> dict:
    "Every legal turn of `state`, mapped to the GodState it leads to."
    board, me = state.board, state.player
    if state.won: return {}
    if len(board.workers[me]) < 2:  # setup: any square with no worker, below level 3
        out = {}
        for sq in SQUARES:
            if number(sq) in board.workers[0] + board.workers[1] or board.heights[number(sq)] >= 3: continue
            workers = list(map(list, board.workers))
            workers[me].append(number(sq))
            nxt = me if len(workers[me]) < 2 else 1 - me
            out[(("place", number(sq), None),)] = GodState(State(board.heights, tuple(map(tuple, workers)), nxt),
                                                           state.gods, False, False)
        return out
    god = state.gods[me]
    level = {sq: board.heights[number(sq)] for sq in SQUARES}
    mine = [square(c) for c in board.workers[me]]
    theirs = [square(c) for c in board.workers[1 - me]]
    out = {}
    for shape in ["MB"] + SHAPES.get(god, []):
        for worker in (0, 1):
            explore(shape, god, state.athena_moved_up, dict(level), list(mine), list(theirs), worker, [], False,
                    False, out, state)
    if god == "hermes":
        hermes(state, level, mine, theirs, out)
    return out


def explore(shape, god, athena, level, mine, theirs, worker, steps, won, up, out, state):
    "Extend the turn `steps` of `worker` by the next kind in `shape`, trying every square."
    done = len(steps)
    if done == len(shape):
        record(state, level, mine, theirs, steps, won, up, out, god)
        return
    kind = shape[done]
    start = square(state.board.workers[state.player][worker])
    if won and kind != "M" and not any(touching(mine[worker], sq) and level[sq] != 4 and sq not in mine + theirs
                                       for sq in SQUARES):  # a win is a win: with no square to name a build on, the
        record(state, level, mine, theirs, steps, won, up, out, god)  # move alone (Apollo's swap into a corner)
        return
    for sq in SQUARES:
        here = mine[worker]
        if kind == "M":
            if won or not touching(here, sq) or level[sq] == 4: continue
            rise = level[sq] - level[here]
            prometheus_built = god == "prometheus" and done == 1
            if rise > 1 or (rise > 0 and (athena or prometheus_built)): continue
            if sq in mine: continue
            if done == 1 and god == "artemis" and (sq == start or shape != "MMB"): continue
            new_theirs = list(theirs)
            if sq in theirs:
                if god == "apollo":
                    new_theirs[theirs.index(sq)] = here
                elif god == "minotaur":
                    behind = (2 * sq[0] - here[0], 2 * sq[1] - here[1])
                    if behind not in level or level[behind] == 4 or behind in mine or behind in theirs: continue
                    new_theirs[theirs.index(sq)] = behind
                else:
                    continue
            new_mine = list(mine)
            new_mine[worker] = sq
            wins = (level[sq] == 3 and level[here] < 3) or (god == "pan" and level[here] - level[sq] >= 2)
            if wins and done + 2 < len(shape): continue  # the game ends: only the one (unmade) build may follow
            explore(shape, god, athena, level, new_mine, new_theirs, worker, steps + [("move", number(sq), worker)],
                    wins, up or rise > 0, out, state)
        else:
            if not touching(here, sq) or level[sq] == 4 or sq in mine or sq in theirs: continue
            builds_before = [s for s in steps if s[0] == "build"]
            moves_before = [s for s in steps if s[0] == "move"]
            if kind == "D" and (level[sq] >= 3 or won): continue  # after a win: one plain build, not made
            if kind == "B" and len(builds_before) == 1 and moves_before and god in ("demeter", "hephaestus"):
                same = builds_before[0][1] == number(sq)
                if god == "demeter" and same: continue
                if god == "hephaestus" and (not same or level[sq] >= 4 or level[sq] == 3): continue
            new_level = dict(level)
            if not won:
                new_level[sq] = 4 if kind == "D" else level[sq] + 1
            step = ("dome" if kind == "D" else "build", number(sq), None)
            if won and done != len(shape) - 1: continue
            explore(shape, god, athena, new_level, mine, theirs, worker, steps + [step], won, up, out, state)


def record(state, level, mine, theirs, steps, won, up, out, god):
    me = state.player
    heights = tuple(level[sq] for sq in SQUARES)
    workers = [None, None]
    workers[me], workers[1 - me] = tuple(map(number, mine)), tuple(map(number, theirs))
    out[tuple(steps)] = GodState(State(heights, tuple(workers), 1 - me), state.gods, god == "athena" and up, won)


def hermes(state, level, mine, theirs, out):
    "Hermes: each worker ends anywhere it can walk to along its own level, one worker at a time; then either builds."
    reach = {tuple(mine)}
    grew = True
    while grew:  # grow the set of reachable pairs until nothing new appears
        grew = False
        for pair in list(reach):
            for w in (0, 1):
                for sq in SQUARES:
                    if touching(pair[w], sq) and level[sq] == level[pair[w]] and sq not in pair and sq not in theirs:
                        new = list(pair)
                        new[w] = sq
                        if tuple(new) not in reach:
                            reach.add(tuple(new))
                            grew = True
    for pair in reach:
        steps = [("move", number(pair[w]), w) for w in (0, 1) if pair[w] != mine[w]]
        for sq in SQUARES:
            if level[sq] == 4 or sq in pair or sq in theirs or not (touching(pair[0], sq) or touching(pair[1], sq)):
                continue
            new_level = dict(level)
            new_level[sq] += 1
            record(state, new_level, list(pair), theirs, steps + [("build", number(sq), None)], False, False, out,
                   "hermes")


def assert_same_turns(state: GodState):
    "The generator and the brute force list the same turns, each once, and each leads to the same position."
    turns, expected = god_legal_turns(state), brute_turns(state)
    assert len(turns) == len(set(turns)), format_god_position(state)
    assert set(turns) == set(expected), (format_god_position(state), set(turns) ^ set(expected))
    for turn in turns:
        assert god_apply(state, turn) == expected[turn], (format_god_position(state), format_turn(state, turn))
    return expected


SETUP = play_turns(god_start(), "C3 D4 B2 D2").board
MIDDLES = random_openings(2, np.random.default_rng(3), random_moves=14)
PAIRS = [(a, b) for a in GODS for b in GODS]


@pytest.mark.parametrize("gods", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_every_pair_agrees_with_the_brute_force_at_depth_1(gods):
    rng = random.Random(GODS.index(gods[0]) * 11 + GODS.index(gods[1]))
    game = random_god_game(gods, rng, turns=18)
    for state in [god_start(gods), *game[4::4]]:  # the start, and positions of a random game (Athena's marks too)
        assert_same_turns(state)


@pytest.mark.parametrize("god", GODS)
def test_each_god_agrees_after_setup_and_in_the_middle_game(god):
    # without Athena's mark only the mover's god counts at depth 1, so one opponent will do
    for board in (SETUP, *MIDDLES):
        assert_same_turns(from_mortal(board, (god, "mortal")))


def late_position():
    "A late position of a seeded random mortal game: few turns each, so depth 2 is quick for every pair."
    return random_openings(1, np.random.default_rng(0), random_moves=24)[0]


def test_every_pair_agrees_at_depth_2_from_a_late_position():
    for gods in PAIRS:
        state = from_mortal(late_position(), gods)
        for child in assert_same_turns(state).values():
            assert_same_turns(child)


@pytest.mark.parametrize("god", [g for g in GODS[1:] if g != "hermes"])  # Hermes: 4,198 turns after setup; the
def test_each_god_against_a_mortal_agrees_at_depth_2_after_setup(god):     # random games below cover him
    for child in assert_same_turns(from_mortal(SETUP, (god, "mortal"))).values():
        assert_same_turns(child)


def test_random_games_between_random_gods_agree_everywhere():
    rng = random.Random(2026)
    for _ in range(15):
        gods = (rng.choice(GODS), rng.choice(GODS))
        for state in random_god_game(gods, rng, turns=60):
            assert_same_turns(state)
            assert (god_winner(state) is not None) == (state.won or not god_legal_turns(state) and
                                                        len(state.board.workers[state.player]) == 2)


# --- Mortal against mortal is chapter 01 ----------------------------------------------------------------------------

@pytest.mark.parametrize("depth", [1, 2, 3, 4])
def test_mortal_perft_from_the_start_is_chapter_01s(depth):
    assert god_perft(god_start(), depth) == perft(initial_state(), depth)


@pytest.mark.parametrize("text", HAND_BUILT)
def test_mortal_perft_on_hand_built_positions_is_chapter_01s(text):
    state = parse_position(text)
    for depth in (1, 2, 3):
        assert god_perft(from_mortal(state), depth) == perft(state, depth), (text, depth)


def test_mortal_turns_are_chapter_01s_actions_one_for_one():
    for state in random_openings(30, np.random.default_rng(5), random_moves=20) + [SETUP, *MIDDLES]:
        assert god_legal_turns(from_mortal(state)) == [turn_of_action(a) for a in legal_actions(state)]
        assert god_perft(from_mortal(state), 2) == perft(state, 2)


# --- Every rule detail on a hand-built position ---------------------------------------------------------------------
# (position, turn, legal?, won?) with player 1 to move; levels A5..E1, row by row.
FLAT = "0000000000000000000000000"
CASES = [
    # Apollo: swap with an opponent one level up; the victim takes the cell Apollo left; not two levels up
    ("0000000200001000300000000/1/apollo:C3,E1/mortal:C4,B2", "C3>C4^D5", True, False),
    ("0000000200001000300000000/1/apollo:C3,E1/mortal:C4,B2", "C3>B2^A2", False, False),
    ("0000000200001000300000000/1/apollo:C3,E1/mortal:C4,B2", "C3>C4^C3", False, False),  # C3 now taken
    ("0000000200001000300000000/1/mortal:C3,E1/mortal:C4,B2", "C3>C4^D5", False, False),  # no swap for a mortal
    # Artemis: two steps, not back to the start; a win on either step, and the first ends the turn
    ("0000000030002020100000000/1/artemis:B2,E3/mortal:A5,E5", "B2>C3>D4^D5", True, True),
    ("0000000030002020100000000/1/artemis:B2,E3/mortal:A5,E5", "E3>D4^C5", True, True),
    ("0000000030002020100000000/1/artemis:B2,E3/mortal:A5,E5", "E3>D4>C5^C4", False, False),
    ("0000000030002020100000000/1/artemis:B2,E3/mortal:A5,E5", "B2>B3>B2^A2", False, False),
    ("0000000030002020100000000/1/artemis:B2,E3/mortal:A5,E5", "B2>B3>A3^A2", True, False),
    # Athena's mark: no climbing for the opponent; without it, climbing
    ("0000000000010100000000000/2/athena:B3,A5/mortal:D2,E5/athena-up", "D2>D3^D4", False, False),
    ("0000000000010100000000000/2/athena:B3,A5/mortal:D2,E5/athena-up", "D2>E2^E1", True, False),
    ("0000000000010100000000000/2/athena:B3,A5/mortal:D2,E5", "D2>D3^D4", True, False),
    # Atlas: a dome on level 0; on level 3 the block is the dome, no second way to write it
    ("0000000300000000000000000/1/atlas:C3,E1/mortal:A5,E5", "C3>D3@D4", True, False),
    ("0000000300000000000000000/1/atlas:C3,E1/mortal:A5,E5", "C3>D3@C4", False, False),
    ("0000000300000000000000000/1/mortal:C3,E1/mortal:A5,E5", "C3>D3@D4", False, False),
    # Demeter: a second build, not on the same cell
    (f"{FLAT}/1/demeter:C3,E1/mortal:A5,E5", "C3>C4^D5^B5", True, False),
    (f"{FLAT}/1/demeter:C3,E1/mortal:A5,E5", "C3>C4^D5^D5", False, False),
    # Hephaestus: a second block on the first, never a dome
    ("0000001200000000000000000/1/hephaestus:C3,E1/mortal:A5,E5", "C3>B3^A4^A4", True, False),
    ("0000001200000000000000000/1/hephaestus:C3,E1/mortal:A5,E5", "C3>B3^B4^B4", True, False),
    ("0000001200000000000000000/1/hephaestus:C3,E1/mortal:A5,E5", "C3>B3^C4^C4", False, False),
    ("0000001200000000000000000/1/hephaestus:C3,E1/mortal:A5,E5", "C3>B3^A4^B4", False, False),
    # Hermes: no move at all; walks along a level, both workers; never a level change in a walk
    ("0000001110012100111000000/1/hermes:B4,D2/mortal:A5,E1", "^B5", True, False),
    ("0000001110012100111000000/1/hermes:B4,D2/mortal:A5,E1", "B4>D4,D2>B2^A1", True, False),
    ("0000001110012100111000000/1/hermes:B4,D2/mortal:A5,E1", "B4>C3^C4", True, False),  # the ordinary climb
    ("0000001110012100111000000/1/hermes:B4,D2/mortal:A5,E1", "B4>A5^A4", False, False),
    ("0000001110012100111000000/1/hermes:B4,D2/mortal:A5,E1", "B4>E4^E5", False, False),  # level 0: off the ring
    ("0000001110012100111000000/1/mortal:B4,D2/mortal:A5,E1", "^B5", False, False),
    # Minotaur: a push straight back onto a free cell at any level; not off the board, onto a worker or a dome
    ("0000000000000003000400000/1/minotaur:C4,E5/mortal:B3,D3", "C4>B3^C4", True, False),  # B3 to A2 (level 3)
    ("0000000000000003000400000/1/minotaur:C4,E5/mortal:B3,D3", "C4>D3^C4", False, False),  # a dome behind
    (f"{FLAT}/1/minotaur:C4,C2/mortal:C5,C3", "C4>C5^D5", False, False),  # off the board
    (f"{FLAT}/1/minotaur:C4,C2/mortal:C5,C3", "C4>C3^C4", False, False),  # its own worker behind
    (f"{FLAT}/1/minotaur:C4,E5/mortal:C3,C2", "C4>C3^C4", False, False),  # the other opponent behind
    # Pan: down two levels wins, down one does not
    ("0000000000002100000000000/1/pan:C3,E1/mortal:A5,E5", "C3>B3^A3", True, True),
    ("0000000000002100000000000/1/pan:C3,E1/mortal:A5,E5", "C3>D3^E3", True, False),
    ("0000000000002100000000000/1/mortal:C3,E1/mortal:A5,E5", "C3>B3^A3", True, False),
    # Prometheus: build first, then never up (not even onto the block just built)
    ("0000000100000000000000000/1/prometheus:C3,E1/mortal:A5,E5", "C3>C4^D5", True, False),
    ("0000000100000000000000000/1/prometheus:C3,E1/mortal:A5,E5", "C3^B2>C4^D5", False, False),
    ("0000000100000000000000000/1/prometheus:C3,E1/mortal:A5,E5", "C3^B2>D3^D2", True, False),
    ("0000000100000000000000000/1/prometheus:C3,E1/mortal:A5,E5", "C3^B3>B3^C3", False, False),
    # a winning move still names one build, not made, and no second build or dome
    ("0000002300000000000000000/1/demeter:B4,A1/mortal:C5,E1", "B4>C4^D4", True, True),
    ("0000002300000000000000000/1/demeter:B4,A1/mortal:C5,E1", "B4>C4^D4^D3", False, False),
    ("0000002300000000000000000/1/atlas:B4,A1/mortal:C5,E1", "B4>C4@D4", False, False),
    # ... unless no cell is left to name: Apollo swaps up into a corner (domes on A4, B4, C5; the swapped worker on B5)
    ("3240044400000000004400040/1/apollo:B5,E1/mortal:A5,E5", "B5>A5", True, True),
    ("3240044400000000004400040/1/mortal:B5,E1/apollo:A5,E5", "B5>A5", False, False),  # a mortal worker cannot swap
    ("3200044000000000000000000/1/apollo:B5,E1/mortal:A5,E5", "B5>A5", True, True),  # other moves left: still a win
    ("3200044000000000000000000/1/apollo:B5,E1/mortal:A5,E5", "B5>A5^B5", False, False),  # not the swapped worker's cell
    ("3200000000000000000000000/1/apollo:B5,E1/mortal:A5,E5", "B5>A5", False, False),  # with a cell left, it names it
    ("3200000000000000000000000/1/apollo:B5,E1/mortal:A5,E5", "B5>A5^A4", True, True),
]


@pytest.mark.parametrize("text, turn, is_legal, wins", CASES)
def test_rule_details(text, turn, is_legal, wins):
    state = parse_god_position(text)
    assert format_god_position(state) == text
    if not is_legal:
        with pytest.raises(NotationError, match="not a legal turn"): parse_turn(state, turn)
        return
    after = god_apply(state, parse_turn(state, turn))
    assert (after.won, god_winner(after) == state.player) == (wins, wins)
    if wins: assert after.board.heights == state.board.heights  # the winning turn's build is not made


def test_forced_workers_on_level_3_never_win():
    apollo = parse_god_position("0000003200000000000000000/1/apollo:B4,E1/mortal:C4,A1")
    forced = play_turns(apollo, "B4>C4^D5")
    assert forced.board.heights[forced.board.workers[1][0]] == 3 and god_winner(forced) is None
    later = play_turns(forced, "A1>A2^A3")  # chapter 01 would read a win off this board
    assert has_climbed(later.board) and not later.won and god_winner(later) is None
    minotaur = parse_god_position("0000000000000003000400000/1/minotaur:C4,E5/mortal:B3,D3")
    pushed = play_turns(minotaur, "C4>B3^C4")
    assert pushed.board.heights[pushed.board.workers[1][0]] == 3 and god_winner(pushed) is None
    # ... nor does a step from level 3 across to another level 3: only a move up onto it wins
    towers = parse_god_position("0000033200000000000000000/1/apollo:B4,E1/mortal:C4,A1")
    across = play_turns(play_turns(towers, "B4>C4^D5"), "B4>A4^A5")
    assert across.board.heights[across.board.workers[1][0]] == 3 and not across.won and god_winner(across) is None


def test_athena_lasts_exactly_one_opponent_turn():
    state = parse_god_position("0000000000010100000000000/1/athena:B2,A5/mortal:D2,E5")
    climbed = play_turns(state, "B2>B3^A3")
    assert climbed.athena_moved_up and "D2>D3^D4" not in {format_turn(climbed, t) for t in god_legal_turns(climbed)}
    answered = play_turns(climbed, "D2>E2^E1")
    assert not answered.athena_moved_up
    flat = play_turns(answered, "A5>B5^C5")
    assert not flat.athena_moved_up and parse_turn(flat, "E2>D3^D4")
    again = play_turns(flat, "E2>E3^E4 B3>C4^C5")  # Athena moves across level 1: no mark
    assert not again.athena_moved_up
    both = GodState(SETUP, ("athena", "athena"))
    assert not play_turns(both, "C3>C4^C5").athena_moved_up  # level 0 to level 0


def test_a_player_who_cannot_complete_a_turn_loses():
    text = "0100011000001000001100010/1/mortal:A5,E1/athena:C3,C1"  # Athena on C3 (level 1) has moved up
    assert god_winner(parse_god_position(text)) is None
    stuck = parse_god_position(text + "/athena-up")
    assert god_legal_turns(stuck) == [] and god_winner(stuck) == 1


# --- Text forms -----------------------------------------------------------------------------------------------------

def test_every_turn_reads_back_from_its_text():
    rng = random.Random(7)
    for gods in [("artemis", "demeter"), ("prometheus", "hephaestus"), ("apollo", "minotaur"), ("atlas", "pan"),
                 ("athena", "hermes"), ("hermes", "mortal")]:
        for state in random_god_game(gods, rng, turns=24)[4::4]:
            assert parse_god_position(format_god_position(state)) == state
            turns = god_legal_turns(state)
            texts = [format_turn(state, t) for t in turns]
            assert len(set(texts)) == len(texts)
            sample = turns if len(turns) < 600 else random.Random(0).sample(turns, 25)  # parse_turn lists all turns
            for turn in sample:
                assert parse_turn(state, format_turn(state, turn)) == turn


def test_position_text_names_gods_and_marks():
    state = play_turns(GodState(SETUP, ("athena", "hermes")), "C3>C4^C5")
    assert format_god_position(state) == "0010000000000000000000000/2/athena:C4,D4/hermes:B2,D2"
    state = play_turns(GodState(parse_position("0000000100000000000000000/1/C3,E1/A5,E5"), ("athena", "pan")),
                       "C3>C4^D5")
    assert format_god_position(state).endswith("/athena:C4,E1/pan:A5,E5/athena-up")
    assert parse_god_position(format_god_position(state)) == state
    with pytest.raises(NotationError, match="unknown mark"): parse_god_position(FLAT + "/1/C3,E1/A5,E5/zeus")
    with pytest.raises(NotationError, match="not one of"): parse_god_position(FLAT + "/1/zeus:C3,E1/A5,E5")
    with pytest.raises(NotationError, match="no move has been played"): parse_god_position(FLAT + "/1/C3/ /won")


# --- Perft depth 5 from the start, every god: chapter 01b's table -------------------------------------------------
# Chapter 01b reads the table from nbs/data/gods_perft.json (recounting all eleven gods there takes about four minutes
# of a learner's "Run all"); here the readable rules recount it in every run of the suite, one god a test, so that
# pytest-xdist spreads them over the cores. Chapter 11b checks the compiled generator against the same file.

@pytest.fixture(scope="module")
def setup_classes_once():
    from santorini_az.gods import setup_classes
    return setup_classes()


def stored_depth_5() -> dict:
    import json
    from pathlib import Path
    return json.loads((Path(__file__).resolve().parent.parent / "nbs" / "data" / "gods_perft.json").read_text())


HEAVY = ("hermes",)  # thousands of turns after most setups: the readable recount of all 9,664 takes minutes


@pytest.mark.slow
@pytest.mark.parametrize("god", [god for god in GODS if god not in HEAVY])
def test_depth_5_from_the_start_is_the_stored_table(god, setup_classes_once):
    from santorini_az.gods import first_turns_from_start
    assert first_turns_from_start(god, setup_classes_once) == stored_depth_5()[god]


@pytest.mark.slow
@pytest.mark.parametrize("god", HEAVY)
def test_depth_5_of_a_heavy_god_by_the_compiled_rules_and_a_sample(god, setup_classes_once):
    """Hermes: the compiled rules (chapter 11b) count the first turns after every setup, and their total is the stored
    entry; the readable rules give the same count as the compiled ones on a seeded sample of 1,000 of the setups."""
    from santorini_az.god_alphabeta import compiled_perft
    from santorini_az.game import CELLS
    setups = setup_classes_once
    after = lambda cells: GodState(State((0,) * CELLS, cells, 0), (god, "mortal"))
    compiled = {cells: compiled_perft(after(cells), 1) for cells in setups}
    assert 4 * sum(n * compiled[cells] for cells, n in setups.items()) == stored_depth_5()[god]
    for cells in random.Random(0).sample(sorted(setups), 1000):
        assert len(god_legal_turns(after(cells))) == compiled[cells], cells


@pytest.mark.parametrize("gods", [("artemis", "demeter"), ("prometheus", "hermes"), ("apollo", "minotaur"), ("atlas", "pan")])
def test_a_refused_turn_is_told_where_it_leaves_the_legal_turns(gods):
    "Turns changed in one step are refused naming the first step no legal turn takes (what the words claim is true)."
    from santorini_az.god_encoding import random_god_positions
    from santorini_az.gods import Step, parse_turn, why_not_a_turn
    rng, checked = random.Random(5), 0
    for state in random_god_positions(gods, rng, 40):
        turns = set(god_legal_turns(state))
        if not turns: continue
        for turn in rng.sample(sorted(turns, key=repr), min(5, len(turns))):
            k = rng.randrange(len(turn))
            changed = turn[:k] + (Step(turn[k].kind, rng.randrange(25), turn[k].worker),) + turn[k + 1:]
            for candidate in (changed, turn[:k] if k else None, turn + (Step("build", rng.randrange(25)),)):
                if candidate is None or candidate in turns: continue
                reason = why_not_a_turn(state, candidate)
                right = max(n for n in range(len(candidate) + 1) if any(t[:n] == candidate[:n] for t in turns))
                if reason.startswith("unfinished"): assert right == len(candidate), reason
                elif reason.startswith("the turn is over"): assert candidate[:right] in turns and f"no step {right + 1}" in reason
                elif in_setup(state.board):  # a placement the rules refuse: chapter 01a's reason, true of the board
                    cell, board = candidate[0].cell, state.board
                    assert right == 0 and (("is taken" in reason and cell in {c for w in board.workers for c in w})
                                           or ("has a dome" in reason and board.heights[cell] == DOME)
                                           or ("at level 3" in reason and board.heights[cell] == 3)), reason
                else: assert reason.startswith(f"step {right + 1}, "), (reason, right)
                checked += 1
    assert checked > 50
    with pytest.raises(NotationError, match="is not a legal turn for Artemis in .*: step 2, a move to C3, is not one Artemis"):
        parse_turn(parse_god_position("0000000000000000000000000/1/artemis:C3,D4/demeter:A1,E2"), "C3>B2>C3^D3")
    hermes = play_turns(god_start(("hermes", "pan")), "C3 D4 B2 D2")  # a legal walk written worker 1 first
    with pytest.raises(NotationError, match=r"a Hermes walk names worker 1's cell first: C3>A5,D4>E5\^E4$"):
        parse_turn(hermes, "D4>E5,C3>A5^E4")
    with pytest.raises(NotationError, match=r"the turn is over after a build on C2: there is no step 2$"):  # not the order
        parse_turn(hermes, "^C2,C3>B3")


def test_the_browsers_power_lines_are_chapter_01bs():
    "web/src/powers.json, which the page's power lines read, is POWER_TEXT: the terminal game's and the widgets' words."
    from santorini_az.gods import POWER_TEXT
    copy = Path(__file__).resolve().parent.parent / "web" / "src" / "powers.json"
    assert json.loads(copy.read_text()) == POWER_TEXT, (
        f"{copy} differs from POWER_TEXT (chapter 01b): write it again with python -c \"import json; "
        "from santorini_az.gods import POWER_TEXT; print(json.dumps(POWER_TEXT, indent=2, ensure_ascii=False))\" > "
        "web/src/powers.json")


def test_a_turn_typed_while_the_workers_are_placed_is_named_as_such():
    "It said \"'C3>C4^C5' is not a cell\"; a mortal move says it is a move while the workers are placed (chapter 27)."
    from santorini_az.game import initial_state
    from santorini_az.gods import from_mortal, parse_turn
    from santorini_az.notation import NotationError
    state = from_mortal(initial_state(), ("apollo", "pan"))
    for text in ("C3>C4^C5", "^C4", "C3^B2>B3^C3"):
        with pytest.raises(NotationError, match=f"'{re.escape(text)}' is a turn, but the workers are still being placed"):
            parse_turn(state, text)
    assert parse_turn(state, "C3")  # a placement is read as before
