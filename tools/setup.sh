#!/usr/bin/env bash
# Set up everything the course uses, on a fresh Debian machine: .venv with santorini_az and its development tools,
# the browser app in web/ (npm packages, built into web/dist), and Debian's Chromium for the browser tests.
# On a machine without an NVIDIA GPU torch is pinned to the CPU build (2.13.0) first, with pip, so that nothing later
# pulls several GB of CUDA wheels; with a GPU the newest CUDA build is taken instead. Playwright never downloads a
# browser: it drives /usr/bin/chromium. Running it again only redoes what is out of date. The browser app needs
# nothing from .venv, so it is set up beside the pip installs (a failure of either fails the setup).
set -euo pipefail
cd "$(dirname "$0")/.."
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
PY=${PYTHON:-python3}

# The browser app: npm packages when the lock file changed, a build when a source (or a Python module it ships) did.
web_app() {
  if [ ! -f web/node_modules/.package-lock.json ] || [ web/package-lock.json -nt web/node_modules/.package-lock.json ]; then
    (cd web && npm ci --no-audit --no-fund --loglevel=error)
  fi
  if [ ! -f web/dist/index.html ] || [ -n "$(find web/src web/py web/public web/index.html web/scripts santorini_az -newer web/dist/index.html -type f -not -path 'web/public/pyodide/*' -not -path 'web/public/py/*' | head -1)" ]; then
    (cd web && npm run build --silent)
  fi
}
if command -v npm >/dev/null 2>&1; then
  web_app & web=$!
else
  web=""
  echo "setup: npm not found; the browser app in web/ is not built (install Node 20 and npm, then run this again)" >&2
fi

[ -x .venv/bin/python ] || "$PY" -m venv .venv
VPY=.venv/bin/python
"$VPY" -m pip install -q --upgrade pip
if ! "$VPY" -c 'import torch' 2>/dev/null; then
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    "$VPY" -m pip install -q torch
  else
    "$VPY" -m pip install -q torch==2.13.0
  fi
fi
# The package and its tools through uv (from PyPI): the same resolution as pip's, installed in seconds instead of the
# half minute pip spends unpacking them on one core; it keeps the torch installed above. pip if uv cannot be had.
# Bytecode is compiled now, for every installed package (uv's --compile-bytecode; pip does it by default) and for the
# package's own modules (an editable install is imported from santorini_az/): where PYTHONDONTWRITEBYTECODE is set,
# as on CI machines, Python never writes it, and every process would compile numpy, numba, matplotlib, ... and the
# package again from source: test_protocol, test_cli and test_play took 126 core-s so, 75 compiled (for 26 once here).
if "$VPY" -m pip install -q uv && "$VPY" -m uv --version >/dev/null 2>&1; then
  "$VPY" -m uv pip install -q --compile-bytecode --python "$VPY" -e ".[dev,ray]"
else
  echo "setup: uv could not be installed; installing with pip (slower)" >&2
  "$VPY" -m pip install -q -e ".[dev,ray]"
fi
"$VPY" -m compileall -q santorini_az

# The engines' numba functions, compiled once and cached beside their modules (tools/compile_engines.py), two parts
# side by side: no chapter or test waits for the compiler later, and two run at once never compile the same function.
"$VPY" tools/compile_engines.py stale  # a compiled module changed: its callers' cached copies are stale too
"$VPY" tools/compile_engines.py mortal & mortal=$!
"$VPY" tools/compile_engines.py gods & gods=$!
wait "$mortal"
wait "$gods"

[ -z "$web" ] || wait "$web"  # the browser app, set up meanwhile: its failure fails the setup here

# Debian's Chromium, which the browser tests drive through Playwright.
if [ ! -x /usr/bin/chromium ]; then
  SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
  $SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends chromium
fi
