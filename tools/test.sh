#!/usr/bin/env bash
# The whole test suite, from a fresh clone: set up .venv, the web app and Chromium (tools/setup.sh), check that the
# package is in sync with the notebooks, run every chapter as a test (nbdev-test, slow cells included; chapters 01-06
# in tests/test_pip_only.py's pip-only venv) and the pytest suites (slow checks included, spread over the cores by
# pytest-xdist). It ends by printing its budget: each phase's wall time and the slowest notebooks and tests
# (tools/test_budget.py). Extra arguments go to pytest. For a quick loop while working on one chapter,
# `python tools/check_chapter.py KEY` does the same for that chapter alone, skipping the cells and tests marked slow.
set -euo pipefail
cd "$(dirname "$0")/.."
logs=$(mktemp -d)
phase_start=$(date +%s.%N)
running="setup"  # the phase under way: a failure names it in the budget
phase() {  # the phase that just ended: its name and wall seconds, for the budget
  local now; now=$(date +%s.%N)
  echo "$1 $(python3 -c "print(round($now - $phase_start, 1))")" >> "$logs/phases"
  phase_start=$now running=${2:-}
}
budget() {
  local status=$?
  if [ -n "${pip_only_build:-}" ]; then kill -- "-$pip_only_build" 2>/dev/null || true; fi  # still building: a failure stopped the run (its pip too)
  if [ -n "${ray_tests:-}" ]; then wait "$ray_tests" 2>/dev/null || true; fi  # let it end: its fixture stops the cluster
  if [ "$status" != 0 ]; then phase "$running (failed)"; fi
  if [ -x .venv/bin/python ]; then
    .venv/bin/python tools/test_budget.py --phases "$logs/phases" --notebooks "$logs/nbdev.log" --tests "$logs/junit.xml" "$logs/junit-ray.xml" || true
  fi
  rm -rf "$logs"
  exit $status
}
trap budget EXIT

# The pip-only venv of tests/test_pip_only.py (a second pip install, from nothing in a clean clone) is made beside
# setup.sh's, on the core that setup's pip leaves idle; its test waits for it if it is not done.
# (setsid: its own process group, so that a failure can stop it and the pip it runs together)
setsid python3 tests/pip_only_venv.py > "$logs/pip-only.log" 2>&1 & pip_only_build=$!
bash tools/setup.sh
phase "setup" "sync checks, docs pre-processing, vitest"
export PATH="$PWD/.venv/bin:$PATH"
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1  # the browser tests drive Debian's /usr/bin/chromium
export SANTORINI_REQUIRE_ALL=1  # a test whose tool is missing fails here instead of skipping

echo "== notebooks are the source: nbdev-export and nbdev-clean must change nothing"
nbdev-export
nbdev-clean
python tools/make_readme.py
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  git status --short --untracked-files=no
  git --no-pager diff --stat
  echo "FAIL: the files above are out of date. Edit nbs/, then run nbdev-export, nbdev-clean and tools/make_readme.py." >&2
  exit 1
fi

echo "== docs pre-processing (what nbdev-docs does before Quarto renders)"
python tools/check_docs_cells.py
python -c "from nbdev.serve import proc_nbs; proc_nbs(n_workers=2)"
test -f _proc/index.ipynb
echo "== the browser app's unit tests (vitest)"
(cd web && npx vitest run --silent)
phase "sync checks, docs pre-processing, vitest" "notebooks (nbdev-test) and Ray"

echo "== every chapter runs top to bottom (nbdev-test)"
# Chapters 01-06 run in pytest instead (tests/test_pip_only.py: the same nbdev-test, slow cells included, in a venv
# made by pip alone), so they are not run twice.
pip_only=$(python -c "from tests.test_pip_only import CHAPTERS; print('|'.join(CHAPTERS))")
# Two chapters at a time, each on one torch thread (a chapter that sets more, as the training loop does, has waiting
# threads sleep instead of spin: OMP_WAIT_POLICY). Measured alone, the 36 chapters: 232 s on one thread each, 256 s on
# two. It also checks that a chapter prints the same whatever the thread count (below): stored outputs are made with
# torch's default, and a learner's machine has another number of cores.
# Beside them, the Ray cluster's tests (tests/test_ray.py: a cluster started from a pytest-xdist worker loses its
# raylet, so they run in a pytest of their own). Alone they take about 100 s and 124 core-seconds (the cluster's
# processes included, measured on /proc/stat); beside the notebooks they add about 25 s to this phase, where after the
# pytest-xdist phase their waits held a core idle. Their fixture stops only the processes of its own cluster (chapter
# 28 runs a Ray instance of its own meanwhile).
OMP_WAIT_POLICY=PASSIVE python -m pytest -q -p no:cacheprovider --runslow tests/test_ray.py \
  --junitxml="$logs/junit-ray.xml" -o junit_family=xunit2 > "$logs/ray.log" 2>&1 & ray_tests=$!
# The chapters run in a copy of nbs/ (_outputs/, ignored by git) that keeps what each cell printed (--save), so that
# tools/check_outputs.py can then compare it with the outputs stored in nbs/, which the docs site shows. Each starts
# on one thread, as a fresh process with OMP_NUM_THREADS=1 does, although the worker process ran other chapters before
# it (tools/fresh_kernel.py, run by the IPython profile in $logs/ipython).
rm -rf _outputs && mkdir _outputs && cp -r nbs _outputs/nbs && cp README.md _outputs/  # chapter 12 reads ../README.md
ls _outputs/nbs/*.ipynb | grep -Ev "/($pip_only)\.ipynb$" > _outputs/chapters
mkdir -p "$logs/ipython/profile_default/startup" && cp tools/fresh_kernel.py "$logs/ipython/profile_default/startup/"
IPYTHONDIR="$logs/ipython" SANTORINI_FRESH_THREADS=1 OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE \
  nbdev-test _outputs/nbs --save --n-workers 2 --timing --flags slow --skip-file-re "^($pip_only)\.ipynb$" 2>&1 | tee "$logs/nbdev.log"
echo "== the Ray cluster's tests (run beside the notebooks)"
ray_status=0; wait "$ray_tests" || ray_status=$?
ray_tests=""
cat "$logs/ray.log"
if [ "$ray_status" != 0 ]; then echo "FAIL: tests/test_ray.py (above)" >&2; exit "$ray_status"; fi
echo "== the stored outputs are what the chapters print now"
xargs python tools/check_outputs.py < _outputs/chapters
phase "notebooks (nbdev-test) and Ray" "pytest"

echo "== pytest"
wait "$pip_only_build" || true  # made meanwhile; if that failed, its test builds it again and names the failure
pip_only_build=""
# on both cores (a core per pytest-xdist worker, tests/conftest.py), all but the Ray cluster's tests (run above;
# beside the xdist workers they took their cores and made the whole slower)
python -m pytest -q -p no:cacheprovider --runslow -n "${PYTEST_WORKERS:-2}" --dist loadgroup --ignore=tests/test_ray.py \
  --junitxml="$logs/junit.xml" -o junit_family=xunit2 "$@"
phase "pytest"
