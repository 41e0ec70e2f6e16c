"tools/check_outputs.py: a chapter whose stored text is not what it prints now is named, cell and line; pictures and slow cells are not compared, nor, on another kind of machine than the one that stored the chapter, the cells marked cpu_dependent."
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.tools import load_tool

check_outputs = load_tool("check_outputs")


def code(cell_id, source, *outputs):
    return {"cell_type": "code", "id": cell_id, "source": source, "metadata": {}, "execution_count": None,
            "outputs": list(outputs)}


def stream(text): return {"output_type": "stream", "name": "stdout", "text": text}
def result(**data): return {"output_type": "execute_result", "data": data, "metadata": {}, "execution_count": None}


HERE = "the test machine"


def stored_here(folder: Path, *names) -> Path:
    "A record saying the chapters `names` were stored on HERE."
    record = folder / "stored_outputs.json"
    record.write_text(json.dumps({"chapters": {name: HERE for name in names}}))
    return record


def chapter(folder: Path, name: str, *cells) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"cells": [{"cell_type": "markdown", "id": "m", "source": "# A chapter", "metadata": {}},
                                          *cells], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


def test_a_stale_output_is_named_and_fails(tmp_path, capsys):
    stored, run = tmp_path / "nbs", tmp_path / "run"
    chapter(stored, "33_cli.ipynb", code("a", "print(1)", stream("1\n")),
            code("b", "settings()", stream("settings are: name, preset, seed\n")))
    chapter(run, "33_cli.ipynb", code("a", "print(1)", stream("1\n")),
            code("b", "settings()", stream("settings are: name, preset, game, seed\n")))
    assert check_outputs.main(sorted(run.glob("*.ipynb")), stored, stored_here(tmp_path, "33_cli.ipynb"), HERE) == 1
    message = capsys.readouterr().err
    assert "33_cli.ipynb, code cell 2 (id b): line 1: stored 'settings are: name, preset, seed'" in message
    assert "now 'settings are: name, preset, game, seed'" in message and "store_outputs.py" in message


def test_pictures_and_slow_cells_are_not_compared(tmp_path):
    stored, run = tmp_path / "nbs", tmp_path / "run"
    chapter(stored, "10b_god_training.ipynb",
            code("p", "plot()", result(**{"image/png": "AAAA", "text/plain": "<Figure size 640x480 with 1 Axes>"})),
            code("s", "#| slow\nbench()", ))
    chapter(run, "10b_god_training.ipynb",
            code("p", "plot()", result(**{"image/png": "BBBB", "text/plain": "<Figure size 640x480 with 1 Axes>"})),
            code("s", "#| slow\nbench()", stream("12,345 positions/s\n")))
    record = stored_here(tmp_path, "10b_god_training.ipynb")
    assert check_outputs.main(sorted(run.glob("*.ipynb")), stored, record, HERE) == 0
    # ... but the picture's text, and a result that is not a picture, are compared
    chapter(run, "10b_god_training.ipynb",
            code("p", "plot()", result(**{"image/png": "BBBB", "text/plain": "<Figure size 640x480 with 2 Axes>"})))
    assert check_outputs.main(sorted(run.glob("*.ipynb")), stored, record, HERE) == 1


def test_on_another_kind_of_machine_only_the_cells_marked_cpu_dependent_are_set_aside(tmp_path, capsys):
    stored, run = tmp_path / "nbs", tmp_path / "run"
    chapter(stored, "14_fast_inference.ipynb", code("a", "#| cpu_dependent\ncompare()", stream("bf16 vs fp32: max 0.0355\n")),
            code("b", "count()", stream("15 BN layers\n")))
    chapter(run, "14_fast_inference.ipynb", code("a", "#| cpu_dependent\ncompare()", stream("bf16 is not native here: fp32\n")),
            code("b", "count()", stream("15 BN layers\n")))
    record = tmp_path / "stored_outputs.json"
    record.write_text(json.dumps({"chapters": {"14_fast_inference.ipynb": "an AVX-512 machine"}}))
    assert check_outputs.main(sorted(run.glob("*.ipynb")), stored, record, "an AVX2 machine") == 0
    out = capsys.readouterr().out
    assert "1 chapter stored on an AVX-512 machine (this is an AVX2 machine): 14_fast_inference.ipynb" in out
    assert "the 1 cell marked cpu_dependent was not compared" in out
    # on the machine that stored it, the marked cell is compared too
    assert check_outputs.main(sorted(run.glob("*.ipynb")), stored, record, "an AVX-512 machine") == 1
    assert "code cell 1 (id a): line 1: stored 'bf16 vs fp32: max 0.0355'" in capsys.readouterr().err
    # and a cell not marked is compared on every machine
    chapter(run, "14_fast_inference.ipynb", code("a", "#| cpu_dependent\ncompare()", stream("bf16 vs fp32: max 0.0355\n")),
            code("b", "count()", stream("14 BN layers\n")))
    assert check_outputs.main(sorted(run.glob("*.ipynb")), stored, record, "an AVX2 machine") == 1
    err = capsys.readouterr().err
    assert "code cell 2 (id b): line 1: stored '15 BN layers', now '14 BN layers'" in err and "cpu_dependent" in err


def test_a_path_that_is_not_a_chapter_is_named_with_exit_2(tmp_path):
    tool = Path(__file__).resolve().parent.parent / "tools" / "check_outputs.py"
    done = subprocess.run([sys.executable, str(tool), str(tmp_path / "nope.ipynb")], capture_output=True, text=True)
    assert done.returncode == 2 and "not such a file: " + str(tmp_path / "nope.ipynb") in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_store_outputs_records_the_machine(tmp_path):
    record = tmp_path / "stored_outputs.json"
    check_outputs.record_stored("04_network.ipynb", record)
    check_outputs.record_stored("01_game.ipynb", record)
    assert list(check_outputs.stored_on(record)) == ["01_game.ipynb", "04_network.ipynb"]
    assert set(check_outputs.stored_on(record).values()) == {check_outputs.machine()}
    assert "threads, torch" in check_outputs.machine()


def test_every_chapter_has_a_machine_recorded():
    "A chapter without a record would never be compared: store_outputs.py records one each time it stores."
    nbs = Path(__file__).parent.parent / "nbs"
    assert {p.name for p in nbs.glob("*.ipynb")} <= set(check_outputs.stored_on())


def test_each_chapter_starts_with_a_fresh_processes_torch_threads(tmp_path):
    """tools/fresh_kernel.py, as the test command installs it: a chapter run by an nbdev-test worker after one that set
    torch to one thread starts with the thread count of a fresh process again (without it, it inherits the one)."""
    root = Path(__file__).resolve().parent.parent
    folder = root / "_outputs" / f"fresh-{os.getpid()}"  # inside the project, so that nbdev-test finds its config
    threads = "import torch; print(torch.get_num_threads())"
    fresh = subprocess.run([sys.executable, "-c", threads], capture_output=True, text=True).stdout.strip()
    left = int(fresh) + 1  # what chapter a leaves behind: never a fresh process's count
    for name, source in (("a", f"import torch; torch.set_num_threads({left})"), ("b", threads), ("c", threads)):
        chapter(folder, f"{name}.ipynb", code("x", source))
    startup = tmp_path / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    shutil.copy(root / "tools" / "fresh_kernel.py", startup)
    try:
        printed, plain = {}, {k: v for k, v in os.environ.items() if k not in ("IPYTHONDIR", "SANTORINI_FRESH_THREADS")}
        for installed in (False, True):
            env = {**plain, "IPYTHONDIR": str(tmp_path / "ipython"), "SANTORINI_FRESH_THREADS": fresh} if installed else plain
            done = subprocess.run([str(Path(sys.executable).parent / "nbdev-test"), str(folder), "--save", "--n-workers", "1"],
                                  cwd=root, env=env, capture_output=True, text=True, timeout=300)
            assert done.returncode == 0, done.stdout + done.stderr
            printed[installed] = [check_outputs.printed(json.loads((folder / f"{n}.ipynb").read_text())["cells"][1])
                                  for n in "bc"]
        assert printed[True] == [[fresh + "\n"]] * 2
        assert printed[False] == [[f"{left}\n"]] * 2  # without the tool, what chapter a left behind
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_the_avx2_tool_reaches_onnxruntime_in_every_process(tmp_path):
    """tools/emulate_avx2.py gives onnxruntime another rounding through a `sitecustomize` on PYTHONPATH: in a fresh
    process (as a chapter's worker is), the package's ONNX evaluator then computes other values for the shipped
    champion, apart by the size of AVX2's rounding (measured with qemu: up to 8.9e-7), not by a different network."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(load_tool("emulate_avx2").ONNXRUNTIME_ROUNDING)
    script = ("import json, numpy as np; from santorini_az.arena import CHAMPION; "
              "from santorini_az.export import game_positions, onnx_factory; "
              "_, values = onnx_factory(CHAMPION)()(game_positions(3, seed=1)[:128]); print(json.dumps(values.tolist()))")
    plain = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    values = {}
    for name, env in (("usual", plain), ("tool", {**plain, "PYTHONPATH": str(site)})):
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        values[name] = json.loads(done.stdout)
    apart = [abs(a - b) for a, b in zip(values["usual"], values["tool"])]
    assert len(apart) == 128 and 0 < max(apart) < 1e-4
