"""The plain data the PDF stages pass along: words with font facts, lines of a column, located
table and figure regions, pages, and assembled paragraphs.
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field

from tools.base import ChunkKind
from tools.ingest.pdf.text import normalize_text

_NO_SPACE_RATIO = 0.12  # words closer than this are glued ("(" "§" "6)")


@dataclass
class Word:
    text: str
    x0: float
    x1: float
    top: float
    bottom: float
    size: float
    n_chars: int
    n_bold: int
    n_math: int
    base: float  # baseline (from the text matrix: glyph boxes of math fonts are unreliable)
    # one or two digits at its end set smaller and raised, not in a math font ("v0.5.5" + "10"):
    # an exponent or a footnote's mark; notes.strip_note_marks drops it where the page has that
    # footnote
    tail: str = ""
    # The line box implied by baseline and size, used to group words into lines.
    vtop: float = field(init=False)
    vbottom: float = field(init=False)

    def __post_init__(self) -> None:
        self.vtop = self.base - 0.72 * self.size
        self.vbottom = self.base + 0.22 * self.size

    @property
    def mid(self) -> float:
        return (self.top + self.bottom) / 2


@dataclass
class Line:
    """One text line of a column, with what the heuristics ask about it."""

    words: list[Word]
    page: int
    seg: int  # index of its column/band on the page, in reading order
    seg_x0: float  # the column's text edges (indents are measured from seg_x0)
    seg_x1: float
    area: tuple[float, float]  # the column's share of the page (half or whole width)
    text: str = field(init=False)
    x0: float = field(init=False)
    x1: float = field(init=False)
    top: float = field(init=False)
    bottom: float = field(init=False)
    size: float = field(init=False)  # the size most of its characters have
    bold: float = field(init=False)  # share of bold characters
    math: float = field(init=False)  # share of math-font characters
    # Set by notes.mark_footnotes: the line belongs to a footnote at the foot of its column;
    # `mark` is the footnote's mark ("2", "∗") on the line that opens one.
    footnote: bool = field(default=False, init=False)
    mark: str | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.words.sort(key=lambda w: w.x0)
        self.x0 = min(w.x0 for w in self.words)
        self.x1 = max(w.x1 for w in self.words)
        self.top = statistics.median(w.top for w in self.words)
        self.bottom = statistics.median(w.bottom for w in self.words)
        sizes: Counter[float] = Counter()
        for w in self.words:
            sizes[round(w.size, 1)] += w.n_chars
        self.size = sizes.most_common(1)[0][0]
        n = sum(w.n_chars for w in self.words) or 1
        self.bold = sum(w.n_bold for w in self.words) / n
        self.math = sum(w.n_math for w in self.words) / n
        self.text = line_text(self.words)

    @property
    def max_gap(self) -> float:
        gaps = [b.x0 - a.x1 for a, b in zip(self.words, self.words[1:])]
        return max(gaps, default=0.0)


@dataclass
class Segment:
    """A column (or full-width band) of one page, read top to bottom."""

    x0: float
    x1: float
    area: tuple[float, float]  # the part of the page width this column owns
    words: list[Word] = field(default_factory=list)


@dataclass
class Region:
    """A located table or figure body on a page."""

    kind: str  # "table" | "figure"
    label: str  # "Table 2"
    bbox: tuple[float, float, float, float]  # x0, top, x1, bottom
    caption_at: tuple[float, float]  # (top, x0) of the caption's first line
    text: str = ""  # rendered rows (tables)


@dataclass
class PageData:
    number: int  # 1-based
    width: float
    height: float
    words: list[Word]
    graphics: list[tuple[float, float, float, float]]  # x0, top, x1, bottom
    lines: list[Line] = field(default_factory=list)
    regions: list[Region] = field(default_factory=list)


@dataclass
class Style:
    """Document-wide typography the heuristics compare against."""

    body_size: float
    pitch: float  # line-to-line distance of body text


def line_text(words: list[Word]) -> str:
    parts: list[str] = []
    for prev, w in zip([None, *words], words):
        if prev is not None and w.x0 - prev.x1 >= _NO_SPACE_RATIO * max(prev.size, w.size):
            parts.append(" ")
        parts.append(w.text)
    return normalize_text("".join(parts)).strip()


@dataclass
class Paragraph:
    kind: ChunkKind  # "text" | "equation" | "table" | "figure"
    lines: list[Line]
    section: str | None
    label: str | None = None  # "Table 2" for a caption, the mark for a footnote
    footnote: bool = False
    emitted: bool = False  # already in Parsed (a paragraph carried across a break is extended there)


@dataclass
class Parsed:
    front: list[Line]
    abstract: list[Paragraph]
    body: list[Paragraph]
    references: list[tuple[float, float, str]]  # (font size, indent, text)
    sections: list[tuple[str, int]]
    reference_pages: list[int] = field(default_factory=list)  # the page of each reference line
