"""Page furniture that is not the paper's text: line numbers in the margin of a review copy, and
running heads and feet repeated page after page (page numbers and the first page's
proceedings footer are dropped line by line in layout._is_furniture).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter

from tools.ingest.pdf.model import Line, PageData

_NUMBER = re.compile(r"\d{1,4}")
_MIN_RUN = 10  # line numbers come in runs down a margin; ten in a column is no accident
_MIN_FIFTHS = 6  # ... and six multiples of five, five apart, when every fifth line is numbered
_MARGIN = 0.08  # running heads and feet sit in the top and bottom 8 % of the page
_REPEATS = 3  # ... and recur on this many pages at least


def drop_line_numbers(page: PageData) -> list[str]:
    """Remove the page's line numbers: digit-only words stacked at one x, counting up by one
    from line to line in a margin, or by five every fifth line (a review copy's numbering).
    Returns them, in their order."""
    numbers = [w for w in page.words if _NUMBER.fullmatch(w.text)]
    columns: dict[tuple[str, int], list] = {}
    for w in numbers:  # numbers aligned on their right edge (the usual) or their left
        columns.setdefault(("x1", round(w.x1 / 4)), []).append(w)
        columns.setdefault(("x0", round(w.x0 / 4)), []).append(w)
    text = [w for w in page.words if not _NUMBER.fullmatch(w.text)]
    if not text:
        return []
    lefts, rights = sorted(w.x0 for w in text), sorted(w.x1 for w in text)
    left, right = lefts[len(lefts) // 10], rights[-(len(rights) // 10) - 1]
    drop: set[int] = set()
    for stack in columns.values():
        if len(stack) < _MIN_FIFTHS:
            continue
        stack.sort(key=lambda w: w.top)
        values = [int(w.text) for w in stack]
        steps = list(itertools.pairwise(values))
        # every fifth line numbered (REVTeX's review copies): multiples of five counting up by
        # five, in a margin or in the gutter between two columns
        fifths = all(v % 5 == 0 for v in values) and sum(b - a == 5 for a, b in steps) >= 0.8 * len(steps)
        # every line numbered: in the margin, outside the text (a table's rank column counts up
        # by one too)
        outside = all(w.x1 < left - 2 for w in stack) or all(w.x0 > right + 2 for w in stack)
        every = len(stack) >= _MIN_RUN and outside and sum(b - a == 1 for a, b in steps) >= 0.8 * len(steps)
        if fifths or every:
            drop.update(id(w) for w in stack)
    gone = [w.text for w in page.words if id(w) in drop]
    if drop:
        page.words = [w for w in page.words if id(w) not in drop]
    return gone


def running_lines(pages: list[PageData], lines_per_page: list[list[Line]]) -> set[str]:
    """The texts (digits as '#') of margin lines that recur on several pages: running heads
    ("Under review as a conference paper at ICLR 2025") and feet ("Preprint. Page #")."""
    seen: Counter[str] = Counter()
    for page, lines in zip(pages, lines_per_page):
        keys = {_key(ln.text) for ln in lines if _in_margin(ln, page)}
        seen.update(k for k in keys if k)
    return {k for k, n in seen.items() if n >= _REPEATS}


def is_running(line: Line, page: PageData, running: set[str]) -> bool:
    return _in_margin(line, page) and _key(line.text) in running


def _in_margin(line: Line, page: PageData) -> bool:
    return line.top < page.height * _MARGIN or line.bottom > page.height * (1 - _MARGIN)


def _key(text: str) -> str:
    return re.sub(r"\d+", "#", " ".join(text.split())).lower()
