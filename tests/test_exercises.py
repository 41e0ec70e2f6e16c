"""The exercise checkers (chapter 34): reference solutions pass, stubs return False, and each plausible wrong
solution fails with ExerciseFailed whose message names its mistake; so does learner code that raises, never returns,
returns the wrong type or changes its input."""
import functools
import math
import signal
import sys
import threading
import time

import numpy as np
import pytest
import torch

from santorini_az import exercises
from santorini_az.encoding import ACTION_PERMUTATIONS, transform_planes, transform_policy
from santorini_az.exercises import ExerciseFailed
from santorini_az.game import CELLS, DOME, STEPS, Move, Placement, State, apply, has_climbed, in_setup, legal_actions
from santorini_az.gods import format_turn
from santorini_az.notation import cell_name

REFERENCES = {}
WRONG = {}

# Reference solutions (the same as in nbs/34_exercises.ipynb)
def reference_legal_actions(state):
    "Placements during setup, else every (worker, move, build) the rules allow; none once a worker stands on level 3."
    if any(state.heights[c] == 3 for c in state.workers[1 - state.player]): return []  # the last move won
    taken = {c for cells in state.workers for c in cells}
    if len(state.workers[state.player]) < 2:
        return [Placement(c) for c in range(CELLS) if c not in taken and state.heights[c] < 3]
    actions = []
    for worker, here in enumerate(state.workers[state.player]):
        for to in STEPS[here]:
            if to is None or to in taken or state.heights[to] == DOME or state.heights[to] > state.heights[here] + 1:
                continue  # off the board, a worker there, a dome, or a climb of two levels or more
            for build in STEPS[to]:
                if build is None or state.heights[build] == DOME or (build in taken and build != here): continue
                actions.append(Move(worker, to, build))
    return actions
REFERENCES['check_legal_actions'] = reference_legal_actions

def reference_symmetry(planes, s):
    "Planes [5, 5, 9] under symmetry s: 0-3 turn clockwise by s quarter turns, 4-7 mirror, then turn."
    turned = {0: planes, 1: np.rot90(planes, -1), 2: np.rot90(planes, 2), 3: np.rot90(planes, 1),
              4: planes[:, ::-1], 5: planes[::-1], 6: planes.transpose(1, 0, 2), 7: np.rot90(planes, 2).transpose(1, 0, 2)}
    return np.ascontiguousarray(turned[s])
REFERENCES['check_symmetry'] = reference_symmetry

def reference_puct_scores(node, config):
    "Q + c_puct · P · √N(node) / (1 + N(edge)) for each edge; Q = W / N, or config.fpu_value if never visited."
    sqrt_n = math.sqrt(node.visit_count())  # 1 (the node's own evaluation) + the visits of its edges
    return [(w / n if n else config.fpu_value) + config.c_puct * p * sqrt_n / (1 + n)
            for p, n, w in zip(node.priors, node.visits, node.value_sums)]
REFERENCES['check_puct_scores'] = reference_puct_scores

def reference_backup(path, leaf_player, value):
    "One more visit on every edge of the path, and the value signed for each edge's player (compare players)."
    for node, edge in path:
        node.visits[edge] += 1
        node.value_sums[edge] += value if node.player == leaf_player else -value
REFERENCES['check_backup'] = reference_backup

def reference_legal_softmax(logits, legal):
    "Softmax over the legal actions of each row; illegal actions get exactly 0."
    return logits.masked_fill(~legal, float("-inf")).softmax(dim=-1)
REFERENCES['check_legal_softmax'] = reference_legal_softmax

def reference_policy_loss(logits, target, legal):
    "Batch mean of -Σ target · log softmax over the legal actions."
    log_p = logits.masked_fill(~legal, float("-inf")).log_softmax(dim=-1)
    return -torch.where(legal, target * log_p, torch.zeros_like(log_p)).sum(-1).mean()
REFERENCES['check_policy_loss'] = reference_policy_loss

def reference_wilson_interval(points, games, z=1.96):
    "The 95% Wilson score interval (low, high) of `points` out of `games` (another `z`: another confidence)."
    p = points / games
    centre = (p + z * z / (2 * games)) / (1 + z * z / games)
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / (1 + z * z / games)
    return centre - half, centre + half
REFERENCES['check_wilson_interval'] = reference_wilson_interval

def reference_negamax_search(state, depth, alpha, beta, evaluate):
    "The score of `state` for its player to move, `depth` plies deep, skipping what α-β proves irrelevant."
    if depth == 0 or state.is_over(): return evaluate(state)
    best = -math.inf
    for action in state.legal_actions():
        score = -reference_negamax_search(state.apply(action), depth - 1, -beta, -alpha, evaluate)
        best, alpha = max(best, score), max(alpha, score)
        if alpha >= beta: break  # a cut-off: the opponent already has a better choice earlier in the tree
    return best
REFERENCES['check_negamax'] = reference_negamax_search

def reference_cell_name(cell):
    "0 -> 'A5' (top-left), 24 -> 'E1': the file is the column, the rank counts rows from the bottom."
    row, col = divmod(cell, 5)
    return "ABCDE"[col] + str(5 - row)
REFERENCES['check_cell_name'] = reference_cell_name

def reference_visit_policy(visits, temperature):
    "visits ** (1 / temperature), normalised; temperature 0: all on the first most-visited action."
    if temperature == 0:
        best = visits.index(max(visits))
        return [1.0 if i == best else 0.0 for i in range(len(visits))]
    top = max(visits)  # divide first, so that a small temperature cannot overflow
    weights = [(n / top) ** (1 / temperature) for n in visits]
    return [w / sum(weights) for w in weights]
REFERENCES['check_visit_policy'] = reference_visit_policy

# Plausible wrong solutions: name -> (checker, function, the hint its message must contain)
def legal_actions_with(climb=1, onto_dome=False, onto_worker=False, build_on_dome=False, build_where_it_left=True):
    "A legal-actions solution with one rule changed: the climb allowed, stepping onto a dome or a worker, or where it builds."
    def legal_actions(state):
        if any(state.heights[c] == 3 for c in state.workers[1 - state.player]): return []
        taken = {c for cells in state.workers for c in cells}
        if len(state.workers[state.player]) < 2:
            return [Placement(c) for c in range(CELLS) if c not in taken and state.heights[c] < 3]
        def steps_onto(here, to):
            return ((onto_worker or to not in taken) and (onto_dome or state.heights[to] != DOME)
                    and state.heights[to] <= state.heights[here] + climb)
        def builds_on(here, build):
            return (build_on_dome or state.heights[build] != DOME) and (build not in taken or (build_where_it_left and build == here))
        return [Move(worker, to, build) for worker, here in enumerate(state.workers[state.player])
                for to in STEPS[here] if to is not None and steps_onto(here, to)
                for build in STEPS[to] if build is not None and builds_on(here, build)]
    return legal_actions

WRONG['legal_no_dome'] = ('check_legal_actions', legal_actions_with(onto_dome=True), 'a dome (level 4) can never be entered')
WRONG['legal_climb_two'] = ('check_legal_actions', legal_actions_with(climb=2), 'a worker may climb at most one level')
WRONG['legal_climb_two_edge'] = ('check_legal_actions', legal_actions_with(climb=2),  # a hand-built edge catches it
                                 'edge position "levels 2 and 3 next to a worker on level 0"')
WRONG['legal_occupied'] = ('check_legal_actions', legal_actions_with(onto_worker=True), 'cannot move onto a cell with a worker')
WRONG['legal_no_vacated_build'] = ('check_legal_actions', legal_actions_with(build_where_it_left=False),
                                   'the cell the worker has just left is free')
WRONG['legal_build_dome'] = ('check_legal_actions', legal_actions_with(build_on_dome=True), 'nothing can be built on a dome')

def wrong_symmetry_anticlockwise(planes, s):
    if s < 4: return np.rot90(planes, s)  # np.rot90 turns anticlockwise
    return reference_symmetry(planes, s)
WRONG['symmetry_anticlockwise'] = ('check_symmetry', wrong_symmetry_anticlockwise, "'rotate 90' turns clockwise")

def wrong_symmetry_all_axes(planes, s):
    if s == 2: return np.flip(planes)  # flips all three axes, the planes too
    return reference_symmetry(planes, s)
WRONG['symmetry_all_axes'] = ('check_symmetry', wrong_symmetry_all_axes, 'the 9 planes were reversed')

def wrong_puct_sum_visits(node, config):
    sqrt_n = math.sqrt(sum(node.visits))  # forgets the node's own evaluation
    return [(w / n if n else config.fpu_value) + config.c_puct * p * sqrt_n / (1 + n)
            for p, n, w in zip(node.priors, node.visits, node.value_sums)]
WRONG['puct_sum_visits'] = ('check_puct_scores', wrong_puct_sum_visits, "N = 1 + the sum of its edges' visits")

def wrong_puct_fpu(node, config):
    sqrt_n = math.sqrt(node.visit_count())
    return [(w / n if n else 0.0) + config.c_puct * p * sqrt_n / (1 + n)
            for p, n, w in zip(node.priors, node.visits, node.value_sums)]
WRONG['puct_fpu'] = ('check_puct_scores', wrong_puct_fpu, 'config.fpu_value')

def wrong_backup_sign(path, leaf_player, value):
    for node, edge in path:
        node.visits[edge] += 1
        node.value_sums[edge] += -value if node.player == leaf_player else value  # the wrong way round
WRONG['backup_sign'] = ('check_backup', wrong_backup_sign, 'the sign is the wrong way round')

def wrong_backup_per_ply(path, leaf_player, value):
    for node, edge in reversed(path):
        value = -value  # flip at every ply, as in a game where the players always alternate
        node.visits[edge] += 1
        node.value_sums[edge] += value
WRONG['backup_per_ply'] = ('check_backup', wrong_backup_per_ply, 'do not flip the sign per ply')

def wrong_backup_no_sign(path, leaf_player, value):
    for node, edge in path:
        node.visits[edge] += 1
        node.value_sums[edge] += value
WRONG['backup_no_sign'] = ('check_backup', wrong_backup_no_sign, 'an edge whose player is the opponent gets -v')

def wrong_softmax_no_mask(logits, legal):
    return logits.softmax(dim=-1)  # forgot the legal mask
WRONG['softmax_no_mask'] = ('check_legal_softmax', wrong_softmax_no_mask, 'mask before the softmax')

def wrong_softmax_mask_after(logits, legal):
    return logits.softmax(dim=-1) * legal  # zeroes the illegal actions after the softmax
WRONG['softmax_mask_after'] = ('check_legal_softmax', wrong_softmax_mask_after, 'mask the logits before it')

def wrong_softmax_over_the_batch(logits, legal):
    return logits.masked_fill(~legal, float("-inf")).softmax(0)  # dim 0: each action's column over the positions
WRONG['softmax_over_the_batch'] = ('check_legal_softmax', wrong_softmax_over_the_batch, 'not over the batch')

def wrong_softmax_overflow(logits, legal):
    weights = logits.exp() * legal  # exp of a large logit is inf
    return weights / weights.sum(-1, keepdim=True)
WRONG['softmax_overflow'] = ('check_legal_softmax', wrong_softmax_overflow, 'exp overflows for large logits')

def wrong_softmax_max_of_all(logits, legal):
    weights = (logits - logits.max(dim=-1, keepdim=True).values).exp() * legal  # the max of ALL logits, illegal too
    return weights / weights.sum(-1, keepdim=True)
WRONG['softmax_max_of_all'] = ('check_legal_softmax', wrong_softmax_max_of_all, 'Subtract the largest LEGAL logit')

def wrong_loss_mean_153(logits, target, legal):
    log_p = logits.masked_fill(~legal, float("-inf")).log_softmax(dim=-1)
    return -torch.where(legal, target * log_p, torch.zeros_like(log_p)).mean()  # averages over the 153 actions too
WRONG['loss_mean_153'] = ('check_policy_loss', wrong_loss_mean_153, 'sum over the 153 actions, then average over the batch')

def wrong_loss_visited_only(logits, target, legal):
    visited = target > 0  # masks with the visited actions instead of the legal ones
    log_p = logits.masked_fill(~visited, float("-inf")).log_softmax(dim=-1)
    return -torch.where(visited, target * log_p, torch.zeros_like(log_p)).sum(-1).mean()
WRONG['loss_visited_only'] = ('check_policy_loss', wrong_loss_visited_only, 'the softmax runs over every legal action, visited or not')

def wrong_loss_no_mask(logits, target, legal):
    return -(target * logits.log_softmax(dim=-1)).sum(-1).mean()  # a softmax over all 153 actions
WRONG['loss_no_mask'] = ('check_policy_loss', wrong_loss_no_mask, 'mask the illegal actions before the log-softmax')

def wrong_wilson_normal(points, games):
    p = points / games
    half = 1.96 * math.sqrt(p * (1 - p) / games)  # the normal approximation
    return max(0.0, p - half), min(1.0, p + half)
WRONG['wilson_normal'] = ('check_wilson_interval', wrong_wilson_normal, 'normal-approximation (Wald) interval')

def wrong_wilson_90(points, games): return reference_wilson_interval(points, games, z=1.645)  # a 90% interval's z
WRONG['wilson_z_90'] = ('check_wilson_interval', wrong_wilson_90, 'you used z = 1.645')

def wrong_negamax_no_cutoff(state, depth, alpha, beta, evaluate):
    if depth == 0 or state.is_over(): return evaluate(state)
    best = -math.inf
    for action in state.legal_actions():  # looks at every move: no cut-off
        best = max(best, -wrong_negamax_no_cutoff(state.apply(action), depth - 1, -beta, -alpha, evaluate))
    return best
WRONG['negamax_no_cutoff'] = ('check_negamax', wrong_negamax_no_cutoff, 'no cut-offs happened')

def wrong_negamax_sign(state, depth, alpha, beta, evaluate):
    if depth == 0 or state.is_over(): return evaluate(state)
    best = -math.inf
    for action in state.legal_actions():
        score = wrong_negamax_sign(state.apply(action), depth - 1, alpha, beta, evaluate)  # forgot to negate
        best, alpha = max(best, score), max(alpha, score)
        if alpha >= beta: break
    return best
WRONG['negamax_sign'] = ('check_negamax', wrong_negamax_sign, "negate the child's score")

def wrong_negamax_swapped_window(state, depth, alpha, beta, evaluate):
    if depth == 0 or state.is_over(): return evaluate(state)
    best = -math.inf
    for action in state.legal_actions():
        score = -wrong_negamax_swapped_window(state.apply(action), depth - 1, -alpha, -beta, evaluate)  # (-beta, -alpha)
        best, alpha = max(best, score), max(alpha, score)
        if alpha >= beta: break
    return best
WRONG['negamax_swapped_window'] = ('check_negamax', wrong_negamax_swapped_window, 'not (-alpha, -beta)')

def wrong_cell_axes(cell):
    row, col = divmod(cell, 5)
    return "ABCDE"[row] + str(col + 1)  # the letter from the row, the number from the column (cell 0: 'A1', as above)
WRONG['cell_axes'] = ('check_cell_name', wrong_cell_axes, 'the letter (file) names the column, the number (rank) the row; '
                      'and rank 5 is the top row')

WRONG['softmax_half'] = ('check_legal_softmax', lambda logits, legal: reference_legal_softmax(logits, legal).half(),
                         'your probabilities are float16')

def wrong_plan_one_offs_swapped(iterations):
    steps = reference_plan(iterations)
    steps[0], steps[1] = steps[1], steps[0]  # holdout before init
    return steps
WRONG['plan_one_offs_swapped'] = ('check_plan', wrong_plan_one_offs_swapped,
                                  'the one-off stages run in this order: init, holdout, references')

WRONG['elo_none_at_the_ends'] = ('check_elo_difference',
                                 lambda s: None if s in (0, 1) else 400 * math.log10(s / (1 - s)),
                                 'has no finite Elo difference')

def wrong_cell_rank(cell):
    row, col = divmod(cell, 5)
    return "ABCDE"[col] + str(row + 1)  # counts ranks from the top
WRONG['cell_rank'] = ('check_cell_name', wrong_cell_rank, 'rank 5 is the top row')

def wrong_visit_power(visits, temperature):
    if temperature == 0:
        best = visits.index(max(visits))
        return [1.0 if i == best else 0.0 for i in range(len(visits))]
    weights = [n ** temperature for n in visits]  # the power the wrong way up
    return [w / sum(weights) for w in weights]
WRONG['visit_power'] = ('check_visit_policy', wrong_visit_power, 'power 1 / temperature, not temperature')


# Chapters 9a, 5, 6, 7, 10a and 10
def reference_blocking_moves(state):
    "The legal actions after which the opponent has no win at once (a step onto level 3, or leaving us stuck)."
    def wins_now(s, action):  # a step onto level 3, or a move that leaves the other player no legal action
        return s.heights[action.to] == 3 or not s.apply(action).legal_actions()
    blocks = []
    for action in state.legal_actions():
        after = state.apply(action)  # the opponent to move (no actions at all if our move has won)
        if not any(wins_now(after, reply) for reply in after.legal_actions()): blocks.append(action)
    return blocks
REFERENCES['check_blocking_moves'] = reference_blocking_moves

def reference_value_targets(states, winner):
    "+1 for each position whose player to move won the game, -1 for the others (compare players, never flip per ply)."
    return [1.0 if state.player == winner else -1.0 for state in states]
REFERENCES['check_value_targets'] = reference_value_targets

def reference_select_edge(priors, visits, value_sums, c_puct, fpu_value):
    "The highest PUCT score; np.argmax takes the first maximum, so ties go to the lowest index."
    q = np.where(visits > 0, value_sums / np.maximum(visits, 1), fpu_value)
    return int(np.argmax(q + c_puct * priors * math.sqrt(1 + visits.sum()) / (1 + visits)))
REFERENCES['check_select_edge'] = reference_select_edge

def reference_augment(planes, policy, s):
    "Turn the board (chapter 2's transform_planes) and move each action's probability with it."
    return transform_planes(planes, s), transform_policy(policy, s)
REFERENCES['check_augment'] = reference_augment

def reference_plan(iterations):
    "The one-off stages at iteration 0, then the four stages of each iteration, counted from 1."
    steps = [(0, "init"), (0, "holdout"), (0, "references")]
    for i in range(1, iterations + 1): steps += [(i, stage) for stage in ("selfplay", "train", "arena", "evaluate")]
    return steps
REFERENCES['check_plan'] = reference_plan

def reference_elo_difference(score):
    "400·log10(s / (1 - s)); a clean sweep (1) or a whitewash (0) has no finite difference."
    if score in (0, 1): return math.copysign(math.inf, score - 0.5)
    return 400 * math.log10(score / (1 - score))
REFERENCES['check_elo_difference'] = reference_elo_difference

def wrong_block_static(state):
    "Only looks at the board: does an opponent worker still have a free level-3 cell within one level of it?"
    blocks = []
    for action in state.legal_actions():
        after = state.apply(action)
        taken = {c for cells in after.workers for c in cells}
        threat = any(after.heights[to] == 3 and after.heights[here] >= 2 and to not in taken
                     for here in after.workers[after.player] for to in STEPS[here] if to is not None)
        if not threat: blocks.append(action)
    return blocks
WRONG['block_static'] = ('check_blocking_moves', wrong_block_static, 'a winning move stops it too')

def wrong_block_climbs_only(state):
    blocks = []
    for action in state.legal_actions():
        after = state.apply(action)
        if not any(after.heights[reply.to] == 3 for reply in after.legal_actions()): blocks.append(action)
    return blocks
WRONG['block_climbs_only'] = ('check_blocking_moves', wrong_block_climbs_only, 'leaving the other player no legal move')

def wrong_block_one_threat(state):
    "Domes (or stands on) the first level-3 cell the opponent could climb to, ignoring any second threat."
    taken = {c for cells in state.workers for c in cells}
    targets = [to for here in state.workers[1 - state.player] for to in STEPS[here]
               if to is not None and state.heights[here] >= 2 and state.heights[to] == 3 and to not in taken]
    if not targets: return []
    return [a for a in state.legal_actions() if targets[0] in (a.to, a.build)]
WRONG['block_one_threat'] = ('check_blocking_moves', wrong_block_one_threat, 'the opponent still wins with')

def wrong_value_per_ply(states, winner):
    "Flips the sign at every ply back from the last position, as if the players always alternated."
    return [1.0 if (len(states) - 1 - k) % 2 == 0 else -1.0 for k in range(len(states))]
WRONG['value_per_ply'] = ('check_value_targets', wrong_value_per_ply, 'do not flip the sign per ply')

def wrong_value_winner_view(states, winner):
    return [1.0] * len(states)  # the result from the winner's view, for every position
WRONG['value_winner_view'] = ('check_value_targets', wrong_value_winner_view, 'each target is for the player to move')

def wrong_value_sign(states, winner):
    return [-1.0 if state.player == winner else 1.0 for state in states]
WRONG['value_sign'] = ('check_value_targets', wrong_value_sign, 'the sign is the wrong way round')

def wrong_select_last_tie(priors, visits, value_sums, c_puct, fpu_value):
    best, best_score = 0, -math.inf
    sqrt_n = math.sqrt(1 + visits.sum())
    for e in range(len(priors)):
        q = value_sums[e] / visits[e] if visits[e] else fpu_value
        score = q + c_puct * priors[e] * sqrt_n / (1 + visits[e])
        if score >= best_score: best, best_score = e, score  # >= keeps the last of equal scores
    return best
WRONG['select_last_tie'] = ('check_select_edge', wrong_select_last_tie, 'ties go to the LOWEST index')

def wrong_select_no_plus_one(priors, visits, value_sums, c_puct, fpu_value):
    q = np.where(visits > 0, value_sums / np.maximum(visits, 1), fpu_value)
    return int(np.argmax(q + c_puct * priors * math.sqrt(visits.sum()) / (1 + visits)))
WRONG['select_no_plus_one'] = ('check_select_edge', wrong_select_no_plus_one, '1 + visits.sum()')

def wrong_select_q_zero(priors, visits, value_sums, c_puct, fpu_value):
    q = np.where(visits > 0, value_sums / np.maximum(visits, 1), 0.0)
    return int(np.argmax(q + c_puct * priors * math.sqrt(1 + visits.sum()) / (1 + visits)))
WRONG['select_q_zero'] = ('check_select_edge', wrong_select_q_zero, 'Q = fpu_value, not 0')

def wrong_augment_policy_unturned(planes, policy, s):
    return transform_planes(planes, s), policy.copy()  # the board turns, the move probabilities stay put
WRONG['augment_policy_unturned'] = ('check_augment', wrong_augment_policy_unturned, 'the policy did not')

def wrong_augment_inverse(planes, policy, s):
    return transform_planes(planes, s), policy[list(ACTION_PERMUTATIONS[s])]  # gathers with the forward table
WRONG['augment_inverse'] = ('check_augment', wrong_augment_inverse, 'the inverse permutation')

def wrong_plan_no_once(iterations):
    return [(i, stage) for i in range(1, iterations + 1) for stage in ("selfplay", "train", "arena", "evaluate")]
WRONG['plan_no_once'] = ('check_plan', wrong_plan_no_once, 'the one-off stages come first')

def wrong_plan_from_zero(iterations):
    return [(0, "init"), (0, "holdout"), (0, "references")] + [
        (i, stage) for i in range(iterations) for stage in ("selfplay", "train", "arena", "evaluate")]
WRONG['plan_from_zero'] = ('check_plan', wrong_plan_from_zero, 'iterations are counted from 1')

def wrong_elo_ln(score):
    if score in (0, 1): return math.copysign(math.inf, score - 0.5)
    return 400 * math.log(score / (1 - score))
WRONG['elo_ln'] = ('check_elo_difference', wrong_elo_ln, 'log10, not the natural log')

def wrong_elo_no_edges(score):
    return 400 * math.log10(score / (1 - score))  # divides by zero at a score of 1
WRONG['elo_no_edges'] = ('check_elo_difference', wrong_elo_no_edges, 'no finite Elo difference')

# Chapters 1b, 2b and 3b: the gods
from santorini_az.gods import beyond, god_legal_turns  # noqa: E402


def reference_minotaur_targets(play, worker):
    "The mortal steps, plus an opponent's cell when the cell straight behind it is on the board, free and not a dome."
    here, taken = play.mine[worker], set(play.mine) | set(play.theirs)
    targets = []
    for to in STEPS[here]:
        if to is None or to in play.mine or play.heights[to] == DOME or play.heights[to] > play.heights[here] + 1:
            continue  # off the board, our own worker, a dome, or a climb of two levels or more
        if to in play.theirs:  # a push: the opponent goes one cell further, straight on
            behind = beyond(here, to)
            if behind is None or behind in taken or play.heights[behind] == DOME: continue
        targets.append(to)
    return targets
REFERENCES['check_minotaur_targets'] = reference_minotaur_targets

def reference_sub_actions(state, turn):
    "Each step's number (place c, move 25 + 25·w + c, build 75 + c, dome 100 + c), then `end` if the turn could go on."
    offsets = {"place": 0, "build": 75, "dome": 100}
    numbers = [25 + 25 * step.worker + step.cell if step.kind == "move" else offsets[step.kind] + step.cell
               for step in turn]
    goes_on = any(len(other) > len(turn) and other[:len(turn)] == turn for other in god_legal_turns(state))
    return numbers + [125] if goes_on else numbers
REFERENCES['check_sub_actions'] = reference_sub_actions

REFERENCES['check_god_backup'] = reference_backup  # chapter 3's backup compares players: it is right for gods too


def minotaur_targets_with(pushable):
    "A Minotaur solution whose push test is `pushable(play, here, to, behind)` (the mortal steps are right)."
    def targets(play, worker):
        here = play.mine[worker]
        found = []
        for to in STEPS[here]:
            if to is None or to in play.mine or play.heights[to] == DOME: continue
            if to in play.theirs:
                if pushable(play, here, to, beyond(here, to)): found.append(to)
            elif play.heights[to] <= play.heights[here] + 1: found.append(to)
        return found
    return targets

def _free(play, cell): return cell not in play.mine and cell not in play.theirs
def _climbable(play, here, to): return play.heights[to] <= play.heights[here] + 1

WRONG['minotaur_off_board'] = ('check_minotaur_targets', minotaur_targets_with(
    lambda play, here, to, behind: _climbable(play, here, to) and (behind is None or (_free(play, behind) and play.heights[behind] != DOME))),
    'at the board\'s edge that cell is off the board')
WRONG['minotaur_onto_dome'] = ('check_minotaur_targets', minotaur_targets_with(
    lambda play, here, to, behind: _climbable(play, here, to) and behind is not None and _free(play, behind)),
    'must not hold a dome')
WRONG['minotaur_onto_worker'] = ('check_minotaur_targets', minotaur_targets_with(
    lambda play, here, to, behind: _climbable(play, here, to) and behind is not None and play.heights[behind] != DOME),
    'must be free: no worker of either side')
WRONG['minotaur_push_climbs_two'] = ('check_minotaur_targets', minotaur_targets_with(
    lambda play, here, to, behind: behind is not None and _free(play, behind) and play.heights[behind] != DOME),
    'Minotaur climbs by the mortal rule, pushing or not')
WRONG['minotaur_no_push_up'] = ('check_minotaur_targets', minotaur_targets_with(
    lambda play, here, to, behind: _climbable(play, here, to) and behind is not None and _free(play, behind)
    and play.heights[behind] <= play.heights[to]), 'onto any level, up or down')
WRONG['minotaur_no_push'] = ('check_minotaur_targets', minotaur_targets_with(lambda play, here, to, behind: False),
                             'the cell straight behind it')

def wrong_minotaur_steps_onto_a_dome(play, worker):  # no dome check on a plain step: 4 <= 3 + 1 from level 3
    here, right = play.mine[worker], reference_minotaur_targets(play, worker)
    return right + [to for to in STEPS[here] if to is not None and play.heights[to] == DOME and play.heights[here] == 3]
WRONG['minotaur_steps_onto_dome'] = ('check_minotaur_targets', wrong_minotaur_steps_onto_a_dome, 'a dome (level 4) can never be entered')

def sub_actions_with(number, end=True):
    "A sub-action solution that numbers each step with `number(step)`, and says `end` where the turn goes on if `end`."
    def sub_actions(state, turn):
        goes_on = any(len(other) > len(turn) and other[:len(turn)] == turn for other in god_legal_turns(state))
        return [number(step) for step in turn] + ([125] if goes_on and end else [])
    return sub_actions

def _number(step, move=lambda s: 25 + 25 * s.worker + s.cell, build=75, dome=100):
    return move(step) if step.kind == "move" else {"place": 0, "build": build, "dome": dome}[step.kind] + step.cell

WRONG['sub_actions_worker_ignored'] = ('check_sub_actions', sub_actions_with(lambda s: _number(s, move=lambda s: 25 + s.cell)),
                                       'a move names its worker')
WRONG['sub_actions_build_dome_swapped'] = ('check_sub_actions', sub_actions_with(lambda s: _number(s, build=100, dome=75)),
                                           'a block (build) is 75 + cell')
WRONG['sub_actions_no_end'] = ('check_sub_actions', sub_actions_with(_number, end=False), 'ends with `end` (125)')
WRONG['sub_actions_end_always'] = ('check_sub_actions', lambda state, turn: [_number(s) for s in turn] + [125],
                                   '`end` (125) only follows a turn that could have gone on')
WRONG['sub_actions_workers_from_1'] = ('check_sub_actions', sub_actions_with(
    lambda s: _number(s, move=lambda s: 25 + 25 * (s.worker + 1) + s.cell)), 'workers are indexed 0 and 1 in code')
WRONG['sub_actions_reversed'] = ('check_sub_actions', lambda state, turn: reference_sub_actions(state, turn)[::-1],
                                 'in the order its steps are played')

# chapter 3's wrong backups make the same mistakes for gods, where a turn is several decisions
WRONG['god_backup_per_level'] = ('check_god_backup', wrong_backup_per_ply, 'a god\'s turn is several decisions')
WRONG['god_backup_sign'] = ('check_god_backup', wrong_backup_sign, 'the sign is the wrong way round')
WRONG['god_backup_no_sign'] = ('check_god_backup', wrong_backup_no_sign, 'an edge whose player is the opponent gets -v')

def wrong_god_backup_leaf_only(path, leaf_player, value):
    node, edge = path[-1]
    node.visits[edge] += 1
    node.value_sums[edge] += value if node.player == leaf_player else -value
WRONG['god_backup_leaf_only'] = ('check_god_backup', wrong_god_backup_leaf_only, 'one visit to every edge on the path')

def reference_god_value_targets(players, winner):
    "+1 for the winner's decisions, -1 for the loser's; 0 for every decision of a draw."
    if winner is None: return [0.0] * len(players)
    return [1.0 if player == winner else -1.0 for player in players]
REFERENCES['check_god_value_targets'] = reference_god_value_targets

def wrong_god_value_per_decision(players, winner):
    if winner is None: return [0.0] * len(players)
    return [1.0 if (len(players) - 1 - k) % 2 == 0 else -1.0 for k in range(len(players))]
WRONG['god_value_per_decision'] = ('check_god_value_targets', wrong_god_value_per_decision, 'do not flip the sign per decision')

def wrong_god_value_draw_as_loss(players, winner):
    return [1.0 if player == winner else -1.0 for player in players]  # a draw scored as a loss for both
WRONG['god_value_draw'] = ('check_god_value_targets', wrong_god_value_draw_as_loss, 'a draw, 0 for every decision')

def wrong_god_value_first_player_view(players, winner):
    if winner is None: return [0.0] * len(players)
    return [1.0 if winner == 0 else -1.0] * len(players)  # player 1's view for every decision
WRONG['god_value_one_view'] = ('check_god_value_targets', wrong_god_value_first_player_view, 'each target is for the player to move')

def wrong_god_value_sign(players, winner):
    return [0.0] * len(players) if winner is None else [-1.0 if p == winner else 1.0 for p in players]
WRONG['god_value_sign'] = ('check_god_value_targets', wrong_god_value_sign, 'the sign is the wrong way round')

def reference_winning_turns(state):
    "The legal turns after which the player who played them has won (by the rules, a power, or a stuck opponent)."
    from santorini_az.gods import god_apply, god_legal_turns, god_winner
    return [turn for turn in god_legal_turns(state) if god_winner(god_apply(state, turn)) == state.player]
REFERENCES['check_winning_turns'] = reference_winning_turns

def wrong_winning_turns_climb_only(state):
    from santorini_az.gods import god_legal_turns
    heights = state.board.heights
    return [turn for turn in god_legal_turns(state) if any(s.kind == "move" and heights[s.cell] == 3 for s in turn)]
WRONG['winning_turns_climb_only'] = ('check_winning_turns', wrong_winning_turns_climb_only, 'Pan also wins by moving down')

def wrong_winning_turns_ignore_athena(state):
    from dataclasses import replace
    from santorini_az.gods import god_apply, god_legal_turns
    free = replace(state, athena_moved_up=False)  # as if Athena's mark did not hold
    return [turn for turn in god_legal_turns(free) if god_apply(free, turn).won]
WRONG['winning_turns_athena'] = ('check_winning_turns', wrong_winning_turns_ignore_athena, "Athena's mark")

def wrong_winning_turns_all(state):
    from santorini_az.gods import god_legal_turns
    return god_legal_turns(state)
WRONG['winning_turns_all'] = ('check_winning_turns', wrong_winning_turns_all, 'god_winner(god_apply(state, turn)) == state.player')

def wrong_winning_turns_climbs_and_powers_only(state):
    from santorini_az.gods import god_apply, god_legal_turns
    return [turn for turn in god_legal_turns(state) if god_apply(state, turn).won]  # forgets the stuck opponent
WRONG['winning_turns_not_stuck'] = ('check_winning_turns', wrong_winning_turns_climbs_and_powers_only, 'leaves the opponent no legal turn')

def test_a_god_position_in_a_message_is_read_by_the_god_rules():
    "After Apollo's swap the mortal stands on level 3 without having won: a failure must not draw it as 'has won'."
    from santorini_az.gods import parse_god_position
    shown = exercises._show_god(parse_god_position("0000000000002000300000000/1/apollo:C3,A1/mortal:B2,E2"))
    assert "player 1 (Apollo) to move" in shown and "has won" not in shown, shown

def wrong_visit_policy_no_scaling(visits, temperature):
    if temperature == 0: return reference_visit_policy(visits, 0)
    weights = [n ** (1 / temperature) for n in visits]  # overflows for thousands of visits at T = 0.01
    return [w / sum(weights) for w in weights]
WRONG['visit_policy_overflow'] = ('check_visit_policy', wrong_visit_policy_no_scaling, 'divide every visit count by the largest')

def wrong_visit_policy_last_maximum(visits, temperature):
    if temperature != 0: return reference_visit_policy(visits, temperature)
    best = len(visits) - 1 - visits[::-1].index(max(visits))
    return [1.0 if i == best else 0.0 for i in range(len(visits))]
WRONG['visit_policy_last_maximum'] = ('check_visit_policy', wrong_visit_policy_last_maximum, 'the first of them on ties')

def wrong_policy_loss_detached_normaliser(logits, target, legal):
    masked = logits.masked_fill(~legal, float("-inf"))
    log_p = masked - torch.logsumexp(masked, -1, keepdim=True).detach()  # the right number, the wrong gradient
    return -torch.where(legal, target * log_p, torch.zeros_like(log_p)).sum(-1).mean()
WRONG['policy_loss_gradient'] = ('check_policy_loss', wrong_policy_loss_detached_normaliser, 'but not its gradient')

def wrong_policy_loss_log_of_softmax(logits, target, legal):  # the right number; its gradient is nan (0 * log'(0))
    p = torch.softmax(logits.masked_fill(~legal, float("-inf")), -1)
    return -torch.where(legal, target * torch.log(p), torch.zeros_like(p)).sum(-1).mean()
WRONG['policy_loss_nan_gradient'] = ('check_policy_loss', wrong_policy_loss_log_of_softmax, 'the gradient is nan: log(softmax) is log(0)')

def wrong_wilson_percent(points, games):
    from santorini_az.arena import wilson_interval
    return tuple(100 * x for x in wilson_interval(points, games))
WRONG['wilson_percent'] = ('check_wilson_interval', wrong_wilson_percent, 'those are percentages: return fractions')

def wrong_wilson_other_side(points, games):
    from santorini_az.arena import wilson_interval
    return wilson_interval(games - points, games)
WRONG['wilson_other_side'] = ('check_wilson_interval', wrong_wilson_other_side, "the interval of the other side's score")

def wrong_negamax_strict_cutoff(state, depth, alpha, beta, evaluate):
    if depth == 0 or state.is_over(): return evaluate(state)
    best = -math.inf
    for action in state.legal_actions():
        score = -wrong_negamax_strict_cutoff(state.apply(action), depth - 1, -beta, -alpha, evaluate)
        best, alpha = max(best, score), max(alpha, score)
        if alpha > beta: break  # misses the cut-offs where alpha == beta
    return best
WRONG['negamax_strict_cutoff'] = ('check_negamax', wrong_negamax_strict_cutoff, 'some cut-offs happened, but too few')

def wrong_god_policy_without_end(actions, visits):
    policy = [0.0] * 126
    for action, n in zip(actions, visits):
        if action != 125: policy[action] = n / sum(visits)
    return policy
WRONG['god_policy_without_end'] = ('check_god_policy', wrong_god_policy_without_end, 'it gets its share of the visits too')

def wrong_god_policy_normalised_without_end(actions, visits):
    "end left out and the others normalised among themselves: the first share to differ is not end's (a trial's)."
    kept = [(a, n) for a, n in zip(actions, visits) if a != 125]
    policy = [0.0] * 126
    for action, n in kept: policy[action] = n / sum(m for _, m in kept)
    return policy
WRONG['god_policy_normalised_without_end'] = ('check_god_policy', wrong_god_policy_normalised_without_end,
                                              'it gets its share of the visits too')

def wrong_winning_turns_first_only(state):
    "The first winning turn alone (a Pan drop, where it is one): the power hint would mislead; the count says it."
    return reference_winning_turns(state)[:1]
WRONG['winning_turns_first_only'] = ('check_winning_turns', wrong_winning_turns_first_only,
                                     'turns win here and your function listed 1: return every one of them')

def wrong_wilson_in_float32(points, games):
    return tuple(float(np.float32(x)) for x in reference_wilson_interval(points, games))
WRONG['wilson_float32'] = ('check_wilson_interval', wrong_wilson_in_float32, 'as float32 computes them')

def wrong_softmax_log_probabilities(logits, legal):
    return logits.masked_fill(~legal, float("-inf")).log_softmax(-1)
WRONG['softmax_log_probabilities'] = ('check_legal_softmax', wrong_softmax_log_probabilities, 'these are log-probabilities')

def wrong_wilson_centre_and_half_width(points, games):
    low, high = reference_wilson_interval(points, games)
    return (low + high) / 2, (high - low) / 2
WRONG['wilson_centre_half'] = ('check_wilson_interval', wrong_wilson_centre_and_half_width, "the interval's ends")

def wrong_wilson_swapped(points, games):
    return reference_wilson_interval(points, games)[::-1]
WRONG['wilson_swapped'] = ('check_wilson_interval', wrong_wilson_swapped, 'the low end comes first')

def reference_god_policy(actions, visits):
    "Each edge's share of the visits, at its sub-action number; 0 for the sub-actions that are not edges."
    policy = [0.0] * 126
    for action, n in zip(actions, visits): policy[action] = n / sum(visits)
    return policy
REFERENCES['check_god_policy'] = reference_god_policy

def wrong_god_policy_by_edge(actions, visits):
    return [n / sum(visits) for n in visits] + [0.0] * (126 - len(visits))
WRONG['god_policy_by_edge'] = ('check_god_policy', wrong_god_policy_by_edge, "at its sub-action number actions[i]")

def wrong_god_policy_counts(actions, visits):
    policy = [0.0] * 126
    for action, n in zip(actions, visits): policy[action] = float(n)
    return policy
WRONG['god_policy_counts'] = ('check_god_policy', wrong_god_policy_counts, 'divide by the sum of the visits')

def wrong_god_policy_per_edge(actions, visits):
    return [n / sum(visits) for n in visits]
WRONG['god_policy_short'] = ('check_god_policy', wrong_god_policy_per_edge, 'one number per sub-action')

def reference_power_tally(games):
    "Each god's (points, games): a win 1, a draw 0.5, from the seat the god sits in."
    tally = {}
    for gods, winner in games:
        god = gods[0] if gods[1] == "mortal" else gods[1]
        points, played = tally.get(god, (0.0, 0))
        tally[god] = (points + (0.5 if winner is None else float(winner == gods.index(god))), played + 1)
    return tally
REFERENCES['check_power_tally'] = reference_power_tally

def tally_with(seat=lambda gods, god: gods.index(god), draw=0.5, mortal=False):
    "A tally with one mistake: the god's seat, a draw's points, or an entry for the mortal."
    def tally(games):
        out = {}
        for gods, winner in games:
            god = gods[0] if gods[1] == "mortal" else gods[1]
            points, played = out.get(god, (0.0, 0))
            out[god] = (points + (draw if winner is None else float(winner == seat(gods, god))), played + 1)
        if mortal: out["mortal"] = (0.0, len(games))
        return out
    return tally
WRONG['power_tally_first_seat'] = ('check_power_tally', tally_with(seat=lambda gods, god: 0), "gods.index(god)")
WRONG['power_tally_mortal_points'] = ('check_power_tally', tally_with(seat=lambda gods, god: 1 - gods.index(god)), "the points are the god's")
WRONG['power_tally_draw_lost'] = ('check_power_tally', tally_with(draw=0.0), "a draw (winner None")
WRONG['power_tally_draw_won'] = ('check_power_tally', tally_with(draw=1.0), "is half a point")
WRONG['power_tally_mortal_entry'] = ('check_power_tally', tally_with(mortal=True), "count the gods only")

def tally_of_one_seat(seat):
    "Every game tallied under gods[seat], as if the god always sat there: the mortal gets an entry too."
    def tally(games):
        out = {}
        for gods, winner in games:
            points, played = out.get(gods[seat], (0.0, 0))
            out[gods[seat]] = (points + (0.5 if winner is None else float(winner == seat)), played + 1)
        return out
    return tally
WRONG['power_tally_god_always_second'] = ('check_power_tally', tally_of_one_seat(1), "your tally takes gods[1] in every game")
WRONG['power_tally_god_always_first'] = ('check_power_tally', tally_of_one_seat(0), "your tally takes gods[0] in every game")

def policy_loss_with_epsilon(eps):
    "The log of the legal softmax plus a small constant: close to the loss, not it."
    def loss(logits, target, legal):
        p = logits.masked_fill(~legal, float("-inf")).softmax(-1)
        return -(target * torch.log(p + eps)).sum(-1).mean()
    return loss
WRONG['policy_loss_epsilon_gradient'] = ('check_policy_loss', policy_loss_with_epsilon(1e-8), "a small constant in the log")
WRONG['policy_loss_epsilon_value'] = ('check_policy_loss', policy_loss_with_epsilon(1e-6), "a small constant in the log")

def policy_loss_in_place(logits, target, legal):
    logits.masked_fill_(~legal, -1e9)  # torch refuses: the logits are a leaf that requires grad
    return -(target * logits.log_softmax(-1)).sum(-1).mean()
WRONG['policy_loss_in_place'] = ('check_policy_loss', policy_loss_in_place, "an in-place operation (masked_fill_")

def augment_in_float16(planes, policy, s):
    return transform_planes(planes, s), transform_policy(policy, s).astype(np.float16)
WRONG['augment_float16'] = ('check_augment', augment_in_float16, "yours is float16")

def select_edge_nan_q(priors, visits, value_sums, c_puct, fpu_value):
    with np.errstate(invalid="ignore"): q = value_sums / visits  # nan where visits is 0
    return int(np.argmax(q + c_puct * priors * np.sqrt(1 + visits.sum()) / (1 + visits)))
WRONG['select_edge_nan_q'] = ('check_select_edge', select_edge_nan_q, "value_sums / visits is nan (0 / 0)")

def select_edge_inf_exploration(priors, visits, value_sums, c_puct, fpu_value):
    q = np.where(visits > 0, value_sums / np.maximum(visits, 1), fpu_value)
    with np.errstate(divide="ignore"): return int(np.argmax(q + c_puct * priors * np.sqrt(1 + visits.sum()) / visits))
WRONG['select_edge_inf_exploration'] = ('check_select_edge', select_edge_inf_exploration, "divide by 1 + visits")

def plan_stage_by_stage(iterations):
    "Every iteration's self-play, then every iteration's training, ...: the loops nested the wrong way round."
    from santorini_az.loop import STAGES
    return [(0, "init"), (0, "holdout"), (0, "references")] + [(i, s) for s in STAGES for i in range(1, iterations + 1)]
WRONG['plan_loops_nested_wrong'] = ('check_plan', plan_stage_by_stage, "the loop over the stages goes inside")
WRONG['god_targets_players_from_1'] = ('check_god_value_targets', lambda players, winner: [0.0] * len(players)
                                       if winner is None else [1.0 if p + 1 == winner else -1.0 for p in players],
                                       "players and winner count from 0 alike")
WRONG['god_targets_booleans'] = ('check_god_value_targets', lambda players, winner: [p == winner for p in players],
                                 "a comparison gives True or False")

def god_backup_flipping_from_plus(path, leaf_player, value):
    "+v on the leaf's parent's edge, then the sign flipped at every level up: the mid-turn edges get it wrong."
    for k, (node, edge) in enumerate(reversed(path)):
        node.visits[edge] += 1
        node.value_sums[edge] += value if k % 2 == 0 else -value
WRONG['god_backup_flipping_from_plus'] = ('check_god_backup', god_backup_flipping_from_plus, "do not flip the sign at every level")

def backup_returning_new_lists(path, leaf_player, value):
    "The right numbers in new lists, returned; the nodes keep what they had."
    return [(node.visits[edge] + 1, node.value_sums[edge] + (value if node.player == leaf_player else -value))
            for node, edge in path]
WRONG['backup_returning_new_lists'] = ('check_god_backup', backup_returning_new_lists, "your function changed no node")

def negamax_without_the_minus(state, depth, alpha, beta, evaluate):
    "The child's score taken as ours (its window still negated and swapped)."
    if depth == 0 or state.is_over(): return evaluate(state)
    best = -math.inf
    for action in legal_actions(state):
        score = negamax_without_the_minus(apply(state, action), depth - 1, -beta, -alpha, evaluate)
        best, alpha = max(best, score), max(alpha, score)
        if alpha >= beta: break
    return best
WRONG['negamax_without_the_minus'] = ('check_negamax', negamax_without_the_minus, "negate the child's score")

# Mistakes whose hint once named another mistake, or that passed (found by a review of the checkers)
def legal_actions_one_worker(state):
    return [a for a in reference_legal_actions(state) if isinstance(a, Placement) or a.worker == 0]
WRONG['legal_one_worker'] = ('check_legal_actions', legal_actions_one_worker, 'both workers may move')

def legal_actions_no_drop(state):  # a worker may not drop more than one level
    return [a for a in reference_legal_actions(state) if isinstance(a, Placement) or
            state.heights[a.to] >= state.heights[state.workers[state.player][a.worker]] - 1]
WRONG['legal_no_drop'] = ('check_legal_actions', legal_actions_no_drop, 'a worker may drop any number of levels')

def blocking_moves_onto_a_dome(state):  # a hand-made move that no rule allows: named, not a crash in the checker
    return reference_blocking_moves(state) + [Move(0, 25, 0)]
WRONG['block_illegal_move'] = ('check_blocking_moves', blocking_moves_onto_a_dome, 'a blocking move is one of `legal_actions(state)`')
WRONG['block_twice'] = ('check_blocking_moves', lambda state: 2 * list(reference_blocking_moves(state)), 'list each blocking move once')
WRONG['winning_turns_twice'] = ('check_winning_turns', lambda state: 2 * list(reference_winning_turns(state)), 'list each winning turn once')

def winning_turns_of_the_opponent(state):
    from santorini_az.gods import god_apply, god_legal_turns, god_winner
    return [t for t in god_legal_turns(state) if god_winner(god_apply(state, t)) == 1 - state.player]
WRONG['winning_turns_perspective'] = ('check_winning_turns', winning_turns_of_the_opponent, '== state.player')

def test_winning_turns_of_the_opponent_not_told_of_a_power():
    "A function that finds no win anywhere is asking the wrong question: Pan's drop is not what it misses."
    with pytest.raises(ExerciseFailed) as failure: exercises.check_winning_turns(winning_turns_of_the_opponent)
    message = str(failure.value)
    assert "finds no winning turn on any of the 18 positions" in message and "Pan also wins" not in message, message

def wrong_wilson_short(points, games):
    z, p = 1.96, points / games
    centre = (p + z * z / (2 * games)) / (1 + z * z / games)
    half = z * math.sqrt(p * (1 - p) / games) / (1 + z * z / games)  # the second term under the root left out
    return centre - half, centre + half
WRONG['wilson_short'] = ('check_wilson_interval', wrong_wilson_short, 'a second term under the square root')

def wrong_negamax_one_ply_short(state, depth, alpha, beta, evaluate):
    if depth <= 1 or state.is_over(): return evaluate(state)
    best = -math.inf
    for action in state.legal_actions():
        score = -wrong_negamax_one_ply_short(state.apply(action), depth - 1, -beta, -alpha, evaluate)
        best, alpha = max(best, score), max(alpha, score)
        if alpha >= beta: break
    return best
WRONG['negamax_one_ply_short'] = ('check_negamax', wrong_negamax_one_ply_short, 'one ply short')

# The mistakes a learner's review found the hints got wrong (2026-12-06): each now gets its own hint.
def negamax_ordered_by_evaluate(state, depth, alpha, beta, evaluate):
    "Correct α-β, its moves ordered by evaluating every child: the evaluations the cut-offs save are spent sorting."
    if depth == 0 or state.is_over(): return evaluate(state)
    best = -math.inf
    for child in sorted((state.apply(a) for a in state.legal_actions()), key=evaluate):
        score = -negamax_ordered_by_evaluate(child, depth - 1, -beta, -alpha, evaluate)
        best, alpha = max(best, score), max(alpha, score)
        if alpha >= beta: break
    return best
WRONG['negamax_ordered_by_evaluate'] = ('check_negamax', negamax_ordered_by_evaluate, 'calls evaluate above the leaves')

def softmax_masked_after_the_exp(logits, legal):
    largest_legal = logits.masked_fill(~legal, float("-inf")).max(-1, keepdim=True).values
    e = (logits - largest_legal).exp() * legal  # an illegal logit far above the legal ones: inf × 0
    return e / e.sum(-1, keepdim=True)
WRONG['softmax_masked_after_the_exp'] = ('check_legal_softmax', softmax_masked_after_the_exp, 'inf × 0 = nan')

def legal_placements_anywhere_free(state):
    taken = {c for cells in state.workers for c in cells}
    if len(state.workers[state.player]) < 2: return [Placement(c) for c in range(CELLS) if c not in taken]  # level 3, domes
    return reference_legal_actions(state)
WRONG['legal_placements_anywhere_free'] = ('check_legal_actions', legal_placements_anywhere_free, 'empty cells of level 0-2')

def legal_none_once_the_mover_stands_high(state):
    if any(state.heights[c] == 3 for c in state.workers[state.player]): return []  # the player to move, not the last mover
    return reference_legal_actions(state)
WRONG['legal_wrong_player_on_level_3'] = ('check_legal_actions', legal_none_once_the_mover_stands_high,
                                          'only when the player who has just moved stands on level 3')

WRONG['value_players_from_1'] = ('check_value_targets', lambda states, winner: [1.0 if s.player + 1 == winner else -1.0
                                                                                 for s in states], 'both count from 0')
WRONG['god_value_not_winner'] = ('check_god_value_targets', lambda players, winner: [0.0] * len(players) if not winner else
                                 [1.0 if p == winner else -1.0 for p in players], 'test `winner is None`')

def select_negated_q(priors, visits, value_sums, c_puct, fpu_value):
    q = np.where(visits > 0, -value_sums / np.maximum(visits, 1), fpu_value)
    return int(np.argmax(q + c_puct * priors * math.sqrt(1 + visits.sum()) / (1 + visits)))
WRONG['select_negated_q'] = ('check_select_edge', select_negated_q, 'with no sign change')

def select_divided_by_visits(priors, visits, value_sums, c_puct, fpu_value):
    q = np.where(visits > 0, value_sums / np.maximum(visits, 1), fpu_value)
    return int(np.argmax(q + c_puct * priors * math.sqrt(1 + visits.sum()) / np.maximum(visits, 1)))
WRONG['select_divided_by_visits'] = ('check_select_edge', select_divided_by_visits, 'by 1 + visits, not by visits')
WRONG['elo_ends_swapped'] = ('check_elo_difference', lambda s: -math.inf if s >= 1 else math.inf if s <= 0 else
                             400 * math.log10(s / (1 - s)), 'a score of 1 (every point) is +inf')
WRONG['select_edge_most_visited'] = ('check_select_edge', lambda priors, visits, value_sums, c_puct, fpu_value:
                                     int(np.argmax(visits)), 'not the most visited one')
WRONG['legal_actions_of_the_opponent'] = ('check_legal_actions', lambda state: reference_legal_actions(
    State(state.heights, state.workers, 1 - state.player)) if not in_setup(state) and not has_climbed(state)
    and not any(state.heights[c] == 3 for c in state.workers[state.player]) else reference_legal_actions(state),
    "your extra moves are the opponent's")
WRONG['legal_softmax_bfloat16_cast_back'] = ('check_legal_softmax', lambda logits, legal: reference_legal_softmax(
    logits.bfloat16(), legal).float(), 'as if computed in float16 or bfloat16')
WRONG['visit_policy_divides_by_temperature'] = ('check_visit_policy', lambda visits, t: [n ** (1 / t) / sum(m ** (1 / t) for m in visits)
                                                                                         for n in visits], '`t` is 0 on this input, so handle `t` == 0')

# ... and the mistakes those hints must not be given to (the review of the change, 2026-12-06)
def negamax_evaluating_every_node(state, depth, alpha, beta, evaluate):
    "No cut-offs, and evaluate called at every node (not to order moves): the no-cut-offs hint, not the ordering one."
    score = evaluate(state)
    if depth == 0 or state.is_over(): return score
    return max(-negamax_evaluating_every_node(state.apply(a), depth - 1, -beta, -alpha, evaluate) for a in state.legal_actions())
def negamax_leaf_negated(state, depth, alpha, beta, evaluate):
    "The leaf's score negated as well as the child's: every leaf counted from the wrong side."
    if depth == 0 or state.is_over(): return -evaluate(state)
    best = -math.inf
    for action in state.legal_actions():
        best = max(best, -negamax_leaf_negated(state.apply(action), depth - 1, -beta, -alpha, evaluate))
        alpha = max(alpha, best)
        if alpha >= beta: break
    return best
WRONG['negamax_leaf_negated'] = ('check_negamax', negamax_leaf_negated, 'return evaluate(state) as it is')
WRONG['negamax_evaluating_every_node'] = ('check_negamax', negamax_evaluating_every_node, 'no cut-offs happened')
WRONG['value_always_minus_one'] = ('check_value_targets', lambda states, winner: [-1.0] * len(states),
                                   'each target is for the player to move')

def test_hints_named_only_for_the_mistake_made():
    "All zeros is not `if not winner`, always -1 is not counting from 1, nan is not a large finite number."
    for checker, fn, not_said in [
            ('check_god_value_targets', lambda players, winner: [0.0] * len(players), 'if not winner'),
            ('check_value_targets', lambda states, winner: [-1.0] * len(states), 'count from 0'),
            ('check_value_targets', lambda states, winner: [1.0 if s.player == 0 else -1.0 for s in states], 'count from 0'),
            ('check_elo_difference', lambda s: math.nan if s >= 1 else -math.inf if s <= 0 else 400 * math.log10(s / (1 - s)),
             'finite number')]:
        with pytest.raises(ExerciseFailed) as failure: getattr(exercises, checker)(fn)
        assert "HINT: " in str(failure.value) and not_said not in str(failure.value), str(failure.value)

def test_a_misplaced_policy_is_named_in_the_turned_position():
    "The moves of a policy that did not turn are named in the position under the symmetry, and that position is shown."
    with pytest.raises(ExerciseFailed) as failure: exercises.check_augment(wrong_augment_policy_unturned)
    message = str(failure.value)
    assert "the position under symmetry 1, where the moves below are named:\n" in message, message
    turned = message.split("where the moves below are named:\n")[1]
    assert turned.index("notation: ") < turned.index("expected policy (the moves that differ most)")

def test_the_tally_input_shows_a_draw():
    def tally_without_draws(games):  # gods[None] raises on a draw
        out = {}
        for gods, winner in games:
            god = gods[0] if gods[1] == "mortal" else gods[1]
            points, played = out.get(god, (0.0, 0))
            out[god] = (points + float(gods[winner] == god), played + 1)
        return out
    with pytest.raises(ExerciseFailed, match=r"and draws such as \(\('\w+', '\w+'\), None\)"):
        exercises.check_power_tally(tally_without_draws)

def test_a_changed_argument_is_shown_as_it_was_given():
    def normalises_in_place(actions, visits):
        total = sum(visits)
        visits[:] = [v / total for v in visits]
        return reference_god_policy(actions, visits)
    with pytest.raises(ExerciseFailed) as failure: exercises.check_god_policy(normalises_in_place)
    message = str(failure.value)
    shown = message.split("visits  = ")[1].split("\n")[0]
    assert "changed its argument `visits`" in message and "." not in shown.split(",")[0], shown  # counts, not shares

@pytest.mark.parametrize("checker", sorted(REFERENCES))
def test_reference_passes(checker, capsys):
    assert getattr(exercises, checker)(REFERENCES[checker]) is True
    assert capsys.readouterr().out.startswith(f"✓ {checker}: your function agrees with")

def test_wilson_with_the_exact_quantile_passes(capsys):
    "z = 1.95996..., the 97.5% normal quantile itself, is as right as the rounded 1.96 the exercise names."
    from statistics import NormalDist
    exact = functools.partial(reference_wilson_interval, z=NormalDist().inv_cdf(0.975))
    assert exercises.check_wilson_interval(exact) is True, capsys.readouterr().out

def stub(*args): raise NotImplementedError  # your code here

@pytest.mark.parametrize("checker", sorted(REFERENCES))
def test_stub_returns_false(checker, capsys):
    assert getattr(exercises, checker)(stub) is False
    assert "not written yet: fill in `stub` above" in capsys.readouterr().out

@pytest.mark.parametrize("name", sorted(WRONG))
def test_wrong_solution_named(name):
    checker, fn, hint = WRONG[name]
    with pytest.raises(ExerciseFailed) as failure: getattr(exercises, checker)(fn)
    message = str(failure.value)
    assert message.startswith(f"✗ {checker}:")
    assert f"HINT: " in message and hint in message, message

def test_other_exception_names_the_input():
    def crashes(state): return [Placement(state.heights[25])]  # IndexError: there are 25 cells, 0-24
    with pytest.raises(ExerciseFailed, match="your function raised IndexError") as failure:
        exercises.check_legal_actions(crashes)
    message = str(failure.value)
    assert "notation: " in message and "in crashes, line" in message and "state.heights[25]" in message
    assert isinstance(failure.value.error, IndexError)  # kept for whoever wants the traceback ...
    assert failure.value.__cause__ is None and failure.value.__suppress_context__  # ... but not printed under the message
    assert failure.value._render_traceback_()[0].startswith("ExerciseFailed: ✗ check_legal_actions: your function raised")

def test_failure_shows_position_and_difference():
    _, fn, _ = WRONG["legal_no_dome"]
    with pytest.raises(ExerciseFailed) as failure: exercises.check_legal_actions(fn)
    message = str(failure.value)
    assert "notation: 3400000000000000000000000/1/A5,E1/E5,A1" in message  # the position as notation
    assert "5  3a D." in message  # ... and drawn
    assert "extra (5): A5>B5^A4" in message and "missing" not in message

def test_checks_are_deterministic(capsys):
    for _ in range(2): exercises.check_negamax(REFERENCES["check_negamax"])
    first, second = capsys.readouterr().out.splitlines()
    assert first == second

def test_stuck_threats_are_what_they_say():
    "Each STUCK_THREATS position has a move after which the opponent's only wins leave the player to move stuck."
    from santorini_az.game import apply, legal_actions
    from santorini_az.notation import parse_position
    from santorini_az.puzzles import threatened, wins_at_once
    for text in exercises.STUCK_THREATS:
        state = parse_position(text)
        assert threatened(state)
        def stuck_only(action):
            after = apply(state, action)
            wins = [r for r in legal_actions(after) if wins_at_once(after, r)]
            return wins and all(after.heights[r.to] != 3 for r in wins)
        assert any(stuck_only(a) for a in legal_actions(state)), text


def test_softmax_max_of_all_logits_is_not_called_an_overflow():
    "Subtracting the max of all 153 logits makes every legal exp underflow (0/0), where the max is an illegal one's."
    with pytest.raises(ExerciseFailed) as failure: exercises.check_legal_softmax(wrong_softmax_max_of_all)
    message = str(failure.value)
    assert "large logits" in message and "0/0, not an overflow" in message and "is an illegal action's" in message
    assert "exp overflows" not in message
    with pytest.raises(ExerciseFailed) as failure: exercises.check_legal_softmax(wrong_softmax_overflow)
    assert "exp overflows for large logits" in str(failure.value)  # the real overflow keeps its hint


# Learner code that misbehaves: every checker calls the learner's function through one guard (exercises._call)
def raises(*args): return 1 / 0

def loops(*args):
    while True: pass

def loops_swallowing(*args):  # a retry loop that swallows every Exception: the time limit is not one
    while True:
        try: time.sleep(0.01)
        except Exception: pass

FIRST_INPUT = {  # checker -> part of the first input it shows
    "check_legal_actions": 'edge position "a dome next to a worker":',
    "check_puct_scores": "config: c_puct=1.25, fpu_value=0.0",
    "check_backup": "leaf: player 1 to move, value +0.250",
    "check_legal_softmax": "ordinary logits: logits [32, 153]",
    "check_wilson_interval": "points = 3, games = 5",
    "check_cell_name": "cell = 0 (row 0, column 0)",
    "check_sub_actions": "turn = C3: place C3",
    "check_negamax": "depth = 2, alpha = -inf, beta = +inf",
}

@pytest.mark.parametrize("checker", sorted(FIRST_INPUT))
def test_raising_function_named_with_its_input(checker):
    with pytest.raises(ExerciseFailed) as failure: getattr(exercises, checker)(raises)
    message = str(failure.value)
    assert message.startswith(f"✗ {checker}: your function raised ZeroDivisionError: division by zero\n"), message
    assert "  in raises, line" in message and "return 1 / 0" in message  # the learner's own line
    assert "on this input:\n" in message and FIRST_INPUT[checker] in message
    assert isinstance(failure.value.error, ZeroDivisionError) and failure.value.__cause__ is None

@pytest.fixture
def one_second(monkeypatch):
    "A 1-second limit per call (5 otherwise); afterwards the alarm and its handler must be as they were."
    monkeypatch.setattr(exercises, "TIME_LIMIT", 1.0)
    handler = signal.getsignal(signal.SIGALRM)
    yield
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0) and signal.getsignal(signal.SIGALRM) is handler

@pytest.mark.parametrize("checker", ["check_negamax", "check_symmetry", "check_wilson_interval"])
def test_endless_loop_stopped(checker, one_second):
    start = time.perf_counter()
    with pytest.raises(ExerciseFailed) as failure: getattr(exercises, checker)(loops)
    assert time.perf_counter() - start < 10
    message = str(failure.value)
    assert message.startswith(f"✗ {checker}: your function did not return within 1 second, so the checker stopped it")
    assert "  in loops, line" in message and "while True: pass" in message  # where it was when stopped
    assert "on this input:\n" in message and "TIME_LIMIT" in message

def test_endless_loop_that_swallows_exceptions_stopped(one_second):
    with pytest.raises(ExerciseFailed, match="did not return within 1 second"): exercises.check_cell_name(loops_swallowing)

def loops_swallowing_everything(*args):  # a bare except around work in C: every alarm arrives as the work returns
    while True:
        try: sum(range(10_000))
        except: pass

def loops_swallowing_around_a_with(*args):  # the work inside a library's context manager, which must exit whole
    while True:
        try:
            with torch.no_grad(): torch.ones(64, 64) @ torch.ones(64, 64)
        except: pass

def test_endless_loop_with_a_bare_except_stopped(one_second):
    """The alarm, swallowed by a bare `except:` each time, is raised again at the learner's next line, in the except's
    body; never in library code (torch.no_grad's exit runs whole), and a tracer that ran before (a debugger's, coverage's)
    is put back."""
    lines = []
    def outer_tracer(frame, event, arg):  # stands for a debugger's: it sees the calls, and the checker must give it back
        lines.append(event)
        return None
    sys.settrace(outer_tracer)
    try:
        with pytest.raises(ExerciseFailed, match="did not return within 1 second") as failure:
            exercises.check_cell_name(loops_swallowing_everything)
        assert sys.gettrace() is outer_tracer
    finally: sys.settrace(None)
    assert "loops_swallowing_everything" in str(failure.value) and lines
    with pytest.raises(ExerciseFailed, match="did not return within 1 second"): exercises.check_cell_name(loops_swallowing_around_a_with)
    assert torch.is_grad_enabled() and sys.gettrace() is None

def test_endless_loop_stopped_off_the_main_thread(one_second):
    "Off the main thread (nbdev-test runs cells on a thread of its own) a watchdog thread stops the loop."
    failures = []
    def check():
        try: exercises.check_cell_name(loops)
        except ExerciseFailed as e: failures.append(str(e))
    worker = threading.Thread(target=check)
    worker.start()
    worker.join(10)
    assert not worker.is_alive() and len(failures) == 1
    assert "did not return within 1 second" in failures[0] and "while True: pass" in failures[0]
    assert "cell = 0 (row 0, column 0)" in failures[0]

def _generator_of(fn): return lambda *args: (x for x in fn(*args))

WRONG_TYPES = {  # name -> (checker, function, the words its message must contain)
    "value_targets_booleans": ("check_value_targets", lambda states, winner: [s.player == winner for s in states],
                               ["item 0 is a bool", "True or False, which Python counts as 1 and 0"]),
    "symmetry_as_list": ("check_symmetry", lambda planes, s: reference_symmetry(planes, s).tolist(),
                         ["returned a list of 5", "not a list (.tolist())"]),
    "symmetry_booleans": ("check_symmetry", lambda planes, s: reference_symmetry(planes, s) > 0,
                          ["its entries are bool, not floats"]),
    "puct_none": ("check_puct_scores", lambda node, config: None,
                  ["returned None; expected a list of numbers", "without a `return`"]),
    "legal_actions_none": ("check_legal_actions", lambda state: None, ["returned None; expected a list of actions"]),
    "visit_policy_generator": ("check_visit_policy", _generator_of(reference_visit_policy),
                               ["returned a generator; expected a list of numbers", "read only once",
                                "returns a generator expression"]),
    "softmax_numpy": ("check_legal_softmax", lambda logits, legal: reference_legal_softmax(logits, legal).numpy(),
                      ["returned a numpy.ndarray of shape (32, 153); expected a torch tensor", "torch operations"]),
    "cell_name_int": ("check_cell_name", lambda cell: cell, ["returned an int 0; expected a string such as 'A5'"]),
    "wilson_string": ("check_wilson_interval", lambda points, games: f"{points / games:.3f} ± 0.1",
                      ["returned a str '0.600 ± 0.1'; expected a pair of numbers", "not a string"]),
    "wilson_three": ("check_wilson_interval", lambda points, games: (0.0, 0.5, 1.0),
                     ["returned a tuple of 3: (0.0, 0.5, 1.0): it holds 3 values, not 2"]),
    "select_edge_float": ("check_select_edge", lambda *args: float(reference_select_edge(*args)),
                          ["returned a float", "expected an edge index (an int)"]),
    "policy_loss_item": ("check_policy_loss", lambda *args: reference_policy_loss(*args).item(),
                         ["returned a float", "expected a one-number torch tensor", "not .item()"]),
    "value_targets_none_item": ("check_value_targets", lambda states, winner: [None] * len(states),
                                ["item 0 is None, not a number"]),
    "legal_actions_plain_tuples": ("check_legal_actions", lambda state: [tuple(a) for a in reference_legal_actions(state)],
                                   ["item 0 is a tuple", "not a Placement or a Move"]),
    "sub_actions_set": ("check_sub_actions", lambda state, turn: set(reference_sub_actions(state, turn)),
                        ["returned a set of 1: {12}", "a set keeps no order", "return a list"]),
    "winning_turns_as_text": ("check_winning_turns",
                              lambda state: [format_turn(state, t) for t in reference_winning_turns(state)],
                              ["not a turn (a tuple of Steps)"]),
    "plan_pairs_swapped": ("check_plan", lambda iterations: [(stage, i) for i, stage in reference_plan(iterations)],
                           ["item 0 is a tuple", "the stage comes second: (iteration, stage), not (stage, iteration)"]),
    "elo_in_a_list": ("check_elo_difference", lambda score: [reference_elo_difference(score)],
                      ["returned a list of 1", "HINT: return the number itself, not a collection that holds it"]),
    "symmetry_generator": ("check_symmetry", lambda planes, s: (row for row in reference_symmetry(planes, s)),
                           ["returned a generator", "collect its values into a numpy array"]),  # it said 'a list', which is refused next
    "winning_turns_flattened": ("check_winning_turns",
                                lambda state: [step for t in reference_winning_turns(state) for step in t],
                                ["not a turn (a tuple of Steps)"]),
}

@pytest.mark.parametrize("name", sorted(WRONG_TYPES))
def test_wrong_type_named(name):
    checker, fn, words = WRONG_TYPES[name]
    with pytest.raises(ExerciseFailed) as failure: getattr(exercises, checker)(fn)
    message = str(failure.value)
    assert message.startswith(f"✗ {checker}: your function returned") and "on this input:\n" in message, message
    assert all(w in message for w in words), message

@pytest.mark.parametrize("checker, fn", [("check_legal_actions", _generator_of(reference_legal_actions)),
                                         ("check_minotaur_targets", _generator_of(reference_minotaur_targets))])
def test_generator_accepted_where_any_iterable_is(checker, fn):
    assert getattr(exercises, checker)(fn) is True

def test_numpy_cell_numbers_accepted():
    assert exercises.check_minotaur_targets(lambda play, worker: np.array(reference_minotaur_targets(play, worker))) is True

def test_a_path_changed_by_the_learner_is_shown_as_it_was():
    "The input shown is the path as the checker handed it over, not what the learner's function left of it."
    def popping(path, leaf_player, value):
        while path: path.pop()
    with pytest.raises(ExerciseFailed) as failure: exercises.check_backup(popping)
    message = str(failure.value)
    assert "changed its argument `path`" in message
    table = message.split("on this input:\n", 1)[1]
    assert table.count("\n") >= 3 and "leaf:" in table, message

def visit_policy_sorting(visits, temperature):
    policy = reference_visit_policy(visits, temperature)
    visits.sort()  # sorts the caller's list
    return policy

def softmax_in_place(logits, legal):
    return logits.masked_fill_(~legal, float("-inf")).softmax(dim=-1)  # masked_fill_ writes into the logits

def puct_touching_priors(node, config):
    scores = reference_puct_scores(node, config)
    node.priors[0] = 0.0
    return scores

def backup_reversing(path, leaf_player, value):
    path.reverse()  # the right sums in the end, but the caller's path is now upside down
    reference_backup(path, leaf_player, value)

def symmetry_writing_through(planes, s):
    turned = reference_symmetry(planes, s).copy()
    planes[0, 0, :3] += 1
    return turned

def value_targets_reversing(states, winner):
    targets = reference_value_targets(states, winner)
    states.reverse()
    return targets

def augment_overwriting_policy(planes, policy, s):
    turned = transform_policy(policy, s)
    policy[:] = turned  # a no-op for s = 0, a change for the next symmetry
    return transform_planes(planes, s), turned

def select_edge_dividing_in_place(priors, visits, value_sums, c_puct, fpu_value):
    value_sums /= np.maximum(visits, 1)  # Q, written into the caller's array
    return reference_select_edge(priors, visits, value_sums * np.maximum(visits, 1), c_puct, fpu_value)

CHANGED_INPUT = {  # function -> (checker, the words its message must contain)
    visit_policy_sorting: ("check_visit_policy", ["changed its argument `visits` (a list): `visits` is not what it was (the same items in another order", "visits.sort()"]),
    softmax_in_place: ("check_legal_softmax", ["changed its argument `logits` (a torch.Tensor)", "not masked_fill_"]),
    puct_touching_priors: ("check_puct_scores", ["changed its argument `node` (a Node): `node.priors[0]`"]),
    backup_reversing: ("check_backup", ["changed its argument `path` (a list): `path` is not what it was (the same items in another order"]),
    symmetry_writing_through: ("check_symmetry", ["`planes` is not what it was (3 of 225 entries)", "planes.copy()"]),
    value_targets_reversing: ("check_value_targets", ["changed its argument `states` (a list)", "in another order"]),
    augment_overwriting_policy: ("check_augment", ["changed its argument `policy` (a numpy.ndarray)", "symmetry s = 1"]),
    select_edge_dividing_in_place: ("check_select_edge", ["changed its argument `value_sums`",
                                                          "(value_sums / 2, not value_sums /= 2)"]),  # no np.rot90 here
}

@pytest.mark.parametrize("fn", list(CHANGED_INPUT), ids=lambda fn: fn.__name__)
def test_changed_input_named(fn):
    checker, words = CHANGED_INPUT[fn]
    with pytest.raises(ExerciseFailed) as failure: getattr(exercises, checker)(fn)
    message = str(failure.value)
    assert message.startswith(f"✗ {checker}: your function changed its argument") and "on this input:\n" in message
    assert all(w in message for w in words), message

def test_not_a_function():
    with pytest.raises(ExerciseFailed, match=r"(?s)expected a function, got a str 'A5'.*check_cell_name\(my_function\)"):
        exercises.check_cell_name("A5")

def test_wrong_number_of_parameters():
    with pytest.raises(ExerciseFailed, match="calls your function with 1 argument"):
        exercises.check_cell_name(lambda row, col: "A5")

@pytest.mark.parametrize("written_as_names, hint", [
    (lambda a: Move(a.worker, cell_name(a.to), a.build) if isinstance(a, Move) else a, "a Move is (the worker's index"),
    (lambda a: Placement(cell_name(a.cell)) if isinstance(a, Placement) else a, "a Placement is the number (0-24)")])
def test_actions_written_wrong_get_that_hint_alone(written_as_names, hint):
    "Cells given as names: the one hint that says how an action is written, not the rules' hints for the 'missing' ones."
    fn = lambda state: [written_as_names(a) for a in legal_actions(state)]
    with pytest.raises(ExerciseFailed) as failure: exercises.check_legal_actions(fn)
    hints = [line for line in str(failure.value).splitlines() if line.startswith("HINT: ")]
    assert len(hints) == 1 and hints[0].startswith(f"HINT: {hint}"), hints


def test_a_half_written_function_is_not_the_stub():
    "NotImplementedError from a case left for later, or from a helper, is named with its input; only the stub is 'not written'."
    def later(states, winner):
        if len(states) > 30: raise NotImplementedError("long games")
        return reference_value_targets(states, winner)
    def unwritten(state): raise NotImplementedError
    def with_helper(states, winner): return [unwritten(s) for s in states]
    for fn, line in ((later, "in later, line"), (with_helper, "in unwritten, line")):
        with pytest.raises(ExerciseFailed) as failure: exercises.check_value_targets(fn)
        message = str(failure.value)
        assert "your function raised NotImplementedError" in message and line in message and "on this input:" in message
        assert "part of it is still to write" in message, message


def test_an_edge_position_no_game_reaches_says_how_to_read_it():
    "The checker's position with the player to move on level 3 is shown with parse_board, which reads it back."
    import re
    from santorini_az.notation import parse_board
    def stuck_on_level_3(state):  # a worker on level 3 never moves: only the hand-built positions have one
        return [a for a in reference_legal_actions(state)
                if isinstance(a, Placement) or state.heights[state.workers[state.player][a.worker]] < 3]
    with pytest.raises(ExerciseFailed) as failure: exercises.check_legal_actions(stuck_on_level_3)
    shown = re.search(r"notation: (\S+) \(no game reaches it: read it with parse_board\)", str(failure.value))
    assert shown and 3 in parse_board(shown[1]).heights, str(failure.value)

def test_block_hint_names_the_first_missing_moves():
    "The hint's winning moves are the first of the 'missing' list, in its order (they came in another order before)."
    with pytest.raises(ExerciseFailed) as failure: exercises.check_blocking_moves(wrong_block_static)
    message = str(failure.value)
    missing = message.split("missing (")[1].split(": ", 1)[1].split("\n")[0].split(", ")
    hinted = message.split("HINT: ")[1].split(" win")[0].rstrip(" …").split(", ")
    assert hinted == missing[:len(hinted)] and len(hinted) >= 2, message
