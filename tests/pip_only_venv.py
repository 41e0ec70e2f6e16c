"""The pip-only venv of tests/test_pip_only.py: torch's CPU build and a plain, non-editable `pip install` of a copy of
the package (no extras), in `.cache/pip-only/venv`.

It is kept between runs with the digests of what it was built from: built again from nothing when the Python, torch's
pin or pyproject.toml change, and the package alone reinstalled (`--no-deps`) when any of its files change, so a second
run pays neither the install nor numba's compile of an unchanged package. A clean clone (CI) always builds it fresh;
so does `SANTORINI_FRESH_VENV=1`. One process builds it at a time (a lock file), and a process that finds it built as
wanted uses it.

The standard library alone: tools/test.sh runs this file with the system Python while tools/setup.sh makes .venv
(`python3 tests/pip_only_venv.py`), so the two installs share the cores and pytest finds the venv ready."""
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "pip-only"
TORCH_CPU = "torch==2.13.0"  # the pin of tools/setup.sh on a machine without a GPU
INSTALL_TIMEOUT_S = 1500


class BuildError(Exception):
    "A step of the build failed: the message names it and ends with its output."


def run(command: list, what: str, timeout: int, **kwargs) -> subprocess.CompletedProcess:
    "Run `command`; raise BuildError naming `what` and showing the end of its output if it does not succeed."
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, **kwargs)
    except subprocess.TimeoutExpired:
        raise BuildError(f"{what} took over {timeout} s") from None
    if done.returncode != 0:
        raise BuildError(f"{what} failed ({done.returncode}):\n{(done.stdout + done.stderr)[-4000:]}")
    return done


def package_copy(dest: Path) -> Path:
    "What `pip install .` needs (the package, pyproject.toml, README, LICENSE), copied so no build files land in the tree."
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "santorini_az", dest / "santorini_az", ignore=ignore)
    for name in ("pyproject.toml", "README.md", "LICENSE"): shutil.copy(ROOT / name, dest / name)
    return dest


def digest(*parts) -> str:
    "A short hash of strings and files' contents (folders: every file under them but caches, in a fixed order)."
    h = hashlib.sha256()
    for part in parts:
        if isinstance(part, Path):
            files = sorted(f for f in part.rglob("*") if f.is_file() and "__pycache__" not in f.parts) if part.is_dir() else [part]
            for f in files: h.update(str(f.relative_to(part.parent)).encode()); h.update(f.read_bytes())
        else: h.update(str(part).encode())
    return h.hexdigest()[:16]


def build_venv(venv: Path, src: Path, env: dict, package_only: bool) -> None:
    "Create `venv` with torch's CPU build and the package from `src`; or, if only the package changed, reinstall it alone."
    # --no-compile: pip byte-compiles every module it installs (half a minute of one core, torch's thousands of files
    # mostly); the chapters compile only what they import, once (tests/test_pip_only.py lets them write the bytecode)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-compile"]
    if package_only:
        run(pip + ["--no-deps", "--force-reinstall", str(src)], "pip reinstall of the changed package", INSTALL_TIMEOUT_S, env=env)
        return
    shutil.rmtree(venv, ignore_errors=True)
    run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", str(venv)], "creating the venv", 120)
    run(pip + [TORCH_CPU], f"pip install {TORCH_CPU}", INSTALL_TIMEOUT_S, env=env)
    run(pip + [str(src)], "pip install of the package", INSTALL_TIMEOUT_S, env=env)


def ensure_venv(say=print) -> Path:
    "The pip-only venv, built or brought up to date if it is not as wanted (see the module's docstring)."
    CACHE.mkdir(parents=True, exist_ok=True)
    venv, stamp = CACHE / "venv", CACHE / "built-from.txt"
    with tempfile.TemporaryDirectory(prefix="pip-only-") as scratch:
        src = package_copy(Path(scratch) / "src")
        wanted = [digest(sys.version, TORCH_CPU, ROOT / "pyproject.toml"), digest(src / "santorini_az", src / "README.md")]
        env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
        env.pop("PYTHONPATH", None)
        with open(CACHE / "lock", "w") as lock:  # one process builds it at a time
            fcntl.flock(lock, fcntl.LOCK_EX)
            have = stamp.read_text().split() if stamp.exists() and (venv / "bin" / "python").exists() else []
            fresh = os.environ.get("SANTORINI_FRESH_VENV") == "1"
            if fresh or have != wanted:
                start = time.monotonic()
                stamp.unlink(missing_ok=True)
                package_only = not fresh and len(have) == 2 and have[0] == wanted[0]
                build_venv(venv, src, env, package_only)
                stamp.write_text(" ".join(wanted))
                say(f"pip-only venv {'package reinstalled' if package_only else 'built'} in {time.monotonic() - start:.0f} s")
    return venv


if __name__ == "__main__":
    try: ensure_venv()
    except BuildError as error: sys.exit(f"pip-only venv: {error}")
