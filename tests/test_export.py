"ONNX export: the reference contract, parity with torch, metadata, the evaluator and its picklable factory."
import json
import pickle
from pathlib import Path

import numpy as np
import onnx
import pytest
import torch
from torch import nn

from santorini_az.encoding import N_ACTIONS
from santorini_az.export import (ExportError, OnnxEvaluator, OnnxFactory, export_command, export_onnx, game_positions,
                                 onnx_factory, onnx_metadata, parity)
from santorini_az.mcts import Search, SearchConfig
from santorini_az.encoding import encode
from santorini_az.game import initial_state
from santorini_az.network import NetConfig, SantoriniNet, random_planes, save_checkpoint


def trained_looking(model: SantoriniNet, seed: int = 0) -> SantoriniNet:
    "Real-looking batch-norm statistics and sharpened heads, so that parity is tested on decided outputs."
    generator = torch.Generator().manual_seed(seed)
    model.train()
    with torch.no_grad():
        for bn in (m for m in model.modules() if isinstance(m, nn.BatchNorm2d)):
            bn.reset_running_stats(); bn.momentum = None
            bn.weight.copy_(torch.rand(bn.num_features, generator=generator) + 0.5)
            bn.bias.copy_(torch.randn(bn.num_features, generator=generator) * 0.2)
        for batch in range(4): model(torch.from_numpy(random_planes(256, seed=seed + batch)))
        model.policy_fc.weight.mul_(8.0); model.value_fc2.weight.mul_(3.0)
    return model.eval()


@pytest.fixture(scope="session")  # made once per worker: the tests only read it
def exported(tmp_path_factory):
    "A trained-looking 32x4 network, its checkpoint and its ONNX export."
    folder = tmp_path_factory.mktemp("export")
    torch.manual_seed(0)
    model = trained_looking(SantoriniNet(NetConfig(32, 4)))
    checkpoint = folder / "net.safetensors"
    save_checkpoint(checkpoint, model, iteration=3)
    return model, checkpoint, export_onnx(checkpoint, folder / "net.onnx")


def test_contract_and_checker(exported):
    _, _, path = exported
    graph = onnx.load(str(path))
    onnx.checker.check_model(graph, full_check=True)
    assert [i.name for i in graph.graph.input] == ["input"]
    assert [o.name for o in graph.graph.output] == ["policy", "value"]
    assert max(o.version for o in graph.opset_import if o.domain in ("", "ai.onnx")) >= 17
    shapes = {v.name: [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]
              for v in [*graph.graph.input, *graph.graph.output]}
    assert shapes == {"input": ["batch", 5, 5, 9], "policy": ["batch", 153], "value": ["batch", 1]}
    assert graph.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT


def test_metadata(exported):
    _, _, path = exported
    metadata = onnx_metadata(path)
    assert json.loads(metadata["config"]) == {"channels": 32, "blocks": 4}
    assert json.loads(metadata["checkpoint"]) == {"iteration": 3}


@pytest.mark.parametrize("batch", [1, 7, 300])
def test_dynamic_batch_and_softmax(exported, batch):
    import onnxruntime as ort
    _, _, path = exported
    policy, value = ort.InferenceSession(str(path)).run(None, {"input": random_planes(batch, seed=batch)})
    assert policy.shape == (batch, N_ACTIONS) and value.shape == (batch, 1)
    np.testing.assert_allclose(policy.sum(1), 1.0, atol=1e-5)
    assert np.all(np.abs(value) <= 1.0)


def test_parity_on_random_and_game_positions(exported):
    model, _, path = exported
    games = game_positions(30, seed=1)
    planes = np.concatenate([random_planes(1000, seed=5), games])
    assert len(games) > 500
    result = parity(model, path, planes)
    print(f"parity on {result['positions']} positions: policy {result['policy']:.2e}, value {result['value']:.2e}")
    assert result["positions"] >= 1500
    assert result["policy"] <= 1e-4 and result["value"] <= 1e-4


def test_parity_detects_a_different_network(exported, tmp_path):
    "The parity check can fail: a different network's file is far from the torch outputs."
    model, _, _ = exported
    torch.manual_seed(99)
    other = export_onnx(trained_looking(SantoriniNet(NetConfig(32, 4)), seed=1), tmp_path / "other.onnx")
    result = parity(model, other, random_planes(200, seed=0))
    assert result["policy"] > 1e-2 or result["value"] > 1e-2


def test_evaluator_contract_and_log_policy(exported):
    model, _, path = exported
    evaluator = OnnxEvaluator(path)
    planes = random_planes(16, seed=3)
    logits, values = evaluator.evaluate(planes)
    assert logits.shape == (16, N_ACTIONS) and logits.dtype == np.float32
    assert values.shape == (16,) and values.dtype == np.float32
    assert np.all(np.isfinite(logits))
    with torch.no_grad(): torch_logits, torch_values = model(torch.from_numpy(planes))
    # log-softmax logits differ from the torch logits by a constant per row: the same softmax
    np.testing.assert_allclose(np.exp(logits), torch.softmax(torch_logits, -1).numpy(), atol=1e-5)
    np.testing.assert_allclose(values, torch_values.numpy(), atol=1e-5)
    empty_logits, empty_values = evaluator.evaluate(np.zeros((0, 5, 5, 9), np.float32))
    assert empty_logits.shape == (0, N_ACTIONS) and empty_values.shape == (0,)
    with pytest.raises(ValueError, match=r"\[B, 5, 5, 9\]"): evaluator.evaluate(np.zeros((1, 9, 5, 5), np.float32))


def test_factory_pickles_and_drives_a_search(exported):
    _, _, path = exported
    factory = pickle.loads(pickle.dumps(OnnxFactory(str(path), threads=1)))
    assert factory == OnnxFactory(str(path), 1)
    evaluator = factory()

    def evaluate(state):
        logits, values = evaluator.evaluate(encode(state)[None])
        return logits[0], float(values[0])

    search = Search(initial_state(), SearchConfig(simulations=32)).run(evaluate)
    assert sum(search.visit_counts()) == 32


def test_factory_works_in_a_worker_process(exported):
    import multiprocessing as mp
    _, _, path = exported
    with mp.get_context("spawn").Pool(1) as pool:
        logits, values = pool.apply(_evaluate_in_worker, (OnnxFactory(str(path)),))
    expected_logits, expected_values = OnnxEvaluator(path).evaluate(random_planes(2, seed=0))
    np.testing.assert_allclose(logits, expected_logits, atol=1e-6)
    np.testing.assert_allclose(values, expected_values, atol=1e-6)


def _evaluate_in_worker(factory):
    return factory().evaluate(random_planes(2, seed=0))


def test_export_command_errors_name_the_culprit(exported, tmp_path):
    _, checkpoint, _ = exported
    with pytest.raises(ExportError, match="no checkpoint"): export_command(tmp_path / "missing.safetensors", tmp_path / "x.onnx")
    (tmp_path / "junk.safetensors").write_bytes(b"not a checkpoint")
    with pytest.raises(ExportError, match="junk.safetensors"): export_command(tmp_path / "junk.safetensors", tmp_path / "x.onnx")
    with pytest.raises(ExportError, match="does not exist"): export_command(checkpoint, tmp_path / "nowhere" / "x.onnx")
    (tmp_path / "foreign.onnx").write_bytes(b"\x00\x01")
    with pytest.raises(ExportError): onnx_metadata(tmp_path / "foreign.onnx")
    assert not list(tmp_path.glob(".*.tmp")), "a failed export leaves no temporary file"
    metadata = export_command(checkpoint, tmp_path / "ok.onnx")
    assert metadata["net"] == "32x4" and (tmp_path / "ok.onnx").exists()
    from santorini_az.arena import CHAMPION
    from santorini_az.network import load_checkpoint
    shipped = json.loads(export_command("champion", tmp_path / "champion.onnx")["checkpoint"])  # the name other commands take
    assert shipped["iteration"] == load_checkpoint(CHAMPION)[1]["iteration"]
    god = export_command("god_champion", tmp_path / "god.onnx")  # the god network, by the name of its own
    assert god["game"] == "gods" and json.loads(god["checkpoint"])["run"] == "gods", god
    with pytest.raises(ExportError, match="model: an ONNX file's name ends in .onnx"):
        export_command(checkpoint, tmp_path / "model")


def test_onnx_factory_exports_a_checkpoint_once(exported, tmp_path):
    import os, shutil
    model, checkpoint, _ = exported
    copy = tmp_path / "player.safetensors"
    shutil.copy(checkpoint, copy)
    factory = onnx_factory(copy, threads=2)
    assert factory == OnnxFactory(str(tmp_path / "player.onnx"), 2)
    stamp = (tmp_path / "player.onnx").stat().st_mtime_ns
    assert onnx_factory(copy, threads=2) == factory and (tmp_path / "player.onnx").stat().st_mtime_ns == stamp
    os.utime(copy, ns=(stamp + 10**9, stamp + 10**9))  # a newer checkpoint is exported again
    onnx_factory(copy)
    assert (tmp_path / "player.onnx").stat().st_mtime_ns != stamp
    assert onnx_factory(factory.path) == OnnxFactory(factory.path, 1)
    (tmp_path / "junk.onnx").write_bytes(b"junk")
    with pytest.raises(ExportError): onnx_factory(tmp_path / "junk.onnx")
    shutil.copy(checkpoint, tmp_path / "junk.safetensors")  # a newer checkpoint beside a file that is not an export
    with pytest.raises(ExportError, match="junk.onnx is in the way of .*not one of ours"):
        onnx_factory(tmp_path / "junk.safetensors")
    assert (tmp_path / "junk.onnx").read_bytes() == b"junk"  # kept


def test_a_fresh_process_plays_an_export_without_importing_torch_or_onnx(exported):
    "A worker (or an engine) that unpickles an OnnxFactory and evaluates imports chapter 31a's module: no torch, no onnx."
    import subprocess, sys
    _, checkpoint, _ = exported
    factory = onnx_factory(checkpoint)  # exported (or found fresh) here, in a process that has torch
    code = ("import pickle, sys\n"
            "import numpy as np\n"
            "import santorini_az.god_engine, santorini_az.protocol  # the engine's modules, god tree included\n"
            "factory = pickle.loads(sys.stdin.buffer.read())\n"
            "logits, values = factory()(np.zeros((3, 5, 5, 9), np.float32))\n"
            "print(logits.shape, values.shape, sorted({'torch', 'onnx'} & {m.split('.')[0] for m in sys.modules}))")
    done = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(factory), capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert done.stdout.decode().strip() == "(3, 153) (3,) []", done.stdout.decode()


def test_onnx_metadata_names_the_file_and_what_is_wrong_with_it(tmp_path):
    import onnx.helper as oh
    (tmp_path / "foreign.onnx").write_bytes(b"\x00\x01")
    with pytest.raises(ExportError, match=r"foreign\.onnx is not a readable ONNX file: \S"): onnx_metadata(tmp_path / "foreign.onnx")
    with pytest.raises(ExportError, match="no ONNX file at"): onnx_metadata(tmp_path / "missing.onnx")
    with pytest.raises(ExportError, match="not a regular file"): onnx_metadata(tmp_path)
    graph = oh.make_graph([oh.make_node("Identity", ["x"], ["y"])], "other",
                          [oh.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1])],
                          [oh.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1])])
    onnx.save(oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)], ir_version=8), tmp_path / "other.onnx")
    with pytest.raises(ExportError, match="other.onnx is an ONNX file but not a santorini_az network"):
        onnx_metadata(tmp_path / "other.onnx")


@pytest.mark.slow
def test_onnx_factory_plays_on_the_engine_in_worker_processes(exported):
    from santorini_az.engine import play_games
    from santorini_az.mcts import SearchConfig
    _, _, path = exported
    records = play_games(OnnxFactory(str(path)), 2, SearchConfig(simulations=8), games_in_flight=2, workers=2)
    assert len(records) == 2


# ---- the god network (chapter 10b's GodNet): 36 planes in, 126 sub-actions out ----------------------------------------

def _god_planes(count: int, seed: int) -> np.ndarray:
    "Planes [count, 5, 5, 36] of decision nodes of random god games."
    import random
    from santorini_az.god_encoding import encode_nodes, prefix_nodes, random_god_positions
    from santorini_az.gods import GODS
    rng, nodes = random.Random(seed), []
    while len(nodes) < count:
        for state in random_god_positions((rng.choice(GODS), rng.choice(GODS)), rng, turns=40):
            nodes.append(rng.choice(prefix_nodes(state)))
    return encode_nodes(nodes[:count])


@pytest.fixture(scope="module")
def god_exported(tmp_path_factory):
    "A god network with real-looking batch norms, its checkpoint (chapter 10b's format) and its ONNX export."
    from santorini_az.god_training import GodNet, save_god_checkpoint
    folder = tmp_path_factory.mktemp("god_export")
    torch.manual_seed(3)
    model = GodNet(NetConfig(16, 2)).train()
    with torch.no_grad():
        for batch in range(3): model(torch.from_numpy(_god_planes(128, seed=batch)))
        model.policy_fc.weight.mul_(8.0)
    model.eval()
    checkpoint = folder / "god.safetensors"
    save_god_checkpoint(checkpoint, model, iteration=5)
    export_command(checkpoint, folder / "god.onnx")  # the command, as a user runs it
    return model, checkpoint, folder / "god.onnx"


def test_a_god_checkpoint_exports_with_its_own_shapes_and_game(god_exported):
    from santorini_az.god_encoding import N_GOD_ACTIONS
    model, _, path = god_exported
    graph = onnx.load(str(path))
    shapes = {v.name: [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]
              for v in [*graph.graph.input, *graph.graph.output]}
    assert shapes == {"input": ["batch", 5, 5, 36], "policy": ["batch", N_GOD_ACTIONS], "value": ["batch", 1]}
    metadata = onnx_metadata(path)
    assert metadata["game"] == "gods" and json.loads(metadata["checkpoint"]) == {"iteration": 5}
    planes = _god_planes(300, seed=9)
    result = parity(model, path, planes)
    assert result["policy"] <= 1e-4 and result["value"] <= 1e-4, result
    evaluator = OnnxEvaluator(path)
    logits, values = evaluator.evaluate(planes[:4])
    assert logits.shape == (4, N_GOD_ACTIONS) and values.shape == (4,)
    with pytest.raises(ValueError, match=r"\[B, 5, 5, 36\]"): evaluator.evaluate(random_planes(1, seed=0))


def test_a_network_of_the_other_game_is_refused_by_name(god_exported):
    "A god network given where the game without gods is played (and a mortal one for god positions) gets one sentence."
    from santorini_az.onnx_runtime import onnx_factory
    from santorini_az.play import player
    from santorini_az.rundir import RunError
    _, checkpoint, path = god_exported
    for given in (path, checkpoint):  # its ONNX export, and the checkpoint that the engine exports itself
        with pytest.raises(ExportError, match=f"{given} is a god network: play it with --gods"): onnx_factory(given, game="mortal")
    with pytest.raises(RunError, match="is a god network"): player(str(path), 8)
    shipped = Path(__file__).resolve().parent.parent / "web" / "public" / "models" / "champion.onnx"
    with pytest.raises(ExportError, match="is a network of the game without gods: god positions need a god network"):
        onnx_factory(shipped, game="gods")
    assert onnx_factory(path, game="gods").path == str(path)


def test_the_shipped_god_onnx_is_the_shipped_god_checkpoint():
    "web/public/models/god_champion.onnx (what the browser plays) computes what santorini_az/models/god_champion.safetensors does."
    from pathlib import Path
    from santorini_az.god_engine import GOD_CHAMPION
    from santorini_az.god_training import load_god_checkpoint
    shipped = Path(__file__).resolve().parent.parent / "web" / "public" / "models" / "god_champion.onnx"
    model, extra = load_god_checkpoint(GOD_CHAMPION)
    assert json.loads(onnx_metadata(shipped)["checkpoint"]) == extra
    result = parity(model, shipped, _god_planes(400, seed=11))
    assert result["policy"] <= 1e-4 and result["value"] <= 1e-4, result


def test_the_int8_copy_keeps_its_weights_to_7_bits_and_an_older_copy_is_made_again(exported, tmp_path):
    """`onnx_factory(int8=True)` quantizes once, with weights in a 7-bit range (no 16-bit saturation on CPUs without
    VNNI, so every x86 CPU computes the same), and makes again a copy whose metadata does not say so (an older one)."""
    import shutil
    from onnx import numpy_helper
    _, checkpoint, _ = exported
    copy = tmp_path / "player.safetensors"
    shutil.copy(checkpoint, copy)
    quantized = tmp_path / "player.int8.onnx"
    assert onnx_factory(copy, int8=True) == OnnxFactory(str(quantized), 1)
    weights = [numpy_helper.to_array(t) for t in onnx.load(str(quantized)).graph.initializer if t.data_type == onnx.TensorProto.INT8]
    assert weights and all(-64 <= w.min() and w.max() <= 64 for w in weights), [(w.min(), w.max()) for w in weights]
    assert max(int(np.abs(w).max()) for w in weights) >= 60  # the range is used, not collapsed
    assert onnx_metadata(quantized)["int8_weights"] == "7-bit"
    model = onnx.load(str(quantized))  # an older copy: the same file without the 7-bit mark
    kept = [p for p in model.metadata_props if p.key != "int8_weights"]
    del model.metadata_props[:]
    model.metadata_props.extend(kept)
    onnx.save(model, str(quantized))
    assert "int8_weights" not in onnx_metadata(quantized)
    onnx_factory(copy, int8=True)
    assert onnx_metadata(quantized)["int8_weights"] == "7-bit"
    # a copy already made is played without torch: a fresh process finds it fresh and imports neither torch nor onnx
    import subprocess, sys
    code = ("import sys\nfrom santorini_az.onnx_runtime import onnx_factory\n"
            f"factory = onnx_factory({str(copy)!r}, int8=True)\n"
            "print(factory.path.endswith('.int8.onnx'), sorted({'torch', 'onnx'} & {m.split('.')[0] for m in sys.modules}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "True []", done.stdout
