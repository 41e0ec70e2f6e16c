"""How fast the `cpu` preset's training step runs here, in fp32 (the loop's default) and with its forward pass under
bf16 autocast (what the loop's `train.precision=bf16` does, where the CPU multiplies bf16 natively).

    .venv/bin/python tools/train_step_rate.py [--games RUN/games] [--threads 2] [--steps 100]

One JSON line: the seconds a step of 256 positions (the trainer with the reach maps' head, AdamW), the best of three
rounds of --steps steps after a warm-up, fp32 and bf16 autocast taking turns. The positions are sampled as the loop
samples them from the last 8 generations of a run's game files (`--games`, e.g. runs/cpu/games after the README's
command), or random ones (about 15% slower here, for reasons not looked into). Also the multiply-adds a position of the step's forward pass (chapter 22's
`multiply_adds`): a step computes about 3 x 2 x that x 256 FLOP (the backward pass costs about twice the forward).
Chapter 12 ("How close to the machine") quotes it. Run it with nothing else on the machine."""
import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from santorini_az.bench import multiply_adds
from santorini_az.config import preset
from santorini_az.encoding import N_ACTIONS
from santorini_az.network import NetConfig, SantoriniNet, cpu_supports_bf16, random_planes
from santorini_az.replay import Examples, ReplayBuffer, load_examples
from santorini_az.trainer import Trainer


def fail(message: str) -> None:
    "Bad input: one sentence naming the culprit, exit status 2."
    print(f"train_step_rate: {message}", file=sys.stderr)
    sys.exit(2)


def random_batch(size: int, seed: int) -> Examples:
    "`size` random positions with a random legal set, a uniform policy over it and a random result."
    rng = np.random.default_rng(seed)
    legal = rng.random((size, N_ACTIONS)) < 0.3
    legal[:, 0] = True  # every position has a legal action
    policy = (legal / legal.sum(1, keepdims=True)).astype(np.float32)
    results = rng.choice([-1.0, 1.0], size).astype(np.float32)
    return Examples(random_planes(size, seed=seed), policy, legal, results, np.zeros(size, np.float32), np.zeros(size, np.int32))


def sampled_batches(games: Path | None, count: int) -> list[Examples]:
    "`count` batches as the loop draws them from the last 8 generations in `games` (iter-*.npz), or random ones."
    config = preset("cpu")
    if games is None: return [random_batch(config.train.batch_size, seed) for seed in range(count)]
    files = sorted(games.glob("iter-*.npz"))[-config.replay_generations:]
    if not files: fail(f"no iter-*.npz game files in {games}")
    buffer = ReplayBuffer(config.replay_capacity, config.replay_generations)
    for generation, path in enumerate(files): buffer.add(load_examples(path), generation)
    rng = np.random.default_rng(0)
    return [buffer.sample(config.train.batch_size, rng, config.train.augment) for _ in range(count)]


def step_seconds(kinds: list[str], steps: int, batches: list[Examples], rounds: int = 3) -> dict[str, float]:
    """Seconds a training step for each of `kinds` ('fp32', 'bf16_autocast'): each its own trainer, timed in turns
    (`rounds` rounds of `steps` steps each, alternating, so that a slow moment of the machine hits both) and the best
    round kept."""
    config = preset("cpu")
    precision = {"fp32": "fp32", "bf16_autocast": "bf16"}  # the loop's train.precision for each kind
    trainers = {}
    for kind in kinds:
        torch.manual_seed(0)
        trainers[kind] = Trainer(SantoriniNet(NetConfig(config.channels, config.blocks)),
                                 replace(config.train, precision=precision[kind]), 10 * steps * rounds)
    best = {kind: float("inf") for kind in kinds}
    for round_ in range(rounds + 1):  # the first round warms up
        for kind in kinds:
            start = time.perf_counter()
            for k in range(steps if round_ else 10): trainers[kind].train_step(batches[k % len(batches)])
            if round_: best[kind] = min(best[kind], (time.perf_counter() - start) / steps)
    return best


def forward_multiply_adds() -> int:
    "Multiply-adds a position of the training step's forward pass: the trunk, both heads and the reach maps' head."
    config = preset("cpu")
    model = SantoriniNet(NetConfig(config.channels, config.blocks)).eval()
    head = Trainer(model, replace(config.train, precision="fp32"), 1).reach_head  # the preset's is 'auto'
    class Step(torch.nn.Module):
        def __init__(self): super().__init__(); self.model, self.head = model, head
        def forward(self, planes):
            features = self.model.trunk(planes)
            return self.model.heads(features), self.head(features)
    return multiply_adds(Step(), random_planes(2, seed=0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=Path, help="a run's game files (RUN/games): batches as the loop samples them")
    parser.add_argument("--threads", type=int, default=2, help="torch threads (the loop trains on every core)")
    parser.add_argument("--steps", type=int, default=100, help="steps a timed round")
    args = parser.parse_args()
    if args.threads < 1 or args.steps < 1: fail("--threads and --steps must be at least 1")
    if args.games is not None and not args.games.is_dir(): fail(f"--games {args.games} is not a folder")
    torch.set_num_threads(args.threads)
    batches = sampled_batches(args.games, 110)
    kinds = ["fp32", "bf16_autocast"] if cpu_supports_bf16() else ["fp32"]
    seconds = step_seconds(kinds, args.steps, batches)
    row = dict(batch=preset("cpu").train.batch_size, threads=args.threads, positions="a run's games" if args.games else "random",
               multiply_adds_forward=forward_multiply_adds(), torch=torch.__version__,
               **{f"{kind}_step_s": round(value, 5) for kind, value in seconds.items()})
    print(json.dumps(row))


if __name__ == "__main__":
    main()
