"""Self-play on a real Ray cluster: a head and a second node started as processes on this machine (chapter 28).

The `tiny` preset runs end to end through `santorini_az train --ray`, and an actor killed in the middle of a job
has its games played again: the job returns every game once, the same games as without the kill. The cluster is
always stopped, pass or fail. Needs Ray (`tools/setup.sh` installs the `ray` extra)."""
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import sys
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from tests.quick import quick_args

from tests.conftest import require

from santorini_az.engine import LinearEvaluator, play_games
from santorini_az.mcts import SearchConfig

pytestmark = pytest.mark.slow  # tools/test.sh runs this file on its own, outside pytest-xdist

BIN = Path(sys.executable).parent
RAY, CLI = BIN / "ray", BIN / "santorini_az"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# The test cluster is started as a user starts one: `ray start` with a ~/.ray/auth_token (Ray writes it once it has run
# on a machine), which turns its token authentication on. HOME is a folder of the test's own holding a fresh token, so
# that no token an earlier `ray.init()` left in the real ~/.ray matters (chapter 28's demo leaves one). The CLI joins
# the user's way (HOME, no RAY_AUTH_* variables); this driver, which imports Ray itself, names the token.
TOKEN = secrets.token_hex(32)


def user_env(home: Path) -> dict:
    "The environment of a user's process: HOME with the token in .ray/auth_token, no RAY_AUTH_* variables."
    return {**{k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}, "HOME": str(home),
            "RAY_USAGE_STATS_ENABLED": "0"}


RAY_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": TOKEN}


def ray_start(sessions: set[int], env: dict, *args, timeout=180):
    """`ray start ARGS` in a session of its own, whose id joins `sessions` at once (a node that fails to start may have
    left processes too). Every process the node starts (GCS, raylet, agents, workers) stays in that session, which is
    how the fixture finds them again: only this cluster is stopped, not another Ray on the machine (chapter 28's, or a
    user's own cluster), as `ray stop --force` would."""
    node = subprocess.Popen([str(RAY), "start", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env, start_new_session=True)
    sessions.add(node.pid)  # a session leader's pid is its session's id
    output = node.communicate(timeout=timeout)[0]
    assert node.returncode == 0, output


def session_members(sessions: set[int]) -> list[int]:
    "The processes whose session is one of `sessions` (field 6 of /proc/PID/stat)."
    members = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try: fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError: continue  # gone meanwhile
        if int(fields[3]) in sessions: members.append(int(pid))
    return members


def stop_sessions(sessions: set[int], grace=5.0, limit=30.0):
    "SIGTERM to every process of the sessions, SIGKILL to those left after `grace` seconds; waits until all are gone."
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, limit)):
        for pid in session_members(sessions):
            try: os.kill(pid, sig)
            except ProcessLookupError: pass
        deadline = time.monotonic() + wait
        while session_members(sessions) and time.monotonic() < deadline: time.sleep(0.1)
    assert not session_members(sessions), f"the test cluster's processes outlived SIGKILL: {session_members(sessions)}"


@pytest.fixture(scope="module")
def cluster_home():
    "The HOME of the cluster's nodes and of the CLI that joins it: its .ray/auth_token holds TOKEN."
    home = Path(tempfile.mkdtemp(prefix="ray-home-"))
    (home / ".ray").mkdir()
    (home / ".ray" / "auth_token").write_text(TOKEN)
    yield home
    shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="module")
def cluster(cluster_home):
    "A head node and a second node, one CPU each, on this machine; only their processes are stopped at the end."
    require("ray", shutil.which(str(RAY)) is not None)
    # Ray's sockets live under its temp folder and a Unix socket path has at most 107 bytes: pytest's own folders
    # (deeper still under pytest-xdist) are too long, so a short one of its own, removed at the end
    port, temp = free_port(), Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp"))
    address = f"127.0.0.1:{port}"
    # Ray turns `--node-ip-address 127.0.0.1` into the machine's own address (services.resolve_ip_for_localhost, so
    # that other machines can join) and its servers listen there; the head's client server gets a free port rather
    # than Ray's 10001, which another Ray on the machine may hold
    common = ["--num-cpus", "1", "--disable-usage-stats", "--node-ip-address", "127.0.0.1"]
    sessions, env = set(), user_env(cluster_home)  # started as a user starts them: the token file turns auth on
    try:
        ray_start(sessions, env, "--head", "--port", str(port), "--include-dashboard", "false",
                  "--ray-client-server-port", str(free_port()), "--temp-dir", str(temp), *common)
        # a node that joins by address does not turn token authentication on by itself (Ray's docs: set RAY_AUTH_MODE)
        ray_start(sessions, {**env, "RAY_AUTH_MODE": "token"}, "--address", address, *common)
        yield address
    finally:
        stop_sessions(sessions)
        shutil.rmtree(temp, ignore_errors=True)


def test_tiny_preset_end_to_end_on_the_cluster(cluster, cluster_home, tmp_path):
    """Run as a user runs it after `ray start`, with no RAY_AUTH_* variables: RayPool joins with the token file. Killed
    (SIGTERM) during its first self-play, it stops as Ctrl-C does, naming the cluster in the line that goes on (Ray's
    own handler dumped a crash, exit 134; the line dropped --ray); resumed so, it finishes on the cluster."""
    train = [str(CLI), "train", "--preset", "tiny", *quick_args(), "--iterations", "2", "--ray", cluster,
             "--run-dir", str(tmp_path / "run")]
    records_path = tmp_path / "run" / "records.jsonl"
    with open(tmp_path / "out", "w") as out, open(tmp_path / "err", "w") as err:
        run = subprocess.Popen(train, stdout=out, stderr=err, text=True, env=user_env(cluster_home))
        try:
            deadline = time.monotonic() + 600
            while not (records_path.exists() and '"stage": "references"' in records_path.read_text()):
                assert run.poll() is None and time.monotonic() < deadline, (tmp_path / "err").read_text()
                time.sleep(0.2)
            time.sleep(1)  # in iteration 1's self-play on the actors
            run.send_signal(signal.SIGTERM)
            assert run.wait(120) == 130, (tmp_path / "err").read_text()
        finally:
            if run.poll() is None: run.kill()
    said, stderr = (tmp_path / "out").read_text(), (tmp_path / "err").read_text()
    # a head that goes away ends the process (Ray's own exit): the run says how to go on at its start
    assert f"--run-dir {tmp_path / 'run'} --resume --ray {cluster}` goes on" in said.split("init it", 1)[0], said
    stopped = [line for line in stderr.splitlines() if line.startswith("stopped:")]
    assert "SIGTERM received" not in stderr and stopped, stderr
    assert stopped[0].endswith(f"--run-dir {tmp_path / 'run'} --resume --ray {cluster}"), stopped
    done = subprocess.run(train[:train.index("--preset")] + ["--run-dir", str(tmp_path / "run"), "--resume", "--ray", cluster],
                          capture_output=True, text=True, timeout=900, env=user_env(cluster_home))
    assert done.returncode == 0, done.stdout + done.stderr
    records = [json.loads(line) for line in records_path.read_text().splitlines()]
    selfplay = [r for r in records if r["stage"] == "selfplay"]
    assert [r["iteration"] for r in selfplay] == [1, 2] and all(r["values"]["games"] == 8 for r in selfplay)
    assert {r["stage"] for r in records} == {"init", "holdout", "references", "selfplay", "train", "arena", "evaluate"}


def test_a_killed_actor_has_its_games_played_again(cluster, tmp_path):
    "The factory kills the first actor that builds it: that actor's share is played again by a new actor."
    saved = {k: os.environ.get(k) for k in RAY_ENV}
    os.environ.update(RAY_ENV)  # this driver joins with the cluster's token (read when Ray is first imported)
    import ray
    from santorini_az.cluster import RayPool

    @dataclass(frozen=True)
    class DiesOnce:  # defined here, so that Ray ships the class itself (the actors cannot import the tests)
        marker: str

        def __call__(self):
            if not os.path.exists(self.marker):
                open(self.marker, "w").close()
                os._exit(1)  # its process dies (an OOM kill, say): its CPU is free again for a new actor
            return LinearEvaluator(seed=3)

    config = SearchConfig(simulations=8, temperature_plies=4)
    ray.init(address=cluster, log_to_driver=False)
    try:
        pool = RayPool(cluster)
        assert pool.size == 2  # one CPU on each node
        games = play_games(DiesOnce(str(tmp_path / "died")), 6, config, games_in_flight=6, workers=pool, seed=4)
        assert pool.replayed == 1 and (tmp_path / "died").exists()
        assert [r.game_id for r in games] == list(range(6))  # every game once: none lost, none twice
        local = play_games(partial(LinearEvaluator, seed=3), 6, config, games_in_flight=6, workers=2, seed=4)
        assert all(np.array_equal(a.action, b.action) for a, b in zip(games, local))  # the very same games
        pool.close()
    finally:
        ray.shutdown()
        for k, v in saved.items():
            if v is None: os.environ.pop(k, None)
            else: os.environ[k] = v


def test_god_games_on_the_cluster_are_the_games_played_here(cluster):
    "Chapter 11d's god self-play through `RayPool.run`: the same games, share for share, as on two local processes."
    saved = {k: os.environ.get(k) for k in RAY_ENV}
    os.environ.update(RAY_ENV)
    import ray
    from santorini_az.cluster import RayPool
    from santorini_az.engine import close_worker_pools
    from santorini_az.god_loop import GodUniformFactory, god_selfplay_games
    from santorini_az.selfplay import SelfPlayConfig
    settings = SelfPlayConfig(games=4, simulations=6, games_in_flight=4)
    ray.init(address=cluster, log_to_driver=False)
    try:
        pool = RayPool(cluster)
        on_ray = god_selfplay_games(GodUniformFactory(), settings, seed=9, workers=pool)
        pool.close()
        here = god_selfplay_games(GodUniformFactory(), settings, seed=9, workers=2)
        close_worker_pools()
        assert [r.game_id for r in on_ray] == [0, 1, 2, 3]
        assert all(a.start == b.start and np.array_equal(a.action, b.action) for a, b in zip(on_ray, here))
    finally:
        ray.shutdown()
        for k, v in saved.items():
            if v is None: os.environ.pop(k, None)
            else: os.environ[k] = v


def test_a_match_by_turns_on_the_cluster_is_the_match_played_here(cluster, tmp_path):
    """Chapter 09's match of a network against α-β, split over the actors (the network's file shipped with its player):
    the same games, share for share, as two shares played here."""
    saved = {k: os.environ.get(k) for k in RAY_ENV}
    os.environ.update(RAY_ENV)
    import ray
    import torch
    from santorini_az.arena import SearchPlayer, match_outcomes, reference_player
    from santorini_az.cluster import RayPool
    from santorini_az.game import random_openings
    from santorini_az.network import NetConfig, NetworkFactory, SantoriniNet, save_checkpoint
    torch.manual_seed(0)
    save_checkpoint(tmp_path / "net.safetensors", SantoriniNet(NetConfig(8, 1)))
    network = SearchPlayer("net", NetworkFactory(checkpoint=str(tmp_path / "net.safetensors"), net="8x1"), 8)
    openings = random_openings(2, np.random.default_rng(5))
    def outcomes(workers):
        return match_outcomes(network, reference_player("alphabeta1"), openings, np.random.default_rng(6), workers=workers)
    class TwoSharesHere:  # chapter 06's pool contract (`run`), both shares played in this process, one after the other
        size = 2
        def run(self, function, shares, report=lambda item: None):
            return [function(*share, worker=w, progress=report) for w, share in enumerate(shares)]
    ray.init(address=cluster, log_to_driver=False)
    try:
        pool = RayPool(cluster)
        on_ray = outcomes(pool)
        pool.close()
        assert network._evaluate is None  # its evaluator was built on the actors, not in this process
        assert len(on_ray) == 4 and on_ray == outcomes(TwoSharesHere())
    finally:
        ray.shutdown()
        for k, v in saved.items():
            if v is None: os.environ.pop(k, None)
            else: os.environ[k] = v


def test_a_node_that_leaves_has_its_shares_played_by_the_others(cluster, cluster_home):
    """A third node joins, and goes away in the middle of a job (its processes stopped): its actor's share is played
    again by a surviving actor (a new one cannot be placed: the two other CPUs are busy) and the pool shrinks; the
    job returns every game once, the same games as three local processes play. Kept last: the cluster is two nodes again."""
    import threading
    saved = {k: os.environ.get(k) for k in RAY_ENV}
    os.environ.update(RAY_ENV)
    import ray
    from santorini_az.cluster import RayPool

    @dataclass(frozen=True)
    class Slow:  # defined here, so that Ray ships the class itself
        seconds: float

        def __call__(self):
            time.sleep(self.seconds)  # every share still under way when the node goes
            return LinearEvaluator(seed=3)

    extra = set()
    ray_start(extra, {**user_env(cluster_home), "RAY_AUTH_MODE": "token"}, "--address", cluster, "--num-cpus", "1",
              "--disable-usage-stats", "--node-ip-address", "127.0.0.1")
    config, played = SearchConfig(simulations=8, temperature_plies=4), {}
    ray.init(address=cluster, log_to_driver=False)
    try:
        deadline = time.monotonic() + 60
        while ray.cluster_resources().get("CPU", 0) < 3 and time.monotonic() < deadline: time.sleep(0.2)
        pool = RayPool(cluster)
        pool.PLACEMENT_SECONDS = 5.0  # a new actor that has not started by then has no CPU to start on
        assert pool.size == 3
        job = threading.Thread(target=lambda: played.update(games=play_games(Slow(4.0), 6, config, games_in_flight=6,
                                                                             workers=pool, seed=4)), daemon=True)
        job.start()
        time.sleep(2.0)
        stop_sessions(extra)  # the third node goes away, its actor in the middle of its share
        job.join(timeout=120)
        assert not job.is_alive(), "the job waited for ever for the share of the node that left"
        assert pool.replayed == 1 and pool.size == 2
        assert [r.game_id for r in played["games"]] == list(range(6))  # every game once
        local = play_games(partial(LinearEvaluator, seed=3), 6, config, games_in_flight=6, workers=3, seed=4)
        assert all(np.array_equal(a.action, b.action) for a, b in zip(played["games"], local))  # the very same games
        pool.close()
    finally:
        stop_sessions(extra)
        ray.shutdown()
        for k, v in saved.items():
            if v is None: os.environ.pop(k, None)
            else: os.environ[k] = v
