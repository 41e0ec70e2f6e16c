"""Measure the shipped god network against chapter 11b's god alpha-beta over all 121 match-ups, resumably.

    .venv/bin/python tools/measure_gods.py --out nbs/data/god_vs_alphabeta.json [--simulations 800] [--depth 3]
        [--movetime MS] [--backend onnxruntime] [--openings 1] [--checkpoint PATH]

For each ordered match-up (A, B) of the 11 x 11, `--openings` random openings (seeded by the match-up) are each played
twice with the seats swapped: the network plays A from the first seat, then B from the second, so over all 121 pairs
it plays every god from both seats. The network searches each decision of its turns with chapter 11c's compiled search
(`--simulations`, no noise, the most visited sub-action; chapter 11d's `GodSearchPlayer`), the alpha-beta searches
whole turns to `--depth`. With `--movetime` both play at equal time instead: each has MS milliseconds a turn, the
network searching each game alone on the clock (at most `--simulations` a decision), the alpha-beta deepening until
its time is spent; `--backend onnxruntime` evaluates the network with onnxruntime (the checkpoint exported to ONNX
first), about six times faster than torch on one position at a time. The games are split over the loop's worker processes (one per core). Each finished
match-up is appended at once to `--out`, so an interrupted measurement resumes where it stopped. Wilson intervals are
printed for the whole and per god."""
import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from santorini_az.arena import outcomes_by_turns, wilson_interval
from santorini_az.engine import available_cores, close_worker_pools, worker_pool
from santorini_az.export import OnnxFactory, export_onnx
from santorini_az.god_engine import GOD_CHAMPION
from santorini_az.god_loop import GOD_RULES, MAX_DECISIONS, GodAlphaBetaReference, GodNetworkFactory, GodSearchPlayer
from santorini_az.god_search import random_god_opening
from santorini_az.gods import GODS


def fail(message: str) -> None:
    "Bad input: one sentence naming the culprit, exit status 2."
    print(f"measure_gods: {message}", file=sys.stderr)
    sys.exit(2)


def read_rows(path: Path) -> list[dict]:
    if not path.exists(): return []
    try: return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    except json.JSONDecodeError as e: fail(f"--out {path} is not a file this tool wrote (line {e.lineno}: {e.msg})")


def summary(rows: list[dict]) -> str:
    "The total and each god's score (as the network's god), with 95% Wilson intervals."
    def line(name, points, games):
        low, high = wilson_interval(points, games)
        return f"{name:12} {points:6.1f} of {games:4d}  {points / games:6.1%}  [{low:.1%}, {high:.1%}]"
    points, games = sum(r["network_points"] for r in rows), sum(r["games"] for r in rows)
    lines = [line("all", points, games)]
    for god in GODS:  # the network plays A from the first seat and B from the second of each (A, B)
        mine = [(r["first_seat"], r["gods"][0]) for r in rows] + [(r["second_seat"], r["gods"][1]) for r in rows]
        won = [p for (p, g) in mine if g == god]
        if won: lines.append(line(god, sum(sum(w) for w in won), sum(len(w) for w in won)))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--simulations", type=int, default=800)
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--movetime", type=int, default=None, help="milliseconds a turn for both (equal time)")
    parser.add_argument("--backend", choices=("torch", "onnxruntime"), default="torch")
    parser.add_argument("--openings", type=int, default=1)
    parser.add_argument("--checkpoint", default=str(GOD_CHAMPION))
    args = parser.parse_args()
    if args.simulations < 1: fail(f"--simulations must be at least 1, got {args.simulations}")
    if not 1 <= args.depth <= 8: fail(f"--depth must be 1 to 8, got {args.depth}")
    if args.movetime is not None and args.movetime < 1: fail(f"--movetime must be at least 1 ms, got {args.movetime}")
    if args.openings < 1: fail(f"--openings must be at least 1, got {args.openings}")
    if not Path(args.checkpoint).is_file(): fail(f"--checkpoint {args.checkpoint} is not a file")
    rows = read_rows(args.out)
    budget = {"movetime_ms": args.movetime, "most_simulations": args.simulations} if args.movetime else \
        {"simulations": args.simulations, "depth": args.depth}
    settings = {**budget, "openings": args.openings, "checkpoint": Path(args.checkpoint).name}
    if args.backend != "torch": settings["backend"] = args.backend
    if rows and rows[0]["settings"] != settings:
        fail(f"--out {args.out} holds a measurement with other settings ({rows[0]['settings']}): choose another file")
    done = {tuple(r["gods"]) for r in rows}
    movetime = args.movetime / 1000 if args.movetime else None
    scratch = tempfile.TemporaryDirectory()
    factory = GodNetworkFactory(args.checkpoint) if args.backend == "torch" else \
        OnnxFactory(str(export_onnx(args.checkpoint, Path(scratch.name) / "god.onnx")))
    network = GodSearchPlayer("network", factory, args.simulations, movetime)
    alphabeta = GodAlphaBetaReference(args.depth, movetime)
    pool = worker_pool(available_cores()) if available_cores() > 1 else 1
    try:
        for a in GODS:  # the 11 match-ups of god A in one batch of games: the network's leaves share its calls
            todo = [b for b in GODS if (a, b) not in done]
            if not todo: continue
            openings, owner = [], []
            for b in todo:
                rng = random.Random(f"{a} {b}")
                openings += [random_god_opening((a, b), rng) for _ in range(args.openings)]
                owner += [b] * args.openings
            started = time.time()
            outcomes = outcomes_by_turns(network, alphabeta, openings, np.random.default_rng(0), None,
                                         2 * MAX_DECISIONS, pool, GOD_RULES)
            seconds = round(time.time() - started, 1)
            for b in todo:
                mine = [o for o in outcomes if owner[o.opening] == b]
                first = [float(o.first_won) for o in mine if o.first_moves_first]
                second = [float(o.first_won) for o in mine if not o.first_moves_first]
                row = {"settings": settings, "gods": [a, b], "first_seat": first, "second_seat": second,
                       "network_points": sum(first) + sum(second), "games": len(mine),
                       "plies": [o.plies for o in mine], "seconds_for_the_row": seconds}
                with args.out.open("a") as f: f.write(json.dumps(row) + "\n")
                rows.append(row)
            points = sum(r["network_points"] for r in rows if r["gods"][0] == a)
            print(f"{a:>10} v all: {points:.0f}/{2 * len(GODS) * args.openings} in {seconds:.0f} s "
                  f"(all: {sum(r['network_points'] for r in rows):.0f}/{sum(r['games'] for r in rows)})", flush=True)
    finally:
        close_worker_pools()
        scratch.cleanup()
    print(summary(rows))


if __name__ == "__main__":
    main()
