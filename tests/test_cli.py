"The console script, run as a real process."
import re
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).parent / "santorini_az"


README = Path(__file__).resolve().parent.parent / "README.md"  # a file, where a folder is wanted


def run(*args, cwd=None):
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, timeout=120, cwd=cwd)


def test_perft_startpos_4():
    result = run("perft", "startpos", "4")
    assert result.returncode == 0 and result.stdout.strip() == "303600"


def test_moves_one_line_per_position():
    finished = "0000030000000000000000000/2/A5,A4/E1,D1"  # player 1 stands on level 3 (A4): game over
    result = run("moves", "startpos", "0000000000000000000000000/1/A5,E1/A1,E5", finished)
    lines = result.stdout.split("\n")
    assert result.returncode == 0
    assert lines[0].split() == sorted(f"{f}{r}" for f in "ABCDE" for r in "12345")
    assert lines[1].split() == sorted(lines[1].split()) and all(">" in m and "^" in m for m in lines[1].split())
    assert lines[2] == ""
    assert result.stderr == f"{finished}: the game is over in this position: no legal moves\n", result.stderr  # said once


def test_moves_reads_every_position_before_it_answers():
    result = run("moves", "startpos", "0000000000000000000000000/1/zeus:C3,D4/pan:B2,E5")
    assert result.returncode == 2 and "zeus" in result.stderr
    assert result.stdout == ""  # not the first position's moves, then the error


def test_show_reports_result():
    result = run("show", "0000030000000000000000000/2/A5,A4/E1,D1")
    assert result.returncode == 0 and "player 1 has won" in result.stdout


@pytest.mark.parametrize("args, culprit", [
    (("show", "garbage"), "'garbage' is not a position"), (("moves", "stratpos"), "/1//, or startpos"),
    (("moves", "1111/1//"), "the board '1111' must be 25 digits"),
    (("perft", "0000000000000000000000000/1/A1,A1/", "1"), "two workers share a cell"),
    (("show", "0000000000000000000000000/1/apollo:C3,C3/pan:B2,D2"),  # quoted as written, gods included
     "'0000000000000000000000000/1/apollo:C3,C3/pan:B2,D2': invalid position: two workers share a cell"),
    (("arena", "champion", "alphabeta13", "--openings", "1"), "no such checkpoint 'alphabeta13'"),
    (("selfplay", "mcts", "--out", "/no/such/folder/games.npz"), "--out: the folder /no/such/folder does not exist"),
    (("selfplay", "mcts", "--out", f"{README}/games.npz"), f"--out: {README} is a file, not a folder"),
    (("export", "champion", "--out", f"{README}/x.onnx"), f"--out: {README} is a file, not a folder"),
    # the command lines Typer itself refuses: the same one line, with the command whose help explains it
    (("arena", "champion"), "Missing argument 'second'. (see santorini_az arena --help)"),
    (("arena", "champion", "mcts", "--sims", "0"), "Invalid value for '--sims'"),
    # more than a move's search can hold: refused before any tree is allocated (MemoryError, exit 1, before)
    (("arena", "random", "mcts", "--openings", "1", "--sims", "1000000000"), "Input should be less than or equal to 100000"),
    (("selfplay", "mcts", "--out", "games.npz", "--sims", "1000000000"), "Invalid value for '--sims'"),
    (("inspect", "startpos", "--sims", "1000000000"), "Invalid value for '--sims'"),  # searched until stopped, before
    (("bench", "--workers", "100000"), "Invalid value for '--workers'"),
    (("bench", "--threads", "100000"), "Invalid value for '--threads'"),
    (("bench", "--net", "100000x1000"), "network size '100000x1000': 1 to 1024 channels and 0 to 64 blocks"),
    (("train", "--preset", "tiny", "--net", "0x4"), "--net: network size '0x4': 1 to 1024 channels"),  # it named no option
    (("bench", "--net", "16x1", "--checkpoint", "run"), "--net and --checkpoint: choose one"),  # it was dropped in silence
    (("play", "--position", "0000000000000000000000000/3//"), "--position: the player to move must be 1 or 2"),
    (("inspect", "4444444444444444444444444/1//", "--sims", "2"), "the game is over in this position: no legal moves"),
    (("match", "", "santorini_az engine"), "the first engine's command is empty"),
    (("match", "santorini_az engine", "  "), "the second engine's command is empty"),
    (("match", "santorini_az engine", "santorini_az engine", "--option2", "bad"),
     "--option2 takes Name=value, such as Threads=2, got 'bad'"),  # it printed a Python list and named no option
    (("trian",), "No such command 'trian'. Did you mean 'train'? (see santorini_az --help)"),
    (("train", "--hour", "1"), "No such option: --hour"),
    (("inspect", "startpos", "--checkpoint", "x" * 5000), "File name too long"),
    (("arena", "champion", "mcts", "--sims"), "requires an argument. (see santorini_az arena --help)")])  # not taken for a run directory
def test_bad_input_is_one_clear_line(args, culprit):
    result = run(*args)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: ") and culprit in lines[0]


def test_a_damaged_god_onnx_file_is_named_not_misread(tmp_path):
    "God positions play a god network's .onnx export on onnxruntime; a damaged one gets one sentence, not a traceback."
    exported = tmp_path / "god.onnx"
    exported.write_bytes(b"\x08\x07onnx")
    result = run("inspect", "0000000000000000000000000/1/apollo:C3,D4/pan:B2,D2", "--checkpoint", str(exported))
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1 and f"{exported} is not a readable ONNX file" in lines[0], result.stderr


def test_progress_lines_stay_whole_in_a_pipe():
    "A stage line longer than 80 columns is one line in a log file (rich would otherwise wrap it at 80)."
    code = "from santorini_az.progress import Progress; Progress().say('arena it 6: kept ' * 12 + 'champion')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.splitlines() == ["arena it 6: kept " * 12 + "champion"], done.stdout


def test_the_cli_sims_limit_is_a_runs():
    "The commands' --sims allow what a run's settings allow (one limit, chapter 24's)."
    from santorini_az.cli import MAX_SIMS
    from santorini_az.config import LIMITS
    assert MAX_SIMS == LIMITS["selfplay.simulations"][1] == LIMITS["arena.simulations"][1]


def test_a_value_of_the_wrong_type_is_named_by_the_parser():
    "Typer's own refusal (exit 2, no traceback) names the argument, on one line like every other refusal."
    for depth in ("x", "-1"):  # a negative depth is a depth out of range, not an unknown option
        result = run("perft", "startpos", depth)
        assert result.returncode == 2 and result.stderr.startswith("error: Invalid value for 'depth'"), result.stderr
        assert len(result.stderr.splitlines()) == 1 and result.stdout == ""


def test_no_command_prints_the_help():
    "`santorini_az` alone prints the list of commands (once) and exits 2, as Typer does."
    result = run()
    assert result.returncode == 2 and result.stdout.count("Usage: santorini_az") == 1 and "train" in result.stdout
    assert result.stderr == ""


def test_an_unexpected_error_is_one_line_unless_debugging():
    "A bug shows as one line naming the error; SANTORINI_AZ_DEBUG=1 brings the traceback back."
    import os
    code = ("import santorini_az.cli as cli\n"
            "def broken(**options): raise RuntimeError('boom ' * 1000)\n"
            "cli.app = broken\n"
            "cli.main()")
    quiet = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert quiet.returncode == 1 and "Traceback" not in quiet.stderr
    assert quiet.stderr.startswith("error: RuntimeError: boom") and len(quiet.stderr) < 600, quiet.stderr
    loud = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "SANTORINI_AZ_DEBUG": "1"})
    assert "Traceback" in loud.stderr


@pytest.mark.parametrize("gods", ["apollo,zeus", "apollo", "apollo,pan,atlas", ""])
def test_match_refuses_bad_gods_before_starting_engines(gods):
    result = run("match", "no-such-engine-command", "no-such-engine-command", "--gods", gods)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith("error: --gods") and len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_a_god_match_between_two_engines():
    "`match --gods apollo,pan` plays god openings to the end with both engines on both sides, and names the gods."
    engine = f"{SCRIPT} engine"
    result = run("match", engine, engine, "--gods", "apollo,pan", "--openings", "1", "--nodes", "10",
                 "--option1", "Engine=alphazero", "--option2", "Engine=alphazero", "--seed", "3")
    assert result.returncode == 0, result.stderr
    starting, *lines = result.stdout.strip().splitlines()
    assert starting == "starting the engines ..."
    assert lines[0].startswith("game 1: first engine plays player 1 (apollo)")
    assert lines[1].startswith("game 2: first engine plays player 2 (pan)")
    for line in lines[:2]:  # which engine won, named, and its player agrees with it
        seat, which, winner = re.search(r"plays player (\d).*, the (first|second) engine \(player (\d)\) wins in \d+ moves", line).groups()
        assert (which == "first") == (seat == winner), line
    assert "forfeits" not in result.stdout
    assert "(apollo as player 1, pan as player 2): +" in lines[-1] and "in 2 games" in lines[-1], lines[-1]
    assert lines[-1].startswith(f"{engine} [Engine=alphazero] vs {engine} [Engine=alphazero] ("), lines[-1]  # options named


def test_god_positions_show_their_gods_moves_and_perft():
    "show, moves and perft read god positions (chapter 01b): the turns and counts of the readable god rules."
    from santorini_az.gods import format_turn, god_legal_turns, god_perft, parse_god_position
    text = "0000000000000100000000000/1/apollo:C3,D4/pan:B2,D2"
    state = parse_god_position(text)
    shown = run("show", text)
    assert shown.returncode == 0 and shown.stdout.startswith(text + "\n")
    assert "player 1 (Apollo) to move" in shown.stdout and "gods: player 1 Apollo, player 2 Pan" in shown.stdout
    listed = run("moves", text, "0000030000000000000000000/2/pan:A5,A4/E1,D1/won")
    assert listed.returncode == 0
    turns, finished = listed.stdout.split("\n")[:2]
    assert turns.split() == sorted(format_turn(state, t) for t in god_legal_turns(state)) and finished == ""
    counted = run("perft", text, "2")
    assert counted.returncode == 0 and counted.stdout.strip() == str(god_perft(state, 2))


def test_play_starts_from_a_god_position():
    "play --position with a god position plays with its gods (no input: the game is abandoned at the first prompt)."
    result = run("play", "--position", "0000000000000000000000000/1/apollo:C3,D4/pan:B2,D2", "--checkpoint", "mcts")
    assert result.returncode == 0 and "player 1 (Apollo) to move" in result.stdout and "game abandoned" in result.stdout


def test_inspect_a_god_position_shows_the_first_decision():
    "inspect on a god position: every legal sub-action of the turn's first decision, the visits of the search's."
    from santorini_az.god_encoding import GodNode, format_sub_action, legal_sub_actions
    from santorini_az.gods import parse_god_position
    text = "0000000000000100000000000/1/artemis:C3,D4/demeter:B2,D2"
    result = run("inspect", text, "--checkpoint", "mcts", "--sims", "40", "--top", "200")
    assert result.returncode == 0, result.stderr
    rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in result.stdout.splitlines() if line.startswith("│")]
    legal = {format_sub_action(i) for i in legal_sub_actions(GodNode(parse_god_position(text)))}
    assert {row[0] for row in rows} == legal and sum(int(row[2]) for row in rows) == 40
    assert "principal variation: move " in " ".join(result.stdout.split())
    mortal = Path(__file__).resolve().parent.parent / "santorini_az" / "models" / "champion.safetensors"
    wrong = run("inspect", text, "--checkpoint", str(mortal))  # a mortal network
    assert wrong.returncode == 2 and "not a god network" in wrong.stderr and "Traceback" not in wrong.stderr


def test_a_god_arena_between_the_god_network_and_the_uniform_search():
    "arena --gods: two god players from openings of one match-up, both seats; the score line of the mortal arena."
    result = run("arena", "champion", "mcts", "--gods", "artemis,demeter", "--openings", "2", "--sims", "16", "--quiet",
                 "--workers", "1")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("champion vs mcts (artemis as player 1, demeter as player 2): ") and "/4 = " in result.stdout, result.stdout


@pytest.mark.parametrize("args, culprit", [
    (("--gods", "artemis,zeus"), "--gods: no god 'zeus': the gods are mortal"),  # the unknown god alone, by name
    (("--gods", "all", "--backend", "onnxruntime-int8"), "backend onnxruntime-int8 is for mortal networks"),
    (("--gods", "all", "--openings", "1"), "not a god network checkpoint")])  # the mortal champion as a god player
def test_a_god_arena_refuses_in_one_line_before_any_game(args, culprit):
    mortal = Path(__file__).resolve().parent.parent / "santorini_az" / "models" / "champion.safetensors"
    result = run("arena", str(mortal) if culprit.startswith("not") else "champion", "mcts", *args)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert culprit in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_god_networks_run_on_onnxruntime_too(tmp_path):
    "--backend onnxruntime with gods: the god network's ONNX export searches (arena) and evaluates (inspect) as torch's."
    result = run("arena", "champion", "mcts", "--gods", "artemis,demeter", "--openings", "1", "--sims", "8", "--quiet",
                 "--workers", "1", "--backend", "onnxruntime")
    assert result.returncode == 0 and "/2 = " in result.stdout, result.stderr
    position = "0000000000000000000000000/1/apollo:C3,D4/pan:B2,E5"
    values = {}
    for backend in ("torch", "onnxruntime"):
        shown = run("inspect", position, "--sims", "1", "--backend", backend)
        assert shown.returncode == 0, shown.stderr
        values[backend] = float(re.search(r"network value ([+-][0-9.]+)", shown.stdout)[1])
    assert abs(values["torch"] - values["onnxruntime"]) <= 0.002, values


def test_a_seed_out_of_range_is_refused_before_the_run_directory_is_made(tmp_path):
    "The range is the config check's (one sentence naming the setting), not the option's: `train --help` stays narrow."
    result = run("train", "--preset", "tiny", "--seed", str(2**32), "--run-dir", str(tmp_path / "run"))
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and lines == ["error: setting 'seed' must be at most 4294967295, got 4294967296"]
    assert not (tmp_path / "run").exists()


def test_a_run_directory_stands_for_its_champion(tmp_path):
    "Where a network is asked for, a run directory means its champion; a match names each run's network after its run."
    import json
    import torch
    from santorini_az.network import NetConfig, SantoriniNet, save_checkpoint
    for name, seed in (("a", 1), ("b", 2), ("mcts", 3)):  # a run called like a player: the player wins
        torch.manual_seed(seed)
        folder = tmp_path / name
        (folder / "checkpoints").mkdir(parents=True)
        save_checkpoint(folder / "checkpoints" / "iter-0002.safetensors", SantoriniNet(NetConfig(8, 1)), iteration=2)
        (folder / "champion.json").write_text(json.dumps({"iteration": 2, "checkpoint": "checkpoints/iter-0002.safetensors"}))
    quick = ("--openings", "1", "--sims", "2", "--workers", "1", "--quiet")
    result = run("arena", "..", "../../b", *quick, cwd=tmp_path / "a" / "checkpoints")
    assert result.returncode == 0 and result.stdout.startswith("a/iter-0002 vs b/iter-0002: "), result.stdout + result.stderr
    result = run("arena", "mcts", "a", *quick, cwd=tmp_path)
    assert result.returncode == 0 and result.stdout.startswith("mcts vs a/iter-0002: "), result.stdout + result.stderr
    (tmp_path / "new").mkdir()
    (tmp_path / "new" / "config.json").write_text("{}")  # a run whose first stage has not finished
    result = run("inspect", "startpos", "--checkpoint", str(tmp_path / "new"))
    assert result.returncode == 2 and result.stderr == f"error: {tmp_path / 'new'} is a run directory with no champion yet: its first stage has not finished\n"


def test_bench_alphabeta_measures_chapter_11s_positions_by_default():
    "The command's defaults are the function's, whose seed gives the positions chapter 11 quotes figures for."
    import inspect
    import typer
    from santorini_az import alphabeta
    from santorini_az.cli import app
    command = typer.main.get_command(app).commands["bench-alphabeta"]
    defaults = {p.name: p.default for p in command.params}
    function = inspect.signature(alphabeta.bench_alphabeta).parameters
    assert defaults == {name: function[name].default for name in ("depth", "positions", "seed")} and defaults["seed"] == 1


def test_a_resumed_runs_size_is_compared_as_numbers(tmp_path):
    "--net and --set channels/blocks refuse another size than the run's, and take the same size however it is written."
    import json
    import typer
    from santorini_az.cli import check_resumed_run
    from santorini_az.config import config_to_dict, preset
    (tmp_path / "config.json").write_text(json.dumps(config_to_dict(preset("long"))))  # a 64x6 run
    for same in (dict(net="small"), dict(net="064x6"), dict(overrides=["channels=064"]), dict(overrides=["channels= 64.0"]),
                 dict(overrides=["blocks=6", "iterations=80"])):
        check_resumed_run(str(tmp_path), None, same.get("net"), overrides=same.get("overrides", ()))
    for other in (dict(net="large"), dict(overrides=["channels=32"]), dict(overrides=["blocks=4"])):
        with pytest.raises(typer.Exit):
            check_resumed_run(str(tmp_path), None, other.get("net"), overrides=other.get("overrides", ()))


def test_report_where_a_file_holds_the_name_of_its_folder(tmp_path):
    "A file named report in the run directory: one line naming it, before any plot is drawn; the file is left as it was."
    (tmp_path / "records.jsonl").write_text("")
    (tmp_path / "report").write_text("mine")
    result = run("report", str(tmp_path))
    assert result.returncode == 2 and result.stderr.strip() == (f"error: cannot write {tmp_path}/report/report.png: "
                                                                f"{tmp_path}/report is not a folder"), result.stderr
    assert (tmp_path / "report").read_text() == "mine"


def test_a_hint_names_the_program_as_the_user_can_type_it_again(monkeypatch):
    "The stop line said 'santorini_az train ...' to a user who ran .venv/bin/santorini_az, not on their PATH."
    import shutil
    import sys
    from santorini_az.cli import program
    monkeypatch.setattr(sys, "argv", [".venv/bin/santorini_az", "train"])
    monkeypatch.setattr(shutil, "which", lambda name: None)  # not on PATH
    assert program() == ".venv/bin/santorini_az"
    monkeypatch.setattr(shutil, "which", lambda name: str(Path(".venv/bin/santorini_az").resolve()))  # this one is
    assert program() == "santorini_az"
    monkeypatch.setattr(sys, "argv", ["-c", "train"])  # python -c "... main()"
    assert program() == "santorini_az"
