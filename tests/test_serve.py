"serve: the champion manifest, on-the-fly export and caching, static files, binding and shutdown."
import json
import socket
import struct
import threading
import time
import urllib.error
import urllib.request

import pytest
import torch

from santorini_az.export import onnx_metadata
from santorini_az.network import NetConfig, SantoriniNet, save_checkpoint
from santorini_az.rundir import RunError, champion_checkpoint
from santorini_az.serve import ChampionModels, ServeError, serve_command, start_server


def make_run(folder, iterations=(0,)):
    (folder / "checkpoints").mkdir(parents=True, exist_ok=True)
    for i in iterations:
        torch.manual_seed(i)
        save_checkpoint(folder / "checkpoints" / f"iter-{i:04d}.safetensors", SantoriniNet(NetConfig(8, 1)), iteration=i)
    promote(folder, iterations[-1])
    return folder


def promote(folder, iteration):
    (folder / "champion.json").write_text(
        json.dumps({"iteration": iteration, "checkpoint": f"checkpoints/iter-{iteration:04d}.safetensors"}))


def fetch(url):
    with urllib.request.urlopen(url, timeout=10) as response: return response.read(), response.headers


@pytest.fixture
def app(tmp_path):
    folder = tmp_path / "app"
    (folder / "assets").mkdir(parents=True)
    (folder / "index.html").write_text("<!doctype html><title>santorini</title>")
    (folder / "assets" / "engine.wasm").write_bytes(b"\0asm")
    return folder


def test_champion_checkpoint(tmp_path):
    assert champion_checkpoint(tmp_path) is None
    run = make_run(tmp_path / "run", (0, 2))
    assert champion_checkpoint(run) == (2, run / "checkpoints" / "iter-0002.safetensors")
    (run / "champion.json").write_text("{not json")
    with pytest.raises(RunError, match="champion.json"): champion_checkpoint(run)
    for text in ("{}", "[1]", '{"iteration": "two", "checkpoint": "x"}'):  # JSON, but no champion record
        (run / "champion.json").write_text(text)
        with pytest.raises(RunError, match="champion.json names no champion"): champion_checkpoint(run)


def test_manifest_exports_once_and_reports_failures(tmp_path):
    run = make_run(tmp_path / "run", (0, 1))
    models = ChampionModels(run, tmp_path / "cache")
    manifest = models.manifest()
    assert manifest == {"id": "iter-0001", "name": "iteration 1 of run", "url": "champion-0001.onnx",
                        "god": {"id": "shipped-god", "name": "the shipped god network", "url": "god_champion.onnx"}}
    exported = tmp_path / "cache" / "champion-0001.onnx"
    assert json.loads(onnx_metadata(exported)["checkpoint"]) == {"iteration": 1}
    stamp = exported.stat().st_mtime_ns
    models.manifest()
    assert exported.stat().st_mtime_ns == stamp, "the export is cached"
    (run / "checkpoints" / "iter-0005.safetensors").write_bytes(b"half a file")
    promote(run, 5)
    broken = models.manifest()
    assert broken["url"] is None and "iteration 5" in broken["reason"]
    assert ChampionModels(tmp_path / "empty", tmp_path / "cache").manifest()["reason"] == "the run has no champion yet"


def test_server_serves_app_and_switches_champion(tmp_path, app):
    run = make_run(tmp_path / "run", (0, 4))
    with start_server(run, app_dir=app) as server:
        assert server.url.startswith("http://127.0.0.1:")
        body, _ = fetch(server.url)
        assert b"<title>santorini</title>" in body
        _, headers = fetch(server.url + "assets/engine.wasm")
        assert headers["Content-Type"] == "application/wasm"
        body, headers = fetch(server.url + "models/manifest.json")
        manifest = json.loads(body)
        assert manifest["id"] == "iter-0004" and headers["Cache-Control"] == "no-store"
        model, _ = fetch(server.url + "models/" + manifest["url"])
        assert len(model) > 1000
        promote(run, 0)
        assert json.loads(fetch(server.url + "models/manifest.json")[0])["id"] == "iter-0000"
        with pytest.raises(urllib.error.HTTPError): fetch(server.url + "models/champion-0099.onnx")
        with pytest.raises(urllib.error.HTTPError, match="404"): fetch(server.url + "assets/")  # no folder listing
        cache = server.cache_dir
    assert not server.thread.is_alive() and not cache.exists()
    with pytest.raises(OSError): socket.create_connection(("127.0.0.1", server.server.server_address[1]), timeout=1)


def test_errors_name_the_culprit(tmp_path, app):
    run = make_run(tmp_path / "run")
    with pytest.raises(ServeError, match=r"no run directory at .*missing \(`santorini_az serve` alone serves the app's shipped"):
        start_server(tmp_path / "missing", app_dir=app)
    (tmp_path / "train.out").write_text("a log, given by mistake")
    with pytest.raises(ServeError, match=r"train.out is a file, not a run directory"):
        start_server(tmp_path / "train.out", app_dir=app)
    with pytest.raises(ServeError, match="no built web app"): start_server(run, app_dir=tmp_path)
    with start_server(run, app_dir=app) as server:
        port = server.server.server_address[1]
        with pytest.raises(ServeError, match="cannot listen"): start_server(run, port=port, app_dir=app)


def test_an_ipv6_address_is_served(tmp_path, app):
    try: socket.socket(socket.AF_INET6).close()
    except OSError: pytest.skip("no IPv6 on this machine")
    with start_server(make_run(tmp_path / "run"), host="::1", app_dir=app) as server:
        assert server.url.startswith("http://[::1]:")
        assert b"<title>santorini</title>" in fetch(server.url)[0]


def test_serve_command_prints_the_url_and_stops(tmp_path, app):
    run = make_run(tmp_path / "run", (0, 2))
    lines, seen = [], {}

    def wait():
        url = lines[0].split(" at ")[1].split()[0]
        seen["manifest"] = json.loads(fetch(url + "models/manifest.json")[0])

    serve_command(run, app_dir=app, echo=lines.append, wait=wait)
    assert "iteration 2" in lines[0] and seen["manifest"]["id"] == "iter-0002"
    assert not [t for t in threading.enumerate() if t.name == "santorini_az serve"]


def test_without_a_run_the_shipped_networks_are_served(app):
    "`santorini_az serve` alone: no run to name, the app plays the networks it ships, for both games."
    lines, seen = [], {}

    def wait():
        url = lines[0].split(" at ")[1].split()[0]
        seen["manifest"] = json.loads(fetch(url + "models/manifest.json")[0])
        with pytest.raises(urllib.error.HTTPError): fetch(url + "models/champion-0001.onnx")  # nothing exported

    serve_command(None, app_dir=app, echo=lines.append, wait=wait)
    assert "and the networks it ships at http://127.0.0.1:" in lines[0]
    assert seen["manifest"]["url"] == "champion.onnx" and seen["manifest"]["god"]["url"] == "god_champion.onnx"


def test_a_god_runs_champion_is_the_god_entry(tmp_path):
    "A god run (chapter 11d) promotes god networks: the manifest's god entry, exported with 36 planes; the mortal game plays the shipped file."
    from santorini_az.god_training import GodNet, save_god_checkpoint
    run = make_run(tmp_path / "run", (0,))
    save_god_checkpoint(run / "checkpoints" / "iter-0002.safetensors", GodNet(NetConfig(8, 1)), iteration=2)
    promote(run, 2)
    manifest = ChampionModels(run, tmp_path / "cache").manifest()
    assert manifest["url"] == "champion.onnx" and manifest["god"] == {"id": "iter-0002", "name": "iteration 2 of run",
                                                                      "url": "champion-0002.onnx"}
    assert onnx_metadata(tmp_path / "cache" / "champion-0002.onnx")["game"] == "gods"


def request_threads() -> list:
    return [t for t in threading.enumerate() if "process_request_thread" in t.name]


def test_a_browser_that_leaves_mid_download_is_no_traceback(tmp_path, app, capsys):
    "A client that resets its connection during a large download (a closed tab) leaves nothing on stderr, and the server goes on."
    (app / "assets" / "big.wasm").write_bytes(bytes(32 * 2**20))
    with start_server(make_run(tmp_path / "run"), app_dir=app) as server:
        client = socket.create_connection(("127.0.0.1", server.server.server_address[1]), timeout=10)
        client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        client.sendall(b"GET /assets/big.wasm HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert client.recv(4096).startswith(b"HTTP/1.0 200")
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with a reset
        client.close()
        for _ in range(200):  # the request's thread meets the reset on its next write
            if not request_threads(): break
            time.sleep(0.05)
        assert not request_threads(), "the download's thread did not end"
        assert b"<title>santorini</title>" in fetch(server.url)[0]
        try: raise ValueError("a real error")  # anything else is still reported
        except ValueError: server.server.handle_error(None, ("127.0.0.1", 0))
    err = capsys.readouterr().err
    assert "ConnectionResetError" not in err and "BrokenPipeError" not in err, err
    assert "ValueError: a real error" in err


def test_a_terminated_serve_removes_its_exported_champions(tmp_path, app):
    "`kill` (SIGTERM) stops `santorini_az serve` as Ctrl-C does: the server closes and its temporary folder goes."
    import os
    import signal
    import subprocess
    import sys
    from pathlib import Path
    run, scratch = make_run(tmp_path / "run", (0, 1)), tmp_path / "tmp"
    scratch.mkdir()
    cli = Path(sys.executable).parent / "santorini_az"
    server = subprocess.Popen([str(cli), "serve", str(run), "--app", str(app)], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "TMPDIR": str(scratch)})
    try:
        line = server.stdout.readline()
        url = line.split(" at ")[1].split()[0]
        fetch(url + "models/manifest.json")  # the champion is exported into the temporary folder
        assert [p.name for p in scratch.iterdir() if p.name.startswith("santorini_az-serve-")]
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=30) == 0
    finally:
        server.kill()
        server.wait()
    assert not [p.name for p in scratch.iterdir() if p.name.startswith("santorini_az-serve-")]


def test_a_run_directory_stands_for_its_champion(tmp_path, monkeypatch):
    "network_spec: a run directory is its champion's checkpoint; keywords, files and other folders go on as they are."
    from santorini_az.rundir import network_spec
    run = make_run(tmp_path / "run", (0, 3))
    assert network_spec(str(run)) == str(run / "checkpoints" / "iter-0003.safetensors")
    monkeypatch.chdir(tmp_path)
    for keyword in ("champion", "mcts", "random", "alphabeta4", ""):  # a folder of that name does not hide the keyword
        make_run(tmp_path / keyword if keyword else tmp_path, (0,))
        assert network_spec(keyword) == keyword
    for other in (str(tmp_path / "nothing"), str(run / "checkpoints"), "x" * 5000):
        assert network_spec(other) == other
    (tmp_path / "new").mkdir()
    (tmp_path / "new" / "config.json").write_text("{}")
    with pytest.raises(RunError, match="new is a run directory with no champion yet"): network_spec(str(tmp_path / "new"))
