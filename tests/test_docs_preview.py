"""The docs site, seen: every processed chapter rendered by tools/preview_docs.py, served on 127.0.0.1 and opened in
Debian's Chromium through Playwright.

A page fails, named with its culprit, if an image does not load, an internal link points to a page or file that does
not exist, a raw directive (`#|`) or a `show_doc(` call shows in its text, a traceback or an error output shows, a
widget output has no static picture (the site runs no widget manager), or it asks anything of another host (a CDN).
`_proc/` is what tools/test.sh writes before pytest runs; it is made here if it is missing.
Set SANTORINI_SCREENSHOT_DIR to keep screenshots of the index and of chapter 03 (`index.png`, `mcts.png`,
`mcts_figure.png`)."""
import functools
import importlib.util
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.conftest import require

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
TIME_LIMIT_S = 420  # rendering (~20 s) and ~50 pages on a busy 2-core machine
PAGE_TIMEOUT_MS = 60_000
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

# Everything a page shows that it should not, read in the browser.
PAGE_PROBLEMS = """() => {
  const problems = [];
  const where = (el) => {
    const cell = el.closest('.jp-Cell');
    const code = cell && cell.querySelector('.jp-InputArea-editor');
    const text = code ? code.innerText : (cell ? cell.innerText : el.innerText);
    return (text || '').trim().split('\\n')[0].slice(0, 80);
  };
  for (const img of document.images)
    if (!img.complete || img.naturalWidth === 0)
      problems.push(`image does not load: ${img.getAttribute('src').slice(0, 120)}`);
  const text = document.body.innerText;
  for (const line of text.split('\\n'))
    if (/^\\s*#\\|/.test(line)) problems.push(`raw directive shows: ${line.trim().slice(0, 80)}`);
  for (const m of text.matchAll(/.{0,40}show_doc\\(.{0,40}/g)) problems.push(`show_doc( shows: ${m[0]}`);
  if (text.includes('Traceback (most recent call last)')) problems.push('a traceback shows');
  for (const el of document.querySelectorAll('.preview-error'))
    problems.push(`error output after: ${where(el)} -> ${el.innerText.trim().split('\\n').slice(-1)[0].slice(0, 120)}`);
  for (const el of document.querySelectorAll('[data-mime-type="application/vnd.jupyter.stderr"]'))
    if (!el.closest('.preview-error') && /^\\w*(Error|Exception)\\b/m.test(el.innerText))
      problems.push(`error on stderr after: ${where(el)} -> ${el.innerText.trim().slice(0, 120)}`);
  for (const el of document.querySelectorAll('script[type="WIDGET"], .preview-widget-missing'))
    problems.push(`widget output without a static picture, after: ${where(el)}`);
  if (!document.querySelector('.preview-sidebar a.preview-current')) problems.push('no sidebar entry for this page');
  return problems;
}""".replace("WIDGET", WIDGET_VIEW)

LINKS = "() => Array.from(document.querySelectorAll('a[href], link[href]'), a => a.href)"


def free_server(directory: Path) -> ThreadingHTTPServer:
    "A quiet static file server for `directory` on a free port of 127.0.0.1, serving from a daemon thread."
    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args): pass

    class Server(ThreadingHTTPServer):
        def handle_error(self, request, client_address):
            if not isinstance(sys.exc_info()[1], ConnectionError): super().handle_error(request, client_address)
    server = Server(("127.0.0.1", 0), functools.partial(Quiet, directory=str(directory)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def processed_notebooks() -> Path:
    "_proc/, made by nbdev's pre-processing if tools/test.sh has not made it yet."
    proc = ROOT / "_proc"
    if not (proc / "index.ipynb").exists():
        subprocess.run([sys.executable, "-c", "from nbdev.serve import proc_nbs; proc_nbs(n_workers=2)"],
                       cwd=ROOT, check=True, capture_output=True, timeout=600)
    return proc


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    "The preview rendered into a temporary folder."
    require(CHROMIUM, os.path.exists(CHROMIUM))
    require("playwright", importlib.util.find_spec("playwright") is not None)
    sys.path.insert(0, str(ROOT / "tools"))
    try: import preview_docs
    finally: sys.path.remove(str(ROOT / "tools"))
    out = tmp_path_factory.mktemp("preview") / "site"
    proc = processed_notebooks()
    index, nav = preview_docs.render_site(proc, out)
    return {"out": out, "index": index, "nav": nav, "proc": proc, "module": preview_docs}


def test_sidebar_names_existing_chapters(site):
    "Every chapter sidebar.yml lists exists (on the Quarto site a missing one is a dead link)."
    assert not site["nav"].missing, f"nbs/sidebar.yml lists notebooks that do not exist: {site['nav'].missing}"


def test_render_is_repeatable(site, tmp_path):
    "Rendering again writes the same files."
    again = tmp_path / "again"
    site["module"].render_site(site["proc"], again)
    first = {p.relative_to(site["out"]): p.read_bytes() for p in site["out"].rglob("*") if p.is_file()}
    second = {p.relative_to(again): p.read_bytes() for p in again.rglob("*") if p.is_file()}
    assert first.keys() == second.keys()
    assert [str(k) for k in first if first[k] != second[k]] == []


def dead_links(base: str, targets: set[str]) -> dict[str, str]:
    "The internal URLs among `targets` (fragments dropped) that the server does not answer with a file: url -> why."
    dead = {}
    for url in sorted(targets):
        try:
            with urllib.request.urlopen(url, timeout=10) as answer:
                if answer.status != 200: dead[url] = f"HTTP {answer.status}"
        except urllib.error.HTTPError as e: dead[url] = f"HTTP {e.code}"
        if urlsplit(url).path.endswith("/"): dead[url] = "a folder, not a page"
    return dead


def screenshots(page, base: str, folder: Path, index: str, chapter: str | None) -> None:
    "The index and a chapter (03), top of the page, and the chapter at its first figure."
    folder.mkdir(parents=True, exist_ok=True)
    page.goto(f"{base}/{index}", wait_until="load")
    page.screenshot(path=str(folder / "index.png"))
    if not chapter: return
    page.goto(f"{base}/{chapter}", wait_until="load")
    page.screenshot(path=str(folder / "mcts.png"))
    figure = page.locator(".jp-OutputArea-output img, .jp-OutputArea-output svg").first
    if figure.count():
        figure.scroll_into_view_if_needed()
        page.evaluate("window.scrollBy(0, -120)")
        page.screenshot(path=str(folder / "mcts_figure.png"))


def browse(out: Path, shots: Path | None = None, index: str = "index.html", chapter: str | None = None) -> list[str]:
    "Serve `out`, open each of its pages in Chromium and list what is wrong, as 'page: problem'."
    from playwright.sync_api import sync_playwright
    server, start = free_server(out), time.monotonic()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    pages = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.html"))
    problems, targets, external = [], {}, []
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
            try:
                context = browser.new_context(viewport={"width": 1280, "height": 900})

                def only_local(route):
                    "Serve requests to our server; refuse (and remember) any other host."
                    if route.request.url.startswith(base + "/"): route.continue_()
                    else: external.append(route.request.url); route.abort()
                context.route("**/*", only_local)
                page = context.new_page()
                for name in pages:
                    if time.monotonic() - start > TIME_LIMIT_S: pytest.fail(f"over {TIME_LIMIT_S} s, at {name}")
                    page.goto(f"{base}/{name}", wait_until="load", timeout=PAGE_TIMEOUT_MS)
                    problems += [f"{name}: {p}" for p in page.evaluate(PAGE_PROBLEMS)]
                    problems += [f"{name}: fetches from another host: {url}" for url in external]
                    external.clear()
                    for url in page.evaluate(LINKS):
                        if url.startswith(base + "/"): targets.setdefault(url.split("#")[0], name)
                if shots: screenshots(page, base, shots, index, chapter)
            finally:
                browser.close()
        for url, why in dead_links(base, set(targets)).items():
            problems.append(f"{targets[url]}: dead link to {url.removeprefix(base + '/')} ({why})")
    finally:
        server.shutdown()
        server.server_close()
    return problems


def test_every_page_in_chromium(site):
    "Open every page; fail naming each page and what is wrong with it."
    assert len(list(site["out"].rglob("*.html"))) >= len(site["nav"].order()) > 1
    shots = os.environ.get("SANTORINI_SCREENSHOT_DIR")
    chapter = site["module"].read_page(site["proc"] / "03_mcts.ipynb").output
    problems = browse(site["out"], Path(shots) if shots else None, site["index"].name, chapter)
    assert not problems, f"{len(problems)} problems on the docs site:\n" + "\n".join(problems)


def broken_chapter() -> dict:
    "A processed notebook with one of each fault the browser test must catch."
    def code(source, outputs=()):
        return {"cell_type": "code", "metadata": {"execution": {"total": 0.5}}, "execution_count": 1,
                "source": source, "outputs": list(outputs)}
    def shown(mime, value):
        return {"output_type": "display_data", "metadata": {}, "data": {mime: value}}
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {"widgets": {}}, "cells": [
        {"cell_type": "raw", "metadata": {}, "source": "---\ntitle: Broken\noutput-file: broken.html\n---\n"},
        {"cell_type": "markdown", "metadata": {}, "source": "![a board](images/missing.png) [next](nowhere.ipynb)"},
        code("x = 1\n#| export\nshow_doc(x)"),
        code("#| hide\nhidden_cell_text = 1"),
        code("1 / 0", [{"output_type": "error", "ename": "ZeroDivisionError", "evalue": "division by zero",
                        "traceback": ["Traceback (most recent call last):", "ZeroDivisionError: division by zero"]}]),
        code("game", [shown(WIDGET_VIEW, {"model_id": "abc", "version_major": 2, "version_minor": 0})]),
        code("board", [{"output_type": "display_data", "metadata": {}, "data": {
            WIDGET_VIEW: {"model_id": "def", "version_major": 2, "version_minor": 0},
            "image/svg+xml": '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"></svg>'}}]),
        code("#| code-fold: true\nfolded = 1", [shown("text/html", '<img src="https://cdn.example.com/x.png">')]),
    ]}


def test_browser_checks_catch_each_fault(tmp_path):
    "The checks fail a page with a missing image, a dead link, a directive, a traceback, a bare widget, a CDN fetch."
    import json
    require(CHROMIUM, os.path.exists(CHROMIUM))
    require("playwright", importlib.util.find_spec("playwright") is not None)
    sys.path.insert(0, str(ROOT / "tools"))
    try: import preview_docs
    finally: sys.path.remove(str(ROOT / "tools"))
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "index.ipynb").write_text(json.dumps(broken_chapter()))
    (proc / "sidebar.yml").write_text("website:\n  sidebar:\n    contents:\n      - index.ipynb\n      - gone.ipynb\n")
    index, nav = preview_docs.render_site(proc, tmp_path / "site")
    assert nav.missing == ["gone.ipynb"]
    page = (tmp_path / "site" / "broken.html").read_text()
    assert "hidden_cell_text" not in page and "<details" in page and "#| code-fold" not in page
    problems = "\n".join(browse(tmp_path / "site"))
    for fault in ["image does not load: images/missing.png", "dead link to nowhere.html", "raw directive shows: #| export",
                  "show_doc( shows", "a traceback shows", "error output after: 1 / 0", "fetches from another host",
                  "widget output without a static picture, after: game"]:
        assert f"broken.html: {fault}" in problems, f"not caught: {fault}\n{problems}"
    assert "after: board" not in problems  # a widget stored with its picture shows the picture
