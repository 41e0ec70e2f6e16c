import os
import signal
import subprocess
import sys
import time

import pytest

CLI = [sys.executable, "-c", "from santorini_az.cli import main; main()"]  # the `santorini_az` command


def pytest_configure(config):
    """In a pytest-xdist worker: one core of its own, for it and every process its tests start, and one thread for
    torch. Two workers on a 2-core machine then never run four busy threads (torch's waiting threads spin, which burns
    the other worker's core), and each test's processes see the one core they have (`available_cores()` is 1)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")  # gw0, gw1, ...
    if not worker or not hasattr(os, "sched_setaffinity"): return
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2: return
    os.sched_setaffinity(0, {cores[int(worker[2:]) % len(cores)]})
    os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = "1"


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False, help="also run tests marked slow")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--runslow"):
        # Longest first, so that pytest-xdist's two workers end together: the pip-only chapters (minutes, one worker)
        # start at once and the many short tests fill the other worker meanwhile and both at the end.
        items.sort(key=lambda item: 0 if item.nodeid.startswith("tests/test_pip_only.py") else
                   1 if "slow" in item.keywords else 2)
        return
    skip = pytest.mark.skip(reason="slow: pass --runslow to run")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


def require(what: str, present: bool, how: str = "run bash tools/setup.sh") -> None:
    """Skip a test whose tool is missing on a developer's machine, but fail it where the README's test command runs
    (tools/test.sh sets SANTORINI_REQUIRE_ALL=1 after setting everything up): a missing install step must not pass as a skip."""
    import os
    if present: return
    message = f"{what} is missing: {how}"
    if os.environ.get("SANTORINI_REQUIRE_ALL") == "1": pytest.fail(message)
    pytest.skip(message)


def train_resume(run_dir, timeout: float) -> subprocess.CompletedProcess:
    "`santorini_az train --resume --quiet` on `run_dir`, run from the folder that holds it; its output as text."
    return subprocess.run(CLI + ["train", "--resume", "--quiet", "--run-dir", str(run_dir)], cwd=run_dir.parent,
                          capture_output=True, text=True, timeout=timeout)


def refuse_a_second_writer_then_kill(train_args: list, run_dir, records: int, wait_s: float):
    """Start `santorini_az train` with `train_args` on `run_dir`; once it has written `records` records (or after
    `wait_s` s) it is paused (SIGSTOP: on a busy machine it could otherwise finish while the second writer starts), a
    second writer (`train --resume`) is refused naming its pid, and SIGKILL ends the first. Returns the refusal."""
    proc = subprocess.Popen(CLI + ["train", *train_args, "--run-dir", str(run_dir)], cwd=run_dir.parent,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    records_path, deadline = run_dir / "records.jsonl", time.time() + wait_s
    while time.time() < deadline and proc.poll() is None:
        if records_path.exists() and len(records_path.read_text().splitlines()) >= records: break
        time.sleep(0.05)
    proc.send_signal(signal.SIGSTOP)
    try:
        # refused before any work, so a forked CLI will do (its lock is its own open of the run's lock file)
        second = run_cli_forked(["train", "--resume", "--quiet", "--run-dir", str(run_dir)], cwd=run_dir.parent)
        assert second.returncode == 2 and f"is in use by pid {proc.pid}" in second.stderr, second.stderr
    finally:
        proc.send_signal(signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL  # it really died by the kill, not by finishing first
    return second


def run_cli_forked(args: list, cwd, timeout: float = 120) -> subprocess.CompletedProcess:
    """`santorini_az ARGS` run from `cwd` in a child process forked from this one, which has imported the CLI once:
    the console script's own `main()`, with its own stdout, stderr and exit status, but without the two seconds a
    new Python spends importing torch. For the many cases of bad input, refused before any work (a test that runs
    the command's work starts the real command, `CLI`)."""
    import tempfile
    import traceback
    import santorini_az.config, santorini_az.loop, santorini_az.play, santorini_az.report  # what the commands import
    from santorini_az.cli import main
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        pid = os.fork()
        if pid == 0:  # the child: run the command and exit with its status, never returning into pytest
            status = 1
            try:
                os.chdir(cwd)
                os.dup2(out.fileno(), 1)
                os.dup2(err.fileno(), 2)
                sys.stdout, sys.stderr = open(1, "w", closefd=False), open(2, "w", closefd=False)
                sys.argv = ["santorini_az", *map(str, args)]
                try:
                    main()
                    status = 0
                except SystemExit as exit:  # what the interpreter does with it
                    if exit.code is None or isinstance(exit.code, int): status = exit.code or 0
                    else: print(exit.code, file=sys.stderr)
            except BaseException:
                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(status)
        deadline = time.monotonic() + timeout
        while (waited := os.waitpid(pid, os.WNOHANG))[0] == 0:
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                raise subprocess.TimeoutExpired(["santorini_az", *args], timeout)
            time.sleep(0.01)
        def text(file) -> str:
            file.seek(0)
            return file.read().decode("utf-8", errors="replace")
        return subprocess.CompletedProcess(["santorini_az", *args], os.waitstatus_to_exitcode(waited[1]), text(out), text(err))
