"""The docs site, seen: every processed chapter rendered by tools/preview_docs.py, served on 127.0.0.1 and opened in
Debian's Chromium through Playwright.

A page fails, named with its culprit, if an image does not load, an internal link points to a page or file that does
not exist, a raw directive (`#|`) or a `show_doc(` call shows in its text, a traceback or an error output shows, a
widget output has no static picture (the site runs no widget manager), it asks anything of another host (a CDN) or a
file of its own fails to load (KaTeX's fonts included), TeX shows raw (`$$`, `\\(`, `\\[`, `\\begin{`, `$...$` holding a
`\\command`) or KaTeX reports an error, markdown shows literally in a heading or the subtitle (`*word*`, `**word**`, a
backtick), a code block or output is clipped at the right (it overflows a box that hides it, or runs past the window),
or a long page (over three window heights) has no table of contents whose links all reach a heading.
Every page is visited: the ones with math (chapters 03 and 13) and the longest (03, 06) among them; the chapters whose
notebooks hold `$$` math must show KaTeX's output.
`_proc/` is what tools/test.sh writes before pytest runs; it is made here if it is missing.
Set SANTORINI_SCREENSHOT_DIR to keep screenshots of the index and of chapter 03 (`index.png`, `mcts.png`,
`mcts_figure.png`, `mcts_math.png`: the PUCT formula, `mcts_toc.png`: the table of contents, scrolled down the page)."""
import functools
import importlib.util
import os
import re
import shutil
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

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("docs_preview")]  # one worker: its module fixture is costly to build twice

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
TIME_LIMIT_S = 420  # rendering (~20 s) and ~50 pages on a busy 2-core machine
PAGE_TIMEOUT_MS = 60_000
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def problems_script(body: str) -> str:
    "A function for page.evaluate that runs `body` and returns its `problems`; `where(el)` names the cell `el` is in."
    return r"""() => {
  const problems = [];
  const where = (el) => {
    const cell = el.closest('.jp-Cell');
    const code = cell && cell.querySelector('.jp-InputArea-editor');
    const text = code ? code.innerText : (cell ? cell.innerText : el.innerText);
    return (text || '').trim().split('\n')[0].slice(0, 80);
  };
""" + body + """
  return problems;
}"""


# Everything a page shows that it should not, read in the browser.
PAGE_PROBLEMS = problems_script("""
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
""".replace("WIDGET", WIDGET_VIEW))

# What the reader sees wrong in the typesetting and layout: raw TeX, markdown left as text in a heading or the
# subtitle, code clipped at the right, a long page without a table of contents.
TYPESETTING_PROBLEMS = problems_script(r"""
  // Raw TeX: the text outside code (and outside KaTeX's own output), block by block.
  const skip = 'pre, code, script, style, textarea, .katex, .jp-InputArea-editor';
  const blocks = new Map();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!parent || parent.closest(skip)) continue;
    const block = parent.closest('p, li, h1, h2, h3, h4, h5, h6, td, th, dd, dt, blockquote, figcaption, div') || document.body;
    blocks.set(block, (blocks.get(block) || '') + node.nodeValue);
  }
  const tex = [/\$\$/, /\\\([\s\S]*?\\\)/, /\\\[[\s\S]*?\\\]/, /\\begin\{/, /\$[^$\n]*\\[A-Za-z]+[^$\n]*\$/];
  for (const [block, text] of blocks) {
    const hit = tex.map(re => text.match(re)).find(m => m);
    if (hit) problems.push(`raw TeX shows: ${text.slice(Math.max(0, hit.index - 20), hit.index + 60).trim()}`);
  }
  for (const el of document.querySelectorAll('.katex-error'))
    problems.push(`KaTeX cannot render: ${(el.getAttribute('title') || el.innerText).slice(0, 120)}`);

  // Markdown left as text in a heading or the subtitle (code and math inside them are not read).
  for (const el of document.querySelectorAll('h1, h2, h3, h4, h5, h6, .preview-description, .preview-toc a')) {
    const copy = el.cloneNode(true);
    for (const inner of copy.querySelectorAll('code, .katex, .anchor-link')) inner.remove();
    const text = copy.textContent.trim();
    if (/(^|[^\w*\\])\*{1,2}[^\s*][^*]*?\*{1,2}(?![\w*])|`/.test(text)) problems.push(`markdown shows in a heading: ${text.slice(0, 100)}`);
  }

  // Code clipped at the right: overflowing a box that hides the overflow, or running past the window.
  const vw = document.documentElement.clientWidth;
  const scrolls = (cs) => cs.overflowX === 'auto' || cs.overflowX === 'scroll';
  for (const el of document.querySelectorAll('pre, .jp-InputArea-editor, .highlight, .jp-OutputArea-output')) {
    const cs = getComputedStyle(el), box = el.getBoundingClientRect();
    if (box.width === 0 || el.closest('.katex')) continue;
    let clipped = null;
    if (box.right > vw + 1) clipped = `its right edge, ${Math.round(box.right)} px, is past the window's ${vw} px`;
    else if (el.scrollWidth > el.clientWidth + 1 && !scrolls(cs)) {
      if (cs.overflowX !== 'visible') clipped = `overflow-x: ${cs.overflowX} hides ${el.scrollWidth - el.clientWidth} px`;
      else {
        const right = box.left + el.scrollWidth;
        let handled = false;
        for (let a = el.parentElement; a && a !== document.documentElement; a = a.parentElement) {
          const acs = getComputedStyle(a);
          if (acs.overflowX === 'visible') continue;
          if (scrolls(acs)) handled = true;
          else if (right > a.getBoundingClientRect().right + 1) clipped = `a box around it (overflow-x: ${acs.overflowX}) hides the rest`;
          break;
        }
        if (!clipped && !handled && right > vw + 1) clipped = `its text runs past the window`;
      }
    }
    if (clipped) problems.push(`code clipped at the right: ${where(el) || el.innerText.trim().slice(0, 60)} (${clipped})`);
  }

  // A long page has a table of contents, and each of its links reaches a heading.
  const height = document.documentElement.scrollHeight;
  const toc = Array.from(document.querySelectorAll('.preview-toc a[href^="#"]'));
  if (height > 3 * window.innerHeight && !toc.length) problems.push(`a long page (${height} px) without a table of contents`);
  for (const a of toc) {
    const id = a.getAttribute('href').slice(1);  // as the browser does: the id as written, else percent-decoded
    const target = document.getElementById(id) || document.getElementById(decodeURIComponent(id));
    if (!target || !/^H[1-6]$/.test(target.tagName)) problems.push(`table of contents links to no heading: ${a.getAttribute('href')}`);
  }
""")

LINKS = "() => Array.from(document.querySelectorAll('a[href], link[href], script[src]'), a => a.href || a.src)"
MATH = "() => document.querySelectorAll('.katex').length"


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


def load_preview_docs():
    "tools/preview_docs.py as a module, once Chromium, Playwright and KaTeX are known to be here (else the test skips)."
    require(CHROMIUM, os.path.exists(CHROMIUM))
    require("playwright", importlib.util.find_spec("playwright") is not None)
    require("KaTeX (web/node_modules/katex)", (ROOT / "web" / "node_modules" / "katex" / "dist" / "katex.min.js").exists())
    sys.path.insert(0, str(ROOT / "tools"))
    try: import preview_docs
    finally: sys.path.remove(str(ROOT / "tools"))
    return preview_docs


@pytest.fixture(scope="session")  # once per worker, even when other tests run between this module's
def site(tmp_path_factory):
    "The preview rendered into a temporary folder."
    preview_docs = load_preview_docs()
    out = tmp_path_factory.mktemp("preview") / "site"
    proc = processed_notebooks()
    index, nav = preview_docs.render_site(proc, out)
    return {"out": out, "index": index, "nav": nav, "proc": proc, "module": preview_docs}


def test_sidebar_names_existing_chapters(site):
    "Every chapter sidebar.yml lists exists (on the Quarto site a missing one is a dead link)."
    assert not site["nav"].missing, f"nbs/sidebar.yml lists notebooks that do not exist: {site['nav'].missing}"


# Pages with every kind of content the renderer handles: the index (tables, the route), math, figures and a table of
# contents (03), tables and plots (12), widgets' static pictures (29).
REPEATED = {"index.ipynb", "03_mcts.ipynb", "12_experiments.ipynb", "29_widgets.ipynb"}


def test_render_is_repeatable(site, tmp_path):
    "Rendering the same notebooks again writes the same files (four pages of every kind, rendered twice)."
    sample = tmp_path / "proc"
    shutil.copytree(site["proc"], sample, ignore=lambda folder, names: [
        n for n in names if Path(folder) == site["proc"] and n.endswith(".ipynb") and n not in REPEATED])
    outs = [tmp_path / "first", tmp_path / "second"]
    for out in outs: site["module"].render_site(sample, out)
    first, second = ({p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} for out in outs)
    assert {p.name for p in first if p.suffix == ".html"} >= {"index.html", "mcts.html"}, sorted(first)
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
    "The index and a chapter (03): its top, its first figure, its first formula, and halfway down (the contents beside)."
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
    formula = page.locator(".katex-display").first
    if formula.count():
        formula.scroll_into_view_if_needed()
        page.evaluate("window.scrollBy(0, -200)")
        page.screenshot(path=str(folder / "mcts_math.png"))
    page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight / 2)")
    page.screenshot(path=str(folder / "mcts_toc.png"))


def browse(out: Path, shots: Path | None = None, index: str = "index.html", chapter: str | None = None,
           math: dict[str, int] | None = None) -> list[str]:
    """Serve `out`, open each of its pages in Chromium and list what is wrong, as 'page: problem'; `math`, if given,
    gets the number of formulas KaTeX typeset on each page."""
    from playwright.sync_api import sync_playwright
    server, start = free_server(out), time.monotonic()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    pages = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.html"))
    problems, targets, external, failed = [], {}, [], []
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

                def answered(response):
                    "Remember a file of our own that the server does not have (a font that KaTeX's CSS names, say)."
                    if response.status >= 400 and response.url.startswith(base + "/"):
                        failed.append(f"{response.url.removeprefix(base + '/')} (HTTP {response.status})")
                page.on("response", answered)
                for name in pages:
                    if time.monotonic() - start > TIME_LIMIT_S: pytest.fail(f"over {TIME_LIMIT_S} s, at {name}")
                    page.goto(f"{base}/{name}", wait_until="load", timeout=PAGE_TIMEOUT_MS)
                    page.evaluate("document.fonts.ready.then(() => true)")  # the fonts math and code ask for, fetched
                    problems += [f"{name}: {p}" for p in page.evaluate(PAGE_PROBLEMS) + page.evaluate(TYPESETTING_PROBLEMS)]
                    problems += [f"{name}: fetches from another host: {url}" for url in external]
                    problems += [f"{name}: a file does not load: {what}" for what in failed]
                    external.clear()
                    failed.clear()
                    if math is not None: math[name] = page.evaluate(MATH)
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
    math = {}
    problems = browse(site["out"], Path(shots) if shots else None, site["index"].name, chapter, math)
    assert not problems, f"{len(problems)} problems on the docs site:\n" + "\n".join(problems)
    with_math = {site["module"].read_page(nb).output for nb in site["proc"].glob("*.ipynb") if has_math(nb)}
    assert {chapter, site["module"].read_page(site["proc"] / "06_engine.ipynb").output} <= math.keys()
    assert with_math and with_math <= math.keys(), f"pages with math not visited: {with_math - math.keys()}"
    assert [name for name in sorted(with_math) if not math[name]] == [], "pages whose math KaTeX did not typeset"


def has_math(notebook: Path) -> bool:
    "Whether a markdown cell of `notebook` holds display math (`$$`) or inline math with a TeX command (`$...\\x...$`)."
    import json
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return "$$" in text or re.search(r"\$[^$\n]*\\[A-Za-z]+[^$\n]*\$", text) is not None


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
        code("raw_tex", [shown("text/html", r"<p>Left as text: $$ \frac{a}{b} $$</p>")]),
        code("heading", [shown("text/html", "<h4>A **bold** claim</h4>")]),
        code("clipped", [shown("text/html", '<pre style="overflow: hidden; white-space: pre; width: 10rem">' + "clipped_" * 40 + "</pre>")]),
        code("tall", [shown("text/html", '<div style="height: 5000px"></div>')]),
    ]}


def fine_chapter() -> dict:
    "A processed notebook the browser test must pass: math, markdown in the subtitle, a long code line, a long page."
    def markdown(source):
        return {"cell_type": "markdown", "metadata": {}, "source": source}
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "raw", "metadata": {}, "source": "---\ntitle: Fine\noutput-file: fine.html\n"
         "description: An evaluator that is *requested*, **not** called, with `code`\n---\n"},
        markdown("## The formula\n\nInline $N_\\text{node} \\cdot P(a)$ and displayed:\n\n"
                 "$$ Q(a) + c_\\text{puct} \\, P(a) \\, \\frac{\\sqrt{N_\\text{node}}}{1 + N(a)} $$"),
        {"cell_type": "code", "metadata": {}, "execution_count": 1, "source": "x = '" + "long " * 80 + "'",
         "outputs": [{"output_type": "stream", "name": "stdout", "text": "printed " * 80 + "\n"},
                     {"output_type": "display_data", "metadata": {}, "data": {"text/html": '<div style="height: 5000px"></div>'}}]},
        markdown("### The `code` and *emphasis* of a heading\n\nThe end."),
    ]}


def test_browser_checks_catch_each_fault(tmp_path):
    """The checks fail a page with a missing image, a dead link, a directive, a traceback, a bare widget, a CDN fetch,
    raw TeX, markdown in a heading, clipped code or no contents though long; and pass a page that has it all right."""
    import json
    preview_docs = load_preview_docs()
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "index.ipynb").write_text(json.dumps(broken_chapter()))
    (proc / "fine.ipynb").write_text(json.dumps(fine_chapter()))
    (proc / "sidebar.yml").write_text("website:\n  sidebar:\n    contents:\n      - index.ipynb\n      - fine.ipynb\n"
                                      "      - gone.ipynb\n")
    index, nav = preview_docs.render_site(proc, tmp_path / "site")
    assert nav.missing == ["gone.ipynb"]
    page = (tmp_path / "site" / "broken.html").read_text()
    assert "hidden_cell_text" not in page and "<details" in page and "#| code-fold" not in page
    math = {}
    problems = "\n".join(browse(tmp_path / "site", math=math))
    for fault in ["image does not load: images/missing.png", "dead link to nowhere.html", "raw directive shows: #| export",
                  "show_doc( shows", "a traceback shows", "error output after: 1 / 0", "fetches from another host",
                  "widget output without a static picture, after: game", r"raw TeX shows: Left as text: $$ \frac{a}{b} $$",
                  "markdown shows in a heading: A **bold** claim", "code clipped at the right: clipped (overflow-x: hidden",
                  "a long page ("]:
        assert f"broken.html: {fault}" in problems, f"not caught: {fault}\n{problems}"
    assert "after: board" not in problems  # a widget stored with its picture shows the picture
    assert "fine.html" not in problems, problems  # math typeset, markdown in headings rendered, code scrolls, contents
    assert math["fine.html"] == 2
