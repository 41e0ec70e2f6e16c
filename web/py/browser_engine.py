"""The browser's engine: the package's own rules, notation, encoding and search, driven from a Web Worker.

Python owns the rules and the search tree; JavaScript owns the network (onnxruntime-web). A search hands JavaScript
a *batch* of positions to evaluate as float32 planes and receives their policies and values:

    search = BatchedSearch(position, simulations=800, batch_size=16)
    while not search.done():
        planes = search.collect()                        # bytes: float32 [n, 5, 5, 9] (None: wait for a batch out)
        search.resume(policy_bytes, value_bytes)         # float32 [n, 153] softmax, float32 [n], oldest batch first
    search.result(temperature)                           # JSON: the move, visit shares, priors, values

Several batches may be out at once (the worker keeps two): the network evaluates one while Python selects the next.

With god powers (chapters 01b, 02b and 03b: `santorini_az/{gods,god_encoding,god_search}.py`, copied in as well) a
turn is a few *sub-actions* (place c, move worker w to c = 25 + 25w + c, build 75 + c, dome 100 + c, end 125), and
the page plays it one sub-action at a time: `god_info(position, steps)` lists the legal ones at the node reached by
`steps` (the sub-actions played so far this turn), `god_play` plays one, and `GodTurnSearch` is the engine's whole
turn: chapter 03b's search for each decision, batched the same way, its leaves encoded as chapter 02b's 36 planes for
the god network (chapter 10b), which answers 126 sub-action probabilities.

One search batches its leaves with a *virtual loss*: a leaf waiting for its evaluation counts, on the path down to it,
as a visit that lost, so the next selection in the same batch prefers another line. Everything else (PUCT selection,
expansion, backup, the visit policy) is the readable search of chapter 3, unchanged. This file needs no numpy.
"""
from __future__ import annotations

import array
import json
import random

from santorini_az.encoding import N_ACTIONS, N_PLANES, action_from_index, encode_into
from santorini_az.game import CELLS, Placement, has_climbed, in_setup, initial_state, legal_actions, legal_placements, winner
from santorini_az.god_encoding import (END_ACTION, N_GOD_ACTIONS, N_GOD_PLANES, GodNode, encode_node_into,
                                       format_sub_action, legal_sub_actions, node_play, play_sub_action, step_of)
from santorini_az.god_search import GodTreeNode, has_won_mid_turn, node_winner, terminal_value, turn_played
from santorini_az.gods import GODS, format_god_position, format_turn, from_mortal, god_start, parse_god_position
from santorini_az.mcts import (TERMINAL_VALUE, Node, SearchConfig, backup, choose_action, expand, node_value,
                               select_leaf)
from santorini_az.notation import NotationError, format_action, format_position, parse_action, parse_position

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
                       "winner": won, "stuck": won is not None and not has_climbed(state),  # won by blocking
                       "legal": [action_info(state, a) for a in legal_actions(state)]})


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
    """A [5, 5, planes] view into a flat float32 array, so that the encoding chapters' `encode_into` (9 planes) and
    `encode_node_into` (36) write into it as into a numpy array: a cell, or a whole plane (`planes[:, :, k] = 1`)."""
    __slots__ = ("data", "offset", "planes")

    def __init__(self, data, offset, planes): self.data, self.offset, self.planes = data, offset, planes

    def __setitem__(self, index, value):
        row, col, plane = index
        for r in (range(5)[row] if isinstance(row, slice) else (row,)):
            for c in (range(5)[col] if isinstance(col, slice) else (col,)):
                self.data[self.offset + (r * 5 + c) * self.planes + plane] = value


def _encode(items, encode_one, planes: int) -> bytes:
    "float32 bytes [n, 5, 5, planes] (NHWC): `encode_one(item, view)` writes each item's planes into a zeroed view."
    size = CELLS * planes
    data = array.array("f", bytes(4 * size * len(items)))
    for i, item in enumerate(items): encode_one(item, _FlatPlanes(data, i * size, planes))
    return data.tobytes()


def encode_positions(states) -> bytes:
    "The planes of `states` as float32 bytes [n, 5, 5, 9], by the encoding chapter's `encode_into`."
    return _encode(states, encode_into, N_PLANES)


def encode_god_nodes(nodes) -> bytes:
    "The planes of god nodes as float32 bytes [n, 5, 5, 36], by chapter 02b's `encode_node_into`."
    return _encode(nodes, encode_node_into, N_GOD_PLANES)


def encode_position_texts(texts_json: str) -> bytes:
    "The planes of the positions listed in `texts_json` (a JSON list of notation strings), as float32 bytes."
    return encode_positions([parse_position(t) for t in json.loads(texts_json)])


def _floats(buffer) -> memoryview:
    "A float32 memoryview of bytes, a memoryview or a JavaScript typed array."
    if hasattr(buffer, "to_bytes"): buffer = buffer.to_bytes()  # a Pyodide JsProxy of a Float32Array
    return memoryview(bytes(buffer)).cast("f")


class BatchedSearch:
    """A PUCT search from `position` (notation, or a tree node to search on, perhaps searched before) that asks for
    its leaves' evaluations `batch_size` at a time."""
    ACTIONS = N_ACTIONS  # the policy's length: one probability per action

    def __init__(self, position, simulations: int = 800, batch_size: int = 16, c_puct: float = 1.25, seed: int = 0):
        self.config = SearchConfig(simulations=simulations, c_puct=c_puct)
        self.root = position if isinstance(position, Node) else Node(parse_position(position))
        self.batch_size, self.rng = max(1, batch_size), random.Random(seed)
        self.simulations_done = sum(self.root.visits)  # a subtree kept from an earlier search has its visits already
        self.evaluations, self.batches = 0, 0
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
                backup(path, leaf.player, self.terminal_value(leaf))
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
        return self.encode([leaf for _, leaf in batch])

    def encode(self, leaves) -> bytes:
        "The network's input for `leaves`: chapter 02's 9 planes."
        return encode_positions([leaf.state for leaf in leaves])

    def terminal_value(self, leaf) -> float:
        "The value of a finished game for its player to move: lost (chapter 03)."
        return TERMINAL_VALUE

    def pending(self) -> int:
        "The number of positions in the batch `collect` returned last."
        return len(self._batches[-1]) if self._batches else 0

    def outstanding(self) -> int:
        "The number of batches handed out and not yet resumed."
        return len(self._batches)

    def resume(self, policy, values) -> None:
        "The evaluations of the oldest outstanding batch: softmax policies float32 [n, ACTIONS] and values float32 [n]."
        policy, values = _floats(policy), _floats(values)
        for i, (path, leaf) in enumerate(self._finish_batch()):
            self._apply(path, leaf, value=values[i])
            # The network gives a softmax: the priors are its legal entries renormalised. (That is what expand's
            # softmax of log p over the legal actions computes, without a log and an exp per action.)
            legal = [max(policy[i * self.ACTIONS + a], TINY) for a in leaf.actions]
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
    return drive(BatchedSearch(text, **options), evaluate, in_flight)


def drive(search, evaluate=None, in_flight: int = 1):
    "Run `search` (a `BatchedSearch` or a `GodTurnSearch`) to the end, as the worker does, and return it."
    queue = []
    while not search.done():
        while len(queue) < in_flight and (planes := search.collect()) is not None: queue.append((planes, search.pending()))
        if not queue:  # every leaf selected was a finished game and the simulations are used up (as the worker does)
            if search.done(): break
            raise RuntimeError("the search is stuck: nothing to evaluate and not done")
        planes, n = queue.pop(0)
        if evaluate is None: search.resume_uniform()
        else: search.resume(*evaluate(planes, n))
    return search


# ---- god powers: a turn played one sub-action at a time (chapters 01b, 02b, 03b) -------------------------------------

def god_start_position(first: str, second: str, text: str | None = None) -> str:
    "The god position with gods `first` (player 1's) and `second`: the empty board, or the mortal position `text`."
    gods = (first.strip().lower(), second.strip().lower())
    try:
        if any(god not in GODS for god in gods): raise NotationError(f"gods must be two of {', '.join(GODS)}, got {gods}")
        state = god_start(gods) if not text else from_mortal(parse_position(text), gods)
        return json.dumps({"position": format_god_position(state)})
    except (NotationError, ValueError) as e: return json.dumps({"error": str(e)})


def god_node(text: str, steps=()) -> GodNode:
    "The node reached from god position `text` by the sub-actions `steps` of the turn in progress (each checked)."
    node = GodNode(parse_god_position(text))
    for index in steps:
        after = play_sub_action(node, int(index))  # ValueError if not legal here
        if after.state is not node.state: raise ValueError(f"sub-action {index} ends the turn: it is no step within it")
        node = after
    return node


def sub_action_info(node: GodNode, index: int) -> dict:
    "One legal sub-action for the page: its number, text, kind and cell (and a move's worker and the cell it leaves)."
    step = step_of(index)
    if step is None: return {"index": index, "text": "end", "kind": "end"}
    info = {"index": index, "text": format_sub_action(index), "kind": step.kind, "cell": step.cell}
    if step.kind == "move": info.update(worker=step.worker, **{"from": node_play(node).mine[step.worker]})
    return info


def god_info(text: str, steps_json: str = "[]") -> str:
    "What the page draws at the node `steps` (JSON list of sub-actions) into god position `text`, as JSON, or {'error'}."
    try: node = god_node(text, json.loads(steps_json))
    except (NotationError, ValueError) as e: return json.dumps({"error": str(e)})
    state, play, me = node.state, node_play(node), node.player
    workers = [list(play.mine), list(play.theirs)] if me == 0 else [list(play.theirs), list(play.mine)]
    return json.dumps({"position": format_god_position(state), "gods": list(state.gods), "heights": list(play.heights),
                       "workers": workers, "player": me, "setup": in_setup(state.board), "winner": node_winner(state),
                       "stuck": node_winner(state) is not None and not state.won,
                       "athena_up": state.athena_moved_up, "steps": [format_sub_action(i) for i in json.loads(steps_json)],
                       "legal": [sub_action_info(node, i) for i in legal_sub_actions(node)]})


def _finish_won_turn(node: GodNode, played: list[int]) -> GodNode:
    "After a winning move the rest of the turn is a build that is never made: play it (the first legal one)."
    while has_won_mid_turn(node):
        index = legal_sub_actions(node)[0]
        played.append(index)
        node = play_sub_action(node, index)
    return node


def god_play(text: str, steps_json: str, index: int) -> str:
    """Sub-action `index` at the node `steps` into `text`, as JSON: {'steps'} while the turn goes on, or, once it is
    whole, {'position', 'turn'} (the next position and the turn in notation); {'error'} if it is not legal."""
    try:
        steps = [int(i) for i in json.loads(steps_json)]
        node = god_node(text, steps)
        played = steps + [int(index)]
        after = _finish_won_turn(play_sub_action(node, int(index)), played)
    except (NotationError, ValueError) as e: return json.dumps({"error": str(e)})
    if after.state is node.state: return json.dumps({"steps": played})
    turn = tuple(step_of(i) for i in played if i != END_ACTION)
    return json.dumps({"position": format_god_position(after.state), "turn": format_turn(node.state, turn),
                       "sub_actions": played})


class GodDecisionSearch(BatchedSearch):
    """One decision of a god turn: the batched search over chapter 03b's tree of god nodes, whose leaves the god
    network reads as chapter 02b's 36 planes and answers with 126 sub-action probabilities."""
    ACTIONS = N_GOD_ACTIONS

    def encode(self, leaves) -> bytes: return encode_god_nodes([leaf.position for leaf in leaves])

    def terminal_value(self, leaf) -> float: return terminal_value(leaf)  # a winning move mid-turn has won


class GodTurnSearch:
    """The engine's turn with god powers: a `GodDecisionSearch` of `simulations` for each decision of the turn,
    driven like a `BatchedSearch` (`collect`, `resume`, `resume_uniform`), so that the worker runs both the same way.
    The subtree under the sub-action chosen is kept as the next decision's root."""

    def __init__(self, text: str, simulations: int = 800, temperature: float = 0.0, seed: int = 0,
                 steps_json: str = "[]", decisions: int = 0, batch_size: int = 16, c_puct: float = 1.25):
        self.start = god_node(text, json.loads(steps_json))
        self.node, self.played = self.start, [int(i) for i in json.loads(steps_json)]
        self.simulations, self.batch_size, self.c_puct = simulations, batch_size, c_puct
        self.temperature, self.rng = temperature, random.Random(seed)
        self.max_decisions = decisions  # 0: the whole turn; 1: one decision (a hint)
        self.decisions: list[dict] = []  # per decision searched: what was chosen, and the search's statistics
        self.simulations_done, self.evaluations, self.batches = 0, 0, 0
        self.finished, self.search, self._reused = None, None, None
        self._next_decision()

    def done(self) -> bool:
        "Is the turn chosen (or the game over)?"
        return self.search is None

    def decisions_made(self) -> int:
        "Decisions of the turn searched and chosen so far."
        return len(self.decisions)

    def decision_simulations(self) -> int:
        "Simulations of the decision being searched now (a kept subtree's included)."
        return self.search.simulations_done if self.search else 0

    def collect(self) -> bytes | None:
        "The planes (float32 bytes [n, 5, 5, 36]) of a new batch of the decision being searched; None if none now."
        while self.search is not None:
            planes = self.search.collect()
            if planes is not None or not self.search.done(): return planes
            self._decide()  # its last simulations ended games: nothing went to the network, and it is done
        return None

    def pending(self) -> int: return self.search.pending() if self.search else 0

    def resume(self, policy, values) -> None:
        "The god network's softmax policies float32 [n, 126] and values float32 [n] for the oldest batch out."
        self._count(lambda: self.search.resume(policy, values))

    def resume_uniform(self) -> None:
        "Evaluate the oldest batch out without a network: a uniform prior over the legal sub-actions, value 0."
        self._count(self.search.resume_uniform)

    def _count(self, resume) -> None:
        "Run `resume` on the decision's search, count what it did, and move on to the next decision when it is done."
        search = self.search
        before = (search.simulations_done, search.evaluations)
        resume()
        self.simulations_done += search.simulations_done - before[0]
        self.evaluations += search.evaluations - before[1]
        self.batches += 1
        if search.done(): self._decide()

    def _next_decision(self) -> None:
        "Play the sub-actions that need no search (forced, or the unmade build after a win); open a search for the next."
        self.search = None
        if self.max_decisions and len(self.decisions) >= self.max_decisions: return
        while self.finished is None and node_winner(self.node.state) is None:
            if has_won_mid_turn(self.node): self._play(legal_sub_actions(self.node)[0]); continue
            root = self._reused if self._reused is not None and not self._reused.is_terminal else GodTreeNode(self.node)
            if len(root.actions) == 1 and not root.is_expanded: expand(root, _UNIFORM, 0.0)  # forced: nothing to search
            self.search = GodDecisionSearch(root, self.simulations, self.batch_size, self.c_puct)
            self._reused = None
            if len(root.actions) == 1 or self.search.done(): self._decide()
            return

    def _decide(self) -> None:
        "Choose the searched root's sub-action (by visits, at the temperature), note it, and move on."
        root = self.search.root
        index = choose_action(root, self.temperature, self.rng) if sum(root.visits) else root.actions[0]
        total = sum(root.visits) or 1
        moves = [{"index": a, "text": format_sub_action(a), "cell": None if a == END_ACTION else step_of(a).cell,
                  "prior": p, "visits": n, "share": n / total, "q": w / n if n else None}
                 for a, p, n, w in zip(root.actions, root.priors, root.visits, root.value_sums)]
        self.decisions.append({"chosen": format_sub_action(index), "index": index, "simulations": sum(root.visits),
                               "value": node_value(root), "network_value": root.value, "moves": moves})
        self._play(index)
        self._next_decision()

    def _play(self, index: int) -> None:
        "Play sub-action `index`; within the turn, the searched subtree under it becomes the next root (tree reuse)."
        self._reused = self.search.root.children.get(index) if self.search is not None else None
        if turn_played(self.node, index) is not None:
            self.finished = play_sub_action(self.node, index)
        self.played.append(index)
        self.node = self.finished or play_sub_action(self.node, index)

    def result(self, top: int = 8) -> str:
        "The turn played and what the search saw (shaped like `BatchedSearch.result`, per sub-action), as JSON."
        state = self.start.state
        if not self.decisions and self.finished is None: return json.dumps({"move": None, "simulations": 0})
        first = self.decisions[0] if self.decisions else {"moves": [], "value": 0.0, "network_value": 0.0,
                                                          "index": self.played[0]}
        moves = first["moves"]
        cells = [{"share": 0.0, "prior": 0.0} for _ in range(CELLS)]
        for m in moves:
            if m["cell"] is not None: cells[m["cell"]]["share"] += m["share"]; cells[m["cell"]]["prior"] += m["prior"]
        turn = tuple(step_of(i) for i in self.played if i != END_ACTION)
        whole = self.finished is not None
        return json.dumps({
            "move": format_turn(state, turn) if whole else format_sub_action(first["index"]),
            "position": format_god_position(self.finished.state) if whole else None,
            # the simulations of the first decision, whose statistics these are (each decision's are in "decisions")
            "sub_actions": self.played, "player": state.player, "simulations": first.get("simulations", 0),
            "evaluations": self.evaluations, "batches": self.batches, "value": first["value"],
            "network_value": first["network_value"],
            "decisions": [{k: d[k] for k in ("chosen", "simulations", "value")} for d in self.decisions],
            "top_visits": sorted(moves, key=lambda m: (-m["visits"], -m["prior"]))[:top],
            "top_priors": sorted(moves, key=lambda m: -m["prior"])[:top], "cells": cells})


def run_god_turn(text: str, evaluate=None, in_flight: int = 1, **options) -> GodTurnSearch:
    "Run a `GodTurnSearch` to the end in Python (for tests), as the worker does (`evaluate` as for `run_search`)."
    return drive(GodTurnSearch(text, **options), evaluate, in_flight)
