#!/usr/bin/env bash
# The whole test suite, from a fresh clone: set up .venv, the web app and Chromium (tools/setup.sh), check that the package is in sync with the notebooks,
# run every chapter as a test (nbdev-test) and the pytest suites, slow checks included (a few minutes in all on
# 2 cores). Extra arguments go to pytest. For a quick loop while developing, run `nbdev-test` and `pytest` alone:
# they skip the cells and tests marked slow.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
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

echo "== every chapter runs top to bottom (nbdev-test)"
nbdev-test --n-workers 2 --timing --flags slow

echo "== the browser app's unit tests (vitest)"
(cd web && npx vitest run --silent)

echo "== pytest"
python -m pytest -q -p no:cacheprovider --runslow "$@"
