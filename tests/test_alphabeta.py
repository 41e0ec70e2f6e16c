"Checks of the α-β engine: mates found, the table changes no result, incremental hashing, the permanent brain."
import random

import numpy as np
import pytest

from santorini_az.alphabeta import (MATE, AlphaBeta, AlphaBetaConfig, evaluate_position, make_move, N_TERMS,
                                    unmake_move, winning_action, zobrist_hash, DEFAULT_WEIGHTS)
from santorini_az.encoding import action_from_index, action_index
from santorini_az.engine import MAX_LEGAL, apply_action, legal_actions_into, state_to_arrays
from santorini_az.game import CELLS, State, initial_state
from santorini_az.notation import cell_name, format_position, parse_position, play_moves


def random_game_positions(n, seed, skip=4):
    "One position from each of `n` seeded random games, after the first `skip` actions."
    rng, positions = random.Random(seed), []
    while len(positions) < n:
        state, history = initial_state(), []
        while state.legal_actions():
            history.append(state)
            state = state.apply(rng.choice(state.legal_actions()))
        if len(history) > skip: positions.append(rng.choice(history[skip:]))
    return positions


def wins_now(state: State) -> bool:
    "Does the player to move have a move that ends the game in their favour (pure-Python rules)?"
    return any(state.apply(a).winner() == state.player for a in state.legal_actions())


def forced_win_in_3(state: State, first) -> bool:
    "After `first`, does every reply leave the player a winning move (or end the game in their favour)?"
    me, after = state.player, state.apply(first)
    if after.winner() is not None: return after.winner() == me
    for reply in after.legal_actions():
        next_state = after.apply(reply)
        if next_state.winner() is not None:
            if next_state.winner() != me: return False
            continue
        if not wins_now(next_state): return False
    return True


def win_in_one_positions():
    "A worker on level 2 next to a level-3 cell, for every cell and direction on the board."
    positions = []
    for here in range(CELLS):
        for target in range(CELLS):
            hr, hc, tr, tc = here // 5, here % 5, target // 5, target % 5
            if max(abs(hr - tr), abs(hc - tc)) != 1: continue
            heights = [0] * CELLS
            heights[here], heights[target] = 2, 3
            others = [c for c in range(CELLS) if max(abs(c // 5 - tr), abs(c % 5 - tc)) > 1 and c != here][:3]
            positions.append(State(tuple(heights), ((here, others[0]), (others[1], others[2])), 0))
    return positions


def win_in_three_positions():
    "A worker on level 1 next to a level-2 cell that touches two level-3 cells; the opponent far away on level 0."
    positions = []
    for step_to in range(CELLS):
        r, c = divmod(step_to, 5)
        around = [(r + dr) * 5 + c + dc for dr in (-1, 0, 1) for dc in (-1, 0, 1)
                  if (dr or dc) and 0 <= r + dr < 5 and 0 <= c + dc < 5]
        here, threats = around[0], around[-2:]
        if here in threats: continue
        heights = [0] * CELLS
        heights[here], heights[step_to] = 1, 2
        for t in threats: heights[t] = 3
        near = set(around) | {step_to}
        far = [x for x in range(CELLS) if all(max(abs(x // 5 - y // 5), abs(x % 5 - y % 5)) > 1 for y in near)]
        if len(far) < 3: continue
        positions.append(State(tuple(heights), ((here, far[0]), (far[1], far[2])), 0))
    return positions


def test_finds_every_win_in_one():
    positions = win_in_one_positions()
    assert len(positions) > 50
    engine = AlphaBeta(AlphaBetaConfig(hash_mb=1))
    for state in positions:
        result = engine.search(state, depth=4)
        assert result.score_text == "win 1", format_position(state)
        assert state.apply(action_from_index(state, result.action)).winner() == 0


def test_finds_every_win_in_three():
    positions = win_in_three_positions()
    assert len(positions) >= 5
    engine = AlphaBeta(AlphaBetaConfig(hash_mb=1))
    for state in positions:
        assert not wins_now(state)
        result = engine.search(state, depth=6)
        assert result.score_text == "win 3", (format_position(state), result.score_text)
        assert forced_win_in_3(state, action_from_index(state, result.action)), format_position(state)


def test_mate_scores_are_proven_on_random_positions():
    "Every 'win 1' / 'win 3' the engine reports on random game positions is checked with the pure-Python rules."
    checked = 0
    for state in random_game_positions(40, seed=11, skip=4):
        result = AlphaBeta(AlphaBetaConfig(hash_mb=1)).search(state, depth=3)
        action = action_from_index(state, result.action)
        if result.score_text == "win 1": assert state.apply(action).winner() == state.player; checked += 1
        if result.score_text == "win 3": assert forced_win_in_3(state, action); checked += 1
        if wins_now(state): assert result.score_text == "win 1"
    assert checked > 5


@pytest.mark.parametrize("depth", [1, 2, 3, 4])
def test_table_never_changes_a_fixed_depth_score(depth):
    for state in random_game_positions(15, seed=depth, skip=3):
        with_table = AlphaBeta(AlphaBetaConfig(hash_mb=1)).search(state, depth=depth)
        without = AlphaBeta(AlphaBetaConfig(use_tt=False, aspiration=0)).search(state, depth=depth)
        assert with_table.score == without.score, format_position(state)


def plain_negamax(state: State, depth: int, ply: int = 0) -> int:
    "Minimax without pruning, with the engine's leaf rules (wins first, the compiled evaluation)."
    heights, workers, player = state_to_arrays(state)
    if winning_action(heights, workers, player) >= 0: return MATE - ply - 1
    if depth == 0:
        return evaluate_position(heights, workers, player, ply, np.array(DEFAULT_WEIGHTS, np.int64),
                                 np.zeros(N_TERMS, np.int64))
    actions = state.legal_actions()
    if not actions: return -(MATE - ply)
    best = -10**9
    for a in actions:
        child = state.apply(a)
        score = plain_negamax(child, depth - 1, ply + 1)
        best = max(best, score if child.player == state.player else -score)
    return best


# Positions of random games where a move leaves the opponent no move at all, and no climb wins at once: the search
# must score the block as a win, as minimax does.
BLOCKING = ["2022004220200122212010131/1/A4,B1/E4,E5", "2114014411032310420214440/2/D2,E1/E4,D4",
            "1224244024044133240104142/1/C1,E2/C4,A3"]


def test_alphabeta_equals_plain_minimax():
    setup = [play_moves(initial_state(), moves) for moves in ([], ["C3"], ["C3", "B2"], ["C3", "B2", "D4"])]  # a player places twice
    for state in [*random_game_positions(6, seed=5, skip=4), *setup, *map(parse_position, BLOCKING)]:
        score = AlphaBeta(AlphaBetaConfig(hash_mb=1)).search(state, depth=2).score
        assert score == plain_negamax(state, 2), format_position(state)
    assert all(AlphaBeta().search(parse_position(text), depth=2).score > MATE - 10 for text in BLOCKING)


def test_incremental_hash_equals_recomputed_along_random_games():
    rng = np.random.default_rng(7)
    actions = np.zeros(MAX_LEGAL, np.int64)
    for _ in range(200):
        heights, workers, player = state_to_arrays(initial_state())
        key = np.uint64(zobrist_hash(heights, workers, player))
        while (n := legal_actions_into(heights, workers, player, actions)) > 0:
            action = actions[rng.integers(n)]
            h2, w2 = heights.copy(), workers.copy()
            p2 = apply_action(h2, w2, player, action)
            before = heights.copy(), workers.copy()
            undo = make_move(heights, workers, player, key, action)
            unmake_move(heights, workers, *undo[2:])
            assert (heights == before[0]).all() and (workers == before[1]).all()
            player, key = make_move(heights, workers, player, key, action)[:2]
            key = np.uint64(key)
            assert (heights == h2).all() and (workers == w2).all() and player == p2
            assert key == np.uint64(zobrist_hash(heights, workers, player))


def test_permanent_brain_changes_a_later_search(tmp_path):
    brain = tmp_path / "brain.txt"
    for state in random_game_positions(100, seed=3, skip=8):
        brain.unlink(missing_ok=True)
        AlphaBeta(AlphaBetaConfig(brain=str(brain))).search(state, depth=5)
        if not brain.exists(): continue
        plain = AlphaBeta().search(state, depth=2)
        with_brain = AlphaBeta(AlphaBetaConfig(brain=str(brain))).search(state, depth=2)
        if with_brain.score != plain.score: break
    else:
        pytest.fail("no position's later search was changed by the brain")
    position, depth, score, action = brain.read_text().split()
    assert position == format_position(state) and int(depth) >= 3
    assert with_brain.score == int(score) and with_brain.action == int(action)
    assert AlphaBeta().search(state, depth=2).score == plain.score  # without the file, nothing changed


def test_a_file_that_is_not_a_brain_is_refused_and_kept(tmp_path):
    "Saving a brain replaces its file whole, so a file that holds anything else is refused before it could be."
    notes = tmp_path / "notes.txt"
    notes.write_text("0000000000000000000000000/1// 3 10 0\nmy notes\n")
    with pytest.raises(ValueError, match="notes.txt, line 2, is not a brain entry"):
        AlphaBeta(AlphaBetaConfig(brain=str(notes)))
    (tmp_path / "binary").write_bytes(b"\xff\xfe")
    with pytest.raises(ValueError, match="cannot read .*binary as a brain"):
        AlphaBeta(AlphaBetaConfig(brain=str(tmp_path / "binary")))
    assert notes.read_text() == "0000000000000000000000000/1// 3 10 0\nmy notes\n"


def test_budgets_and_stop():
    state = random_game_positions(1, seed=2, skip=5)[0]
    for nodes in (200, 20_000):  # a budget of nodes is kept to the node (it was looked at every 1024: 200 searched 560)
        result = AlphaBeta().search(state, nodes=nodes)
        assert result.nodes == nodes and result.action in [action_index(state, a) for a in state.legal_actions()]
    result = AlphaBeta().search(state, movetime=0.2)
    assert result.depth >= 1 and result.action in [action_index(state, a) for a in state.legal_actions()]


def test_game_over_is_an_error():
    state = State((0,) * 7 + (3,) + (0,) * 17, ((7, 0), (24, 23)), 1)  # player 1 stands on level 3
    with pytest.raises(ValueError, match="game is over"):
        AlphaBeta().search(state, depth=2)
