"Chapter 10b: one network for every god match-up (GodNet, batched self-play, the loop and `train --preset gods`)."
import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from santorini_az.god_encoding import (N_GOD_ACTIONS, N_GOD_PLANES, GodNode, encode_nodes, god_legal_mask,
                                       random_god_positions, transform_node)
from santorini_az.god_search import god_search, random_god_opening
from santorini_az.god_training import (GodNet, GodReplayBuffer, GodRunConfig, GodSearch, augment_god,
                                       evaluate_god_nodes, god_config, god_network_evaluator, god_selfplay,
                                       latest_god_checkpoint, load_god_checkpoint, run_god_searches,
                                       save_god_checkpoint)
from santorini_az.gods import GODS
from santorini_az.mcts import SearchConfig
from santorini_az.network import CheckpointError, NetConfig, load_checkpoint
from santorini_az.rundir import RunDirectory, RunError
from santorini_az.trainer import TrainConfig, Trainer, masked_log_softmax

SCRIPT = Path(sys.executable).parent / "santorini_az"
TINY = ["--set", "games_per_iteration=2", "--set", "games_in_flight=2", "--set", "simulations=4",
        "--set", "train.batch_size=16", "--set", "train.steps_per_iteration=2", "--net", "8x1", "--quiet"]


@pytest.fixture(scope="module")
def net():
    torch.manual_seed(0)
    return GodNet(NetConfig(16, 2)).eval()


def nodes_of(seed: int, count: int = 6):
    rng = random.Random(seed)
    return [GodNode(random_god_opening((rng.choice(GODS), rng.choice(GODS)), rng)) for _ in range(count)]


def test_shapes(net):
    positions = [GodNode(s) for s in random_god_positions(("hermes", "atlas"), random.Random(0), turns=5)]
    logits, values = evaluate_god_nodes(net, positions)
    assert logits.shape == (len(positions), N_GOD_ACTIONS) and values.shape == (len(positions),)
    assert np.abs(values).max() <= 1
    assert net.stem.conv.in_channels == N_GOD_PLANES


def test_mask_never_gives_illegal_sub_actions_probability(net):
    positions = nodes_of(1)
    planes = torch.from_numpy(encode_nodes(positions))
    legal = torch.tensor([god_legal_mask(n) for n in positions])
    logits = net(planes)[0] * 100  # large logits: an illegal one would dominate if the mask leaked
    probabilities = masked_log_softmax(logits, legal).exp()
    assert probabilities[~legal].max().item() == 0.0
    assert torch.allclose(probabilities.sum(1), torch.ones(len(positions)))


def test_checkpoint_round_trip_and_the_mortal_loader_refuses_it(net, tmp_path):
    path = tmp_path / "god.safetensors"
    save_god_checkpoint(path, net, iteration=2)
    loaded, extra = load_god_checkpoint(path)
    assert extra == {"iteration": 2} and loaded.config == net.config
    planes = torch.from_numpy(encode_nodes(nodes_of(2)))
    with torch.inference_mode(): assert torch.equal(loaded(planes)[0], net(planes)[0])
    with pytest.raises(CheckpointError, match="not a santorini_az network checkpoint"): load_checkpoint(path)
    (tmp_path / "junk.safetensors").write_bytes(b"not a checkpoint")
    with pytest.raises(RunError, match="not a readable safetensors"): load_god_checkpoint(tmp_path / "junk.safetensors")


def test_batched_search_equals_03b_search(net):
    "The paused search, run in one batch over several roots, gives each root the visits 03b's god_search gives it."
    evaluate = god_network_evaluator(net)
    config = SearchConfig(simulations=40)
    starts = nodes_of(3, count=5)
    one_at_a_time = lambda nodes: tuple(map(list, zip(*(evaluate(node) for node in nodes))))
    searches = run_god_searches([GodSearch(node, config) for node in starts], one_at_a_time)
    for node, search in zip(starts, searches):
        reference = god_search(node, evaluate, config)
        assert search.root.actions == reference.actions
        assert search.root.visits == reference.visits and sum(reference.visits) == 40
        assert search.root.value_sums == pytest.approx(reference.value_sums)


def test_batched_evaluation_matches_one_at_a_time(net):
    positions = nodes_of(4)
    logits, values = evaluate_god_nodes(net, positions)
    evaluate = god_network_evaluator(net)
    for i, node in enumerate(positions):
        one_logits, one_value = evaluate(node)
        assert np.allclose(logits[i], one_logits, atol=1e-4) and abs(values[i] - one_value) < 1e-5


def test_augmentation_equals_encoding_the_transformed_node():
    rng = random.Random(5)
    nodes = [GodNode(s) for s in random_god_positions(("artemis", "demeter"), rng, turns=8)]
    masks = np.array([god_legal_mask(n) for n in nodes])
    for s in range(8):
        planes, _, legal = augment_god(encode_nodes(nodes), masks.astype(np.float32), masks, np.full(len(nodes), s))
        moved = [transform_node(n, s) for n in nodes]
        assert np.array_equal(planes, encode_nodes(moved))
        assert np.array_equal(legal, np.array([god_legal_mask(n) for n in moved]))


def test_selfplay_examples_and_one_training_step():
    config = GodRunConfig(simulations=6, games_in_flight=3, channels=8, blocks=1)
    torch.manual_seed(0)
    model = GodNet(config.net)
    examples, stats = god_selfplay(model, config, games=3, rng=random.Random(0))
    assert stats["games"] == 3 and len(examples) == stats["decisions"] and stats["mean_batch"] > 1
    assert examples.planes.shape[1:] == (5, 5, N_GOD_PLANES) and examples.policy.shape[1:] == (N_GOD_ACTIONS,)
    assert np.allclose(examples.policy.sum(1), 1) and not (examples.policy[~examples.legal] > 0).any()
    assert set(np.unique(examples.result)) <= {-1.0, 1.0}
    buffer = GodReplayBuffer(capacity=50)
    buffer.add(examples, 1)
    assert len(buffer) == min(50, len(examples))
    trainer = Trainer(model, TrainConfig(batch_size=8, warmup_steps=0), total_steps=1)
    losses = trainer.train(buffer, 1, np.random.default_rng(0))
    assert np.isfinite(losses["loss"]) and trainer.step == 1


def run(*args):
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, timeout=300)


def test_one_tiny_iteration_through_the_cli(tmp_path):
    result = run("train", "--preset", "gods", "--run-dir", str(tmp_path / "run"), "--iterations", "1", *TINY)
    assert result.returncode == 0, result.stderr
    run_dir = RunDirectory(tmp_path / "run")
    assert json.loads(run_dir.config_path.read_text())["preset"] == "gods"
    assert [r.iteration for r in run_dir.records()] == [1]
    model, extra = load_god_checkpoint(latest_god_checkpoint(run_dir.root))
    assert extra["iteration"] == 1 and model.config == NetConfig(8, 1)
    again = run("train", "--preset", "gods", "--run-dir", str(tmp_path / "run"), "--iterations", "1", *TINY)
    assert again.returncode == 2 and "holds a run already" in again.stderr and "Traceback" not in again.stderr


def test_one_tiny_iteration_of_the_python_engine_through_the_cli(tmp_path):
    result = run("train", "--preset", "gods", "--run-dir", str(tmp_path / "run"), "--iterations", "1", *TINY,
                 "--set", "engine=python")
    assert result.returncode == 0, result.stderr
    assert json.loads(RunDirectory(tmp_path / "run").config_path.read_text())["engine"] == "python"


@pytest.mark.parametrize("args, message", [
    (["--set", "simulations=0"], "'simulations' must be at least 1"),
    (["--set", "gamez=3"], "unknown setting 'gamez'"),
    (["--net", "big"], "bad network size"),
    (["--resume"], "not --resume"),
    (["--set", "train.optimizer=adam"], "must be one of adamw, sgd"),
    (["--set", "engine=fast"], "'engine' must be one of compiled, python")])
def test_bad_cli_input_is_exit_2_before_any_work(tmp_path, args, message):
    result = run("train", "--preset", "gods", "--run-dir", str(tmp_path / "run"), *args)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "run").exists()  # refused before the run directory was made


def test_config_overrides():
    assert god_config(["simulations=12", "train.learning_rate=0.001"]).simulations == 12
    with pytest.raises(ValueError, match="fills a time budget"): god_config(["iterations=0"])
