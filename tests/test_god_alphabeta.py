"""The compiled god rules (santorini_az.god_alphabeta) against chapter 01b's readable ones, and the god α-β engine:
wins in one with a power, blocking a win in one, and bad inputs."""
import random
from dataclasses import replace

import numpy as np
import pytest

from santorini_az.game import random_openings
from santorini_az.gods import (GODS, GodState, from_mortal, god_apply, god_legal_turns, god_perft, god_start,
                               god_winner, move, parse_god_position, parse_turn, play_turns)
from santorini_az.god_alphabeta import (MAX_TURNS, GodAlphaBeta, GodAlphaBetaConfig, GodAlphaBetaPlayer,
                                        apply_turn, compiled_perft, compiled_turns, generate_turns, god_state_arrays,
                                        pack_turn, turn_buffers, unpack_turn, winner_of)
from santorini_az.god_search import play_god_match, random_god_player
from tests.positions import random_god_game

PAIRS = [(a, b) for a in GODS for b in GODS]


def same_after(state: GodState, turn) -> bool:
    "Does the compiled `apply_turn` lead where `god_apply` does (board, player, Athena's mark, win)?"
    heights, workers, player, gods, _ = god_state_arrays(state)
    next_player, won, mark = apply_turn(heights, workers, player, gods, pack_turn(turn))
    after = god_state_arrays(expected := god_apply(state, turn))
    return ((heights.tolist(), workers.tolist(), next_player, bool(mark), bool(won))
            == (after[0].tolist(), after[1].tolist(), after[2], expected.athena_moved_up, expected.won))


@pytest.mark.parametrize("gods", PAIRS, ids=["-".join(p) for p in PAIRS])
def test_turns_apply_and_winner_match_the_readable_rules(gods):
    rng = random.Random(f"{gods}")
    buffers = turn_buffers()
    for state in random_god_game(gods, rng):
        compiled, readable = compiled_turns(state), god_legal_turns(state)
        assert len(compiled) == len(set(compiled)), "a turn listed twice"
        assert set(compiled) == set(readable), f"turns differ in {state}"
        for turn in rng.sample(readable, min(8, len(readable))):
            assert same_after(state, turn), f"{turn} in {state}"
        arrays = god_state_arrays(state)
        assert winner_of(*arrays, state.won, *buffers) == (-1 if god_winner(state) is None else god_winner(state))


def test_apollos_win_with_no_cell_left_to_build_on():
    "Apollo swaps up into a corner whose other neighbours have domes: the win is the move alone, for both generators."
    for text in ("3240044400000000004400040/1/apollo:B5,E1/mortal:A5,E5",  # the only turn
                 "3200044000000000000000000/1/apollo:B5,E1/mortal:A5,E5"):  # among others, which the search must see
        state = parse_god_position(text)
        assert set(compiled_turns(state)) == set(god_legal_turns(state)) >= {(move(0, 0),)}
        assert same_after(state, (move(0, 0),))
        assert GodAlphaBetaPlayer(2)(state) == (move(0, 0),)


def test_athena_mark_and_forced_moves_are_covered():
    "The random games above do reach Athena's mark, swaps and pushes (else the comparison proves less)."
    rng, marks, forced = random.Random(5), 0, 0
    for gods in [("athena", "apollo"), ("athena", "minotaur")] * 3:
        for state in random_god_game(gods, rng):
            marks += state.athena_moved_up
            if state.player == 1 and not state.won and len(state.board.workers[1]) == 2:
                forced += sum(t[0].cell in state.board.workers[0] for t in god_legal_turns(state) if t[0].kind == "move")
    assert marks > 0 and forced > 0


def test_perft_matches_from_the_start_and_the_middle():
    assert [compiled_perft(god_start(("hermes", "pan")), d) for d in (1, 2, 3)] == [25, 600, 13_800]
    middle = random_openings(1, np.random.default_rng(3), random_moves=14)[0]
    for gods in [("mortal", "mortal"), ("apollo", "athena"), ("artemis", "minotaur"), ("prometheus", "pan"),
                 ("demeter", "hephaestus"), ("atlas", "hermes"), ("athena", "athena")]:
        state = from_mortal(middle, gods)
        assert compiled_perft(state, 2) == god_perft(state, 2), gods


@pytest.mark.slow
def test_perft_depth_3_from_a_late_position():
    "Each god against a mortal, and pairs whose powers meet (marks, swaps, pushes, drops), three turns deep (~40 s)."
    state = random_god_game(("mortal", "mortal"), random.Random(7), turns=30)[-2]
    pairs = [(god, "mortal") for god in GODS] + [("athena", "apollo"), ("minotaur", "pan"), ("apollo", "minotaur"),
                                                  ("pan", "athena"), ("hermes", "athena"), ("athena", "athena")]
    for gods in pairs:
        god_state = GodState(state.board, gods)
        assert compiled_perft(god_state, 3) == god_perft(god_state, 3), gods


def test_buffers_hold_the_most_turns_found():
    "A flat board where Hermes's workers reach nearly every pair: the largest count we know stays within MAX_TURNS."
    flat = parse_god_position("0000000000000000000000000/1/hermes:C3,D3/mortal:A1,E5")
    turns, wins = turn_buffers()
    n = generate_turns(*god_state_arrays(flat), turns, wins)
    assert n == len(god_legal_turns(flat)) and 4_000 < n <= MAX_TURNS


# --- the engine ------------------------------------------------------------------------------------------------------

def win_in_one(text: str, depth: int = 2):
    "The turn the engine plays in `text`, after checking that it wins at once and the score says so."
    state = parse_god_position(text)
    result = GodAlphaBeta().search(state, depth=depth)
    assert god_apply(state, result.turn).won, result
    assert result.score_text == "win 1"
    return state, result.turn


def test_pan_drops_two_levels_to_win():
    state, turn = win_in_one("0000000000002000000000000/1/pan:C3,E1/mortal:A5,E5")
    assert state.board.heights[turn[0].cell] == 0


def test_artemis_moves_twice_onto_level_3():
    # A1 on level 2, B1 level 2, C1 level 3: only a second step reaches level 3
    state, turn = win_in_one("0000000000000000000022300/1/artemis:A1,E5/mortal:A5,E3")
    assert [s.kind for s in turn[:2]] == ["move", "move"] and turn[1].cell == 22


def test_minotaur_pushes_onto_the_win_space():
    # Minotaur on B2 (level 2), the opponent on C3 (level 3), D4 free behind it
    state, turn = win_in_one("0000000000003000200000000/1/minotaur:B2,E1/mortal:C3,A5")
    assert turn[0].cell == 12


def test_apollo_swaps_up_onto_level_3():
    state, turn = win_in_one("0000000000003000200000000/1/apollo:B2,E1/mortal:C3,A5")
    assert turn[0].cell == 12 and god_apply(state, turn).board.workers[1][0] == 16  # the victim takes B2


def test_a_mortal_cannot_win_where_the_powers_do():
    for text in ("0000000000002000000000000/1/mortal:C3,E1/mortal:A5,E5",
                 "0000000000003000200000000/1/mortal:B2,E1/mortal:C3,A5"):
        assert not GodAlphaBeta().search(parse_god_position(text), depth=1).score_text.startswith("win")


@pytest.mark.parametrize("gods", [("mortal", "mortal"), ("atlas", "apollo"), ("demeter", "artemis")])
def test_blocks_a_win_in_one(gods):
    # the opponent's worker on D3 (level 2) threatens D4 (level 3); our worker on C4 stands next to D4
    state = parse_god_position(f"0000000030000200000000000/1/{gods[0]}:C4,E1/{gods[1]}:D3,A1")
    passed = GodState(replace(state.board, player=1), state.gods)  # if we did nothing, the opponent would win
    assert any(god_apply(passed, t).won for t in god_legal_turns(passed))
    result = GodAlphaBeta().search(state, depth=2)
    after = god_apply(state, result.turn)
    assert not any(god_apply(after, t).won for t in god_legal_turns(after)), result


def test_bad_budgets_raise_one_sentence():
    state = parse_god_position("0000000000002000000000000/1/pan:C3,E1/mortal:A5,E5")
    engine = GodAlphaBeta()
    for kwargs, culprit in [({"depth": -1}, "depth"), ({"depth": 0}, "depth"), ({"nodes": 0}, "nodes"),
                            ({"movetime": -2.0}, "movetime"), ({"depth": 2.5}, "depth")]:
        with pytest.raises(ValueError, match=culprit) as error:
            engine.search(state, **kwargs)
        assert str(error.value).count(".") <= 1 and "\n" not in str(error.value)
    with pytest.raises(ValueError, match="game is over"):
        engine.search(god_apply(state, engine.search(state, depth=1).turn))
    with pytest.raises(ValueError, match="depth"):
        GodAlphaBetaPlayer(-3)


def test_budgets_and_stop():
    state = from_mortal(random_openings(1, np.random.default_rng(3), random_moves=14)[0], ("hermes", "mortal"))
    engine = GodAlphaBeta()
    limited = engine.search(state, nodes=300)
    assert limited.turn in god_legal_turns(state) and limited.nodes == 300  # kept to the node
    timed = engine.search(state, movetime=0.3)
    assert timed.turn in god_legal_turns(state) and timed.seconds < 3
    engine.new_game()
    deep = engine.search(state, depth=2)
    assert deep.depth == 2 and deep.pv[0] == deep.turn


def test_table_changes_effort_not_answer():
    "The transposition table finds the same score with fewer nodes."
    state = from_mortal(random_openings(1, np.random.default_rng(4), random_moves=10)[0], ("artemis", "athena"))
    with_tt = GodAlphaBeta().search(state, depth=3)
    without = GodAlphaBeta(GodAlphaBetaConfig(use_tt=False)).search(state, depth=3)
    assert with_tt.score == without.score
    assert with_tt.nodes < without.nodes  # 13,180 against 22,111: the table saves work


def test_player_plays_a_match():
    player = GodAlphaBetaPlayer(1)
    points = play_god_match(player, random_god_player, ("apollo", "pan"), 2, seed=1)
    assert sum(points) == 2 and points[0] >= 1
