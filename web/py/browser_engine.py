"""The browser's engine: the package's own rules, notation, encoding and search, driven from a Web Worker.

Python owns the rules and the search tree; JavaScript owns the network (onnxruntime-web). A search hands JavaScript
a *batch* of positions to evaluate as float32 planes and receives their policies and values:

    search = BatchedSearch(position, simulations=800, batch_size=16)
    while not search.done():
        planes = search.collect()                        # bytes: float32 [n, 5, 5, 9] (None: wait for a batch out)
        search.resume(policy_bytes, value_bytes)         # float32 [n, 153] softmax, float32 [n], oldest batch first
    search.result(temperature)                           # JSON: the move, visit shares, priors, values

Several batches may be out at once (the worker keeps two): the network evaluates one while Python selects the next.

One search batches its leaves with a *virtual loss*: a leaf waiting for its evaluation counts, on the path down to it,
as a visit that lost, so the next selection in the same batch prefers another line. Everything else (PUCT selection,
expansion, backup, the visit policy) is the readable search of chapter 3, unchanged. This file needs no numpy.
"""
from __future__ import annotations

import array
import json
import random

from santorini_az.encoding import N_ACTIONS, N_PLANES, action_from_index, encode_into
from santorini_az.game import CELLS, Placement, in_setup, initial_state, legal_actions, legal_placements, winner
from santorini_az.mcts import (TERMINAL_VALUE, Node, SearchConfig, backup, choose_action, expand, node_value,
                               select_leaf)
from santorini_az.notation import NotationError, format_action, format_position, parse_action, parse_position

PLANE_SIZE = CELLS * N_PLANES  # 225 floats per position
TINY = 1.1754943508222875e-38  # the smallest normal float32: log(0) would be -inf


def action_info(state, action) -> dict:
    "One legal action for the page: its notation and the cells a click selects."
    if isinstance(action, Placement): return {"text": format_action(state, action), "cell": action.cell}
    here = state.workers[state.player][action.worker]
    return {"text": format_action(state, action), "from": here, "to": action.to, "build": action.build}


def position_info(text: str) -> str:
    "Everything the page draws for position `text`, as JSON (or {'error': ...} for text that is not a position)."
    try: state = parse_position(text)
    except NotationError as e: return json.dumps({"error": str(e)})
    won = winner(state)
    return json.dumps({"position": format_position(state), "heights": list(state.heights),
                       "workers": [list(w) for w in state.workers], "player": state.player, "setup": in_setup(state),
                       "winner": won, "legal": [action_info(state, a) for a in legal_actions(state)]})


def play(text: str, move: str) -> str:
    "The position after `move` (notation) in position `text`, as JSON {'position'} or {'error'}."
    try:
        state = parse_position(text)
        return json.dumps({"position": format_position(state.apply(parse_action(state, move)))})
    except NotationError as e: return json.dumps({"error": str(e)})


def random_start(seed: int) -> str:
    "A position with all four workers placed at random (player 1 to move), in notation."
    rng, state = random.Random(seed), initial_state()
    while in_setup(state) or len(state.workers[1]) < 2: state = state.apply(rng.choice(legal_placements(state)))
    return format_position(state)


class _FlatPlanes:
    "A [5, 5, 9] view into a flat float32 array, so that the encoding chapter's `encode_into` writes into it."
    __slots__ = ("data", "offset")

    def __init__(self, data, offset): self.data, self.offset = data, offset

    def __setitem__(self, index, value):
        row, col, plane = index
        self.data[self.offset + (row * 5 + col) * N_PLANES + plane] = value


def encode_positions(states) -> bytes:
    "The planes of `states` as float32 bytes [n, 5, 5, 9] (NHWC), by the encoding chapter's `encode_into`."
    data = array.array("f", bytes(4 * PLANE_SIZE * len(states)))
    for i, state in enumerate(states): encode_into(state, _FlatPlanes(data, i * PLANE_SIZE))
    return data.tobytes()


def encode_position_texts(texts_json: str) -> bytes:
    "The planes of the positions listed in `texts_json` (a JSON list of notation strings), as float32 bytes."
    return encode_positions([parse_position(t) for t in json.loads(texts_json)])


def _floats(buffer) -> memoryview:
    "A float32 memoryview of bytes, a memoryview or a JavaScript typed array."
    if hasattr(buffer, "to_bytes"): buffer = buffer.to_bytes()  # a Pyodide JsProxy of a Float32Array
    return memoryview(bytes(buffer)).cast("f")


class BatchedSearch:
    "A PUCT search from position `text` that asks for its leaves' evaluations `batch_size` at a time."

    def __init__(self, text: str, simulations: int = 800, batch_size: int = 16, c_puct: float = 1.25, seed: int = 0):
        self.config = SearchConfig(simulations=simulations, c_puct=c_puct)
        self.root, self.batch_size, self.rng = Node(parse_position(text)), max(1, batch_size), random.Random(seed)
        self.simulations_done, self.evaluations, self.batches = 0, 0, 0
        # Batches whose evaluations are out, oldest first: several may be, so that the network can work on one while
        # Python selects the next. Each is a list of (path, leaf) pairs; `_out` holds the ids of all their leaves.
        self._batches: list[list[tuple[list, Node]]] = []
        self._out: set[int] = set()

    def done(self) -> bool:
        "Has the search run all its simulations (or is the root a finished game)?"
        return self.root.is_terminal or self.root.is_expanded and not self._batches and \
            self.simulations_done >= self.config.simulations

    def _select(self) -> list[tuple[list, Node]]:
        "Up to `batch_size` new leaves, each under a virtual loss; finished games on the way are backed up at once."
        if not self.root.is_expanded:  # the root's own evaluation comes first, alone, and is no simulation
            return [] if self._batches else [([], self.root)]
        batch = []
        while len(batch) < self.batch_size and self.simulations_done + len(self._out) < self.config.simulations:
            path, leaf = select_leaf(self.root, self.config)
            if leaf.is_terminal:
                backup(path, leaf.player, TERMINAL_VALUE)
                self.simulations_done += 1
                continue
            if id(leaf) in self._out: break  # the virtual losses could not steer away: evaluate what we have
            self._out.add(id(leaf))
            for node, edge in path: node.visits[edge] += 1; node.value_sums[edge] -= 1.0
            batch.append((path, leaf))
        return batch

    def collect(self) -> bytes | None:
        "The planes (float32 bytes [n, 5, 5, 9]) of a new batch to evaluate; None if there is none to ask for now."
        if self.root.is_terminal: return None
        batch = self._select()
        if not batch: return None
        self._batches.append(batch)
        self._out.update(id(leaf) for _, leaf in batch)
        return encode_positions([leaf.state for _, leaf in batch])

    def pending(self) -> int:
        "The number of positions in the batch `collect` returned last."
        return len(self._batches[-1]) if self._batches else 0

    def outstanding(self) -> int:
        "The number of batches handed out and not yet resumed."
        return len(self._batches)

    def resume(self, policy, values) -> None:
        "The evaluations of the oldest outstanding batch: softmax policies float32 [n, 153] and values float32 [n]."
        policy, values = _floats(policy), _floats(values)
        for i, (path, leaf) in enumerate(self._finish_batch()):
            self._apply(path, leaf, value=values[i])
            # The network gives a softmax: the priors are its legal entries renormalised. (That is what expand's
            # softmax of log p over the legal actions computes, without a log and an exp per action.)
            legal = [max(policy[i * N_ACTIONS + a], TINY) for a in leaf.actions]
            total = sum(legal)
            leaf.priors = [p / total for p in legal]

    def resume_uniform(self) -> None:
        "Evaluate the oldest outstanding batch without a network: a uniform prior over the legal actions, value 0."
        for path, leaf in self._finish_batch(): self._apply(path, leaf, value=0.0)

    def _finish_batch(self) -> list[tuple[list, Node]]:
        batch = self._batches.pop(0)
        self._out.difference_update(id(leaf) for _, leaf in batch)
        self.evaluations += len(batch)
        self.batches += 1
        return batch

    def _apply(self, path, leaf: Node, value: float) -> None:
        "Expand `leaf` (uniform priors; `resume` then sets the network's) and back its value up, lifting the virtual loss."
        expand(leaf, _UNIFORM, value)
        if leaf is self.root: return
        for node, edge in path: node.visits[edge] -= 1; node.value_sums[edge] += 1.0
        backup(path, leaf.player, leaf.value)
        self.simulations_done += 1

    def result(self, temperature: float = 0.0, top: int = 8) -> str:
        "The move to play and what the search saw, as JSON (for the move list, the eval bar and the overlays)."
        root, state = self.root, self.root.state
        if root.is_terminal: return json.dumps({"move": None, "simulations": 0})
        action = choose_action(root, temperature, self.rng)
        total = sum(root.visits) or 1
        moves = []
        for index, prior, visits, value_sum in zip(root.actions, root.priors, root.visits, root.value_sums):
            info = action_info(state, action_from_index(state, index))
            moves.append({**info, "prior": prior, "visits": visits, "share": visits / total,
                          "q": value_sum / visits if visits else None})
        by_visits = sorted(moves, key=lambda m: (-m["visits"], -m["prior"]))
        by_prior = sorted(moves, key=lambda m: -m["prior"])
        return json.dumps({"move": format_action(state, action_from_index(state, action)), "player": state.player,
                           "simulations": self.simulations_done, "evaluations": self.evaluations,
                           "batches": self.batches, "value": node_value(root), "network_value": root.value,
                           "top_visits": by_visits[:top], "top_priors": by_prior[:top],
                           "cells": _shares_by_cell(moves)})


class _Uniform:
    "Equal logits for every action."
    def __getitem__(self, action): return 0.0


_UNIFORM = _Uniform()


def _shares_by_cell(moves: list[dict]) -> list[dict]:
    "Visit shares and priors summed by destination cell (a placement's cell, a move's `to`): 25 entries."
    cells = [{"share": 0.0, "prior": 0.0} for _ in range(CELLS)]
    for m in moves:
        cell = cells[m.get("cell", m.get("to"))]
        cell["share"] += m["share"]; cell["prior"] += m["prior"]
    return cells


def run_search(text: str, evaluate=None, in_flight: int = 1, **options) -> BatchedSearch:
    """Run a `BatchedSearch` to the end in Python (for tests), `in_flight` batches out at a time, as the worker does;
    `evaluate(planes_bytes, n) -> (policy, values)`, or the uniform evaluator when None."""
    search, queue = BatchedSearch(text, **options), []
    while not search.done():
        while len(queue) < in_flight and (planes := search.collect()) is not None: queue.append((planes, search.pending()))
        if not queue:  # every leaf selected was a finished game and the simulations are used up (as the worker does)
            if search.done(): break
            raise RuntimeError("the search is stuck: nothing to evaluate and not done")
        planes, n = queue.pop(0)
        if evaluate is None: search.resume_uniform()
        else: search.resume(*evaluate(planes, n))
    return search
