"""Tables as grids: the words of a located table body cut into rows and columns, rendered as a
pipe table (header rows, a `|---|` line, body rows), so each cell has a row and a column.

Booktabs tables (most ACL papers) have horizontal rules only, so the grid comes from the
words themselves:

- columns are the x-ranges that the body's words cover; an x-range that (nearly) no body row
  covers separates two columns, however narrow (numbers set one space apart), while the
  spaces between the words of a text cell move from row to row and separate nothing;
- each printed line is a row, except a line that only carries on cells of the row above it
  (a wrapped title or header cell: fewer cells, no figure of its own, no rule between);
- the header is what stands above the first rule that has text above it (else the first row).
"""

from __future__ import annotations

import itertools
import re
import statistics
from collections.abc import Sequence

from tools.ingest.pdf.model import Word, line_text
from tools.tables import parse_grid, render_grid  # noqa: F401 - re-exported for the PDF stages

# An x covered by at most this share of the body rows still separates columns (a group row
# such as "Region A" spanning the table must not merge them).
_SPANNING_SHARE = 0.25
_MIN_GAP = 1.5  # points: narrower uncovered runs are kerning, not a column gap
_FIGURE = re.compile(r"\d")
_NUMBER = re.compile(r"[\d.,%±()+\-–−/*†‡]+")


def group_lines(words: Sequence[Word]) -> list[list[Word]]:
    """The table's printed lines, top to bottom, words left to right."""
    from tools.ingest.pdf.layout import group_rows

    rows = group_rows(words)
    rows.sort(key=lambda r: statistics.median(w.base for w in r))
    return [sorted(r, key=lambda w: w.x0) for r in rows]


def column_edges(lines: Sequence[Sequence[Word]]) -> list[float]:
    """The x positions that separate columns, from the lines' word coverage: x-ranges no line
    covers; only when that gives fewer columns than most lines have cells (a row spanning the
    table bridges a gap), x-ranges that few lines cover."""
    strict = _edges(lines, 0)
    if len(lines) < 4:
        return strict
    typical = statistics.median(len(_runs(ln)) for ln in lines)
    if len(strict) + 1 >= typical:
        return strict
    return _edges(lines, int(_SPANNING_SHARE * len(lines)))


def _edges(lines: Sequence[Sequence[Word]], allowed: int) -> list[float]:
    if not lines:
        return []
    lo = int(min(w.x0 for ln in lines for w in ln))
    hi = int(max(w.x1 for ln in lines for w in ln)) + 1
    cover = [0] * (hi - lo + 1)
    for ln in lines:
        seen: set[int] = set()
        for w in ln:
            seen.update(range(int(w.x0) - lo, int(w.x1) - lo + 1))
        for x in seen:
            cover[x] += 1
    edges, start = [], None
    for x, n in enumerate(cover):
        if n <= allowed and start is None:
            start = x
        elif n > allowed and start is not None:
            if x - start >= _MIN_GAP and start > 0:
                edges.append(lo + (start + x) / 2)
            start = None
    return edges


def _cells(line: Sequence[Word], edges: Sequence[float]) -> list[str]:
    """The line's words put in their columns: a run of words a word space apart is one cell
    (a spanning header "User activity prediction"), placed by its centre; figures are
    cells of their own however close (numbers set one space apart)."""
    parts: list[list[Word]] = [[] for _ in range(len(edges) + 1)]
    for run in _split_at_edges(_runs(line), edges):
        column = sum((run[0].x0 + run[-1].x1) / 2 > e for e in edges)
        parts[column].extend(run)
    return [line_text(p) if p else "" for p in parts]


def _runs(line: Sequence[Word]) -> list[list[Word]]:
    """The line's words in runs a word space apart; two figures side by side are two cells
    (numbers set one space apart), a figure among words is part of the text ("Avg. of 15
    models", "2 / 44")."""
    runs: list[list[Word]] = []
    for w in line:
        prev = runs[-1][-1] if runs else None
        if (
            prev is not None
            and w.x0 - prev.x1 < 0.4 * max(w.size, prev.size)
            and not (_is_figure(w.text) and _is_figure(prev.text))
        ):
            runs[-1].append(w)
        else:
            runs.append([w])
    return runs


def _split_at_edges(runs: list[list[Word]], edges: Sequence[float]) -> list[list[Word]]:
    """A run is cut where a column edge falls between its words and the figures that end it (a
    row label set close to its first value: "co-citation 82.9"); figures among words stay
    ("Avg. of 15 models", "2 / 44")."""
    out: list[list[Word]] = []
    for run in runs:
        current = [run[0]]
        for k, (prev, w) in enumerate(itertools.pairwise(run), start=1):
            crossing = any(prev.x1 <= e <= w.x0 for e in edges)
            values = all(_is_figure(x.text) for x in run[k:])  # only figures from here on
            if crossing and values and not _is_figure(prev.text):
                out.append(current)
                current = []
            current.append(w)
        out.append(current)
    return out


def _is_figure(text: str) -> bool:
    return _NUMBER.fullmatch(text) is not None and _FIGURE.search(text) is not None


def _continues(cells: Sequence[str], above: Sequence[str]) -> bool:
    """Does this line only carry on cells of the row above (a wrapped cell)?"""
    filled = [i for i, c in enumerate(cells) if c]
    above_filled = [i for i, c in enumerate(above) if c]
    if not filled or len(above_filled) < 2 or len(filled) * 2 > len(above_filled):
        return False
    if any(_FIGURE.search(cells[i]) and re.fullmatch(r"[\d.,%±()+\-–−/ ]+", cells[i]) for i in filled):
        return False  # a figure of its own: a row (a group's next row), not a wrapped cell
    return all(i in above_filled for i in filled)


def build_grid(words: Sequence[Word], rules: Sequence[tuple[float, float]]) -> tuple[list[list[str]], int]:
    """(rows of cells, number of header rows) for a table's words and its horizontal rules,
    each (y, share of the table's width it spans). The header ends at the first rule as wide
    as the widest (a booktabs midrule) with text above it; a partial rule (under a spanning header)
    separates header rows but does not end the header."""
    lines = group_lines(words)
    if not lines:
        return [], 0
    tops = [min(w.top for w in ln) for ln in lines]
    ys = sorted(y for y, _ in rules)
    widest = max((share for _, share in rules), default=1.0)
    header_rule = next(
        (
            y
            for y, share in sorted(rules)
            if share >= 0.9 * widest and any(t < y for t in tops) and any(t > y for t in tops)
        ),
        None,
    )
    n_head = sum(t < header_rule for t in tops) if header_rule is not None else 1
    body = lines[n_head:] or lines
    edges = column_edges(body)
    steps = [b - a for a, b in zip(tops[n_head:], tops[n_head + 1 :])]
    pitch = statistics.median(steps) if steps else None
    grid = [_cells(line, edges) for line in lines]
    rows: list[list[str]] = []
    heads = 0
    for k, cells in enumerate(grid):
        ruled = k > 0 and any(tops[k - 1] < y < tops[k] for y in ys)
        # header lines closer than the body's rows are one header row set over several lines
        tight = k < n_head and pitch is not None and tops[k] - tops[k - 1] < 0.8 * pitch
        merge = bool(rows) and (_continues(cells, rows[-1]) or tight)
        if rows and not ruled and k != n_head and merge:
            rows[-1] = [f"{a} {b}".strip() if b else a for a, b in zip(rows[-1], cells)]
            continue
        rows.append(cells)
        if k < n_head:
            heads += 1
    keep = [c for c in range(len(edges) + 1) if any(r[c] for r in rows)]  # a gap no cell is in
    return _merge_exclusive([[r[c] for c in keep] for r in rows]), heads


def _merge_exclusive(rows: list[list[str]]) -> list[list[str]]:
    """Neighbouring columns that no row fills both of are one column set at two indents (a
    hierarchy of row labels, a header centred over right-aligned figures)."""
    c = 0
    while rows and c + 1 < len(rows[0]):
        if not any(r[c] and r[c + 1] for r in rows):
            rows = [[*r[:c], r[c] or r[c + 1], *r[c + 2 :]] for r in rows]
        else:
            c += 1
    return rows
