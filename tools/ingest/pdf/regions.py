"""Tables and figures: their bodies located from the caption and the rules or graphics next to
it, tables rendered to rows, and both removed from the running text.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from tools.ingest.pdf.layout import inside
from tools.ingest.pdf.model import Line, PageData, Region, Style
from tools.ingest.pdf.tables import build_grid, render_grid
from tools.ingest.pdf.text import match_caption, match_heading, normalize_text

log = logging.getLogger(__name__)


def locate_regions(page: PageData, lines: list[Line], style: Style, plumber_page: Any) -> None:
    """Find each captioned table/figure body on the page; render tables to text."""
    for i, line in enumerate(lines):
        found = match_caption(line.text)
        if not found or not _starts_paragraph(lines, i, style):
            continue
        kind, label = found
        if any(r.label == label for r in page.regions):
            continue
        bbox = _table_bbox(page, lines, i, style) if kind == "table" else _figure_bbox(page, line)
        if bbox is None:
            continue
        region = Region(kind, label, bbox, (line.top, line.x0))
        if kind == "table":
            region.text = _render_table(page, bbox, plumber_page)
        page.regions.append(region)


def _starts_paragraph(lines: list[Line], i: int, style: Style) -> bool:
    """Rough paragraph start, good enough to accept a caption line before the full pass."""
    line = lines[i]
    if i == 0 or lines[i - 1].seg != line.seg:
        return True
    prev = lines[i - 1]
    return (
        line.top - prev.top > style.pitch * 1.3
        or abs(line.size - prev.size) > 0.5
        or bool(re.search(r"[.:!?)\]\d]$", prev.text))
        or line.bold > 0.2
    )


def _column_box(line: Line) -> tuple[float, float]:
    return line.area


def _figure_bbox(page: PageData, caption: Line) -> tuple[float, float, float, float] | None:
    """Graphics stacked right above the caption (within the caption's column)."""
    x0, x1 = _column_box(caption)
    boxes = [
        g
        for g in page.graphics
        if g[0] >= x0 - 5 and g[2] <= x1 + 5 and g[3] <= caption.top + 2 and (g[2] - g[0]) < 0.98 * page.width
    ]
    boxes.sort(key=lambda g: -g[3])
    top, found = caption.top, False
    for g in boxes:
        if g[3] >= top - 40:
            top = min(top, g[1])
            found = True
    if not found:
        return None
    return x0, top - 2, x1, caption.top - 0.5


def _table_bbox(page: PageData, lines: list[Line], i: int, style: Style) -> tuple[float, float, float, float] | None:
    """Rules (booktabs) or tabular lines right above - or else right below - the caption."""
    caption = lines[i]
    x0, x1 = _column_box(caption)
    width = x1 - x0
    rules = sorted(
        (
            g
            for g in page.graphics
            if g[3] - g[1] < 2.5 and g[2] - g[0] > 0.25 * width and g[0] >= x0 - 5 and g[2] <= x1 + 5
        ),
        key=lambda g: g[1],
    )
    above = [g for g in rules if g[3] <= caption.top + 1]
    if above and caption.top - above[-1][3] < 40:
        top = above[-1][1]
        for g in reversed(above[:-1]):
            if _blocked_between(lines, x0, x1, g[3], top, style):
                break
            top = g[1]
        return x0, top - 1, x1, caption.top - 0.5
    end = _caption_end(lines, i, style)
    below = [g for g in rules if g[1] >= end - 1]
    if below and below[0][1] - end < 40:
        bottom = below[0][3]
        for g in below[1:]:
            if _blocked_between(lines, x0, x1, bottom, g[1], style):
                break
            bottom = g[3]
        return x0, end + 0.5, x1, bottom + 1
    return _tabular_lines_bbox(lines, i, style)


def _caption_end(lines: list[Line], i: int, style: Style) -> float:
    end = lines[i].bottom
    for prev, line in zip(lines[i:], lines[i + 1 :]):
        if line.seg != prev.seg or line.top - prev.top > style.pitch * 1.4:
            break
        end = line.bottom
    return end


def _is_prose(line: Line, style: Style) -> bool:
    """A line of running text: fills its column with word-sized gaps at body size."""
    width = line.seg_x1 - line.seg_x0
    return line.x1 - line.x0 > 0.85 * width and line.max_gap < 0.8 * line.size and line.size > style.body_size - 0.6


def _blocked_between(lines: list[Line], x0: float, x1: float, top: float, bottom: float, style: Style) -> bool:
    """Is there something between two rules that cannot be inside one table?

    Running text, another caption, or a line that sticks out of the table's column (the
    caption of a full-width table above a one-column one).
    """
    for ln in lines:
        if not (top < ln.top and ln.bottom < bottom and ln.x1 > x0 and ln.x0 < x1):
            continue
        if _is_prose(ln, style) or match_caption(ln.text) or ln.x0 < x0 - 5 or ln.x1 > x1 + 5:
            return True
    return False


def _tabular_lines_bbox(lines: list[Line], i: int, style: Style) -> tuple[float, float, float, float] | None:
    """No rules: the run of lines with wide cell gaps right above the caption."""
    caption, rows = lines[i], []
    for line in reversed(lines[:i]):
        if line.seg != caption.seg or _is_prose(line, style) or match_heading(line.text):
            break
        if line.max_gap < 1.0 * line.size and len(line.words) > 1:
            break
        rows.append(line)
    if len(rows) < 2:
        return None
    return (
        min(r.x0 for r in rows) - 1,
        min(r.top for r in rows) - 1,
        max(r.x1 for r in rows) + 1,
        caption.top - 0.5,
    )


def _render_table(page: PageData, bbox: tuple[float, float, float, float], plumber_page: Any) -> str:
    """The table as a pipe-table grid (tables.render_grid): pdfplumber's cells for a fully
    ruled table, else the grid read from the words and the horizontal rules."""
    cells = _ruled_table_cells(page, plumber_page, bbox)
    if cells:
        return render_grid(cells, 1)
    words = [w for w in page.words if inside(w, bbox)]
    rows, heads = build_grid(words, _horizontal_rules(page, bbox))
    return render_grid(rows, heads)


def _horizontal_rules(page: PageData, bbox: tuple[float, float, float, float]) -> list[tuple[float, float]]:
    """(y, share of the box's width) of the horizontal rules inside the table's box (booktabs
    top/mid/bottom rules, and the partial ones under group headers)."""
    x0, top, x1, bottom = bbox
    width = x1 - x0
    return sorted(
        ((g[1] + g[3]) / 2, (g[2] - g[0]) / width)
        for g in page.graphics
        if g[3] - g[1] < 2.5
        and g[2] - g[0] > 0.15 * width
        and g[0] >= x0 - 5
        and g[2] <= x1 + 5
        and top - 3 <= g[1] <= bottom + 3
    )


def _ruled_table_cells(page: PageData, plumber_page: Any, bbox: tuple[float, float, float, float]) -> list[list[str]]:
    """pdfplumber's own table finder inside the region: exact cells for fully ruled tables.

    Booktabs tables (most ACL papers) have no vertical rules and give nothing here, so the
    finder is only asked when the region has some.
    """
    x0, top, x1, bottom = bbox
    vertical = [
        g
        for g in page.graphics
        if g[2] - g[0] < 2.5 and g[3] - g[1] > 8 and x0 - 2 <= g[0] <= x1 + 2 and g[1] >= top - 3 and g[3] <= bottom + 3
    ]
    if len(vertical) < 2:
        return []
    clip = (max(0.0, x0), max(0.0, top), min(float(plumber_page.width), x1), min(float(plumber_page.height), bottom))
    try:
        tables = plumber_page.crop(clip).find_tables()
    except Exception as exc:  # a table finder failure must not lose the caption
        log.debug("find_tables failed on page %s: %s", plumber_page.page_number, exc)
        return []
    if not tables:
        return []
    table = max(tables, key=lambda t: (t.bbox[2] - t.bbox[0]) * (t.bbox[3] - t.bbox[1]))
    cells = table.extract()
    if len(cells) < 2 or max(len(r) for r in cells) < 2:
        return []
    return [[normalize_text(re.sub(r"\s+", " ", c or "")).strip() for c in row] for row in cells]
