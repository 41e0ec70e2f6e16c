"""Tests for santorini_az.network: architecture, checkpoints (round trip and every failure mode), BN folding, and the
fast inference paths (fp32 traced, bf16, CUDA when present) against the plain fp32 network."""
import json
import warnings

import numpy as np
import pytest
import torch
from safetensors import safe_open
from safetensors.torch import save_file
from torch import nn

import santorini_az.network as network
from santorini_az.encoding import legal_action_indices
from santorini_az.game import Move, Placement, initial_state
from santorini_az.network import (
    CheckpointError, ConvBN, NetworkEvaluator, NetConfig, SantoriniNet, count_parameters, cpu_supports_bf16, fold_batchnorm,
    fold_conv_bn, load_checkpoint, measure_throughput, net_sizes, parse_net_size, policy_value, random_planes,
    save_checkpoint,
)

# Tolerances, measured on an AVX-512 BF16 CPU with `trained_looking_net` (largest differences seen: fp32 paths 3e-5;
# bf16 priors ~0.06, values ~0.03 over 1024 positions; mean prior difference ~2e-4).
FP32_ATOL = 1e-4
BF16_PRIOR_ATOL, BF16_VALUE_ATOL = 0.08, 0.05
CUDA_ATOL = 1e-2  # CUDA convolutions may use TF32 for fp32 inputs

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")
needs_bf16_cpu = pytest.mark.skipif(not cpu_supports_bf16(), reason="this CPU has no native bf16")


def trained_looking_net(config=NetConfig(64, 6), seed=0):
    "A network whose BNs have real-looking statistics and random affine maps, with peaked priors and decided values."
    torch.manual_seed(seed)
    model = SantoriniNet(config).train()
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for bn in (m for m in model.modules() if isinstance(m, nn.BatchNorm2d)):
            bn.reset_running_stats()
            bn.momentum = None
            bn.weight.copy_(torch.rand(bn.num_features, generator=generator) + 0.5)
            bn.bias.copy_(torch.randn(bn.num_features, generator=generator) * 0.2)
        for batch in range(4): model(torch.from_numpy(random_planes(256, seed=seed + batch)))
        model.policy_fc.weight.mul_(8.0)
        model.value_fc2.weight.mul_(3.0)
    return model.eval()


def plain_outputs(model, planes):
    with torch.inference_mode():
        logits, values = model.eval()(torch.from_numpy(planes))
    return logits.numpy(), values.numpy()


def softmax(logits):
    return torch.softmax(torch.as_tensor(logits), -1).numpy()


@pytest.fixture(scope="module")
def net():
    return trained_looking_net()


# ---- configuration and architecture

def test_parse_net_size():
    assert parse_net_size("64x6") == NetConfig(64, 6) == net_sizes["cpu"] == net_sizes["small"]
    assert parse_net_size("256x8") == NetConfig(256, 8) == net_sizes["seed"] == net_sizes["large"]
    assert parse_net_size(" LARGE ") == NetConfig(256, 8)
    assert parse_net_size("32x0") == NetConfig(32, 0)
    for bad in ("", "64", "64x", "x6", "64*6", "64x6x2", "-64x6", "huge"):
        with pytest.raises(ValueError, match="CHANNELSxBLOCKS"):
            parse_net_size(bad)
    for bad in ("0x6", "1025x6", "64x65"):
        with pytest.raises(ValueError, match="1 to 1024 channels and 0 to 64 blocks"):
            parse_net_size(bad)


def test_net_config_validates():
    with pytest.raises(ValueError, match="blocks"):
        NetConfig(64, -1)
    with pytest.raises(ValueError, match="channels"):
        NetConfig(64.0, 6)
    assert NetConfig().name == "64x6"


@pytest.mark.parametrize("config", [NetConfig(8, 0), NetConfig(16, 1), NetConfig(64, 6)])
def test_forward_shapes_and_value_range(config):
    model = SantoriniNet(config).eval()
    logits, values = plain_outputs(model, random_planes(5, seed=1))
    assert logits.shape == (5, 153) and values.shape == (5,)
    assert np.all(np.abs(values) <= 1)
    assert len(model.blocks) == config.blocks


def test_input_is_nhwc():
    # Moving a worker changes the output; transposing the input to NCHW by mistake would be refused by the stem.
    model = SantoriniNet(NetConfig(8, 1)).eval()
    with pytest.raises(RuntimeError):
        model(torch.zeros(2, 9, 5, 5))
    planes = random_planes(1, seed=3)
    moved = planes.copy()
    moved[0, :, :, 5] = np.roll(planes[0, :, :, 5], 1, axis=1)
    assert not np.allclose(plain_outputs(model, planes)[0], plain_outputs(model, moved)[0])


def test_parameter_counts():
    assert count_parameters(SantoriniNet(NetConfig(64, 6))) == 458_946
    assert count_parameters(SantoriniNet(NetConfig(256, 8))) == 9_476_930
    frozen = SantoriniNet(NetConfig(8, 0))
    frozen.value_fc2.requires_grad_(False)
    assert count_parameters(SantoriniNet(NetConfig(8, 0))) - count_parameters(frozen) == 65


def test_random_planes_look_like_positions():
    planes = random_planes(200, seed=5)
    assert planes.dtype == np.float32 and planes.shape == (200, 5, 5, 9)
    assert np.all(planes[..., :5].sum(-1) == 1)  # one level per cell
    assert np.all(planes[..., 5:].sum((1, 2)) == 1)  # one cell per worker plane
    assert np.all(planes[..., 5:].sum(-1) <= 1)  # workers on distinct cells
    assert np.all(planes[..., 4] * planes[..., 5:].sum(-1) == 0)  # no worker on a dome
    np.testing.assert_array_equal(random_planes(3, seed=7), random_planes(3, seed=7))


# ---- checkpoints

def test_checkpoint_round_trip(tmp_path, net):
    path = tmp_path / "net.safetensors"
    save_checkpoint(path, net, iteration=3, run="test", losses=[1.5, 0.25])
    loaded, metadata = load_checkpoint(path)
    assert metadata == {"config": NetConfig(64, 6), "format_version": 1, "iteration": 3, "run": "test",
                        "losses": [1.5, 0.25]}
    assert not loaded.training
    for name, tensor in net.state_dict().items():
        assert torch.equal(loaded.state_dict()[name], tensor), name
    planes = random_planes(16, seed=2)
    np.testing.assert_array_equal(plain_outputs(loaded, planes)[0], plain_outputs(net, planes)[0])
    assert [p.name for p in tmp_path.iterdir()] == ["net.safetensors"]


def test_checkpoint_overwrite_and_failed_save_keeps_old_file(tmp_path, monkeypatch):
    path = tmp_path / "net.safetensors"
    save_checkpoint(path, SantoriniNet(NetConfig(8, 1)), iteration=1)
    save_checkpoint(path, SantoriniNet(NetConfig(8, 2)), iteration=2)
    assert load_checkpoint(path)[1]["iteration"] == 2

    def crash(tensors, filename, metadata=None):
        open(filename, "wb").write(b"half a file")
        raise OSError("disk full")
    monkeypatch.setattr(network, "save_file", crash)
    with pytest.raises(OSError, match="disk full"):
        save_checkpoint(path, SantoriniNet(NetConfig(8, 3)), iteration=3)
    model, metadata = load_checkpoint(path)
    assert metadata["iteration"] == 2 and model.config == NetConfig(8, 2)
    assert [p.name for p in tmp_path.iterdir()] == ["net.safetensors"]  # the temporary file was removed


def test_checkpoint_bad_extra_metadata(tmp_path):
    model = SantoriniNet(NetConfig(8, 0))
    with pytest.raises(TypeError, match="JSON-serialisable"):
        save_checkpoint(tmp_path / "a.safetensors", model, when=object())
    with pytest.raises(ValueError, match="may not use the keys"):
        save_checkpoint(tmp_path / "a.safetensors", model, format_version=9)
    assert list(tmp_path.iterdir()) == []


def _rewrite(source, target, metadata=None, tensors=None):
    with safe_open(str(source), "pt") as f:
        stored = {k: f.get_tensor(k) for k in f.keys()}
        meta = f.metadata()
    save_file(tensors if tensors is not None else stored, target, metadata={**meta, **(metadata or {})})


@pytest.fixture
def good_checkpoint(tmp_path):
    path = tmp_path / "good.safetensors"
    save_checkpoint(path, SantoriniNet(NetConfig(8, 1)))
    return path


def test_load_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        load_checkpoint(tmp_path / "absent.safetensors")


@pytest.mark.parametrize("damage", ["garbage", "empty", "truncated"])
def test_load_corrupt_file(tmp_path, good_checkpoint, damage):
    path = tmp_path / "bad.safetensors"
    data = good_checkpoint.read_bytes()
    path.write_bytes({"garbage": b"\x00\x01 this is not a checkpoint", "empty": b"",
                      "truncated": data[: len(data) // 2]}[damage])
    with pytest.raises(CheckpointError, match="not a readable safetensors file"):
        load_checkpoint(path)


@pytest.mark.parametrize("name, culprit", [("champion.onnx", "is an ONNX export"),
                                           ("iter-0001.trainer.pt", "is the optimiser's state, not a network")])
def test_the_files_beside_a_checkpoint_are_named_not_misread(tmp_path, name, culprit):
    "An export or a trainer state given as the checkpoint is named for what it is, not called a corrupt safetensors file."
    path = tmp_path / name
    path.write_bytes(b"\x08\x07 not safetensors")
    with pytest.raises(CheckpointError, match=culprit): load_checkpoint(path)


def test_load_foreign_safetensors(tmp_path):
    path = tmp_path / "foreign.safetensors"
    save_file({"weight": torch.zeros(2, 2)}, path)
    with pytest.raises(CheckpointError, match="not a santorini_az network checkpoint"):
        load_checkpoint(path)


@pytest.mark.parametrize("version", ["2", "0", "1.0"])  # newer, older, or written otherwise: refused alike
def test_load_another_format_version(tmp_path, good_checkpoint, version):
    path = tmp_path / "other.safetensors"
    _rewrite(good_checkpoint, path, {"format_version": version})
    with pytest.raises(CheckpointError, match=f"format version {version};"):
        load_checkpoint(path)


@pytest.mark.parametrize("config", ['{"channels": 8}x', '{"channels": 8, "blocks": 1, "heads": 3}', '{"channels": -1, "blocks": 1}'])
def test_load_unreadable_config(tmp_path, good_checkpoint, config):
    path = tmp_path / "config.safetensors"
    _rewrite(good_checkpoint, path, {"config": config})
    with pytest.raises(CheckpointError, match="unreadable network config"):
        load_checkpoint(path)


def test_load_weights_that_do_not_match(tmp_path, good_checkpoint):
    path = tmp_path / "mismatch.safetensors"
    _rewrite(good_checkpoint, path, {"config": json.dumps({"channels": 16, "blocks": 1})})
    with pytest.raises(CheckpointError, match=r"do not match the stored architecture 16x1: weight .* has shape"):
        load_checkpoint(path)
    _rewrite(good_checkpoint, path, {"config": json.dumps({"channels": 8, "blocks": 2})})
    with pytest.raises(CheckpointError, match="missing weights"):
        load_checkpoint(path)
    _rewrite(good_checkpoint, path, {"config": json.dumps({"channels": 8, "blocks": 0})})
    with pytest.raises(CheckpointError, match="unexpected weights"):
        load_checkpoint(path)
    assert issubclass(CheckpointError, ValueError)


# ---- BN folding

def test_fold_conv_bn_single_module():
    torch.manual_seed(0)
    block = ConvBN(5, 7, 3)
    with torch.no_grad():
        block.bn.running_mean.uniform_(-1, 1)
        block.bn.running_var.uniform_(0.1, 3)
        block.bn.weight.uniform_(-2, 2)
        block.bn.bias.uniform_(-1, 1)
    block.eval()
    folded = fold_conv_bn(block)
    assert isinstance(folded, nn.Conv2d) and folded.bias is not None
    x = torch.randn(4, 5, 5, 5)
    with torch.no_grad():
        torch.testing.assert_close(folded(x), block(x), atol=1e-5, rtol=1e-5)


def test_fold_batchnorm_whole_net(net):
    net.train()  # folding must use running statistics whatever mode the original is in, and leave that mode alone
    folded = fold_batchnorm(net)
    assert net.training
    net.eval()
    assert not any(isinstance(m, nn.BatchNorm2d) for m in folded.modules())
    assert sum(isinstance(m, nn.BatchNorm2d) for m in net.modules()) == 15
    planes = random_planes(128, seed=11)
    for got, want in zip(plain_outputs(folded, planes), plain_outputs(net, planes)):
        np.testing.assert_allclose(got, want, atol=FP32_ATOL)


# ---- the evaluator

@pytest.mark.parametrize("batch_size", [1, 7, 256])
def test_fp32_evaluator_matches_plain(net, batch_size):
    evaluator = NetworkEvaluator(net, "fp32", device="cpu")
    planes = random_planes(batch_size, seed=batch_size)
    logits, values = evaluator(planes)
    assert logits.dtype == values.dtype == np.float32
    assert logits.shape == (batch_size, 153) and values.shape == (batch_size,)
    want_logits, want_values = plain_outputs(net, planes)
    np.testing.assert_allclose(logits, want_logits, atol=FP32_ATOL)
    np.testing.assert_allclose(values, want_values, atol=FP32_ATOL)


@pytest.mark.slow
def test_compiled_evaluator_matches_plain(net):
    evaluator = NetworkEvaluator(net, "fp32", device="cpu", compile=True)  # torch.compile: ~35 s on a 2-core CPU
    for batch_size in (64, 5):
        planes = random_planes(batch_size, seed=batch_size)
        for got, want in zip(evaluator(planes), plain_outputs(net, planes)):
            np.testing.assert_allclose(got, want, atol=FP32_ATOL)


def test_evaluator_is_a_snapshot(net):
    model = trained_looking_net(NetConfig(8, 1), seed=4)
    evaluator = NetworkEvaluator(model, "fp32", device="cpu")
    planes = random_planes(4, seed=0)
    before = evaluator(planes)
    with torch.no_grad():
        model.policy_fc.bias.add_(1.0)
    np.testing.assert_array_equal(evaluator(planes)[0], before[0])
    assert any(isinstance(m, nn.BatchNorm2d) for m in model.modules())


def test_evaluator_input_handling(net):
    evaluator = NetworkEvaluator(net, "fp32", device="cpu")
    logits, values = evaluator(np.zeros((0, 5, 5, 9), np.float32))
    assert logits.shape == (0, 153) and values.shape == (0,)
    planes = random_planes(3, seed=1)
    np.testing.assert_allclose(evaluator(planes.astype(np.float64))[0], evaluator(planes)[0])
    for bad in (np.zeros((5, 5, 9)), np.zeros((2, 9, 5, 5)), np.zeros((2, 5, 5, 8))):
        with pytest.raises(ValueError, match=r"\[B, 5, 5, 9\]"):
            evaluator(bad)
    with pytest.raises(ValueError, match="precision"):
        NetworkEvaluator(net, "fp16", device="cpu")
    with pytest.raises(ValueError, match="device"):
        NetworkEvaluator(net, device="tpu")
    assert repr(evaluator) == "NetworkEvaluator(64x6, fp32, cpu)"


@needs_bf16_cpu
def test_bf16_evaluator_is_close(net):
    evaluator = NetworkEvaluator(net, "bf16", device="cpu")
    assert evaluator.precision == "bf16"
    planes = random_planes(512, seed=21)
    logits, values = evaluator(planes)
    assert logits.dtype == values.dtype == np.float32
    want_logits, want_values = plain_outputs(net, planes)
    prior_error = np.abs(softmax(logits) - softmax(want_logits))
    assert prior_error.max() < BF16_PRIOR_ATOL and prior_error.mean() < 2e-3
    value_error = np.abs(values - want_values)
    assert value_error.max() < BF16_VALUE_ATOL and value_error.mean() < 1e-2
    assert np.mean(logits.argmax(1) == want_logits.argmax(1)) > 0.9  # the favourite move rarely changes


def test_bf16_falls_back_with_a_warning(net, monkeypatch):
    monkeypatch.setattr(network, "cpu_supports_bf16", lambda: False)
    with pytest.warns(UserWarning, match="bf16 is not supported natively"):
        evaluator = NetworkEvaluator(net, "bf16", device="cpu")
    assert evaluator.precision == "fp32"
    planes = random_planes(8, seed=0)
    np.testing.assert_allclose(evaluator(planes)[0], plain_outputs(net, planes)[0], atol=FP32_ATOL)


def test_device_resolution():
    assert network.resolve_device("cpu").type == "cpu"
    assert network.resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA GPU"):
            network.resolve_device("cuda")


@needs_cuda
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_cuda_evaluator_matches_plain(net, precision):
    evaluator = NetworkEvaluator(net, precision, device="cuda")
    planes = random_planes(256, seed=31)
    logits, values = evaluator(planes)
    want_logits, want_values = plain_outputs(net, planes)
    prior_atol, value_atol = (CUDA_ATOL, CUDA_ATOL) if evaluator.precision == "fp32" else (BF16_PRIOR_ATOL, BF16_VALUE_ATOL)
    assert np.abs(softmax(logits) - softmax(want_logits)).max() < prior_atol
    assert np.abs(values - want_values).max() < value_atol


def test_checkpoint_then_evaluator(tmp_path, net):
    save_checkpoint(tmp_path / "n.safetensors", net)
    loaded, _ = load_checkpoint(tmp_path / "n.safetensors")
    planes = random_planes(32, seed=8)
    np.testing.assert_allclose(NetworkEvaluator(loaded, device="cpu")(planes)[0], plain_outputs(net, planes)[0], atol=FP32_ATOL)


def test_measure_throughput_runs():
    evaluator = NetworkEvaluator(SantoriniNet(NetConfig(8, 1)), device="cpu")
    calls = []
    def counting(planes):
        calls.append(len(planes))
        return evaluator(planes)
    rate = measure_throughput(counting, batch_size=16, seconds=0.05, warmup=2)
    assert rate > 0 and len(calls) >= 3 and set(calls) == {16}


# ---- one position at a time

def _midgame_state():
    state = initial_state()
    for cell in (6, 8, 16, 18):
        state = state.apply(Placement(cell))
    return state.apply(state.legal_actions()[0])


@pytest.mark.parametrize("make_state", [initial_state, _midgame_state])
def test_policy_value(net, make_state):
    state = make_state()
    policy, value = policy_value(net, state)
    legal = legal_action_indices(state)
    assert policy.shape == (153,) and policy.dtype == np.float32 and isinstance(value, float)
    assert abs(policy.sum() - 1) < 1e-5 and np.all(policy[legal] > 0)
    assert policy.sum() == pytest.approx(policy[legal].sum())
    fast_policy, fast_value = policy_value(NetworkEvaluator(net, device="cpu"), state)
    np.testing.assert_allclose(fast_policy, policy, atol=1e-4)
    assert fast_value == pytest.approx(value, abs=FP32_ATOL)


def test_policy_value_keeps_training_mode():
    model = SantoriniNet(NetConfig(8, 1)).train()
    policy_value(model, initial_state())
    assert model.training


def test_policy_value_of_finished_game(net):
    from santorini_az.game import State
    heights = [0] * 25
    heights[1], heights[0] = 3, 2
    state = State(tuple(heights), ((0, 24), (4, 20)), 0).apply(Move(0, 1, 2))  # player 1 climbs to level 3
    assert state.is_over()
    policy, value = policy_value(net, state)
    assert not policy.any() and -1 <= value <= 1


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(),
                                                                                         reason="no CUDA GPU here"))])
def test_cuda_graphs_give_the_plain_evaluators_answers_at_every_batch_size(device):
    # On a GPU the batches replay recorded CUDA graphs; on a CPU the same padded buffers run the module directly.
    from santorini_az.network import NetworkEvaluator, NetConfig, SantoriniNet, random_planes
    torch.manual_seed(0)
    net = SantoriniNet(NetConfig(16, 2)).eval()
    plain, graphed = NetworkEvaluator(net, device=device), NetworkEvaluator(net, device=device, cuda_graphs=True)
    for n in (1, 8, 9, 33, 5):  # a size seen before (8) replays; the pad rows keep older positions, which must not leak
        planes = random_planes(n, seed=n)
        for mine, theirs in zip(graphed(planes), plain(planes)):
            assert mine.shape == theirs.shape and np.abs(mine - theirs).max() < 1e-4
    assert sorted(graphed.graphs.sizes) == [8, 16, 64]
    with pytest.raises(ValueError, match="choose one"): NetworkEvaluator(net, device=device, compile=True, cuda_graphs=True)


def test_bf16_on_a_gpu_that_only_emulates_it_falls_back_to_fp32(monkeypatch):
    "torch counts a pre-Ampere GPU's software bf16 as support unless asked for native support: we ask."
    from santorini_az.network import cuda_supports_bf16, resolve_precision
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda including_emulation=True: including_emulation)  # a T4
    with pytest.warns(UserWarning, match="not supported natively"):
        assert resolve_precision("bf16", torch.device("cuda")) == "fp32"
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda including_emulation=True: True)  # an A100 or H100
    assert resolve_precision("bf16", torch.device("cuda")) == "bf16"
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda: False)  # torch before 2.4 knew native support only
    assert not cuda_supports_bf16()
