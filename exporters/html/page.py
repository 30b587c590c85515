"""A report page: a header, flags, and sections of charts and tables, rendered as one HTML file.

The page modules (run_page, compare_page, and later sweep pages) only build these objects; this module
turns them into HTML with plotly.js inline (or shared, exporters.html.assets), each chart's figure as JSON beside its container, and a
table view of every chart's plotted numbers built from that same JSON when the reader opens it.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

from exporters.html.assets import plotly_js, plotly_js_version
from exporters.html.page_static import BOOTSTRAP_JS, STYLE
from exporters.html.plotly_json import Figure

Level = Literal["warn", "info", "ok", "fail"]


@dataclass(slots=True)
class Cell:
    """A table cell with a CSS class (`pass`, `fail`, `num`, ...) and, optionally, a link (a relative URL:
    a report beside this one)."""

    text: str
    cls: str = ""
    href: str = ""


@dataclass(slots=True)
class Table:
    caption: str
    header: list[str]
    rows: list[list[str | Cell]]
    note: str = ""


@dataclass(slots=True)
class Chart:
    """One Plotly figure; `description` says what it shows and how it was computed."""

    figure: Figure
    description: str = ""

    @property
    def title(self) -> str:
        return self.figure["layout"]["title"]["text"]


@dataclass(slots=True)
class Text:
    """A paragraph of plain text."""

    text: str


@dataclass(slots=True)
class Flag:
    """Something that changes how a report is read (an incomplete run, estimated tokens, ...)."""

    level: Level
    title: str
    text: str


Item = Chart | Table | Text


@dataclass(slots=True)
class Section:
    title: str
    items: list[Item] = field(default_factory=list)
    intro: str = ""


@dataclass(slots=True)
class Page:
    title: str
    meta: list[tuple[str, str]]
    flags: list[Flag]
    sections: list[Section]
    footer: str = ""


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def _slug(text: str, taken: set[str]) -> str:
    base = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"
    slug, n = base, 2
    while slug in taken:
        slug, n = f"{base}-{n}", n + 1
    taken.add(slug)
    return slug


def _json_for_script(value: Any) -> str:
    """JSON safe inside a <script> element (no `</` to end it early)."""
    return orjson.dumps(value, option=orjson.OPT_SERIALIZE_NUMPY).decode().replace("</", "<\\/")


def _table(t: Table) -> str:
    head = "".join(f"<th scope=\"col\">{_esc(h)}</th>" for h in t.header)
    body = []
    for row in t.rows:
        cells = []
        for c in row:
            cell = c if isinstance(c, Cell) else Cell(c)
            cls = f" class=\"{_esc(cell.cls)}\"" if cell.cls else ""
            text = f"<a href=\"{_esc(cell.href)}\">{_esc(cell.text)}</a>" if cell.href else _esc(cell.text)
            cells.append(f"<td{cls}>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    note = f"<p class=\"note\">{_esc(t.note)}</p>" if t.note else ""
    return (f"<div class=\"table-wrap\"><table><caption>{_esc(t.caption)}</caption><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>{note}</div>")


def _chart(c: Chart, n: int, specs: list[str]) -> str:
    spec_id = f"fig-{n}"
    specs.append(f"<script type=\"application/json\" id=\"{spec_id}\">{_json_for_script(c.figure)}</script>")
    desc = f"<figcaption>{_esc(c.description)}</figcaption>" if c.description else ""
    return (f"<figure class=\"chart-block\"><div class=\"chart\" data-spec=\"{spec_id}\" role=\"img\" "
            f"aria-label=\"{_esc(c.title)}\"></div>{desc}"
            f"<details class=\"data-table\" data-spec=\"{spec_id}\"><summary>Table view: every plotted number of "
            f"&ldquo;{_esc(c.title)}&rdquo;</summary></details></figure>")


def _item(item: Chart | Table | Text, n: int, specs: list[str]) -> str:
    if isinstance(item, Chart):
        return _chart(item, n, specs)
    if isinstance(item, Table):
        return _table(item)
    return f"<p>{_esc(item.text)}</p>"


def render_page(page: Page, *, library_src: str | None = None) -> str:
    """The whole HTML document: plotly.js inline, or loaded from `library_src` (a relative URL: the copy a
    sweep or capacity directory shares between its pages)."""
    taken: set[str] = set()
    slugs = [_slug(s.title, taken) for s in page.sections]
    specs: list[str] = []
    body = []
    n = 0
    for section, slug in zip(page.sections, slugs, strict=True):
        parts = [f"<section id=\"{slug}\"><h2>{_esc(section.title)}</h2>"]
        if section.intro:
            parts.append(f"<p class=\"intro\">{_esc(section.intro)}</p>")
        for item in section.items:
            parts.append(_item(item, n, specs))
            n += isinstance(item, Chart)
        parts.append("</section>")
        body.append("".join(parts))
    meta = "".join(f"<dt>{_esc(k)}</dt><dd>{_esc(v)}</dd>" for k, v in page.meta)
    flags = "".join(f"<li class=\"flag {f.level}\"><strong>{_esc(f.title)}</strong> {_esc(f.text)}</li>"
                    for f in page.flags)
    nav = "".join(f"<li><a href=\"#{slug}\">{_esc(s.title)}</a></li>" for s, slug in zip(page.sections, slugs, strict=True))
    where = f"from {library_src}" if library_src else "embedded"
    footer = _esc(page.footer) + f" Charts: plotly.js {_esc(plotly_js_version())} (basic build), {_esc(where)}; no network needed."
    library = f"<script src=\"{_esc(library_src)}\"></script>" if library_src else f"<script>{plotly_js()}</script>"
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>{_esc(page.title)}</title><style>{STYLE}</style></head><body>"
        f"<header><h1>{_esc(page.title)}</h1><dl class=\"meta\">{meta}</dl>"
        + (f"<ul class=\"flags\" aria-label=\"How to read this report\">{flags}</ul>" if flags else "")
        + f"<nav aria-label=\"Sections\"><ul>{nav}</ul></nav></header><main>{''.join(body)}</main>"
        f"<footer><p>{footer}</p></footer>"
        f"{library}{''.join(specs)}<script>{BOOTSTRAP_JS}</script></body></html>\n"
    )
