"Chapter 10b: one network for every god match-up (GodNet, batched self-play, chapter 07's buffer and 07a's losses)."
import random

import numpy as np
import pytest
import torch

from santorini_az.god_encoding import (N_GOD_ACTIONS, N_GOD_PLANES, GodNode, encode_nodes, god_legal_mask,
                                       random_god_positions, transform_node)
from santorini_az.god_search import god_search, random_god_opening
from santorini_az.god_training import (GodNet, GodSearch, GodSelfPlayConfig, evaluate_god_nodes,
                                       god_network_evaluator, god_selfplay, load_god_checkpoint, run_god_searches,
                                       save_god_checkpoint)
from santorini_az.replay import ReplayBuffer, augment
from santorini_az.gods import GODS
from santorini_az.mcts import SearchConfig
from santorini_az.network import CheckpointError, NetConfig, load_checkpoint
from santorini_az.rundir import RunError
from santorini_az.trainer import TrainConfig, Trainer, masked_log_softmax



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
    with pytest.raises(CheckpointError, match=r"is a god network \(chapter 10b\), not a mortal one"): load_checkpoint(path)
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
        planes, _, legal = augment(encode_nodes(nodes), masks.astype(np.float32), masks, np.full(len(nodes), s))
        moved = [transform_node(n, s) for n in nodes]
        assert np.array_equal(planes, encode_nodes(moved))
        assert np.array_equal(legal, np.array([god_legal_mask(n) for n in moved]))


def test_selfplay_examples_and_one_training_step():
    config = GodSelfPlayConfig(simulations=6, games_in_flight=3)
    torch.manual_seed(0)
    model = GodNet(NetConfig(8, 1))
    examples, stats = god_selfplay(model, config, games=3, rng=random.Random(0))
    assert stats["games"] == 3 and len(examples) == stats["decisions"] and stats["mean_batch"] > 1
    assert examples.planes.shape[1:] == (5, 5, N_GOD_PLANES) and examples.policy.shape[1:] == (N_GOD_ACTIONS,)
    assert np.allclose(examples.policy.sum(1), 1) and not (examples.policy[~examples.legal] > 0).any()
    assert set(np.unique(examples.result)) <= {-1.0, 1.0}
    buffer = ReplayBuffer(capacity=50)
    buffer.add(examples, 1)
    assert len(buffer) == min(50, len(examples))
    trainer = Trainer(model, TrainConfig(batch_size=8, warmup_steps=0), total_steps=1)
    losses = trainer.train(buffer, 1, np.random.default_rng(0))
    assert np.isfinite(losses["loss"]) and trainer.step == 1


def test_the_mortal_loader_names_a_god_network_for_what_it_is():
    "A god network given where a mortal one is expected: the refusal names its format, so the user sees what it is."
    from santorini_az.god_engine import GOD_CHAMPION
    from santorini_az.network import CheckpointError, load_checkpoint
    with pytest.raises(CheckpointError, match=r"is a god network \(chapter 10b\), not a mortal one: .* add --gods"):
        load_checkpoint(GOD_CHAMPION)


def test_a_god_match_takes_a_gods_runs_names_for_its_references():
    "arena --gods printed 'god-alphabeta1' in its result, and refused it (and 'uniform') as an opponent."
    from santorini_az.god_loop import GodAlphaBetaReference, GodSearchPlayer
    from santorini_az.play import god_player
    for name, depth in (("god-alphabeta3", 3), ("alphabeta3", 3)):
        player = god_player(name)
        assert isinstance(player, GodAlphaBetaReference) and player.depth == depth
    assert isinstance(god_player("uniform"), GodSearchPlayer) and isinstance(god_player("mcts"), GodSearchPlayer)


def test_a_match_of_all_gods_says_the_match_ups_are_drawn():
    "It said '(every god match-up)' of a match whose one opening drew one match-up."
    from santorini_az.play import match_up_text
    assert match_up_text("all") == " (a match-up drawn for each opening)"
    assert match_up_text(None) == "" and "apollo" in match_up_text("apollo,pan")
