"Chapter 11d: the gods in chapter 10a's loop (self-play on the pool, god matches, the preset, resume after a kill)."
import json
import random
import subprocess

import numpy as np
import pytest

from santorini_az.config import apply_overrides, preset
from santorini_az.engine import close_worker_pools, worker_pool
from santorini_az.god_encoding import GodNode
from santorini_az.god_engine import search_god_nodes, uniform_batch_evaluator
from santorini_az.god_loop import (GOD_RULES, GodAlphaBetaReference, GodSearchPlayer, GodUniformFactory, god_openings, god_reference_player,
                                   god_selfplay_games, play_god_match)
from santorini_az.arena import outcomes_by_turns
from santorini_az.god_encoding import random_god_positions
from santorini_az.god_search import god_search_player, random_god_opening
from santorini_az.god_training import load_god_checkpoint
from santorini_az.gods import GODS, god_legal_turns
from santorini_az.loop import plan
from santorini_az.network import NetConfig, cpu_supports_bf16
from santorini_az.rundir import RunDirectory, read_records
from santorini_az.selfplay import SelfPlayConfig, games_to_examples
from tests.conftest import CLI, refuse_a_second_writer_then_kill, run_cli_forked, train_resume

SMALL = ["--net", "8x1", "--set", "selfplay.games=8", "--set", "selfplay.simulations=8", "--set", "train.steps_per_iteration=4",
         "--set", "train.batch_size=32", "--set", "arena.openings=2", "--set", "arena.reference_openings=1",
         "--set", "arena.simulations=8", "--set", "holdout_games=2", "--quiet"]


def test_the_search_player_plays_03bs_turns():
    "Chapter 11c's search, a decision at a time, chooses the turns chapter 03b's readable player chooses (uniform prior)."
    rng = random.Random(4)
    states = [s for gods in [("artemis", "atlas"), ("hermes", "pan"), ("prometheus", "demeter")]
              for s in random_god_positions(gods, rng, 12)[5::3] if god_legal_turns(s)]
    compiled = GodSearchPlayer("uniform", GodUniformFactory(), 24).choose(states)
    readable = god_search_player(24)
    assert len(states) >= 6 and compiled == [readable(s, rng) for s in states]


def test_on_the_clock_both_players_play_legal_turns_and_the_search_stops_at_its_deadline():
    "Equal time (tools/measure_gods.py --movetime): the network's search ends after the round that passes its deadline."
    state = random_god_opening(("hermes", "prometheus"), random.Random(3))
    node = GodNode(state)
    assert sum(search_god_nodes([node], uniform_batch_evaluator, 300)[0].visits) == 300
    assert sum(search_god_nodes([node], uniform_batch_evaluator, 300, keep_going=lambda: False)[0].visits) == 0  # one round
    network, alphabeta = GodSearchPlayer("uniform", GodUniformFactory(), 500, movetime=0.05), GodAlphaBetaReference(3, 0.05)
    assert alphabeta.name == "god-alphabeta-50ms"
    legal = god_legal_turns(state)
    assert network.choose([state])[0] in legal and alphabeta.choose([state])[0] in legal


def test_a_match_split_over_the_pool_is_the_same_match():
    openings = god_openings(3, np.random.default_rng(1))
    me, them = god_reference_player("uniform", 8), god_reference_player("god-alphabeta1")
    alone = outcomes_by_turns(me, them, openings, np.random.default_rng(0), None, 400, 1, GOD_RULES)
    try: split = outcomes_by_turns(me, them, openings, np.random.default_rng(0), None, 400, worker_pool(2), GOD_RULES)
    finally: close_worker_pools()
    assert split == alone and len(alone) == 6
    assert play_god_match(me, them, openings, np.random.default_rng(0)).games == 6


def test_selfplay_on_the_pool_plays_the_same_starts_and_gives_examples():
    settings = SelfPlayConfig(games=5, simulations=6, games_in_flight=5)
    alone = god_selfplay_games(GodUniformFactory(), settings, seed=2)
    try: split = god_selfplay_games(GodUniformFactory(), settings, seed=2, workers=worker_pool(2))
    finally: close_worker_pools()
    assert [r.start for r in split] == [r.start for r in alone] and [r.game_id for r in split] == list(range(5))
    assert {r.start.gods for r in alone} <= {(a, b) for a in GODS for b in GODS}
    examples = games_to_examples(split, generation=3)
    assert examples.planes.shape[1:] == (5, 5, 36) and examples.policy.shape[1] == 126 and len(examples) == sum(map(len, split))


def test_unknown_god_reference_is_named():
    with pytest.raises(ValueError, match="unknown god reference opponent 'alphabeta2'"): god_reference_player("alphabeta2")


@pytest.mark.parametrize("args, message", [
    (["--set", "selfplay.root_search=gumbel"], "'selfplay.root_search'='gumbel': a gods run's engine has no such knob"),
    (["--set", "backend=onnxruntime-int8"], "a gods run uses backend=onnxruntime or torch"),
    pytest.param(["--set", "precision=bf16", "--set", "backend=torch"], "'precision'='bf16': a gods run's network has no such knob",
                 marks=pytest.mark.skipif(not cpu_supports_bf16(), reason="this CPU has no bf16: refused earlier, for that")),
    (["--set", "arena.references=uniform,alphabeta2"], "unknown opponent 'alphabeta2' (did you mean god-alphabeta2?): use uniform, god-alphabeta1"),
    (["--set", "selfplay.simulations=0"], "'selfplay.simulations' must be at least 1"),
    (["--set", "selfplay.temperature=0.5"], "'selfplay.temperature'=0.5: a gods run's engine has no such knob"),
    (["--set", "selfplay.max_nodes=40"], "'selfplay.max_nodes'=40: a gods run's engine has no such knob"),
    (["--set", "train.threat_loss_weight=0.5"], "its maps follow the mortal rules")])
def test_bad_settings_of_a_gods_run_are_exit_2_before_any_work(tmp_path, args, message):
    done = run_cli_forked(["train", "--preset", "gods", "--run-dir", str(tmp_path / "run"), *args], cwd=tmp_path)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "run" / "records.jsonl").exists()


def test_a_gods_run_one_writer_then_resume_after_sigkill(tmp_path):
    "The gods preset through the CLI: a second writer is refused; SIGKILL mid-run; --resume completes every stage once."
    run_dir = tmp_path / "gods"
    refuse_a_second_writer_then_kill(["--preset", "gods", "--iterations", "2", *SMALL], run_dir, records=4, wait_s=180)
    config = apply_overrides(preset("gods"), ["iterations=2"])
    assert len(read_records(run_dir / "records.jsonl")) < len(plan(config))  # killed mid-run
    done = train_resume(run_dir, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    run = RunDirectory(run_dir)
    assert [(r.iteration, r.stage) for r in run.records()] == plan(config)
    assert json.loads(run.config_path.read_text())["game"] == "gods"
    champion = json.loads(run.champion_path.read_text())
    model, extra = load_god_checkpoint(run.root / champion["checkpoint"])
    assert model.config == NetConfig(8, 1) and extra["iteration"] == champion["iteration"]
    evaluate = [r for r in run.records() if r.stage == "evaluate" and not r.values.get("skipped")][-1]
    assert set(evaluate.values) >= {"score_vs_uniform", "score_vs_god-alphabeta1", "score_vs_god-alphabeta2", "elo"}
    assert (run.root / "report" / "report.png").exists()


def test_the_references_follow_a_game_set_by_hand():
    "`--set game=...` on the other game's preset takes that game's reference opponents, unless they are set too."
    from santorini_az.arena import REFERENCE_PLAYERS
    from santorini_az.config import GOD_DEFAULT_REFERENCES, resolve_config
    assert resolve_config("tiny", overrides=["game=gods"]).arena.references == GOD_DEFAULT_REFERENCES
    assert resolve_config("gods", overrides=["game=mortal"]).arena.references == REFERENCE_PLAYERS
    assert resolve_config("tiny", overrides=["game=gods", "arena.references=uniform"]).arena.references == ("uniform",)
    cpu = resolve_config("cpu", overrides=["game=gods"])  # its reach and threat maps, mortal rules, are dropped too
    assert (cpu.train.reach_loss_weight, cpu.train.threat_loss_weight) == (0.0, 0.0) and preset("cpu").train.reach_loss_weight > 0
    long = resolve_config("long", overrides=["game=gods"])  # and its playout caps, a knob the god engine has not
    assert long.selfplay.full_search_share == 1.0 and preset("long").selfplay.full_search_share < 1.0


def test_selfplay_with_gods_writes_god_examples_of_its_match_up(tmp_path):
    "`santorini_az selfplay --gods`: god games of the match-up asked, saved as a gods run's examples (36 planes, 126 actions)."
    from santorini_az.play import generate_games
    stats = generate_games("mcts", 3, tmp_path / "games.npz", simulations=4, seed=1, gods="artemis,atlas")
    saved = np.load(tmp_path / "games.npz")
    assert saved["planes"].shape[1:] == (5, 5, 36) and saved["policy"].shape[1] == 126
    assert len(saved["planes"]) == stats["positions"] > 0
    records = god_selfplay_games(GodUniformFactory(), SelfPlayConfig(games=2, simulations=4), seed=1, match_up=("artemis", "atlas"))
    assert {r.start.gods for r in records} == {("artemis", "atlas")}
    done = run_cli_forked(["selfplay", "alphabeta2", "--gods", "all", "--out", str(tmp_path / "x.npz")], cwd=tmp_path)
    assert done.returncode == 2 and "alphabeta2 plays no self-play" in done.stderr and not (tmp_path / "x.npz").exists()
