"Training: replay augmentation, loss masking, Elo, arena pairing, resume after a kill, the tiny preset via the CLI."
import json
from contextlib import contextmanager
import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

from santorini_az.game import initial_state, legal_actions, apply, winner
from santorini_az.encoding import encode, legal_action_indices, transform_state
from santorini_az.replay import augment, ReplayBuffer, Examples, save_buffer, load_buffer
from santorini_az.trainer import TrainConfig, Trainer, policy_loss, masked_log_softmax
from santorini_az.game import random_openings
from hypothesis import given, settings
from tests.strategies import played_positions
from tests.quick import QUICK, quick_args
from tests.conftest import CLI, refuse_a_second_writer_then_kill, run_cli_forked, train_resume
from santorini_az.arena import (MatchResult, fit_elo, match_outcomes, pairing_schedule, RandomPlayer, GreedyPlayer,
                                wilson_interval, gate_verdict, CHAMPION)
from santorini_az.config import RunConfig, config_from_dict, preset, apply_overrides
from santorini_az.progress import Progress
from santorini_az.network import NetConfig, SantoriniNet, cpu_supports_bf16
from santorini_az.rundir import RunDirectory, RunError, Record, read_records, append_record, locked
from santorini_az.loop import run_training, plan, STAGE_FUNCTIONS, Loop, stage_arena, stage_selfplay, all_results

ROOT = Path(__file__).resolve().parents[1]


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
    again.generations = 1  # a resumed run's narrower window (chapter 10a's Loop.buffer sets it and trims)
    again.trim()
    assert len(again) == 10 and set(again.examples.generation.tolist()) == {3}
    again.capacity = 4
    again.trim()
    assert len(again) == 4 and np.array_equal(again.examples.planes, ex.planes[-4:])  # the newest positions kept


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
    outcomes = match_outcomes(a, b, openings, rng)
    assert [(o.opening, o.first_moves_first) for o in outcomes] == pairing_schedule(6)
    assert len(outcomes) == 12
    # at the opening position, the player to move is 'a' in one game and 'b' in the other
    for i in range(6):
        movers = sorted(name for name, k, _ in seen if k == i)
        assert movers == ["a", "b"], (i, movers)


def test_greedy_beats_random():
    rng = np.random.default_rng(0)
    outcomes = match_outcomes(GreedyPlayer(), RandomPlayer(), random_openings(15, rng), rng)
    assert sum(o.first_won for o in outcomes) >= 24


def tiny(iterations=1):
    "The tiny preset at the quick sizes (tests/quick.py), for `iterations` iterations."
    return apply_overrides(preset("tiny"), QUICK + [f"iterations={iterations}"])


def test_the_default_engine_setup_in_a_run(tmp_path):
    "The defaults of the cpu preset on the tiny one: a pool of worker processes and the network on onnxruntime."
    from santorini_az.engine import worker_pool
    config = apply_overrides(tiny(), ["backend=onnxruntime", "workers=2"])
    jobs = worker_pool(2).jobs
    run = run_training(tmp_path / "run", config, progress=Progress(quiet=True))
    assert worker_pool(2).jobs > jobs  # the games were played by the pool's two processes
    assert (run.root / "checkpoints" / "iter-0000.onnx").exists()  # exported beside the checkpoint it searched with
    values = {r.stage: r.values for r in run.records()}
    assert values["selfplay"]["games"] == config.selfplay.games and values["selfplay"]["positions"] > 0
    assert values["arena"]["games"] == 2 * config.arena.openings
    assert RunConfig().workers == 0 and RunConfig().backend == "onnxruntime"  # every core, onnxruntime: the default


def test_a_run_searches_with_the_int8_network(tmp_path):
    "backend=onnxruntime-int8: each checkpoint is exported and quantized beside itself, and the searches run on that."
    from santorini_az.export import onnx_metadata
    run = run_training(tmp_path / "run", apply_overrides(tiny(1), ["backend=onnxruntime-int8"]), progress=Progress(quiet=True))
    for iteration in (0, 1):
        assert onnx_metadata(run.root / "checkpoints" / f"iter-{iteration:04d}.int8.onnx")["precision"] == "int8"
    values = {r.stage: r.values for r in run.records()}
    assert values["selfplay"]["positions"] > 0 and values["arena"]["games"] > 0


@pytest.mark.parametrize("amx, vnni, chosen", [(True, True, ("onnxruntime-int8", "bf16")),  # an Intel Xeon with AMX
                                               (False, True, ("onnxruntime-int8", "fp32")),  # AVX-512 VNNI, no AMX
                                               (False, False, ("onnxruntime", "fp32"))])  # AVX2
def test_backend_auto_is_chosen_once_and_kept_by_a_resume(tmp_path, monkeypatch, amx, vnni, chosen):
    """backend=auto and train.precision=auto (the cpu preset's): int8 searches where the CPU has VNNI, bf16 training
    where it has AMX, fp32 elsewhere; config.json keeps the choice."""
    import santorini_az.config, santorini_az.network
    monkeypatch.setattr(santorini_az.config, "cpu_has_amx", lambda: amx)
    monkeypatch.setattr(santorini_az.config, "cpu_has_vnni", lambda: vnni)
    monkeypatch.setattr(santorini_az.network, "cpu_supports_bf16", lambda: amx)  # AMX multiplies bf16 natively
    config = apply_overrides(tiny(1), ["backend=auto", "train.precision=auto"])
    run = run_training(tmp_path / "run", config, progress=Progress(quiet=True), stop_after=1)  # the init stage only
    def stored():
        config = json.loads(run.config_path.read_text())
        return config["backend"], config["train"]["precision"]
    assert stored() == chosen
    monkeypatch.setattr(santorini_az.config, "cpu_has_amx", lambda: not amx)  # resumed on another kind of machine...
    monkeypatch.setattr(santorini_az.config, "cpu_has_vnni", lambda: not vnni)
    monkeypatch.setattr(santorini_az.network, "cpu_supports_bf16", lambda: True)  # ...that has bf16 (else: refused)
    run_training(run.root, resume=True, progress=Progress(quiet=True), stop_after=1)
    assert stored() == chosen


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
def test_the_tiny_preset_one_writer_then_resume_after_sigkill(tmp_path):
    """`santorini_az train --preset tiny` (at the quick sizes: the mechanics, not the learning, which chapter 10 shows):
    a second writer is refused naming the holder; SIGKILL mid-run; --resume (not blocked by the dead lock) finishes
    every stage of the preset once and leaves the last checkpoint, the records, a report and TensorBoard events."""
    run_dir = tmp_path / "run"
    second = refuse_a_second_writer_then_kill(["--preset", "tiny", *quick_args(), "--quiet"], run_dir, records=5, wait_s=120)
    assert "Traceback" not in second.stderr
    stages = plan(apply_overrides(preset("tiny"), QUICK))  # the preset's 4 iterations, reference matches in each
    assert len(read_records(run_dir / "records.jsonl")) < len(stages)  # killed mid-run
    done = train_resume(run_dir, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    run = RunDirectory(run_dir)
    assert [(r.iteration, r.stage) for r in run.records()] == stages
    assert run.checkpoint(4).exists() and (run.root / "report" / "report.png").exists()
    assert any((run.root / "tb").iterdir())
    json.loads((run_dir / "champion.json").read_text())
    heard = []
    class Listening(Progress):
        def say(self, text): heard.append(text)
    run_training(run_dir, resume=True, progress=Listening(quiet=True))  # a finished run: it says so, and does nothing
    assert [line for line in heard if line.startswith("nothing to do")] == [
        "nothing to do: the run has done its 4 iterations (--iterations counts them all, those done included: give "
        "more to go on)"], heard
    heard.clear()  # fewer than it has done: the count is the run's, not the one asked for
    run_training(run_dir, resume=True, overrides=["iterations=2"], progress=Listening(quiet=True))
    assert [line for line in heard if line.startswith("nothing to do")] == [
        "nothing to do: the run has done 4 iterations, and --iterations 2 counts them all, those done included: give "
        "more than 4 to go on"], heard
    assert [(r.iteration, r.stage) for r in run.records()] == stages


def test_ctrl_c_stops_a_run_and_says_how_to_go_on(tmp_path):
    "SIGINT (Ctrl-C) mid-run: exit 130 and one line naming the command that resumes it, no traceback."
    import signal
    import time
    run_dir = tmp_path / "run"
    proc = subprocess.Popen(CLI + ["train", "--preset", "tiny", *quick_args(), "--quiet", "--run-dir", str(run_dir)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # as a terminal's Ctrl-C
    deadline = time.time() + 120
    while not (run_dir / "records.jsonl").exists() and time.time() < deadline and proc.poll() is None: time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == [f"stopped: the finished stages are kept; go on with: santorini_az train "
                                        f"--run-dir {run_dir} --resume"], err


def test_kill_stops_a_run_as_ctrl_c_does_and_leaves_no_process_behind(tmp_path):
    """SIGTERM (`kill`) mid-run, with a pool of 2 workers: the Ctrl-C line and exit 130, and no process of the run left
    (the signal's default ended the command alone: its workers ran on for ever, orphans of 470 MB each)."""
    import signal
    import time
    run_dir = tmp_path / "run"
    proc = subprocess.Popen(CLI + ["train", "--preset", "tiny", *quick_args(), "--set", "workers=2", "--quiet",
                                   "--run-dir", str(run_dir)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)  # a session of its own: every process of the run, found by it
    try:
        deadline = time.time() + 120
        while len(read_records(run_dir / "records.jsonl")) < 2 and time.time() < deadline and proc.poll() is None:
            time.sleep(0.05)  # the holdout's games have started the pool
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 130 and err.strip().splitlines()[-1].startswith("stopped: the finished stages are kept"), err
        deadline = time.time() + 20
        while time.time() < deadline:
            try: os.killpg(proc.pid, 0)
            except ProcessLookupError: break  # no process of the run's session is left
            time.sleep(0.1)
        else: raise AssertionError("processes of the killed run are still running")
    finally:
        try: os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError: pass


def test_a_settings_file_in_the_run_directory_is_not_taken_for_a_run(tmp_path):
    "A config.json of the user's (no lock beside it) is refused, as a new run and on --resume, and left as it was."
    settings = tmp_path / "myrun" / "config.json"
    settings.parent.mkdir()
    settings.write_text('{"selfplay": {"games": 32}}')
    for config, resume in ((preset("tiny"), False), (None, True)):
        with pytest.raises(RunError, match="config.json is not a run's config"):
            run_training(settings.parent, config, resume=resume, progress=Progress(quiet=True))
    assert settings.read_text() == '{"selfplay": {"games": 32}}' and [p.name for p in settings.parent.iterdir()] == ["config.json"]


def test_a_run_whose_lock_file_was_deleted_is_named_as_a_run(tmp_path):
    "A run's config.json and records.jsonl without the lock (deleted as if stale): named as a run, with the way back."
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "config.json").write_text("{}")
    (run_dir / "records.jsonl").write_text("")
    with pytest.raises(RunError, match="holds a run without its lock file") as refused:
        run_training(run_dir, resume=True, progress=Progress(quiet=True))
    assert f"touch {run_dir / 'lock'}" in str(refused.value) and "not a run's config" not in str(refused.value)
    assert sorted(p.name for p in run_dir.iterdir()) == ["config.json", "records.jsonl"]  # nothing written


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU: the gpu preset runs")
def test_gpu_preset_without_a_gpu_stops_before_writing(tmp_path):
    "`train --preset gpu` where torch sees no GPU: one sentence naming the setting and the way out, exit 2, no run."
    done = run_cli_forked(["train", "--preset", "gpu", "--run-dir", str(tmp_path / "gpu")], cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "'device'='cuda' but torch" in done.stderr and "--set device=cpu" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "gpu").exists()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")
def test_a_gpu_run_trains_there_and_resumes_on_the_cpu(tmp_path):
    "device=cuda: two iterations on the GPU; the run then resumes on the CPU (the optimiser state saved on the GPU loads)."
    config = apply_overrides(preset("tiny"), ["device=cuda", "backend=torch"])
    run = run_training(tmp_path / "run", config, progress=Progress(quiet=True))
    assert [(r.iteration, r.stage) for r in run.records()] == plan(config)
    state = torch.load(run.trainer_state(2), weights_only=True, map_location="meta")
    assert state["step"] == 2 * config.train.steps_per_iteration
    run = run_training(run.root, resume=True, overrides=["device=cpu", "iterations=3"], progress=Progress(quiet=True))
    assert [(r.iteration, r.stage) for r in run.records()] == plan(apply_overrides(config, ["iterations=3"]))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")
def test_a_gpu_run_can_search_on_the_cores(tmp_path):
    "device=cuda with an onnxruntime backend: the searches run the ONNX export on the CPU, training runs on the GPU."
    config = apply_overrides(preset("tiny"), ["device=cuda", "backend=onnxruntime", "iterations=1"])
    run = run_training(tmp_path / "run", config, progress=Progress(quiet=True))
    assert [(r.iteration, r.stage) for r in run.records()] == plan(config)
    assert run.checkpoint(1).with_suffix(".onnx").exists()  # the searches of iteration 1's arena ran its export
    state = torch.load(run.trainer_state(1), weights_only=True, map_location="meta")
    assert state["step"] == config.train.steps_per_iteration


@pytest.mark.slow
def test_hours_is_a_budget_the_run_fills_and_resume_extends(tmp_path):
    "`train --hours` without --iterations plans its iterations from their measured time; resume keeps the plan, a larger --hours extends it."
    run_dir = tmp_path / "budget"
    train = CLI + ["train", "--preset", "tiny", *quick_args(), "--run-dir", str(run_dir)]
    done = subprocess.run(train + ["--hours", "0.003"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "plan: iteration 1" in done.stdout and "time budget filled" in done.stdout, done.stdout
    assert re.search(r"champion: iter-\d{4} .*curves: \S*tensorboard --logdir \S*budget/tb", done.stdout), done.stdout
    assert re.search(r"the\s+stages\s+that\s+measure\s+took\s+\d+\.\d%", done.stdout), done.stdout  # may wrap
    run = RunDirectory(run_dir)
    assert json.loads(run.config_path.read_text())["iterations"] == 0
    plan_file = json.loads(run.plan_path.read_text())
    last = plan_file["plans"][-1]
    assert last["last"] and last["budget_seconds"] == 10.8
    # usually two or more iterations; one on a machine so busy that the first took over half the budget
    assert max(r.iteration for r in run.records()) == last["iteration"] >= 1
    again = subprocess.run(train + ["--resume", "--quiet"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and len(run.records()) == len(read_records(run.records_path))
    assert max(r.iteration for r in run.records()) == last["iteration"]  # the budget was used: nothing more
    longer = subprocess.run(train + ["--resume", "--quiet", "--hours", "0.005"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=300)
    assert longer.returncode == 0, longer.stdout + longer.stderr
    extended = json.loads(run.plan_path.read_text())
    assert extended["plans"][-1]["last"] and extended["plans"][-1]["budget_seconds"] == 18.0
    assert max(r.iteration for r in run.records()) == extended["plans"][-1]["iteration"] > last["iteration"]
    assert extended["spent_seconds"] > plan_file["spent_seconds"]
    measured = [p for p in extended["plans"] if p["iteration"] >= 2]  # planned from the measured iterations before
    assert measured and all(p["iterations"] is not None and p["seconds_per_iteration"] > 0 for p in measured), extended


def test_a_fixed_count_with_hours_is_capped(tmp_path, monkeypatch):
    "With --iterations, --hours only caps: a spent budget stops the run before the next stage, and says so."
    from santorini_az.rundir import TimeBudget
    # A clock that does not depend on the machine's speed: nothing spent until the first stage is recorded, then all.
    monkeypatch.setattr(TimeBudget, "spent", lambda self: 0.0 if not self.run.records() else 1e9)
    config = apply_overrides(tiny(3), ["hours=0.00001"])
    lines = []
    progress = Progress(quiet=True)
    progress.say = lines.append
    run = run_training(tmp_path / "capped", config, progress=progress)
    assert len(run.records()) == 1 and any("time budget of 1e-05 h (0.0 min) spent, before the holdout stage of iteration 0" in l for l in lines), lines


def test_a_resumed_budget_already_spent_runs_nothing_and_hours_0_is_refused(tmp_path, monkeypatch):
    """A run that fills its budget, resumed with a smaller one it has already spent, plays no iteration more (it played
    a whole one: 'at least one more' is the rule of a plan made during a session); --hours 0 on it is refused naming
    --hours, unless a number of iterations is given with it."""
    from santorini_az.rundir import TimeBudget
    # A clock that does not depend on the machine's speed: nothing spent until iteration 1 is evaluated, then all.
    monkeypatch.setattr(TimeBudget, "spent", lambda self: 1e9 if any(r.stage == "evaluate" for r in self.run.records()) else 0.0)
    run = run_training(tmp_path / "budget", apply_overrides(tiny(0), ["hours=1"]), progress=Progress(quiet=True))
    before = len(run.records())
    assert max(r.iteration for r in run.records()) == 2  # a fresh plan, with nothing left: at least one more
    lines, progress = [], Progress(quiet=True)
    progress.say = lines.append
    run_training(tmp_path / "budget", resume=True, overrides=["hours=0.5"], progress=progress)
    assert len(run.records()) == before, [r.stage for r in run.records()]
    assert any("time budget of 0.5 h (30.0 min) spent" in line and "before iteration 3" in line for line in lines), lines
    done = run_cli_forked(["train", "--resume", "--quiet", "--run-dir", str(tmp_path / "budget"), "--hours", "0"],
                          cwd=tmp_path)
    assert done.returncode == 2 and "--hours 0" in done.stderr and "--iterations" in done.stderr, done.stderr
    counted = run_cli_forked(["train", "--resume", "--run-dir", str(tmp_path / "budget"), "--hours", "0",
                              "--set", "iterations=1"], cwd=tmp_path)  # a number of iterations given: not refused
    assert counted.returncode == 0 and len(run.records()) == before, counted.stdout + counted.stderr
    # and without --quiet it first says where it goes on from (it said nothing before its first stage line)
    assert counted.stderr.startswith(f"resuming {tmp_path / 'budget'} after its last finished stage: evaluate of "
                                     "iteration 2"), counted.stderr


class HeightFactory:
    "A sensible judge: value = tanh(sum of my workers' levels - the opponent's); uniform priors."
    def __call__(self):
        def judge(planes):
            levels = (planes[..., :4] * np.arange(4)).sum(-1)
            mine = (levels * planes[..., 5:7].sum(-1)).sum((1, 2))
            theirs = (levels * planes[..., 7:9].sum(-1)).sum((1, 2))
            return np.zeros((len(planes), 153), np.float32), np.tanh(mine - theirs).astype(np.float32)
        return judge


class ContraryFactory(HeightFactory):
    "The same judge upside down: it wants the opponent high. A deliberately bad evaluator."
    def __call__(self):
        judge = super().__call__()
        def contrary(planes):
            logits, values = judge(planes)
            return logits, -values
        return contrary


def test_promotion_follows_the_scores_and_selfplay_uses_the_champion(tmp_path, monkeypatch):
    "Strong candidate vs bad champion is promoted; bad vs strong is not; self-play then searches with the champion."
    config = apply_overrides(preset("tiny"), QUICK + ["arena.openings=6", "arena.simulations=32", "selfplay.games=2"])
    run = RunDirectory(tmp_path / "run")
    run.root.mkdir()
    networks = {0: ContraryFactory(), 1: HeightFactory(), 2: ContraryFactory()}
    asked = []
    def factory(self, iteration):
        asked.append(iteration)
        return networks[iteration]
    monkeypatch.setattr(Loop, "network_factory", factory)
    loop = Loop(run, config, Progress(quiet=True))

    def arena(iteration):
        values = stage_arena(loop, iteration)
        append_record(run.records_path, Record("arena", iteration, 0.0, 0.0, values))
        return values

    first = arena(1)  # the strong network challenges the bad initial champion
    assert (first["champion"], first["games"]) == (0, 12)
    assert first["score"] >= 0.9 and first["promoted"], first
    assert run.champion() == 1
    second = arena(2)  # a bad network challenges the strong champion: the other seat order
    assert second["champion"] == 1
    assert second["score"] <= 0.1 and not second["promoted"], second
    assert run.champion() == 1
    asked.clear()
    values = stage_selfplay(loop, 3)
    assert values["champion"] == 1 and asked == [1], (values, asked)


def test_the_fixed_gate_promotes_at_the_threshold_itself():
    "arena.gate=fixed: a score equal to promote_threshold is promoted (55% of 40 is 22 wins), one game fewer is not."
    assert gate_verdict(22, 40, 1, gate="fixed", threshold=0.55) is True
    assert gate_verdict(21, 40, 1, gate="fixed", threshold=0.55) is False


def test_a_second_writer_in_the_same_process_is_refused_naming_the_first(tmp_path):
    "The run's lock is an flock on its own open file: a second `locked` fails at once, and the lock goes with the first."
    run = RunDirectory(tmp_path / "run")
    with locked(run):
        with pytest.raises(RunError, match=r"run is in use by pid \d+ on .* since .*: one writer per run directory"):
            with locked(run): pass
    with locked(run): pass  # released: the next writer gets it


def test_the_sequential_gate_plays_rounds_until_it_is_sure(tmp_path, monkeypatch):
    "arena.gate=sprt: a clear winner is promoted after one round; a candidate equal to its champion plays every round."
    config = apply_overrides(preset("tiny"), QUICK + ["arena.openings=10", "arena.simulations=16", "arena.gate=sprt",
                                              "arena.gate_rounds=3"])
    run = RunDirectory(tmp_path / "run")
    run.root.mkdir()
    networks = {0: ContraryFactory(), 1: HeightFactory(), 2: HeightFactory()}
    monkeypatch.setattr(Loop, "network_factory", lambda self, iteration: networks[iteration])
    loop = Loop(run, config, Progress(quiet=True))

    def arena(iteration):
        values = stage_arena(loop, iteration)
        append_record(run.records_path, Record("arena", iteration, 0.0, 0.0, values))
        return values

    clear = arena(1)
    assert (clear["rounds"], clear["games"], clear["promoted"]) == (1, 20, True), clear
    # The same network on both sides plays each opening's two games alike, so it wins exactly one of each pair: 50%,
    # never decisive, so all three rounds are played and the evidence (below zero) keeps the champion.
    equal = arena(2)
    assert (equal["rounds"], equal["games"], equal["score"], equal["promoted"]) == (3, 60, 0.5, False), equal
    assert [r["games"] for r in equal["results"]] == [20, 20, 20]
    assert run.champion() == 1


def test_optimizer_state_survives_a_resume(tmp_path):
    """A run stopped after iteration 1's training and resumed trains iteration 2 exactly as an uninterrupted run does.
    (Without a holdout, holdout_games=0: no holdout losses are recorded, where 0.0 once was.)"""
    config = apply_overrides(tiny(2), ["holdout_games=0"])
    whole = run_training(tmp_path / "whole", config, progress=Progress(quiet=True), stop_after=9)  # to (2, "train")
    cut = run_training(tmp_path / "cut", config, progress=Progress(quiet=True), stop_after=5)
    assert [(r.iteration, r.stage) for r in cut.records()][-1] == (1, "train")
    state = torch.load(cut.trainer_state(1), weights_only=True)
    assert state["step"] == config.train.steps_per_iteration and state["optimizer"]["state"]  # moments were saved
    run_training(tmp_path / "cut", resume=True, progress=Progress(quiet=True), stop_after=4)  # to (2, "train") too
    train = lambda run: [r.values for r in run.records() if r.stage == "train"][-1]
    a, b = train(whole), train(cut)
    assert a["step"] == b["step"] == 2 * config.train.steps_per_iteration
    for key in ("policy_loss", "value_loss", "lr"):
        assert a[key] == pytest.approx(b[key], rel=1e-5, abs=1e-6), key
    assert not any(key.startswith("holdout") for key in a), a


def test_reference_matches_every_other_iteration_and_elo_json(tmp_path):
    "With arena.every=2 over 3 iterations, evaluate runs at 2 and at the last (3), is skipped at 1; elo.json is the fit."
    config = apply_overrides(preset("tiny"), QUICK + ["iterations=3", "arena.every=2"])
    run = run_training(tmp_path / "run", config, progress=Progress(quiet=True))
    evaluate = {r.iteration: r.values for r in run.records() if r.stage == "evaluate"}
    assert evaluate[1] == {"skipped": True}
    assert not evaluate[2].get("skipped") and not evaluate[3].get("skipped")
    elo = json.loads(run.elo_path.read_text())
    assert list(elo.values()) == sorted(elo.values(), reverse=True)  # best first
    assert elo["random"] == 0.0 and {"greedy", "mcts", "iter-0002", "iter-0003"} <= set(elo)
    assert "iter-0001" in elo  # it played the arena even though its reference matches were skipped
    assert elo == pytest.approx(fit_elo(all_results(run.records())), abs=0.05)  # the fit, to a tenth of a point
    assert all(rating == round(rating, 1) for rating in elo.values())
    assert evaluate[3]["elo_table"] == pytest.approx(elo)


@pytest.mark.parametrize("args, message", [
    (["train", "--set", "arena.every=0"], "'arena.every' must be at least 1"),
    (["train", "--set", "steps_per_iteration=-1"], "'train.steps_per_iteration' must be at least 1"),
    (["train", "--set", "threads=-1"], "'threads' must be at least 0"),
    (["train", "--set", "selfplay.simulations=0"], "'selfplay.simulations' must be at least 1"),
    (["train", "--set", "workers=-1"], "'workers' must be at least 0"),
    (["train", "--set", "promote_threshold=5"], "'arena.promote_threshold' must be at most 1"),
    (["train", "--set", "hours=nan"], "'hours' must be a finite number"),
    (["train", "--set", "iterations=-3"], "'iterations' must be at least 0"),  # 0: as many as 'hours' allows
    (["train", "--set", "iterations=0", "--hours", "0"], "'iterations'=0 fills a time budget: give 'hours' too"),
    (["train", "--set", "channels=true"], "'channels' expects int"),
    (["train", "--set", "optimizer=adam"], "'train.optimizer' must be one of adamw, sgd"),
    (["train", "--set", "arena.gate=vote"], "'arena.gate' must be one of fixed, sprt"),
    (["train", "--set", "arena.gate_target=0.5"], "'arena.gate_target' must be at least 0.51"),
    (["train", "--run-dir", "afile"], "afile"),
    (["train", "--set", "x" * 100_000 + "=1"], "more characters"),  # a huge argument is not echoed back whole
    (["bench", "--checkpoint", "missing.safetensors"], "no such checkpoint 'missing.safetensors'"),
    pytest.param(["bench", "--device", "cuda"], "no CUDA GPU",
                 marks=pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")),
    (["bench", "--backend", "tensorflow"], "--backend must be torch or onnxruntime"),
    (["train", "--hours", "nan"], "setting 'hours' must be a finite number, got nan"),  # it said 'greater than or equal to 0'
    (["train", "--hours", "-1"], "setting 'hours' must be at least 0"),
    (["train", "--set", 'arena.references=["uniform"]'], "unknown opponent 'uniform' (did you mean mcts?)"),
    (["bench", "--net", "0x1"], "--net: network size '0x1'"),  # bench's own option named, as train's
    (["bench", "--precision", "fp16"], "--precision must be fp32, bf16 or int8"),
    pytest.param(["train", "--preset", "gpu"], "or --set device=cpu --set cuda_graphs=false",  # both, or a second refusal
                 marks=pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")),
    (["bench", "--cuda-graphs"], "--cuda-graphs needs --device cuda"),
    (["train", "--set", "precision=bf16"], "'precision'='bf16' runs on torch, not backend='auto': add --set backend=torch"),
    (["train", "--set", "precision=fp16"], "'precision' must be one of fp32, bf16"),
    (["train", "--set", "train.precision=fp16"], "'train.precision' must be one of fp32, bf16"),
    (["train", "--set", "cuda_graphs=true"], "'cuda_graphs'=true needs a GPU"),
    pytest.param(["train", "--set", "precision=bf16", "--set", "backend=torch"], "does not multiply bf16 natively",
                 marks=pytest.mark.skipif(cpu_supports_bf16(), reason="this CPU multiplies bf16 natively")),
    (["bench", "--precision", "int8"], "add --backend onnxruntime"),
    (["arena", "champion", "mcts", "--backend", "int8"], "--backend must be one of torch, onnxruntime, onnxruntime-int8"),
    (["train", "--set", "selfplay.simulations=100000"], "GiB they may take (three quarters of this machine"),
    (["bench", "--sims", "100000", "--games", "100000"], "--sims 100000 with --games 100000 needs"),  # before any worker dies of it
    (["train", "--set", "name=../elsewhere"], "setting 'name' must be a folder name"),  # runs/NAME, one writer each
    (["train", "--preset", "huge"], "unknown preset"),
    (["train", "--set", "gamez=3"], "unknown setting"),
    (["train", "--set", "train.lr=0"], "the train settings are: batch_size, steps_per_iteration"),  # all were cut off
    (["train", "--config", "zero.json"], "config file zero.json: setting 'selfplay.games' must be at least 1"),  # no file named
    (["train", "--config", "typo.json"], "config file typo.json: unknown setting 'selfplay.gamez': did you mean selfplay.games?"),
    (["train", "--config", "refs.json"], "config file refs.json: setting 'arena.references' has unknown opponent 'grredy'"),  # checked last
    (["train", "--set", "selfplay.games=many"], "expects int"),
    (["train", "--resume", "--run-dir", "nowhere"], "nothing to resume"),
    (["train", "--preset", "tiny", "--resume"], "nothing to resume: runs/tiny holds no run"),  # the preset's own folder
    (["train", "--config", "missing.json"], "cannot read config file"),
    (["train", "--net", "big"], "bad network size"),
    (["train", "--init", "missing.safetensors"], "cannot load checkpoint missing.safetensors"),
    (["train", "--init", "champion", "--net", "16x2"], "setting 'init' (champion) is a 32x"),
    (["train", "--preset", "gods", "--init", "champion", "--net", "16x2"], "setting 'init' (champion) is a 32x"),
    (["train", "--resume", "--run-dir", "r", "--init", "champion"], "--init applies to a new run"),
    (["arena", "missing.safetensors", "random"], "no such checkpoint"),
    (["arena", "bad.safetensors", "random"], "cannot load checkpoint"),
    (["inspect", "not-a-position"], "is not a position"),
    (["report", "nowhere"], "no records.jsonl"),
    (["train", "--run-dir", "/proc/no/run"], "refuses new files"),  # /proc takes no new files, even from root
    (["train", "--run-dir", "r" * 300], "a name of 300 bytes is too long"),
    (["train", "--run-dir", "afile/run"], "afile is not a folder"),
    (["selfplay", "mcts", "--games", "1", "--out", "pipe"], "pipe exists and is not a regular file"),
    (["selfplay", "random", "--games", "1", "--out", "g.npz"], "self-play needs a search: give a checkpoint, 'champion' or 'mcts'"),
    (["selfplay", "nope", "--games", "1", "--out", "g.npz"], "no such checkpoint 'nope' (self-play needs a search"),
    (["selfplay", "mcts", "--games", "1", "--out", "/proc/games.npz"], "refuses new files"),
    (["selfplay", "mcts", "--games", "1", "--out", "afile"], "afile already exists: not replacing it (--force"),
    (["selfplay", "mcts", "--games", "1", "--out", "g.txt"], "--out g.txt: the positions are written as an .npz archive"),
    (["arena", "random", "mcts", "--seed", str(2**32)], "Invalid value for '--seed'"),  # as train's: 0 to 2**32 - 1
    (["export", str(CHAMPION), "--out", "afile"], "afile already exists: not replacing it (--force"),
    (["export", str(CHAMPION), "--out", "model"], "--out model: an ONNX file's name ends in .onnx"),
    (["export", str(CHAMPION), "--out", "pipe"], "pipe exists and is not a regular file"),  # a FIFO stands for /dev/null
    (["export", str(CHAMPION), "--out", "x" * 300 + ".onnx"], "is too long"),
    (["export", "pipe", "--out", "m.onnx"], "pipe is not a regular file"),
    (["train", "--config", "pipe"], "the config file pipe is not a regular file"),
    (["train", "--config", ""], "--config is empty"),
    (["train", "--preset", ""], "unknown preset ''"),  # not the default preset, run for minutes
    (["train", "--run-dir", "", "--preset", "tiny"], "Invalid value for '--run-dir': is empty"),  # not runs/tiny
    (["report", ""], "Invalid value for 'run': is empty"),  # not '.'
    (["export", "champion", "--out", ""], "Invalid value for '-o' / '--out': is empty"),
    (["inspect", "startpos", "--checkpoint", " "], "Invalid value for '--checkpoint': is empty"),
    (["arena", "mcts", "", "--openings", "1"], "Invalid value for 'second': is empty"),
    (["arena", "random", "mcts", "--gods", "apollo,pan", "--openings", "1"], "random plays the game without gods"),
    (["train", "--ray", "127.0.0.1:1"], "nothing answers at 127.0.0.1:1"),  # not minutes of Ray's own retries
    (["train", "--ray", "a cluster"], "--ray takes HOST:PORT"),  # reading a FIFO would block for ever
    (["train", "--ray", "localhost:99999"], "a port from 1 to 65535"),
    (["match", "", "santorini_az engine"], "the first engine's command is empty"),
    (["match", "santorini_az 'engine", "santorini_az engine"], "cannot read the engine command"),
    (["match", "santorini_az engine", "santorini_az engine", "--go-second", "bogus 3"], "--go-second: go takes nodes <n>, depth <d>"),
    (["bench", "--checkpoint", "bad.safetensors", "--seconds", "1"], "bad.safetensors is not a readable safetensors file"),
    (["inspect", "startpos", "--checkpoint", "."], ". is a folder, not a checkpoint: a run keeps its networks in checkpoints/"),
    (["export", ".", "--out", "m.onnx"], ". is a folder, not a checkpoint"),  # a run directory given for its network
    (["bench", "--checkpoint", ".", "--seconds", "1"], ". is a folder, not a checkpoint"),
    (["inspect", "startpos", "--checkpoint", ".", "--backend", "onnxruntime"], ". is a folder, not a checkpoint"),
    (["inspect", "0000000000000000000000000/1/apollo:C3,D4/pan:B2,E5", "--checkpoint", "."], ". is a folder, not a checkpoint"),
])
def test_bad_input_gives_one_clean_line(tmp_path, args, message):
    (tmp_path / "bad.safetensors").write_bytes(b"this is not a checkpoint")
    (tmp_path / "afile").write_text("a file where a run directory should be")
    (tmp_path / "zero.json").write_text('{"selfplay": {"games": 0}}')
    (tmp_path / "typo.json").write_text('{"selfplay": {"gamez": 3}}')
    (tmp_path / "refs.json").write_text('{"arena": {"references": ["random", "grredy"]}}')
    os.mkfifo(tmp_path / "pipe")
    done = run_cli_forked(args, cwd=tmp_path)
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr + done.stdout, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr  # one sentence
    assert not (tmp_path / "runs").exists()  # refused before anything was written
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "bad.safetensors", "pipe", "refs.json", "typo.json", "zero.json"] and (tmp_path / "pipe").is_fifo()


# A server for --ray's address check runs in a process of its own: gRPC does not survive a fork once a process has
# used it (grpc/grpc#13873), and the CLI's refusals are tested in processes forked from this one (run_cli_forked).
SERVER = """
import sys
kind, answer = sys.argv[1], sys.argv[2]
if kind == "http":
    import http.server
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    print(server.server_address[1], flush=True)
    server.serve_forever()
from concurrent import futures
import grpc
server = grpc.server(futures.ThreadPoolExecutor(1))
def get_cluster_id(request, context):  # the first question a Ray client asks a head's GCS
    if answer != "OK": context.abort(grpc.StatusCode[answer], "InvalidAuthToken: Authentication token is missing")
    return b""
if answer != "none":  # none: a gRPC server without that method, as Ray Client's port is
    method = grpc.unary_unary_rpc_method_handler(get_cluster_id)
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler("ray.rpc.NodeInfoGcsService",
                                                                          {"GetClusterId": method})])
port = server.add_insecure_port("127.0.0.1:0")
server.start()
print(port, flush=True)
server.wait_for_termination()
"""


@contextmanager
def server_process(kind: str, answer: str = "none"):
    "An HTTP or gRPC server (SERVER above) in a child process, on a free port of 127.0.0.1: its port; killed at the end."
    import sys
    child = subprocess.Popen([sys.executable, "-c", SERVER, kind, answer], stdout=subprocess.PIPE, text=True)
    try: yield int(child.stdout.readline())
    finally: child.kill(); child.wait(10)


@pytest.mark.parametrize("kind", ["http", "grpc"])
def test_a_ray_address_where_another_server_answers_is_refused_at_once(tmp_path, kind):
    "An HTTP or a gRPC server that is no Ray head on the port given to --ray: one sentence in seconds, not minutes of Ray's retries."
    with server_process(kind) as port: done = run_cli_forked(["train", "--ray", f"127.0.0.1:{port}"], cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [
        f"error: --ray: 127.0.0.1:{port} answers, but not as a Ray head: give the port of `ray start "
        "--head --port` (6379 by default)"], done.stderr
    assert list(tmp_path.iterdir()) == []  # refused before anything was written


@pytest.mark.parametrize("status", ["OK", "UNAUTHENTICATED"])
def test_a_ray_head_that_answers_or_asks_for_its_token_passes_the_check(status):
    "A server that answers GetClusterId as a Ray head's GCS does (with or without token authentication) is let through."
    import sys
    check = "from santorini_az.cli import check_ray_address; import sys; check_ray_address(sys.argv[1])"
    with server_process("grpc", status) as port:
        done = subprocess.run([sys.executable, "-c", check, f"127.0.0.1:{port}"], capture_output=True, text=True,
                              timeout=60, env={**os.environ, "grpc_proxy": "http://127.0.0.1:9"})  # no proxy is asked
    assert done.returncode == 0 and done.stderr == "", done.stderr  # a refusal exits 2 with its sentence


def test_a_new_run_that_cannot_reach_its_ray_cluster_leaves_no_folder(tmp_path, monkeypatch):
    "ray.init failing after the address check (a version mismatch, a head gone meanwhile): a RunError, and no lock file or folder is left."
    import santorini_az.cluster
    def no_cluster(address): raise ConnectionError(f"could not reach {address}")
    monkeypatch.setattr(santorini_az.cluster, "RayPool", no_cluster)
    with pytest.raises(RunError, match="cannot use the Ray cluster at 127.0.0.1:1: ConnectionError"):
        run_training(tmp_path / "runs" / "new", preset("tiny"), ray="127.0.0.1:1")
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "mine").mkdir()  # a folder of the user's stays, empty
    with pytest.raises(RunError): run_training(tmp_path / "mine", preset("tiny"), ray="127.0.0.1:1")
    assert [p.name for p in tmp_path.iterdir()] == ["mine"] and list((tmp_path / "mine").iterdir()) == []


def test_the_runs_precision_and_cuda_graphs_reach_the_searches_network():
    "precision and cuda_graphs are settings of the network the searches build (mortal_factory), not of training."
    from santorini_az.loop import mortal_factory
    from santorini_az.arena import CHAMPION
    config = apply_overrides(preset("tiny"), ["backend=torch", "precision=bf16", "cuda_graphs=true"])
    factory = mortal_factory(CHAMPION, config)
    assert (factory.precision, factory.cuda_graphs, factory.device) == ("bf16", True, "cpu")
    plain = mortal_factory(CHAMPION, preset("tiny"))
    assert (plain.precision, plain.cuda_graphs) == ("fp32", False)
    if cpu_supports_bf16():  # where it is native, the searches' network does run in bf16
        evaluator = mortal_factory(CHAMPION, apply_overrides(preset("tiny"), ["backend=torch", "precision=bf16"]))()
        assert evaluator.precision == "bf16" and evaluator.graphs is None


def test_the_shipped_champion_loads_and_beats_greedy():
    "The network in santorini_az/models (the default of play, inspect and the widgets) is there, loads, and plays well."
    from santorini_az.arena import player_from_spec, play_match
    from santorini_az.network import load_checkpoint
    _, metadata = load_checkpoint(CHAMPION)
    assert metadata["config"].name == "32x4"
    rng = np.random.default_rng(0)
    result = play_match(player_from_spec("champion", 32), GreedyPlayer(), random_openings(5, rng), rng)
    assert result.score >= 0.8, result



def damage_records_emptied(run):
    run.records_path.write_text("")

def damage_record_twice(run):
    lines = run.records_path.read_text().splitlines(keepends=True)
    run.records_path.write_text("".join(lines + lines[-1:]))

def damage_replay(run):
    run.replay_path.write_bytes(b"PK\x03\x04 not really a zip")

def damage_trainer_state(run):
    run.trainer_state(1).write_bytes(b"garbage")

def damage_foreign_checkpoint(run):
    from santorini_az.network import NetConfig, SantoriniNet, save_checkpoint
    save_checkpoint(run.checkpoint(1), SantoriniNet(NetConfig(8, 1)), iteration=1)

def damage_checkpoint_truncated(run):
    path = run.checkpoint(1)
    path.write_bytes(path.read_bytes()[:100])

def damage_holdout(run):
    run.holdout_path.write_bytes(b"not an npz file")

def damage_record_garbled(run):
    lines = run.records_path.read_text().splitlines(keepends=True)
    run.records_path.write_text("".join(lines[:2] + ['{"stage": "train", "iter\n'] + lines[2:]))

def damage_missing_checkpoint(run):
    run.checkpoint(1).unlink()


ONE_FINISHED_RUN = pytest.mark.xdist_group("finished_tiny_run")  # its tests on one worker: the run is made once


@pytest.fixture(scope="session")  # made once per worker (ONE_FINISHED_RUN: once): the tests damage copies
def finished_tiny_run(tmp_path_factory):
    "A finished one-iteration tiny run, made once; each test damages its own copy."
    root = tmp_path_factory.mktemp("finished") / "run"
    run_training(root, tiny(1), progress=Progress(quiet=True))
    return root


@ONE_FINISHED_RUN
def test_a_run_starts_from_the_network_init_names(tmp_path, finished_tiny_run):
    "init=CHECKPOINT: the run's first network is that checkpoint's, weight for weight, and the run trains on from it."
    from santorini_az.network import load_checkpoint
    source = finished_tiny_run / "checkpoints" / "iter-0001.safetensors"
    run = run_training(tmp_path / "run", tiny(1), overrides=[f"init={source}"], progress=Progress(quiet=True))
    (first, _), (given, _) = load_checkpoint(run.checkpoint(0)), load_checkpoint(source)
    assert all(torch.equal(a, b) for a, b in zip(first.state_dict().values(), given.state_dict().values()))
    assert [r.stage for r in run.records()][-1] == "evaluate"  # and the run went on from there


@ONE_FINISHED_RUN
@pytest.mark.parametrize("damage, message", [
    (damage_records_emptied, "records self-play only up to iteration 0: the run's files disagree"),
    (damage_record_twice, "twice"),
    (damage_replay, "replay.npz: BadZipFile"),
    (damage_trainer_state, "iter-0001.trainer.pt"),
    (damage_foreign_checkpoint, "is a 8x1 network but the run's config says 16x2"),
    (damage_missing_checkpoint, "iter-0001.safetensors is missing"),
    (damage_checkpoint_truncated, "cannot read"),
    (damage_holdout, "holdout.npz"),
    (damage_record_garbled, "records.jsonl line 3 is not a record"),
])
def test_a_damaged_run_is_refused_before_any_work(tmp_path, finished_tiny_run, damage, message):
    "Resuming a run whose files were damaged or disagree: one sentence naming the file, exit 2, nothing changed."
    import shutil
    root = tmp_path / "run"
    shutil.copytree(finished_tiny_run, root)
    damage(RunDirectory(root))
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and p.name != "lock"}
    done = run_cli_forked(["train", "--resume", "--quiet", "--run-dir", str(root), "--set", "iterations=2"], cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    after = {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and p.name != "lock"}
    assert after == before  # refused before any work: not a byte of the run changed


@ONE_FINISHED_RUN
@pytest.mark.parametrize("asked, message", [(["--preset", "gpu"], "was made with preset 'tiny'"),
                                            (["--net", "32x4"], "trains a 16x2 network"),
                                            (["--set", "channels=32"], "--set channels=32: the run in"),
                                            (["--set", "blocks=4"], "--set blocks=4: the run in"),
                                            (["--set", "game=gods"], "plays the mortal game, and a resumed run keeps its game"),
                                            (["--set", "train.optimizer=sgd"], "--set train.optimizer=sgd: the run in"),
                                            (["--set", "reach_loss_weight=1"],
                                             "--set reach_loss_weight=1: the run in")])
def test_a_resumed_run_refuses_another_preset_or_size(tmp_path, finished_tiny_run, asked, message):
    """`train --resume` with another --preset, --net or --set game/channels/blocks than the run's: one sentence naming
    the option, nothing changed."""
    before = {p: p.read_bytes() for p in finished_tiny_run.rglob("*") if p.is_file()}
    done = run_cli_forked(["train", "--resume", "--quiet", "--run-dir", str(finished_tiny_run), *asked], cwd=tmp_path)
    assert done.returncode == 2 and message in done.stderr and asked[0] in done.stderr, done.stdout + done.stderr
    assert {p: p.read_bytes() for p in finished_tiny_run.rglob("*") if p.is_file()} == before


@ONE_FINISHED_RUN
def test_a_resume_with_nothing_to_do_changes_nothing_and_names_the_settings_it_was_given(tmp_path, finished_tiny_run):
    "A finished run resumed with other settings says which, does nothing, and leaves its config.json as it was made."
    import shutil
    root = tmp_path / "run"
    shutil.copytree(finished_tiny_run, root)
    made = (root / "config.json").read_bytes()
    lines, progress = [], Progress(quiet=True)
    progress.say = lines.append
    run_training(root, resume=True, overrides=["seed=7", "arena.openings=2"], progress=progress)
    assert any(line.startswith("resumed with other settings: seed 0 -> 7, arena.openings") for line in lines), lines
    assert any(line.startswith("nothing to do") for line in lines), lines
    assert lines[-1] == "the other settings above were not saved: nothing ran", lines
    assert (root / "config.json").read_bytes() == made  # a resume that did nothing changed nothing


@ONE_FINISHED_RUN
def test_a_resume_applies_a_new_replay_window_and_weight_decay(tmp_path, finished_tiny_run):
    """A resumed run's replay window and weight decay are the ones it was given (the saved buffer and trainer state
    brought back their own); its optimiser and auxiliary maps stay, refused by name before any work."""
    run = RunDirectory(finished_tiny_run)
    saved = load_buffer(run.replay_path)
    asked = apply_overrides(config_from_dict(run.read_config_dict()),
                            ["replay_capacity=10", "replay_generations=1", "train.weight_decay=0.5"])
    buffer = Loop(run, asked, Progress(quiet=True)).buffer
    assert saved.capacity == 5000 and len(saved) > 10
    assert (buffer.capacity, buffer.generations, len(buffer)) == (10, 1, 10)
    assert np.array_equal(buffer.examples.planes, saved.examples.planes[-10:])
    trainer = Trainer(SantoriniNet(NetConfig(16, 2)), asked.train, 100)
    trainer.load_state(run.trainer_state(1))
    assert [group["weight_decay"] for group in trainer.optimizer.param_groups] == [0.5]
    with pytest.raises(ValueError, match="holds an adamw state: a trainer with optimizer 'sgd' cannot go on from it"):
        Trainer(SantoriniNet(NetConfig(16, 2)), TrainConfig(optimizer="sgd"), 100).load_state(run.trainer_state(1))
    for given, message in ((["optimizer=sgd"], "--set optimizer=sgd: the run in .* saved its adamw optimiser's state"),
                           (["threat_loss_weight=1"], "trains with no auxiliary maps and these settings ask for the reach "
                                                      "and threat maps")):
        with pytest.raises(RunError, match=message):
            run_training(finished_tiny_run, resume=True, overrides=given, progress=Progress(quiet=True))


@ONE_FINISHED_RUN
def test_stale_temporaries_are_removed_on_resume(tmp_path, finished_tiny_run):
    import shutil
    root = tmp_path / "run"
    shutil.copytree(finished_tiny_run, root)
    (root / "games" / ".iter-0002.npz.a8b7c6d5.tmp").write_bytes(b"left by a kill -9")
    run_training(root, resume=True, progress=Progress(quiet=True))
    assert not list(root.rglob("*.tmp*"))


def test_a_tiny_run_with_gumbel_at_the_root(tmp_path):
    "`--set selfplay.root_search=gumbel`: the engine plays Gumbel self-play, the run learns its improved policy."
    config = apply_overrides(tiny(1), ["selfplay.root_search=gumbel"])  # as `--set selfplay.root_search=gumbel` does
    run = run_training(tmp_path / "gumbel", config, progress=Progress(quiet=True), stop_after=5)  # to iteration 1's training
    assert run.checkpoint(1).exists()
    assert json.loads((run.root / "config.json").read_text())["selfplay"]["root_search"] == "gumbel"
    with np.load(run.root / "replay.npz") as replay:
        policy, legal = replay["policy"], replay["legal"]
    assert not policy[~legal].any()
    assert ((policy > 0).sum(axis=1) > 12).any()  # more moves with weight than 12 simulations can visit: not visits
    assert ((policy > 0) == legal).all(axis=1).mean() > 0.9  # improved policies weigh (nearly always) every legal move


def _examples_of_random_games(games, seed):
    "Every position of `games` random games after the placements, with the first legal action as policy."
    rng, rows = np.random.default_rng(seed), []
    for _ in range(games):
        state = initial_state()
        while winner(state) is None:
            actions = legal_actions(state)
            if len(state.workers[1]) == 2: rows.append(state)
            state = apply(state, actions[int(rng.integers(len(actions)))])
    masks = np.stack([mask_of(s) for s in rows])
    policy = (masks & (np.cumsum(masks, 1) == 1)).astype(np.float32)
    n = len(rows)
    return Examples(np.stack([encode(s) for s in rows]).astype(np.uint8), policy, masks, np.ones(n, np.float32),
                    np.zeros(n, np.float32), np.zeros(n, np.int32))


def _threat_cells_by_the_rules(state):
    "Level-2 cells the mover's legal moves step to, after which (build included) the worker has a free level-3 neighbour."
    from santorini_az.game import STEPS, legal_moves
    cells = np.zeros(25)
    for move in legal_moves(state):
        if state.heights[move.to] != 2: continue
        after = apply(state, move)
        taken = {c for side in after.workers for c in side}
        if any(n is not None and after.heights[n] == 3 and n not in taken for n in STEPS[move.to]): cells[move.to] = 1
    return cells


@settings(max_examples=150, deadline=None)
@given(played_positions(max_plies=80))
def test_threat_maps_match_the_rules_for_both_sides(state):
    "The trainer's threat maps, computed from the planes, are the cells the rules say, for the mover and the opponent."
    from dataclasses import replace
    from santorini_az.game import in_setup
    from santorini_az.trainer import threat_maps
    maps = threat_maps(torch.as_tensor(encode(state)[None])).numpy().reshape(2, 25)
    if in_setup(state):
        assert maps.sum() == 0  # nothing is built during the placements, so nothing threatens
        return
    assert np.array_equal(maps[0], _threat_cells_by_the_rules(state))
    assert np.array_equal(maps[1], _threat_cells_by_the_rules(replace(state, player=1 - state.player)))


def test_grad_clip_bounds_the_network_and_the_auxiliary_head_each():
    "grad_clip bounds the network's gradient and, on its own, the training-only head's; the norm logged is the network's."
    buffer = ReplayBuffer(5000)
    buffer.add(_examples_of_random_games(10, seed=2), 0)
    torch.manual_seed(0)
    config = TrainConfig(batch_size=32, reach_loss_weight=1.0, grad_clip=1e-6, optimizer="sgd")
    trainer = Trainer(SantoriniNet(NetConfig(8, 1)), config, total_steps=10)
    step = trainer.optimiser_step(buffer.sample(32, np.random.default_rng(0), True))
    norm = lambda module: float(torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in module.parameters()])))
    assert float(step["grad_norm"]) > 1e-3  # before clipping
    assert norm(trainer.model) == pytest.approx(1e-6, rel=1e-3)
    assert norm(trainer.reach_head) == pytest.approx(1e-6, rel=1e-3)


def test_the_threat_head_trains_and_resumes(tmp_path):
    "threat_loss_weight > 0: a six-map head, a threat loss that falls, and the head saved with the trainer's state."
    from santorini_az.network import NetConfig, SantoriniNet
    from santorini_az.trainer import TrainConfig, Trainer
    torch.manual_seed(0)
    buffer = ReplayBuffer(5000)
    buffer.add(_examples_of_random_games(30, seed=1), 0)
    config = TrainConfig(batch_size=64, learning_rate=1e-2, warmup_steps=5, threat_loss_weight=1.0)
    trainer = Trainer(SantoriniNet(NetConfig(8, 1)), config, total_steps=120)
    first = trainer.train(buffer, 10, np.random.default_rng(0))["threat_loss"]
    last = trainer.train(buffer, 110, np.random.default_rng(1))["threat_loss"]
    assert trainer.reach_head.layers[-1].out_channels == 6 and last < first
    trainer.save_state(tmp_path / "trainer.pt")
    again = Trainer(trainer.model, config, total_steps=120)
    again.load_state(tmp_path / "trainer.pt")
    assert all(torch.equal(a, b) for a, b in zip(trainer.reach_head.parameters(), again.reach_head.parameters()))


def test_a_bf16_training_step_is_close_to_fp32_and_keeps_the_weights_fp32():
    """train.precision="bf16": the forward pass under bf16 autocast (on any CPU: where bf16 is not native, torch emulates
    it, slowly; the run's settings refuse it there), the losses and the weights in fp32, each step's losses within
    bf16's rounding of fp32's from the same weights and batch, and a refusal of a precision that is neither."""
    from santorini_az.network import NetConfig, SantoriniNet
    from santorini_az.trainer import TrainConfig, Trainer
    buffer = ReplayBuffer(5000)
    buffer.add(_examples_of_random_games(10, seed=4), 0)
    batch = buffer.sample(64, np.random.default_rng(5), True)
    def trainer(precision):
        torch.manual_seed(0)
        return Trainer(SantoriniNet(NetConfig(16, 2)), TrainConfig(batch_size=64, reach_loss_weight=1.0,
                                                                   precision=precision), total_steps=20)
    fp32, bf16 = trainer("fp32"), trainer("bf16")
    exact, rounded = fp32.optimiser_step(batch), bf16.optimiser_step(batch)
    assert all(rounded[k].dtype == torch.float32 for k in ("policy_loss", "value_loss", "reach_loss", "loss"))
    for k in ("policy_loss", "value_loss", "reach_loss"):
        assert float(rounded[k]) == pytest.approx(float(exact[k]), rel=0.03), k
        assert float(rounded[k]) != float(exact[k]), k  # the forward pass did run in bf16
    assert all(p.dtype == torch.float32 and p.grad.dtype == torch.float32 for p in bf16.model.parameters())
    with pytest.raises(ValueError, match="unknown precision 'fp16': use fp32 or bf16"): trainer("fp16")


def test_bf16_training_is_refused_where_the_cpu_does_not_multiply_it(monkeypatch):
    "A run's train.precision=bf16 on a CPU without native bf16 stops at the settings check, naming the setting."
    from santorini_az import network
    from santorini_az.config import check_config
    config = preset("cpu")
    config.train.precision = "bf16"
    monkeypatch.setattr(network, "cpu_supports_bf16", lambda: False)
    with pytest.raises(ValueError, match=r"setting 'train.precision'='bf16' but this CPU does not multiply bf16"):
        check_config(config)
    monkeypatch.setattr(network, "cpu_supports_bf16", lambda: True)
    assert check_config(config).train.precision == "bf16"


def test_train_reads_the_losses_once_and_gives_the_steps_mean(monkeypatch):
    """Trainer.train leaves each step's losses on the model's device (reading one waits for a GPU) and reads them all
    after the last step: the means are those of train_step's numbers, to the last bit, on the same batches."""
    from santorini_az.network import NetConfig, SantoriniNet
    from santorini_az.trainer import TrainConfig, Trainer
    buffer = ReplayBuffer(5000)
    buffer.add(_examples_of_random_games(10, seed=2), 0)
    config = TrainConfig(batch_size=32, warmup_steps=2, reach_loss_weight=1.0)
    def trainer():
        torch.manual_seed(0)
        return Trainer(SantoriniNet(NetConfig(8, 1)), config, total_steps=20)
    by_hand, rng = trainer(), np.random.default_rng(3)
    steps = [by_hand.train_step(buffer.sample(32, rng, True)) for _ in range(7)]
    expected = {k: sum(step[k] for step in steps) / 7 for k in steps[0]}
    from santorini_az import trainer as module
    reads, read_all = [], module.read_all
    monkeypatch.setattr(module, "read_all", lambda values: reads.append(values) or read_all(values))
    assert trainer().train(buffer, 7, np.random.default_rng(3)) == expected
    assert set(expected) == {"policy_loss", "value_loss", "reach_loss", "loss", "lr", "grad_norm"}
    assert len(reads) == len(expected)  # once a loss, after the last step, seven steps in each
    unread = [values for values in reads if isinstance(values[0], torch.Tensor)]
    assert len(unread) == 5 and all(len(values) == 7 for values in unread)  # four losses and the gradient's norm


def test_a_match_without_searches_splits_over_the_pool():
    """Players that do not both search (here a network against α-β and greedy) play a match's games on a WorkerPool's
    processes, share by share: every game of the schedule once, in its order; the same seed gives the same games;
    the players go to the workers without their evaluator or α-β tables."""
    import pickle
    from santorini_az.alphabeta import AlphaBetaPlayer
    from santorini_az.arena import SearchPlayer, play_match
    from santorini_az.engine import worker_pool
    from santorini_az.evaluator import UniformFactory
    me, alphabeta = SearchPlayer("mcts", UniformFactory(), 16), AlphaBetaPlayer(1)
    me.evaluate  # built here; it must not travel
    assert pickle.loads(pickle.dumps(me))._evaluate is None
    assert len(pickle.dumps(alphabeta)) < 1000 and pickle.loads(pickle.dumps(alphabeta)).depth == 1
    openings = random_openings(3, np.random.default_rng(1))
    def outcomes(first, second, seed):
        return match_outcomes(first, second, openings, np.random.default_rng(seed), workers=worker_pool(2))
    jobs = worker_pool(2).jobs
    split = outcomes(me, alphabeta, 5)
    assert worker_pool(2).jobs == jobs + 1  # the games were played by the pool's processes, as one job
    assert [(o.opening, o.first_moves_first) for o in split] == pairing_schedule(3)
    assert split == outcomes(me, alphabeta, 5)
    greedy = outcomes(me, GreedyPlayer(), 6)
    assert len(greedy) == 6 and all(o.plies > 0 for o in greedy)


def test_train_step_rate_times_the_presets_step_and_refuses_a_missing_games_folder(tmp_path):
    # tools/train_step_rate.py (chapter 12's training figures): one JSON line; bad input is one sentence and exit 2
    import subprocess, sys
    tool = [sys.executable, str(Path(__file__).parent.parent / "tools" / "train_step_rate.py")]
    done = subprocess.run(tool + ["--steps", "2", "--threads", "1"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    row = json.loads(done.stdout.strip().splitlines()[-1])
    assert row["batch"] == 256 and row["positions"] == "random" and row["fp32_step_s"] > 0
    assert row["multiply_adds_forward"] > 1_919_714  # the 32x4 network's own, plus the reach maps' head
    assert ("bf16_autocast_step_s" in row) == cpu_supports_bf16()
    done = subprocess.run(tool + ["--games", str(tmp_path / "nowhere")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.strip().endswith("is not a folder") and "Traceback" not in done.stderr


def test_the_report_of_a_run_that_has_not_trained_yet_warns_of_nothing():
    "A dashboard opened on a fresh run draws every panel empty, without matplotlib's empty-legend warning."
    import warnings
    import matplotlib.pyplot as plt
    from santorini_az.report import PANELS, report_figure
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig = report_figure([])
    drawn = {ax.get_position().bounds for ax in fig.axes if ax.axison}  # a panel's second scale (twinx) shares its place
    assert len(drawn) == len(PANELS)
    plt.close(fig)


def test_the_report_counts_iterations_in_whole_numbers():
    "Four iterations: every panel that runs along the iterations ticks 1, 2, 3, 4, never 1.5."
    import matplotlib.pyplot as plt
    from santorini_az.report import PANELS, report_figure
    records = [Record(stage, i, 1.0, 0.0, values) for i in range(1, 5) for stage, values in
               [("train", {"policy_loss": 3.0 - i / 10, "value_loss": 0.3}), ("selfplay", {"games_per_hour": 1000.0 * i}),
                ("arena", {"score": 0.6, "ci_low": 0.4, "ci_high": 0.8, "promoted": 1, "games": 20})]]
    fig = report_figure(records)
    for ax, name in zip(fig.axes, PANELS):
        if name != "time": assert all(float(t).is_integer() for t in ax.get_xticks()), (name, ax.get_xticks())
    losses, value_scale = fig.axes[0], fig.axes[-1]  # the grid's first panel, and the twin made for it after the grid
    assert value_scale.get_ylabel() == "value loss" and losses.get_ylabel() == "policy loss"
    assert value_scale.get_ylim()[0] <= 0.3 <= value_scale.get_ylim()[1] and losses.get_ylim()[0] > 2  # each on its own scale
    assert [t.get_text() for t in losses.get_legend().get_texts()] == ["policy (train)", "value (train)"]  # one legend, both
    plt.close(fig)


def test_references_with_equal_scores_stay_visible():
    "Three α-β references at 0 on the same iterations: rings that narrow one inside the next, each colour showing."
    import matplotlib.pyplot as plt
    from santorini_az.report import report_figure
    records = [Record("evaluate", i, 1.0, 0.0, {f"score_vs_alphabeta{d}": 0.0 for d in (1, 2, 4)}) for i in (2, 4, 6)]
    fig = report_figure(records, panels=("references",))
    sizes = [line.get_markersize() for line in fig.axes[0].lines]
    assert len(sizes) == 3 and sizes[0] > sizes[1] > sizes[2], sizes
    assert all(line.get_markerfacecolor() == "none" for line in fig.axes[0].lines)  # rings: the inner ones do not hide them
    plt.close(fig)


def test_one_panel_alone_has_the_figure_to_itself():
    "A report of one panel is one axes, half the width of two (it left a blank half beside it)."
    import matplotlib.pyplot as plt
    from santorini_az.report import report_figure
    one, two = report_figure([], panels=("puzzles",)), report_figure([], panels=("puzzles", "speed"))
    assert len(one.axes) == 1 and len(two.axes) == 2
    assert one.get_figwidth() == two.get_figwidth() / 2
    plt.close(one); plt.close(two)


@pytest.mark.parametrize("optimizer", ["adamw", "sgd"])
def test_the_weight_decay_setting_reaches_the_optimiser_and_shrinks_the_weights(optimizer):
    """train.weight_decay: given to either optimiser, and with a zero gradient one step shrinks every weight by lr * wd
    (AdamW's decay is decoupled; SGD's is a gradient, which its first Nesterov step counts 1 + 0.9 times)."""
    torch.manual_seed(0)
    model = SantoriniNet(NetConfig(8, 1))
    trainer = Trainer(model, TrainConfig(optimizer=optimizer, weight_decay=0.125, learning_rate=0.01, warmup_steps=0), 1)
    assert [group["weight_decay"] for group in trainer.optimizer.param_groups] == [0.125]
    before = model.policy_fc.weight.detach().clone()
    for p in model.parameters(): p.grad = torch.zeros_like(p)
    trainer.optimizer.step()
    assert torch.allclose(model.policy_fc.weight, before * (1 - 0.01 * 0.125 * (1.0 if optimizer == "adamw" else 1.9)))


def test_a_fraction_for_a_whole_number_setting_is_refused_not_truncated():
    "A config file's 3.5 games is an error (int() would make it 3 without a word); 16.0 channels is 16."
    with pytest.raises(ValueError, match=r"setting 'selfplay.games' expects int, got 3.5"):
        config_from_dict({"selfplay": {"games": 3.5}})
    assert config_from_dict({"channels": 16.0}).channels == 16


def test_the_summary_line_of_a_train_record_made_before_the_puzzles_leaves_them_out():
    "A run made before chapter 9a's puzzles has train records without them: its summary line has no puzzles part."
    from santorini_az.progress import summary_line
    values = {"policy_loss": 3.7, "value_loss": 0.27, "lr": 0.002}
    puzzles = {"puzzles_win1": 0.2, "puzzles_win3": 0.03, "puzzles_block": 0.06}
    old, new = Record("train", 1, 0.0, 0.0, values), Record("train", 1, 0.0, 0.0, {**values, **puzzles})
    assert "puzzles" not in summary_line(old, timings=False, markup=False)
    assert summary_line(new, timings=False, markup=False).endswith("policy 3.700 value 0.270, puzzles win1 20% win3 3% block 6%, lr 0.002")
