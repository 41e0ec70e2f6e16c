"Training: replay augmentation, loss masking, Elo, arena pairing, resume after a kill, the tiny preset via the CLI."
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from santorini_az.game import initial_state, legal_actions, apply, winner
from santorini_az.encoding import encode, legal_action_indices, transform_state
from santorini_az.replay import augment, ReplayBuffer, Examples, save_buffer, load_buffer
from santorini_az.trainer import policy_loss, masked_log_softmax
from santorini_az.arena import (MatchResult, fit_elo, play_match, pairing_schedule, random_openings, RandomPlayer,
                                GreedyPlayer, wilson_interval)
from santorini_az.loop import (preset, apply_overrides, run_training, plan, Progress, RunDirectory, read_records,
                               STAGE_FUNCTIONS)

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-c", "from santorini_az.cli import main; main()"]


def random_positions(n, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        s = initial_state()
        for _ in range(int(rng.integers(0, 30))):
            actions = legal_actions(s)
            nxt = apply(s, actions[int(rng.integers(len(actions)))])
            if winner(nxt) is not None: break
            s = nxt
        out.append(s)
    return out


def mask_of(state):
    m = np.zeros(153, bool); m[legal_action_indices(state)] = True
    return m


def test_augmentation_transforms_planes_policy_and_mask_consistently():
    states = random_positions(40)
    planes = np.stack([encode(s) for s in states])
    masks = np.stack([mask_of(s) for s in states])
    rng = np.random.default_rng(1)
    policy = np.where(masks, rng.random((len(states), 153)), 0).astype(np.float32)
    policy /= policy.sum(1, keepdims=True)
    for sym in range(8):
        p, q, m = augment(planes, policy, masks, np.full(len(states), sym))
        for i, s in enumerate(states):
            t = transform_state(s, sym)
            assert (p[i] == encode(t)).all()  # the planes are the transformed position's planes
            assert (m[i] == mask_of(t)).all()  # the mask is the transformed position's legal mask
            assert ((q[i] > 0) <= m[i]).all() and abs(q[i].sum() - 1) < 1e-5
    # mixed symmetries in one batch agree with one at a time
    symmetries = rng.integers(0, 8, len(states))
    p, q, m = augment(planes, policy, masks, symmetries)
    for i in range(len(states)):
        p1, q1, m1 = augment(planes[i:i + 1], policy[i:i + 1], masks[i:i + 1], symmetries[i:i + 1])
        assert (p[i] == p1[0]).all() and (q[i] == q1[0]).all() and (m[i] == m1[0]).all()


def test_buffer_window_and_roundtrip(tmp_path):
    states = random_positions(10)
    ex = Examples(np.stack([encode(s) for s in states]).astype(np.uint8), np.zeros((10, 153), np.float32),
                  np.stack([mask_of(s) for s in states]), np.ones(10, np.float32), np.zeros(10, np.float32),
                  np.zeros(10, np.int32))
    buffer = ReplayBuffer(capacity=25, generations=2)
    for g in range(4): buffer.add(ex, g)
    assert len(buffer) == 20 and set(buffer.examples.generation.tolist()) == {2, 3}
    save_buffer(buffer, tmp_path / "r.npz")
    again = load_buffer(tmp_path / "r.npz")
    assert again.added == {0, 1, 2, 3} and not again.add(ex, 3)


def test_illegal_logits_do_not_matter():
    torch.manual_seed(0)
    masks = torch.as_tensor(np.stack([mask_of(s) for s in random_positions(8, seed=3)]))
    target = torch.where(masks, torch.rand(8, 153), torch.zeros(8, 153))
    target /= target.sum(1, keepdim=True)
    logits = torch.randn(8, 153)
    base = policy_loss(logits, target, masks)
    for scale in (1e3, -1e3, 1e30):
        changed = torch.where(masks, logits, scale * torch.randn(8, 153))
        assert torch.isfinite(policy_loss(changed, target, masks))
        assert torch.allclose(policy_loss(changed, target, masks), base)
    probs = masked_log_softmax(logits, masks).exp()
    assert torch.allclose(probs.sum(1), torch.ones(8)) and (probs[~masks] == 0).all()


def test_elo_fit_recovers_ratings_from_sampled_games():
    rng = np.random.default_rng(0)
    true = {"random": 0.0, "greedy": 250.0, "mcts": 600.0, "iter-0001": 400.0, "iter-0002": 800.0}
    names = list(true)
    results = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            p = 1 / (1 + 10 ** ((true[b] - true[a]) / 400))
            results.append(MatchResult(a, b, float(rng.binomial(4000, p)), 4000))
    fitted = fit_elo(results)
    assert fitted["random"] == 0.0
    for name in names: assert abs(fitted[name] - true[name]) < 25, (name, fitted[name])


def test_wilson_interval_contains_score():
    for points, games in [(0, 10), (5, 10), (10, 10), (55, 100)]:
        low, high = wilson_interval(points, games)
        assert 0 <= low <= points / games <= high <= 1


def test_arena_pairing_each_opening_twice_colours_swapped():
    rng = np.random.default_rng(5)
    openings = random_openings(6, rng)
    assert len(set(openings)) == 6
    seen = []

    class Recorder(RandomPlayer):
        "Random, but notes the colour it plays in each opening."
        def __init__(self, name): self.name = name
        def choose(self, states, rng):
            for s in states:
                if s in openings: seen.append((self.name, openings.index(s), s.player))
            return super().choose(states, rng)

    a, b = Recorder("a"), Recorder("b")
    outcomes = play_match(a, b, openings, rng)
    assert [(o.opening, o.first_moves_first) for o in outcomes] == pairing_schedule(6)
    assert len(outcomes) == 12
    # at the opening position, the player to move is 'a' in one game and 'b' in the other
    for i in range(6):
        movers = sorted(name for name, k, _ in seen if k == i)
        assert movers == ["a", "b"], (i, movers)


def test_greedy_beats_random():
    rng = np.random.default_rng(0)
    outcomes = play_match(GreedyPlayer(), RandomPlayer(), random_openings(15, rng), rng)
    assert sum(o.first_won for o in outcomes) >= 24


def tiny(iterations=1):
    return apply_overrides(preset("tiny"), [f"iterations={iterations}"])


def test_resume_after_interrupted_stage(tmp_path, monkeypatch):
    "A kill inside the train stage (after self-play saved its games): resume redoes train only, reusing the games."
    run_dir = tmp_path / "run"
    config = tiny()
    original = STAGE_FUNCTIONS["train"]

    def killed(loop, iteration):
        raise KeyboardInterrupt  # the process dies in the middle of training

    monkeypatch.setitem(STAGE_FUNCTIONS, "train", killed)
    with pytest.raises(KeyboardInterrupt):
        run_training(run_dir, config, progress=Progress(quiet=True))
    run = RunDirectory(run_dir)
    assert [(r.iteration, r.stage) for r in run.records()] == plan(config)[:4]  # up to and including selfplay
    games_mtime = run.games(1).stat().st_mtime_ns
    buffer_size = len(load_buffer(run.replay_path))
    monkeypatch.setitem(STAGE_FUNCTIONS, "train", original)
    run_training(run_dir, resume=True, progress=Progress(quiet=True))
    records = run.records()
    assert [(r.iteration, r.stage) for r in records] == plan(config)  # each stage once, in order
    assert run.games(1).stat().st_mtime_ns == games_mtime  # the finished games were kept, not replayed
    assert len(load_buffer(run.replay_path)) == buffer_size  # and not added twice


@pytest.mark.slow
def test_resume_after_sigkill(tmp_path):
    "Kill the CLI process with SIGKILL mid-run, resume, and check no stage is lost or duplicated."
    run_dir = tmp_path / "run"
    args = CLI + ["train", "--preset", "tiny", "--iterations", "2", "--quiet", "--run-dir", str(run_dir)]
    proc = subprocess.Popen(args, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    records = run_dir / "records.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        if records.exists() and len(records.read_text().splitlines()) >= 5: break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL); proc.wait()
    done = subprocess.run(CLI + ["train", "--resume", "--quiet", "--run-dir", str(run_dir)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    got = [(r.iteration, r.stage) for r in read_records(records)]
    assert got == plan(tiny(2))
    json.loads((run_dir / "champion.json").read_text())


@pytest.mark.slow
def test_tiny_preset_end_to_end_via_cli(tmp_path):
    "`santorini_az train --preset tiny` finishes well within two minutes and leaves a checkpoint, records, a report."
    start = time.time()
    done = subprocess.run(CLI + ["train", "--preset", "tiny", "--quiet", "--run-dir", str(tmp_path / "tiny")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    seconds = time.time() - start
    assert done.returncode == 0, done.stdout + done.stderr
    run = RunDirectory(tmp_path / "tiny")
    assert seconds < 120, seconds
    assert run.checkpoint(2).exists() and (run.root / "report" / "report.png").exists()
    assert [(r.iteration, r.stage) for r in run.records()] == plan(preset("tiny"))
    assert any((run.root / "tb").iterdir())


@pytest.mark.parametrize("args, message", [
    (["train", "--preset", "huge"], "unknown preset"),
    (["train", "--set", "gamez=3"], "unknown setting"),
    (["train", "--set", "selfplay.games=many"], "expects int"),
    (["train", "--resume", "--run-dir", "nowhere"], "nothing to resume"),
    (["train", "--config", "missing.json"], "cannot read config file"),
    (["train", "--net", "big"], "bad network size"),
    (["arena", "missing.safetensors", "random"], "no such checkpoint"),
    (["arena", "bad.safetensors", "random"], "cannot load checkpoint"),
    (["inspect", "not-a-position"], "is not a position"),
    (["report", "nowhere"], "no records.jsonl"),
])
def test_bad_input_gives_one_clean_line(tmp_path, args, message):
    (tmp_path / "bad.safetensors").write_bytes(b"this is not a checkpoint")
    done = subprocess.run(CLI + args, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr + done.stdout, done.stderr
