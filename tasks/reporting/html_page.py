"""The report page as data and its rendering: blocks (text, tables, figures, Markdown) grouped
in sections, turned into one HTML file by a jinja2 template (autoescaped; figures are ``data:``
URIs). No clock, no randomness: the same sections give the same bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

# --- blocks ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Text:
    """A paragraph of plain text (escaped)."""

    kind: ClassVar[str] = "text"
    text: str


@dataclass(frozen=True)
class Heading:
    """A sub-heading inside a section."""

    kind: ClassVar[str] = "heading"
    text: str


@dataclass(frozen=True)
class Bullets:
    """A bulleted list of plain text."""

    kind: ClassVar[str] = "list"
    items: list[str]


@dataclass(frozen=True)
class Table:
    """A table of text cells; ``numeric`` columns are right-aligned; ``total``: the last row
    is a summary row (set in bold)."""

    kind: ClassVar[str] = "table"
    caption: str
    header: list[str]
    rows: list[list[str]]
    numeric: list[bool] = field(default_factory=list)
    total: bool = False

    @property
    def column_classes(self) -> list[str]:
        """CSS class per column: ``num`` (right-aligned), ``hash`` (monospace) or none."""
        return ["num" if i < len(self.numeric) and self.numeric[i]
                else "hash" if name == "sha256" else "" for i, name in enumerate(self.header)]


@dataclass(frozen=True)
class Figure:
    """A PNG embedded as a ``data:`` URI."""

    kind: ClassVar[str] = "figure"
    caption: str
    src: str
    name: str


@dataclass(frozen=True)
class Markdown:
    """A Markdown report of a flow, rendered to HTML (raw HTML in it is escaped)."""

    kind: ClassVar[str] = "markdown"
    html: str


@dataclass(frozen=True)
class Preformatted:
    """Literal text (the parameters)."""

    kind: ClassVar[str] = "pre"
    text: str


Block = Heading | Text | Bullets | Table | Figure | Markdown | Preformatted


@dataclass
class Section:
    """One section of the page; ``missing`` lists what was absent when it did not run."""

    id: str
    title: str
    flow: str | None
    blocks: list[Block] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    @property
    def ran(self) -> bool:
        return not self.missing


# --- rendering ---------------------------------------------------------------------------------


def render_markdown(text: str, shift: int = 2) -> str:
    """Markdown -> HTML (CommonMark + tables, raw HTML escaped), headings moved ``shift``
    levels down so that a report's ``#`` title nests under its section."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = md.parse(text)
    for token in tokens:
        if token.type in ("heading_open", "heading_close"):
            token.tag = f"h{min(6, int(token.tag[1:]) + shift)}"
    return md.renderer.render(tokens, md.options, {})


_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ title }}</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d1d1f;
       max-width: 72rem; margin: 2rem auto; padding: 0 1.5rem; line-height: 1.5; }
h1 { font-size: 1.8rem; border-bottom: 2px solid #d0d7de; padding-bottom: .3rem; }
h2 { font-size: 1.4rem; margin-top: 2.5rem; border-bottom: 1px solid #d0d7de; }
h3, h4, h5, h6 { margin-top: 1.5rem; }
nav { background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 6px;
      padding: .5rem 1.5rem; }
nav li.not-run a { color: #8c959f; }
.status { font-size: .8rem; font-weight: normal; color: #8c959f; }
.not-run-note { background: #fff8c5; border-left: 4px solid #d4a72c; padding: .5rem 1rem; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: .5rem 0 1.5rem; font-size: .9rem; }
caption { text-align: left; font-weight: 600; padding: .3rem 0; }
th, td { border: 1px solid #d0d7de; padding: .25rem .6rem; vertical-align: top; }
th { background: #f6f8fa; }
tbody tr:nth-child(even) { background: #fbfcfd; }
tr.total td { font-weight: 600; border-top: 2px solid #8c959f; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td code, td.hash { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: .8rem; }
figure { margin: 1rem 0 2rem; }
figure img { max-width: 100%; height: auto; border: 1px solid #d0d7de; }
figcaption { font-size: .9rem; color: #57606a; }
pre { background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 6px; padding: 1rem;
      overflow-x: auto; font-size: .8rem; }
</style>
</head>
<body>
<h1>{{ title }}</h1>
<nav>
<h2 id="contents">Contents</h2>
<ol>
{% for s in sections %}
<li{% if not s.ran %} class="not-run"{% endif %}><a href="#{{ s.id }}">{{ s.title }}</a>
{%- if not s.ran %} <span class="status">(not run)</span>{% endif %}</li>
{% endfor %}
</ol>
</nav>
{% for s in sections %}
<section id="{{ s.id }}">
<h2>{{ s.title }}{% if s.flow %} <span class="status">{{ s.flow }} flow</span>{% endif %}</h2>
{% if not s.ran %}
<p class="not-run-note">Not run: the {{ s.flow }} flow has not written
{% for m in s.missing %}<code>{{ m }}</code>{% if not loop.last %}, {% endif %}{% endfor %}.</p>
{% endif %}
{% for b in s.blocks %}
{% if b.kind == "text" %}
<p>{{ b.text }}</p>
{% elif b.kind == "heading" %}
<h3>{{ b.text }}</h3>
{% elif b.kind == "list" %}
<ul>
{% for item in b.items %}
<li>{{ item }}</li>
{% endfor %}
</ul>
{% elif b.kind == "table" %}
<div class="scroll"><table>
<caption>{{ b.caption }}</caption>
<thead><tr>{% for h in b.header %}<th>{{ h }}</th>{% endfor %}</tr></thead>
<tbody>
{% for row in b.rows %}
<tr{% if b.total and loop.last %} class="total"{% endif %}>
{%- for cell in row %}{% set cls = b.column_classes[loop.index0] %}
<td{% if cls %} class="{{ cls }}"{% endif %}>{{ cell }}</td>
{%- endfor %}</tr>
{% endfor %}
</tbody>
</table></div>
{% elif b.kind == "figure" %}
<figure><img src="{{ b.src }}" alt="{{ b.caption }}"><figcaption>{{ b.caption }}
(<code>{{ b.name }}</code>)</figcaption></figure>
{% elif b.kind == "markdown" %}
<div class="scroll markdown">{{ b.html | safe }}</div>
{% elif b.kind == "pre" %}
<pre>{{ b.text }}</pre>
{% endif %}
{% endfor %}
</section>
{% endfor %}
</body>
</html>
"""


def render_page(title: str, sections: Sequence[Section]) -> str:
    """The whole page: title, table of contents, sections."""
    from jinja2 import Environment, StrictUndefined

    env = Environment(autoescape=True, undefined=StrictUndefined, trim_blocks=True,
                      lstrip_blocks=True, keep_trailing_newline=True)
    return env.from_string(_TEMPLATE).render(title=title, sections=sections)
