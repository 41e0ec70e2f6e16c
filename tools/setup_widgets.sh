#!/usr/bin/env bash
# What the notebook widgets need beyond pip. tools/setup.sh already installs jupyterlab, ipywidgets and anywidget
# (and playwright, in the dev extra); the browser test (tests/test_widgets_browser.py) also needs Debian's Chromium,
# which Playwright drives at /usr/bin/chromium. No browser is ever downloaded by Playwright.
set -euo pipefail
if [ ! -x /usr/bin/chromium ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends chromium
fi
echo "chromium: /usr/bin/chromium"
