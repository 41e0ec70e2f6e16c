"""Learn AlphaZero by building it for the board game Santorini: a notebook-first course and a fast, tested package.

Modules:

- `santorini_az.alphabeta`: Negamax with α-β, iterative deepening and aspiration windows, a Zobrist-hashed transposition table, move ordering, mate scores, a hand-written evaluation and a permanent brain, compiled with numba.
- `santorini_az.arena`: How strong is a network? Matches from varied openings with colours swapped, a confidence interval on the score, fixed reference opponents, and one Elo table fitted over every game played.
- `santorini_az.cluster`: `santorini_az train --ray ADDRESS`: self-play, the arena and the reference matches played by actors across a Ray cluster, the learner and the run directory on the head; an actor that dies has its games played again.
- `santorini_az.config`: Every setting of a training run in one typed dataclass: presets, config files, `key=value` overrides, and the allowed range of every number, checked before any work starts.
- `santorini_az.engine`: The search of chapter 3, run for hundreds of games at once: the tree as arrays, the rules and the tree walk compiled with numba, one network call per simulation step, and one worker process per core.
- `santorini_az.evaluator`: The one contract between a search and whatever judges positions: planes in, logits and values out — and the picklable factories that build an evaluator inside each worker process.
- `santorini_az.export`: The network leaves Python: one ONNX file with the reference system's contract, checked against torch on a thousand positions, and an onnxruntime evaluator that plugs into the search like the torch one.
- `santorini_az.files`: One helper that every file of the course goes through: a model, a checkpoint, the replay buffer, a record of the run. A kill at any moment leaves the old file or the new one, never half of one, and never a device replaced.
- `santorini_az.loop`: Self-play, training, the arena and the reference matches as stages of a loop that keeps all its state in a run directory, so it can be killed at any moment and resumed without losing or repeating work.
- `santorini_az.mcts`: PUCT search in pure Python: a tree of positions, select–expand–backup, root noise, and an evaluator that is *requested* rather than called, so that many searches can share one network call.
- `santorini_az.play`: What the `arena`, `selfplay`, `inspect` and `play` commands do: a match between any two players, games to a file, a position seen through the network and the search, and a game against the engine in the terminal.
- `santorini_az.protocol`: `santorini_az engine`: a UCI-like text protocol on stdin/stdout with the AlphaZero search and the α-β engine behind it, and a match runner that pits any two protocol engines against each other.
- `santorini_az.replay`: The positions self-play has produced, with their policy and value targets, a window over recent generations, and the 8 board symmetries as free extra data.
- `santorini_az.report`: Plots of a run from its records: losses, arena results with their error bars, Elo over iterations and self-play speed, shown inline and saved as PNG files.
- `santorini_az.rundir`: Every file of a training run in one directory: the records that say which stages are done, the champion pointer, atomic writes, and a lock so that one run has one writer.
- `santorini_az.selfplay`: Games of the network against itself, with exploration (a temperature schedule and root noise), resignation that audits itself, and the training examples they leave behind.
- `santorini_az.serve`: `santorini_az serve RUN_DIR`: the browser app, and whichever network a training run has most recently promoted, exported to ONNX on the fly; open pages switch to a new champion without a reload.
- `santorini_az.trainer`: The AlphaZero losses (cross-entropy to the search's visit distribution over the legal moves, squared error to the value target), and the optimiser steps that minimise them: weight decay, a learning-rate schedule and gradient clipping.
- `santorini_az.widgets`: A board you click on, a game against the engine, the network and the search drawn over a position, and a live view of a training run: JupyterLab widgets whose rules stay in Python."""

__version__ = "0.1.0"
