"""Footnotes: the run of smaller lines at the foot of a column that opens with a footnote mark.

LaTeX sets footnotes at the bottom of the column, in a smaller font, each opening with its
mark ("2SPECTER: ...", "3https://...", "∗ Equal contribution") on an indented line. Marked
here on the lines (`Line.footnote`, `Line.mark`) so the assembler keeps them out of the
running text: a paragraph that goes on in the next column is not cut by them, and they
become footnote blocks of their own.
"""

from __future__ import annotations

import re

from tools.ingest.pdf.model import Line, PageData, Style, line_text
from tools.ingest.pdf.text import match_caption

# A mark opens the line and is glued to its text or one space before it: "2SPECTER",
# "1 https://", "∗ Equal". "12. Smith" (a numbered reference) and "2019." are not marks.
MARK_RE = re.compile(r"^(?P<mark>\d{1,2}|[∗*†‡§¶])(?=\s?[^\W\d_]|\s?https?:|\s?[(“\"‘'])")
# Footnote text is clearly smaller than the body (ACL: 9 pt under 10.9 pt body).
_SMALLER = 0.8
# ...and sits in the lower part of the page (floats set in small type sit anywhere).
_LOWER_PART = 0.5
_MAX_LINES = 20  # a "footnote zone" longer than this is something else (a small-type column)


def footnote_mark(line: Line) -> str | None:
    """The mark when the line opens a footnote: a mark at its start, indented from the column
    edge (the mark hangs in the first-line indent)."""
    m = MARK_RE.match(line.text)
    if not m or line.x0 < line.seg_x0 + 3 or match_caption(line.text):
        return None
    return m.group("mark")


def mark_footnotes(page: PageData, style: Style) -> None:
    """Mark the footnote lines of each column of the page (see the module docstring)."""
    by_column: dict[int, list[Line]] = {}
    for line in page.lines:
        by_column.setdefault(line.seg, []).append(line)
    for lines in by_column.values():
        run: list[Line] = []
        for line in reversed(lines):  # the small lines at the foot of the column
            if line.size > style.body_size - _SMALLER or match_caption(line.text):
                break
            run.append(line)
        run.reverse()
        start = next((k for k, ln in enumerate(run) if footnote_mark(ln)), None)
        if start is None:
            continue
        zone = run[start:]
        if len(zone) > _MAX_LINES or zone[0].top < page.height * _LOWER_PART or len(zone) == len(lines):
            continue
        for line in zone:
            line.footnote = True
            line.mark = footnote_mark(line)


def strip_note_marks(page: PageData) -> None:
    """Drop from the running text the raised digits glued to a word ("GROBID v0.5.5" + "10")
    that are the mark of a footnote on this page: the page's own footnotes tell a mark from an
    exponent ("10" + "5" stays where no footnote 5 is on the page). Run after `mark_footnotes`."""
    marks = {ln.mark for ln in page.lines if ln.mark}
    if not marks:
        return
    for line in page.lines:
        if line.footnote:
            continue
        changed = False
        for w in line.words:
            if w.tail and w.tail in marks and len(w.text) > len(w.tail):
                w.text = w.text[: -len(w.tail)]
                w.tail = ""
                changed = True
        if changed:
            line.text = line_text(line.words)
