"""Columns and lines: the gutter of a two-column page, full-width bands, and each column's lines
in reading order without page furniture.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterable

from tools.ingest.pdf.model import Line, PageData, Segment, Word

_SPAN_REACH = 20.0  # a full-width row reaches this far past the gutter on both sides


_MIN_GUTTER = 6  # narrowest column gap taken for a gutter (ACL's is about 17 pt)


def group_rows(words: Iterable[Word]) -> list[list[Word]]:
    """Words that share a text line, superscripts and subscripts included.

    Rows are compared on boxes derived from the baseline and font size, and a row is
    represented by its largest word, so a superscript that happens to come first does not
    decide which subscripts still belong to the line.
    """
    rows: list[list[Word]] = []
    cores: list[Word] = []
    for w in sorted(words, key=lambda w: (w.vtop, w.x0)):
        for k in range(len(rows) - 1, max(len(rows) - 3, -1), -1):
            core = cores[k]
            overlap = min(core.vbottom, w.vbottom) - max(core.vtop, w.vtop)
            if overlap >= 0.4 * min(core.vbottom - core.vtop, w.vbottom - w.vtop):
                rows[k].append(w)
                if w.size > core.size:
                    cores[k] = w
                break
        else:
            rows.append([w])
            cores.append(w)
    return rows


def _find_gutter(words: list[Word], rows: list[list[Word]], width: float) -> tuple[float, float] | None:
    """(centre, width) of the column gutter, or None for a one-column page."""
    if len(words) < 40:
        return None
    lo, hi = int(width * 0.38), int(width * 0.62)
    cover = [0] * (hi - lo)
    for row in rows:
        covered: set[int] = set()
        for w in row:
            covered.update(range(max(lo, int(w.x0) + 1), min(hi, int(w.x1))))
        for x in covered:
            cover[x - lo] += 1
    best = min(cover)
    if best > 0.3 * len(rows):
        return None
    # The gutter is the whole low-coverage run around the minimum: full-width rows (title,
    # captions) cross it, each with its own word gaps, so the exact minimum is arbitrary.
    low = best + max(2, 0.1 * len(rows))
    k = cover.index(best)
    s, e = k, k + 1
    while s > 0 and cover[s - 1] <= low:
        s -= 1
    while e < len(cover) and cover[e] <= low:
        e += 1
    if e - s < _MIN_GUTTER:
        return None  # word gaps that happen to line up, not a gutter
    centre = lo + (s + e) / 2
    left = sum(1 for w in words if w.x1 <= centre)
    right = sum(1 for w in words if w.x0 >= centre)
    if left < 0.2 * len(words) or right < 0.2 * len(words):
        return None
    return centre, float(e - s)


def _spanning_interval(row: list[Word], centre: float, gutter: float, right_edge: float) -> tuple[float, float] | None:
    """The vertical extent of the part of a row that runs continuously across the gutter.

    Two column lines side by side are told apart from one full-width line by the gap at the
    gutter (a normal word space is much narrower than the gutter) and by the right-hand
    part starting exactly at the right column's edge (an overfull left line can shrink the
    gap, it cannot move the right column).
    """
    row = sorted(row, key=lambda w: w.x0)
    k = next((i for i, w in enumerate(row) if w.x1 >= centre), None)
    if k is None:
        return None

    def joined(a: Word, b: Word) -> bool:
        # A word space, not a gutter: under half an em even when the measured gutter is
        # narrow (figures can hide the real one).
        return b.x0 - a.x1 < max(0.35 * gutter, 0.5 * max(a.size, b.size))

    if row[k].x0 > centre - 1 and (k == 0 or not joined(row[k - 1], row[k]) or abs(row[k].x0 - right_edge) < 1.5):
        return None
    i = j = k
    while i > 0 and joined(row[i - 1], row[i]):
        i -= 1
    while j < len(row) - 1 and joined(row[j], row[j + 1]):
        j += 1
    run = row[i : j + 1]
    if run[0].x0 < centre - _SPAN_REACH and run[-1].x1 > centre + _SPAN_REACH:
        return min(w.top for w in run), max(w.bottom for w in run)
    return None


def _segments(words: list[Word], width: float) -> list[Segment]:
    """Columns and full-width bands in reading order."""
    rows = group_rows(words)
    gutter = _find_gutter(words, rows, width)
    if gutter is None:  # the text's own edges: a last page with only its left column filled
        return [Segment(min(w.x0 for w in words), max(w.x1 for w in words), (0.0, width), list(words))] if words else []
    centre, gwidth = gutter
    right_edge = Counter(round(w.x0) for w in words if w.x0 > centre).most_common(1)[0][0]
    spans = _merge_intervals(s for row in rows if (s := _spanning_interval(row, centre, gwidth, float(right_edge))))
    # Bands top to bottom: (left, right) columns, then a full-width band, and so on.
    bands: list[list[Segment]] = []
    for k in range(len(spans) + 1):
        bands.append([Segment(0.0, centre, (0.0, centre)), Segment(centre, width, (centre, width))])
        if k < len(spans):
            bands.append([Segment(0.0, width, (0.0, width))])
    for w in words:
        segs = bands[_band_of(w, spans)]
        (segs[0] if len(segs) == 1 or (w.x0 + w.x1) / 2 < centre else segs[1]).words.append(w)
    out: list[Segment] = []
    for seg in (s for band in bands for s in band if s.words):
        full = seg.area == (0.0, width)
        if out and full and out[-1].area == seg.area:  # nothing in columns between them
            out[-1].words.extend(seg.words)
        else:
            out.append(seg)
    for seg in out:
        seg.x0 = min(w.x0 for w in seg.words)
        seg.x1 = max(w.x1 for w in seg.words)
    return out


def _merge_intervals(intervals: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    merged: list[tuple[float, float]] = []
    for top, bottom in sorted(intervals):
        if merged and top <= merged[-1][1] + 1.0:
            merged[-1] = (merged[-1][0], max(merged[-1][1], bottom))
        else:
            merged.append((top, bottom))
    return merged


def _band_of(word: Word, spans: list[tuple[float, float]]) -> int:
    """Index of the band holding the word: 2k+1 is full-width band k, 2k its columns above."""
    band = 0
    for k, (top, bottom) in enumerate(spans):
        if top - 1.0 <= word.mid <= bottom + 1.0:
            return 2 * k + 1
        if word.mid > bottom:
            band = 2 * k + 2
    return band


def layout_lines(page: PageData, exclude: list[tuple[float, ...]]) -> list[Line]:
    """The page's lines in reading order, without words inside `exclude` boxes or furniture."""
    words = [w for w in page.words if not any(inside(w, box) for box in exclude)]
    lines: list[Line] = []
    for k, seg in enumerate(_segments(words, page.width)):
        rows = group_rows(seg.words)
        x0 = _left_margin(rows)
        for row in rows:
            lines.append(Line(_without_note_marks(row), page.number, k, x0, seg.x1, seg.area))
    return [ln for ln in lines if ln.text and not _is_furniture(ln, page)]


def _without_note_marks(row: list[Word]) -> list[Word]:
    """The row without footnote marks set apart after punctuation ("reproducibility. 11"):
    a word of one or two digits, smaller and raised, after a word that ends in punctuation."""
    main = max(w.size for w in row)
    bases = [w.base for w in row if w.size == main]
    base = sorted(bases)[len(bases) // 2]
    ordered = sorted(row, key=lambda w: w.x0)
    keep = [ordered[0]]
    for prev, w in itertools.pairwise(ordered):
        mark = (
            len(w.text) <= 2
            and w.text.isdigit()
            and w.size < 0.8 * main
            and w.base < base - 0.2 * main
            and w.n_math == 0
            and prev.text[-1:] in ".,;:)!?"
        )
        if not mark:
            keep.append(w)
    return keep


def _left_margin(rows: list[list[Word]]) -> float:
    """The column's left edge: the most common line start (indented lines are rarer)."""
    starts = Counter(round(min(w.x0 for w in row)) for row in rows)
    common = [x for x, n in starts.most_common(3) if n >= 2]
    return float(min(common)) if common else min(w.x0 for row in rows for w in row)


def inside(w: Word, box: tuple[float, ...]) -> bool:
    x0, top, x1, bottom = box
    cx = (w.x0 + w.x1) / 2
    return x0 - 1 <= cx <= x1 + 1 and top - 1 <= w.mid <= bottom + 1


def _is_furniture(line: Line, page: PageData) -> bool:
    """Page numbers and the proceedings footer: not part of the paper's text."""
    near_edge = line.top > page.height * 0.88 or line.bottom < page.height * 0.07
    if near_edge and re.fullmatch(r"\d{1,5}", line.text):
        return True
    return line.top > page.height * 0.9 and bool(
        re.search(r"Proceedings of|Association for Computational Linguistics|©|Licen[cs]e", line.text)
    )
