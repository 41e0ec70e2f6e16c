"""Compile the package's numba functions once, so that no chapter or test waits for it (and two running side by side
do not both compile the same function). numba caches each compiled function beside its module
(`santorini_az/__pycache__`), and any later process loads it from there; a function already cached costs nothing here.

    .venv/bin/python tools/compile_engines.py mortal   # chapter 06's engine and chapter 11's alpha-beta
    .venv/bin/python tools/compile_engines.py gods     # chapter 11b's god alpha-beta and chapter 11c's god engine

    .venv/bin/python tools/compile_engines.py stale    # first: forget every cached function if a compiled module changed

numba checks a cached function against its own file only: a change to `emit_builds` in god_alphabeta.py leaves
god_engine.py's functions, which compiled their own copy of it, cached as they were. So the `stale` part keeps a
digest of the four compiled modules beside the cache and empties the cache when it differs. tools/setup.sh runs it,
then both parts side by side. Each plays a few tiny searches that call every compiled entry point
(the engine's self-play with and without Gumbel at the root, perft, both alpha-betas, the god engine's games) and
prints how long it took. Measured on a 2-core machine with nothing cached: 54 of the 56 numba functions of engine.py
and alphabeta.py compiled by the first part, in 35 s; 31 of the 38 of god_alphabeta.py and god_engine.py by the second
(the others are only ever called from compiled code, which holds its own copy)."""
import hashlib
import random
import sys
import time
from pathlib import Path

import numpy as np


def mortal() -> None:
    from santorini_az.alphabeta import AlphaBetaPlayer
    from santorini_az.engine import LinearEvaluator, fast_perft, play_games
    from santorini_az.game import initial_state, random_openings
    from santorini_az.mcts import SearchConfig
    fast_perft(initial_state(), 3)
    for root in ("puct", "gumbel"):  # chapter 06's search, and Gumbel at the root (chapter 13)
        play_games(LinearEvaluator, 2, SearchConfig(simulations=8, temperature_plies=2, root_search=root, gumbel_actions=4),
                   games_in_flight=2, workers=1)
    AlphaBetaPlayer(2).engine.search(random_openings(1, np.random.default_rng(0), random_moves=4)[0], depth=2)


def gods() -> None:
    from santorini_az.god_alphabeta import GodAlphaBetaPlayer, compiled_perft
    from santorini_az.god_engine import GodEngineConfig, run_god_games, uniform_batch_evaluator
    from santorini_az.god_search import random_god_opening
    opening = random_god_opening(("hermes", "athena"), random.Random(0))
    compiled_perft(opening, 2)
    GodAlphaBetaPlayer(2)(opening)
    start = random_god_opening(("artemis", "prometheus"), random.Random(1))
    config = GodEngineConfig(simulations=8, games_in_flight=1, max_decisions=40)
    list(run_god_games([(start, (0, 0))], [uniform_batch_evaluator], config, np.random.default_rng(0)))


PACKAGE = Path(__file__).resolve().parent.parent / "santorini_az"
COMPILED_MODULES = ("engine.py", "alphabeta.py", "god_alphabeta.py", "god_engine.py")  # every module with @njit


def stale() -> None:
    "Empty numba's cache of the package if a compiled module changed since the digest kept beside it."
    cache, digest = PACKAGE / "__pycache__", hashlib.sha256()
    for name in COMPILED_MODULES: digest.update((PACKAGE / name).read_bytes())
    stamp = cache / "numba-sources.sha256"
    if stamp.exists() and stamp.read_text() == digest.hexdigest(): return
    dropped = list(cache.glob("*.nb[ic]"))
    for f in dropped: f.unlink()
    cache.mkdir(exist_ok=True)
    stamp.write_text(digest.hexdigest())
    if dropped: print(f"compile_engines stale: a compiled module changed, {len(dropped)} cached files dropped")


if __name__ == "__main__":
    parts = {"mortal": mortal, "gods": gods, "stale": stale}
    if len(sys.argv) != 2 or sys.argv[1] not in parts:
        sys.exit(f"usage: compile_engines.py {'|'.join(parts)}")
    start = time.perf_counter()
    parts[sys.argv[1]]()
    if sys.argv[1] != "stale":
        print(f"compile_engines {sys.argv[1]}: {time.perf_counter() - start:.0f} s (a few seconds where all was cached)")
