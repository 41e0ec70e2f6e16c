"""Preview the docs site without Quarto: render every processed chapter in `_proc/` to static HTML.

`nbdev`'s pre-processing (`proc_nbs`, run by tools/test.sh) writes `_proc/`: the notebooks with their `show_doc`
cells executed and the cell directives left for Quarto. Quarto is the publishing renderer (the deploy workflow), but
it cannot be installed everywhere. This script renders the same notebooks with nbconvert's HTMLExporter after making
each one valid nbformat, and does with the directives what Quarto would:

- `#| hide`, `#| include: false`: the cell is not shown;
- `#| echo: false`: the output only; `#| output: false`: the source only; `#| eval: false`: the source only;
- `#| code-fold: true` (or `show`): the source folded in a `<details>` element;
- the `#|` option lines are stripped from every shown source.

Links to `X.ipynb` (and to the published site's own address) point at the page Quarto would write for `X` (its
`output-file`). Each page gets a title, the sidebar of `nbs/sidebar.yml` (Quarto's format), previous/next links and
`nbs/styles.css`, and, where it has two or more h2/h3 headings, a table of contents (a panel at the right on a wide
window, a box under the title on a narrow one). Markdown in a title or subtitle (the notebook's `> summary` line) is
rendered inline (emphasis, code), as Quarto does. Math (`$$...$$`, `$...$`, `\\[...\\]`, `\\(...\\)` in markdown) is
typeset in the browser by KaTeX, from the npm package tools/setup.sh installs in web/node_modules: its script, styles,
fonts and auto-render extension are copied into `katex/` beside the pages (without it the math stays TeX text, and a
warning says so). A long line of code or of printed output wraps (a wide table scrolls sideways). `images/` and any
other local file a page links to are copied beside the pages. Nothing is fetched from a CDN: no MathJax, no require.js,
no widget manager. Rendering twice writes the same files.

Usage: `python tools/preview_docs.py [--proc _proc] [--out _preview]`, then open the index it prints."""
from __future__ import annotations

import argparse
import copy
import html
import json
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

import nbformat
import yaml
from jinja2 import DictLoader
from nbconvert import HTMLExporter
from nbconvert.filters.markdown_mistune import markdown2html_mistune
from nbformat.v4.rwbase import rejoin_lines

ROOT = Path(__file__).resolve().parent.parent
MARKER = ".preview_docs"  # written into the output folder: only a folder holding it is ever emptied
KATEX = ROOT / "web" / "node_modules" / "katex"  # installed by tools/setup.sh (`npm ci` in web/)
KATEX_FILES = ("katex.min.js", "katex.min.css", "fonts", "contrib/auto-render.min.js")  # of KATEX/dist, copied to katex/
TOC_MIN_HEADINGS = 2  # a page with fewer h2/h3 headings has no table of contents
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
STATIC_FALLBACKS = ("image/png", "image/jpeg", "image/svg+xml", "image/gif", "text/html")
NO_PICTURE = '<div class="preview-widget-missing">A live widget: no static picture of it was stored.</div>'

# The page: nbconvert's JupyterLab template, less everything it would fetch from a CDN, with our header, sidebar,
# folded sources, error outputs marked, and previous/next links.
TEMPLATE = r"""{%- extends 'index.html.j2' -%}
{%- block html_head_js -%}{%- endblock html_head_js -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block extra_css -%}
{%- if resources.preview.katex %}
<link rel="stylesheet" href="katex/katex.min.css">
{%- endif %}
<link rel="stylesheet" href="preview.css">
<link rel="stylesheet" href="styles.css">
{%- endblock extra_css -%}
{%- block body_header -%}
<body class="jp-Notebook preview-page" data-jp-theme-light="true" data-jp-theme-name="JupyterLab Light">
{{ resources.preview.sidebar }}
<main class="preview-main">
<header class="preview-header">
<h1 class="preview-title">{{ resources.preview.title_html }}</h1>
{%- if resources.preview.description_html %}
<p class="preview-description">{{ resources.preview.description_html }}</p>
{%- endif %}
</header>
<!--preview-toc-->
{%- endblock body_header -%}
{% block input_group -%}
{%- if 'preview-fold' in cell.metadata.get('tags', []) or 'preview-fold-open' in cell.metadata.get('tags', []) -%}
<details class="preview-fold"{% if 'preview-fold-open' in cell.metadata.get('tags', []) %} open{% endif %}><summary>Code</summary>
{{ super() }}
</details>
{%- else -%}
{{ super() }}
{%- endif -%}
{%- endblock input_group %}
{#- The chapters' own code, highlighted by Pygments (which escapes it): nbconvert's bleach pass over it took a quarter
    of the render, for nothing. -#}
{% block input %}
<div class="jp-CodeMirrorEditor jp-Editor jp-InputArea-editor" data-type="inline">
     <div class="cm-editor cm-s-jupyter">
{{ cell.source | highlight_code(metadata=cell.metadata) }}
     </div>
</div>
{%- endblock input %}
{% block error -%}
<div class="preview-error">
{{ super() }}
</div>
{%- endblock error %}
{% block body_footer %}
{{ resources.preview.pager }}
</main>
{%- if resources.preview.katex %}
<script src="katex/katex.min.js"></script>
<script src="katex/contrib/auto-render.min.js"></script>
{%- endif %}
<script src="preview.js"></script>
</body>
{% endblock body_footer %}
"""

# The layout around nbconvert's own styles: a fixed sidebar, a readable column, Quarto-like code blocks.
PREVIEW_CSS = """\
body.preview-page { margin: 0; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
.preview-sidebar { position: fixed; top: 0; left: 0; bottom: 0; width: 17rem; overflow-y: auto; padding: 1rem 0.75rem;
  box-sizing: border-box; background: #f7f7f9; border-right: 1px solid #e3e3e8; font-size: 0.9rem; }
.preview-sidebar .preview-site { display: block; font-weight: 600; font-size: 1.1rem; margin: 0 0.5rem 0.75rem;
  color: #2780e3; text-decoration: none; }
.preview-sidebar ul { list-style: none; margin: 0; padding: 0; }
.preview-sidebar li { margin: 0; }
.preview-sidebar li a { display: block; padding: 0.2rem 0.5rem; border-radius: 4px; color: #343a40; text-decoration: none; }
.preview-sidebar li a:hover { background: #e9ecef; }
.preview-sidebar li a.preview-current { background: #2780e3; color: #fff; }
.preview-sidebar .preview-section { display: block; margin: 0.9rem 0.5rem 0.25rem; font-weight: 600; color: #6c757d;
  text-transform: uppercase; font-size: 0.75rem; letter-spacing: 0.04em; }
.preview-sidebar .preview-section + ul { padding-left: 0.25rem; }
.preview-main { margin-left: 17rem; padding: 1.5rem 2.5rem 3rem; max-width: 62rem; }
.preview-header { margin-bottom: 1.5rem; border-bottom: 1px solid #e3e3e8; padding-bottom: 0.75rem; }
.preview-title { font-size: 2.1rem; margin: 0.5rem 0 0.25rem; }
.preview-description { color: #6c757d; font-size: 1.1rem; margin: 0; }
.preview-main .jp-Cell { padding: 0; margin: 0 0 0.9rem; }
.preview-main .jp-InputPrompt, .preview-main .jp-OutputPrompt { display: none; }
.preview-main .jp-RenderedHTMLCommon { font-size: 1rem; line-height: 1.6; padding-right: 0; }
.preview-main .jp-MarkdownCell .jp-RenderedHTMLCommon { padding-left: 0; }
.preview-main .jp-RenderedHTMLCommon p, .preview-main .jp-RenderedHTMLCommon li { max-width: 52rem; }
.preview-main .jp-Cell, .preview-main .jp-Cell-inputWrapper, .preview-main .jp-Cell-outputWrapper, .preview-main .jp-InputArea,
.preview-main .jp-OutputArea, .preview-main .jp-OutputArea-child { min-width: 0; max-width: 100%; }
.preview-main .jp-CodeCell .jp-InputArea-editor { background: #f8f9fa; border: 1px solid #e3e3e8; border-left: 3px solid #2780e3;
  border-radius: 4px; padding: 0.25rem 0.5rem; overflow-x: auto; min-width: 0; }
.preview-main pre { overflow-x: auto; max-width: 100%; }
.preview-main .jp-InputArea-editor pre { white-space: pre; }  /* code keeps its lines (and indentation): it scrolls */
.preview-main .jp-OutputArea-output > pre { white-space: pre-wrap; word-break: normal; overflow-wrap: break-word; }
.preview-main .jp-RenderedMarkdown pre { background: #f8f9fa; border-radius: 4px; padding: 0.4rem 0.6rem; }
.preview-main .jp-InputArea-editor, .preview-main .jp-OutputArea-output, .preview-main pre {
  scrollbar-width: thin; scrollbar-color: #adb5bd transparent; }
.preview-main .jp-OutputArea-output pre { font-size: 0.85rem; }
.preview-main .jp-RenderedMarkdown pre { font-family: var(--jp-code-font-family, monospace); font-size: 0.85rem; white-space: pre; }
.preview-main .jp-OutputArea-output { overflow-x: auto; min-width: 0; }
.preview-main .katex-display { overflow-x: auto; overflow-y: hidden; padding: 0.25rem 0; }
.preview-title code, .preview-description code { font-size: 0.9em; background: #f3f3f6; border-radius: 3px; padding: 0 0.2em; }
.preview-main .celltag_preview-asis .jp-RenderedMarkdown { padding: 0; }
.preview-main .celltag_preview-asis .jp-OutputArea-output { margin: 0; }
.preview-main .jp-RenderedHTMLCommon table { font-size: 0.9rem; }
.preview-main .jp-RenderedImage img { max-width: 100%; height: auto; }
.preview-main .jp-OutputArea-output svg:not(svg svg) { max-width: 100%; height: auto; }
details.preview-fold > summary { cursor: pointer; color: #6c757d; font-size: 0.9rem; margin-bottom: 0.25rem; }
.preview-error, .preview-widget-missing { border-left: 3px solid #dc3545; padding-left: 0.5rem; }
.preview-pager { display: flex; justify-content: space-between; gap: 1rem; margin-top: 3rem; padding-top: 1rem;
  border-top: 1px solid #e3e3e8; }
.preview-pager a { text-decoration: none; color: #2780e3; }
.preview-pager .preview-next { margin-left: auto; text-align: right; }
.preview-toc { font-size: 0.85rem; line-height: 1.35; }
.preview-toc .preview-toc-title { font-weight: 600; color: #343a40; margin: 0 0 0.4rem 0.5rem; }
.preview-toc ul { list-style: none; margin: 0; padding: 0; }
.preview-toc li.preview-toc-h3 { padding-left: 0.8rem; font-size: 0.8rem; }
.preview-toc a { display: block; padding: 0.15rem 0.5rem; color: #495057; text-decoration: none; border-left: 2px solid transparent; }
.preview-toc a:hover { color: #2780e3; }
.preview-toc a.preview-toc-current { color: #2780e3; border-left-color: #2780e3; }
.preview-toc code { font-size: 0.95em; }
@media (min-width: 1200px) {
  .preview-toc { position: fixed; top: 0; right: 0; bottom: 0; width: 15rem; overflow-y: auto; padding: 1.5rem 0.75rem 1.5rem 0.5rem;
    box-sizing: border-box; border-left: 1px solid #e3e3e8; background: #fff; }
  body.preview-has-toc .preview-main { margin-right: 15rem; padding-right: 2rem; }
}
@media (max-width: 1199.98px) {
  .preview-toc { border: 1px solid #e3e3e8; border-radius: 6px; background: #f8f9fa; padding: 0.75rem 0.5rem;
    margin: 0 0 1.5rem; max-height: 22rem; overflow-y: auto; }
}
@media (max-width: 900px) {
  .preview-sidebar { position: static; width: auto; border-right: 0; border-bottom: 1px solid #e3e3e8; }
  .preview-main { margin-left: 0; padding: 1rem; }
}
"""

# Run on each page: KaTeX typesets the math of the markdown (cells, markdown outputs, the header, the contents), and the
# table of contents marks the section being read.
PREVIEW_JS = """\
(function () {
  if (window.renderMathInElement) {
    const options = {throwOnError: false, delimiters: [
      {left: "$$", right: "$$", display: true}, {left: "\\\\[", right: "\\\\]", display: true},
      {left: "$", right: "$", display: false}, {left: "\\\\(", right: "\\\\)", display: false}]};
    for (const el of document.querySelectorAll(".preview-header, .jp-RenderedMarkdown, .preview-toc")) renderMathInElement(el, options);
  }
  const links = Array.from(document.querySelectorAll(".preview-toc a[href^='#']"));
  const targets = links.map(a => {
    const id = a.getAttribute("href").slice(1);
    return document.getElementById(id) || document.getElementById(decodeURIComponent(id));
  });
  if (!links.length) return;
  let current = null, queued = false;
  function mark() {
    queued = false;
    let at = 0;
    targets.forEach((t, i) => { if (t && t.getBoundingClientRect().top < 120) at = i; });
    if (links[at] === current) return;
    if (current) current.classList.remove("preview-toc-current");
    current = links[at];
    current.classList.add("preview-toc-current");
    const panel = current.closest(".preview-toc"), box = current.getBoundingClientRect(), frame = panel.getBoundingClientRect();
    if (box.top < frame.top || box.bottom > frame.bottom) panel.scrollTop += box.top - frame.top - frame.height / 3;
  }
  addEventListener("scroll", () => { if (!queued) { queued = true; requestAnimationFrame(mark); } }, {passive: true});
  mark();
})();
"""


@dataclass
class Page:
    "One chapter: its processed notebook, the HTML file Quarto would write for it, and its front matter."
    source: Path
    output: str
    title: str
    description: str = ""


@dataclass
class Nav:
    "The sidebar: (section title or None, notebook file names) in order, and what it named that does not exist."
    groups: list[tuple[str | None, list[str]]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    def order(self) -> list[str]:
        "Every listed notebook, in reading order."
        return [name for _, names in self.groups for name in names]


def front_matter(nb: dict) -> dict:
    "The YAML front matter nbdev put in the notebook's first raw cell (`---` ... `---`), or {}."
    for cell in nb["cells"][:2]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "raw" and source.lstrip().startswith("---"):
            text = source.strip().strip("-")
            return yaml.safe_load(text) or {}
    return {}


def read_page(path: Path) -> Page:
    "The page of the processed notebook at `path`: Quarto's output file name, the title and description."
    meta = front_matter(json.loads(path.read_text(encoding="utf-8")))
    return Page(path, str(meta.get("output-file") or path.stem + ".html"),
                str(meta.get("title") or path.stem), str(meta.get("description") or ""))


def sidebar_items(contents: list) -> list[tuple[str | None, list[str]]]:
    "Flatten Quarto sidebar `contents` (file names, `{section:, contents:}`, `{href:}`) into (section, files) groups."
    groups: list[tuple[str | None, list[str]]] = [(None, [])]
    for item in contents or []:
        if isinstance(item, str): groups[-1][1].append(item)
        elif isinstance(item, dict) and "contents" in item:
            title = str(item.get("section") or item.get("text") or "")
            for _, names in sidebar_items(item["contents"]): groups.append((title, names))
            groups.append((None, []))
        elif isinstance(item, dict) and "href" in item: groups[-1][1].append(str(item["href"]))
    return [(title, names) for title, names in groups if names]


def read_sidebar(proc: Path, available: list[str]) -> Nav:
    "The navigation of `sidebar.yml` (in `proc`, else nbs/), keeping the notebooks that exist; else the file list."
    for candidate in (proc / "sidebar.yml", ROOT / "nbs" / "sidebar.yml"):
        if candidate.exists():
            sidebar = (yaml.safe_load(candidate.read_text(encoding="utf-8")) or {}).get("website", {}).get("sidebar")
            if isinstance(sidebar, list): sidebar = sidebar[0] if sidebar else {}
            groups = sidebar_items((sidebar or {}).get("contents", []))
            if groups: break
    else:
        return Nav([(None, sorted(available, key=lambda n: (n != "index.ipynb", n)))])
    nav, listed = Nav(), set()
    for title, names in groups:
        present = [n for n in names if n in available]
        nav.missing += [n for n in names if n not in available]
        listed.update(present)
        if present: nav.groups.append((title, present))
    rest = sorted(n for n in available if n not in listed)
    if rest: nav.groups.append(("Not in the sidebar", rest))
    return nav


def directives(source: str) -> tuple[dict, str]:
    "The cell options on a code cell's first `#|` lines (a bare flag reads as True), and the source without them."
    lines, options = source.splitlines(), {}
    while lines and re.match(r"\s*#\|", lines[0]):
        text = re.sub(r"^\s*#\|\s*", "", lines.pop(0)).strip()
        if ":" in text:
            key, value = (part.strip() for part in text.split(":", 1))
            try: options[key] = yaml.safe_load(value) if value else True
            except yaml.YAMLError: options[key] = value
        elif text: options[text] = True
    return options, "\n".join(lines).strip("\n")


def pandoc_links(markdown: str) -> str:
    """Pandoc's links with attributes, `[text](url){key="value" .class}` (show_doc writes them), as HTML links."""
    def link(match: re.Match) -> str:
        text, url, attributes = match.groups()
        pairs = re.findall(r'([\w-]+)="([^"]*)"', attributes)
        classes = " ".join(re.findall(r"(?:^|\s)\.([\w-]+)", attributes))
        extra = "".join(f' {key}="{html.escape(value)}"' for key, value in pairs) + (f' class="{classes}"' if classes else "")
        return f'<a href="{html.escape(url)}"{extra}>{text}</a>'
    return re.sub(r"\[([^\]\n]+)\]\(([^)\s]+)\)\{([^}\n]*)\}", link, markdown)


def static_outputs(outputs: list) -> list:
    """The outputs, showing a widget's stored static picture (this site runs no widget manager), or saying there is none."""
    kept = []
    for output in copy.deepcopy(outputs):
        data = output.get("data", {})
        if WIDGET_VIEW in data and any(kind in data for kind in STATIC_FALLBACKS): del data[WIDGET_VIEW]
        elif WIDGET_VIEW in data: output["data"] = {"text/html": NO_PICTURE}
        if "text/markdown" in data: data["text/markdown"] = pandoc_links(data["text/markdown"])
        if "execution_count" in output and output["output_type"] != "execute_result": del output["execution_count"]
        kept.append(output)
    return kept


def shown_cell(cell: dict, index: int) -> dict | None:
    "A valid nbformat cell showing what Quarto would show of `cell`, or None where the directives hide it."
    cell_id = cell.get("id") if re.fullmatch(r"[A-Za-z0-9_-]{1,64}", str(cell.get("id", ""))) else f"cell-{index}"
    source = "".join(cell["source"])
    if cell["cell_type"] == "markdown": return nbformat.v4.new_markdown_cell(pandoc_links(source), id=cell_id)
    if cell["cell_type"] == "raw": return nbformat.v4.new_raw_cell(source, id=cell_id)
    options, body = directives(source)
    if options.get("hide") or options.get("include") is False: return None
    outputs = [] if options.get("eval") is False or options.get("output") is False else static_outputs(cell.get("outputs", []))
    tags, metadata = [], {}
    if options.get("output") == "asis": tags.append("preview-asis")
    fold = options.get("code-fold")
    if fold is True or fold == "true": tags.append("preview-fold")
    elif fold == "show": tags.append("preview-fold-open")
    if options.get("echo") is False: metadata["transient"] = {"remove_source": True}
    if tags: metadata["tags"] = tags
    if metadata.get("transient") and not outputs: return None
    return nbformat.v4.new_code_cell(body, id=cell_id, metadata=metadata, outputs=[nbformat.from_dict(o) for o in outputs])


def valid_notebook(path: Path, title: str) -> nbformat.NotebookNode:
    "The processed notebook at `path` as valid nbformat 4.5: front matter dropped, directives applied, metadata cleaned."
    raw = rejoin_lines(nbformat.from_dict(json.loads(path.read_text(encoding="utf-8"))))  # multi-line strings stored as lists, joined
    cells = raw["cells"][1:] if front_matter(raw) else raw["cells"]
    shown = [c for c in (shown_cell(cell, i) for i, cell in enumerate(cells)) if c is not None]
    nb = nbformat.v4.new_notebook(cells=shown, metadata={
        "title": title, "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"}})
    nbformat.validate(nb)
    return nb


def inline_markdown(text: str) -> str:
    "One line of markdown (a title, a subtitle) as inline HTML: `*emphasis*`, `**strong**`, `` `code` ``, links; math kept for KaTeX."
    rendered = markdown2html_mistune(text.strip()).strip()
    inner = re.fullmatch(r"<p>(.*)</p>", rendered, re.S)
    return inner.group(1) if inner else html.escape(text.strip())


def label_html(text: str) -> str:
    "A title as the inline HTML of a link's label (the sidebar, previous/next): its own links, if any, dropped."
    return re.sub(r"</?a\b[^>]*>", "", inline_markdown(text))


def plain_text(fragment: str) -> str:
    "An HTML fragment as text (for `<title>`): tags dropped, entities read."
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def chapter_label(name: str, title: str) -> str:
    "The sidebar's label, as HTML: the chapter number from the file name (`03a_mcts.ipynb` -> `03a`), then the title."
    number = re.match(r"(\d+[a-z]?)_", name)
    return f"{number.group(1)} · {label_html(title)}" if number else label_html(title)


def toc_html(body: str) -> str:
    """The table of contents of a rendered page: its h2 and h3 headings that have an id (nbconvert gives one to every
    markdown heading), in order, without their `¶` anchors and with no links inside; "" below TOC_MIN_HEADINGS."""
    items = []
    for level, anchor, inner in re.findall(r'<h([23])\b[^>]*\bid="([^"]+)"[^>]*>(.*?)</h\1>', body, re.S):
        inner = re.sub(r'<a class="anchor-link"[^>]*>.*?</a>', "", inner, flags=re.S)
        inner = re.sub(r"</?(?!(?:code|em|strong|sub|sup)\b)[a-zA-Z][^>]*>", "", inner).strip()  # links, spans: text only
        if inner: items.append(f'<li class="preview-toc-h{level}"><a href="#{anchor}">{inner}</a></li>')
    if len(items) < TOC_MIN_HEADINGS: return ""
    return ('<nav class="preview-toc" aria-label="On this page"><div class="preview-toc-title">On this page</div><ul>'
            + "".join(items) + "</ul></nav>")


def sidebar_html(nav: Nav, pages: dict[str, Page], current: str, site_title: str) -> str:
    "The sidebar's HTML, with the current page marked."
    def link(name: str) -> str:
        page = pages[name]
        mark = ' class="preview-current" aria-current="page"' if name == current else ""
        return f'<li><a href="{html.escape(page.output)}"{mark}>{chapter_label(name, page.title)}</a></li>'
    home = html.escape(pages[nav.order()[0]].output)
    parts = [f'<nav class="preview-sidebar" aria-label="Chapters"><a class="preview-site" href="{home}">{html.escape(site_title)}</a>']
    for title, names in nav.groups:
        if title: parts.append(f'<span class="preview-section">{html.escape(title)}</span>')
        parts.append("<ul>" + "".join(link(n) for n in names) + "</ul>")
    return "\n".join(parts + ["</nav>"])


def pager_html(nav: Nav, pages: dict[str, Page], current: str) -> str:
    "Links to the previous and next pages in the sidebar's order."
    order = nav.order()
    at = order.index(current)
    parts = ['<nav class="preview-pager" aria-label="Previous and next">']
    if at > 0:
        page = pages[order[at - 1]]
        parts.append(f'<a class="preview-prev" href="{html.escape(page.output)}">&larr; {label_html(page.title)}</a>')
    if at + 1 < len(order):
        page = pages[order[at + 1]]
        parts.append(f'<a class="preview-next" href="{html.escape(page.output)}">{label_html(page.title)} &rarr;</a>')
    return "".join(parts + ["</nav>"])


def rewrite_links(text: str, pages: dict[str, Page], site_url: str) -> str:
    "Point `X.ipynb` links (and links into the published site) at the pages of this preview."
    def fix(match: re.Match) -> str:
        attr, url = match.group(1), html.unescape(match.group(2))
        if site_url and url.startswith(site_url + "/"): url = url[len(site_url) + 1:]
        parts = urlsplit(url)
        if not parts.scheme and not parts.netloc and parts.path.endswith(".ipynb"):
            name = Path(unquote(parts.path)).name
            target = pages[name].output if name in pages else Path(name).stem + ".html"
            url = str(Path(parts.path).parent / target).removeprefix("./") + (f"#{parts.fragment}" if parts.fragment else "")
        return f'{attr}="{html.escape(url)}"'
    return re.sub(r'\b(href)="([^"]*)"', fix, text)


def local_files(text: str) -> set[str]:
    "Relative paths of the files a page refers to (`src=` and `href=`), other pages and anchors left out."
    found = set()
    for url in re.findall(r'\b(?:src|href)="([^"]+)"', text):
        parts = urlsplit(html.unescape(url))
        if parts.scheme or parts.netloc or not parts.path or parts.path.endswith(".html"): continue
        found.add(unquote(parts.path))
    return found


def copy_assets(proc: Path, out: Path, referenced: set[str]) -> None:
    "Copy `images/` and every other file of `proc` that a page refers to (as Quarto copies a page's resources)."
    if (proc / "images").is_dir(): shutil.copytree(proc / "images", out / "images", dirs_exist_ok=True)
    for name in sorted(referenced):
        source = (proc / name).resolve()
        if source.is_file() and proc.resolve() in source.parents and not (out / name).exists():
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, out / name)


def copy_katex(out: Path) -> bool:
    "Copy KaTeX's script, styles, fonts and auto-render extension (and its licence) into `out/katex`; False if not installed."
    dist = KATEX / "dist"
    if not all((dist / name).exists() for name in KATEX_FILES): return False
    for name in KATEX_FILES:
        target = out / "katex" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if (dist / name).is_dir(): shutil.copytree(dist / name, target, dirs_exist_ok=True)
        else: shutil.copyfile(dist / name, target)
    if (KATEX / "LICENSE").exists(): shutil.copyfile(KATEX / "LICENSE", out / "katex" / "LICENSE")
    return True


def exporter() -> HTMLExporter:
    "nbconvert's HTML exporter with the JupyterLab template and our page around it, prompts hidden."
    return HTMLExporter(template_name="lab", template_file="preview.html.j2", exclude_input_prompt=True,
                        exclude_output_prompt=True, extra_loaders=[DictLoader({"preview.html.j2": TEMPLATE})])


def site_settings() -> tuple[str, str]:
    "The site's title and address, from nbs/nbdev.yml (Quarto's metadata file)."
    path = ROOT / "nbs" / "nbdev.yml"
    website = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("website", {}) if path.exists() else {}
    return str(website.get("title") or "santorini_az"), str(website.get("site-url") or "").rstrip("/")


def refuse(sentence: str) -> None:
    "Bad input: one sentence on stderr naming the culprit, and exit 2."
    print(f"preview_docs: {sentence}", file=sys.stderr)
    sys.exit(2)


def prepare_out(out: Path) -> None:
    "An empty output folder: one this script wrote before is emptied; any other non-empty folder is refused."
    if out.exists() and any(out.iterdir()):
        if not (out / MARKER).exists(): refuse(f"{out} is not empty and was not written by this script")
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).write_text("written by tools/preview_docs.py; emptied on every run\n")


def render_site(proc: Path, out: Path) -> tuple[Path, Nav]:
    "Render every notebook of `proc` into `out`; the index page's path and the navigation used."
    names = sorted(p.name for p in proc.glob("*.ipynb"))
    if not names: refuse(f"no notebooks in {proc}: run `nbdev_proc_nbs` or tools/test.sh first")
    pages = {name: read_page(proc / name) for name in names}
    nav, (site_title, site_url) = read_sidebar(proc, names), site_settings()
    prepare_out(out)
    katex = copy_katex(out)
    if not katex: print(f"preview_docs: warning: KaTeX is not installed in {KATEX} (run tools/setup.sh): math shows as TeX",
                        file=sys.stderr)
    export, referenced = exporter(), set()
    for name in nav.order():
        page = pages[name]
        title_html = inline_markdown(page.title)
        resources = {"metadata": {"name": plain_text(title_html)}, "preview": {
            "title_html": title_html, "description_html": inline_markdown(page.description) if page.description else "",
            "katex": katex, "sidebar": sidebar_html(nav, pages, name, site_title), "pager": pager_html(nav, pages, name)}}
        body, _ = export.from_notebook_node(valid_notebook(page.source, plain_text(title_html)), resources=resources)
        toc = toc_html(body)
        body = body.replace("<!--preview-toc-->", toc, 1)
        if toc: body = body.replace('<body class="jp-Notebook preview-page"', '<body class="jp-Notebook preview-page preview-has-toc"', 1)
        body = rewrite_links(body, pages, site_url)
        referenced |= local_files(body)
        (out / page.output).write_text(body, encoding="utf-8")
    (out / "preview.css").write_text(PREVIEW_CSS, encoding="utf-8")
    (out / "preview.js").write_text(PREVIEW_JS, encoding="utf-8")
    styles = proc / "styles.css" if (proc / "styles.css").exists() else ROOT / "nbs" / "styles.css"
    (out / "styles.css").write_text(styles.read_text(encoding="utf-8") if styles.exists() else "", encoding="utf-8")
    copy_assets(proc, out, referenced)
    index = out / (pages["index.ipynb"].output if "index.ipynb" in pages else pages[nav.order()[0]].output)
    return index, nav


def main(argv: list[str] | None = None) -> None:
    "Command line: render the site and print where its index is."
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--proc", type=Path, default=ROOT / "_proc", help="the processed notebooks (default: _proc)")
    parser.add_argument("--out", type=Path, default=ROOT / "_preview", help="the output folder (default: _preview)")
    args = parser.parse_args(argv)
    index, nav = render_site(args.proc, args.out)
    for name in nav.missing: print(f"preview_docs: warning: sidebar.yml lists {name}, which is not in {args.proc}", file=sys.stderr)
    print(f"preview_docs: {len(nav.order())} pages; open {index}")


if __name__ == "__main__":
    main()
