"""A cited chunk as the web chat shows it: HTML with every character of the paper escaped (paper
text is data), the quoted sentences inside <mark>; a table chunk (a pipe table under its caption)
as an HTML table, its caption once, the cited rows marked."""

from __future__ import annotations

import html
from typing import Any

from tools.tables import is_row, is_separator


def cited_spans(c: dict[str, Any]) -> list[tuple[int, int]]:
    """The quoted sentences' (start, end) in the chunk's text, in order, overlaps dropped."""
    text = c.get("chunk_text") or ""
    spans, pos = [], 0
    for start, end in sorted((s["start"], s["end"]) for s in c.get("sentences") or [] if s["end"] <= len(text)):
        if start >= pos:
            spans.append((start, close_brackets(text, start, end)))
            pos = spans[-1][1]
    return spans


def close_brackets(text: str, start: int, end: int) -> int:
    """`end`, moved past the closing brackets that the span opened and that follow it at once
    ("Beltagy et al. (2019" + ")"): a highlight never leaves a parenthesis it opened unclosed."""
    span = text[start:end]
    for opening, closing in ("()", "[]"):
        while span.count(opening) > span.count(closing) and end < len(text) and text[end] == closing:
            end += 1
            span = text[start:end]
    return end


def prose_html(text: str, spans: list[tuple[int, int]]) -> str:
    out, pos = [], 0
    for start, end in spans:
        out += [html.escape(text[pos:start]), "<mark>", html.escape(text[start:end]), "</mark>"]
        pos = end
    out.append(html.escape(text[pos:]))
    return "".join(out).replace("\n", "<br>")


def table_html(text: str, spans: list[tuple[int, int]]) -> str:
    """A pipe-table chunk as <table>: caption lines first (a line repeated is shown once), the
    rows above the `|---|` line as header cells, a cited line marked."""
    captions: dict[str, str] = {}  # caption line -> its HTML, each line once
    head: list[str] = []
    body: list[str] = []
    pos = 0
    rows: list[tuple[list[str], bool]] = []
    header_rows = 0
    for line in text.split("\n"):
        start, end = pos, pos + len(line)
        pos = end + 1
        cited = any(s < end and e > start for s, e in spans)
        stripped = line.strip()
        if not stripped:
            continue
        if is_separator(stripped):
            header_rows = len(rows)
            continue
        if is_row(stripped):
            rows.append(([c.strip() for c in stripped[2:-2].split(" | ")], cited))
            continue
        if stripped not in captions or cited:
            captions[stripped] = f"<mark>{html.escape(stripped)}</mark>" if cited else html.escape(stripped)
    for i, (cells, cited) in enumerate(rows):
        tag = "th" if i < header_rows else "td"
        inner = "".join(f"<{tag}>{_cell(cell, cited)}</{tag}>" for cell in cells)
        (head if i < header_rows else body).append(f"<tr>{inner}</tr>")
    caption = "<br>".join(captions.values())
    parts = [f"<div class='litloop-caption'>{caption}</div>" if caption else ""]
    parts.append("<table class='litloop-table'>")
    if head:
        parts.append("<thead>" + "".join(head) + "</thead>")
    parts.append("<tbody>" + "".join(body) + "</tbody></table>")
    return "".join(parts)


def _cell(cell: str, cited: bool) -> str:
    return f"<mark>{html.escape(cell)}</mark>" if cited and cell else html.escape(cell)


def chunk_html(c: dict[str, Any]) -> str:
    """A citation's chunk as HTML (a table chunk as a table); the quote alone when the chunk
    text is absent."""
    text = c.get("chunk_text") or ""
    spans = cited_spans(c)
    if not text or not spans:
        return html.escape(c.get("quote") or "")
    if c.get("kind") == "table" and any(is_row(line) for line in text.split("\n")):
        return table_html(text, spans)
    return prose_html(text, spans)
