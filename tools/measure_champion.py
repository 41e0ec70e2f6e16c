"""Measure a candidate champion the way its card (santorini_az/models/CHAMPION.md) reports it, resumably.

    .venv/bin/python tools/measure_champion.py CHECKPOINT --out measured.json [--openings-mcts 50] [--openings-ab 100]
        [--only mcts64,ab4@200,...] [--label NAME] [--machine KEY]

The battery: against the uniform-prior MCTS at 64, 200 and 800 simulations (seeds 0-3, 2 x openings games each), and
against alpha-beta at depths 1, 2, 4 and 6 with the network at 200 and 800 simulations (seed 0). Each finished match
is appended at once to --out as a row in the format of nbs/data/experiments.json, so an interrupted battery resumes
where it stopped (a row already in --out is not played again). It takes hours on 2 cores: run it with nothing else."""
import argparse
import json
import platform
import sys
import time
from pathlib import Path

from santorini_az.arena import wilson_interval
from santorini_az.play import run_match
from santorini_az.progress import Progress

SIMS_MCTS = (64, 200, 800)
SEEDS = (0, 1, 2, 3)
DEPTHS = (1, 2, 4, 6)
SIMS_AB = (200, 800)


def fail(message: str) -> None:
    "Bad input: one sentence naming the culprit, exit status 2."
    print(f"measure_champion: {message}", file=sys.stderr)
    sys.exit(2)


def battery(openings_mcts: int, openings_ab: int) -> list[dict]:
    "Every match of the card: a key (e.g. 'mcts64-s2', 'ab4@200'), the opponent spec, simulations, seed, openings."
    matches = [dict(key=f"mcts{s}-s{seed}", opponent="mcts", sims=s, seed=seed, openings=openings_mcts)
               for s in SIMS_MCTS for seed in SEEDS]
    matches += [dict(key=f"ab{d}@{s}", opponent=f"alphabeta{d}", sims=s, seed=0, openings=openings_ab)
                for s in SIMS_AB for d in DEPTHS]
    return matches


def selected(matches: list[dict], only: str | None) -> list[dict]:
    "The matches whose key starts with one of the comma-separated prefixes in `only` (all of them without it)."
    if not only: return matches
    prefixes = [p.strip() for p in only.split(",") if p.strip()]
    chosen = [m for m in matches if any(m["key"].startswith(p) for p in prefixes)]
    if not chosen: fail(f"--only {only!r} names no match (keys look like mcts64-s0, ab4@200)")
    return chosen


def row(match: dict, checkpoint: str, label: str, machine: str, points: float, games: int, seconds: float) -> dict:
    "One result row, as nbs/data/experiments.json keeps them."
    depth = int(match["opponent"][len("alphabeta"):]) if match["opponent"].startswith("alphabeta") else None
    command = (f"santorini_az arena {checkpoint} {match['opponent']} --openings {match['openings']} "
               f"--sims {match['sims']} --seed {match['seed']}")
    low, high = wilson_interval(points, games)
    return dict(key=match["key"], group="champion_vs_mcts" if depth is None else "champion_vs_alphabeta",
                label=label, opponent=match["opponent"], depth=depth, sims=match["sims"], seed=match["seed"],
                points=points, games=games, interval=[round(low, 4), round(high, 4)], match=command,
                machine=machine, seconds=round(seconds, 1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint", help="the candidate's .safetensors (or 'champion')")
    parser.add_argument("--out", required=True, help="JSON file of measured rows (created, or resumed)")
    parser.add_argument("--openings-mcts", type=int, default=50)
    parser.add_argument("--openings-ab", type=int, default=100)
    parser.add_argument("--only", help="comma-separated key prefixes, e.g. 'mcts64,ab4@200'")
    parser.add_argument("--label", default="candidate")
    parser.add_argument("--machine", default=platform.processor() or platform.machine())
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    args = parser.parse_args()
    if args.checkpoint != "champion" and not Path(args.checkpoint).is_file():
        fail(f"checkpoint {args.checkpoint!r} does not exist")
    out = Path(args.out)
    try: rows = json.loads(out.read_text()) if out.exists() else []
    except json.JSONDecodeError as e: fail(f"--out {out} is not JSON ({e})")
    done = {r["key"] for r in rows}
    for match in selected(battery(args.openings_mcts, args.openings_ab), args.only):
        if match["key"] in done: continue
        start = time.perf_counter()
        result = run_match(args.checkpoint, match["opponent"], match["openings"], match["sims"], match["seed"],
                           Progress(args.quiet), workers=0)
        rows.append(row(match, args.checkpoint, args.label, args.machine, result.points_a, result.games,
                        time.perf_counter() - start))
        tmp = out.with_suffix(".tmp")
        tmp.write_text(json.dumps(rows, indent=1) + "\n")
        tmp.replace(out)  # the file is always whole: an interrupted battery loses at most the match in progress
        r = rows[-1]
        print(f"{r['key']}: {r['points']:g}/{r['games']} = {r['points'] / r['games']:.1%} "
              f"(95% {r['interval'][0]:.1%} to {r['interval'][1]:.1%}), {r['seconds']:.0f} s", flush=True)


if __name__ == "__main__":
    main()
