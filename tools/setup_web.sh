#!/usr/bin/env bash
# Set up the browser app in web/: npm packages (no browser download), the built site in web/dist, playwright for the
# end-to-end tests (tests/test_web.py), and Debian's Chromium if it is missing. Run after tools/setup.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
(cd web && npm ci --no-audit --no-fund && npm run build)
.venv/bin/python -m pip install -q -e ".[web]"
if [ ! -x /usr/bin/chromium ]; then
  SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
  $SUDO apt-get update -q && $SUDO apt-get install -y -q chromium
fi
