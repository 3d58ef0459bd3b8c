"""A text floor under the PDF reader: what a plain text layer of the PDF holds, the build keeps.

The reader (pdfplumber words, columns, regions, headings) can drop text it does not understand:
a paragraph in a layout it misreads, a column it takes for a figure. After it has done its
work, each page's words are compared with an independent text layer, pypdfium2's plain text of
the page (its end-of-line hyphen marker U+FFFE deleted, which joins the halves of a hyphenated
word), with each word's position. A word of that layer counts as kept when a run of `SHINGLE`
words around it appears in what the build kept on the page (its blocks and headings, the title,
abstract, tables and bibliography, and the text it dropped for a stated reason), or when it sits
where the build leaves text out on purpose: a page's top or bottom margin (running heads and
feet, page numbers, a first page's venue line), inside a figure or table body, or on the first
page above the paper's text (authors' affiliations and addresses).

Runs of `MIN_RUN` or more words that are still not kept, and read as prose, are put back as
paragraphs of their page, in reading order (after the block the run follows in the plain
layer), with the section of that block. What is left is what the build's text account reports
as lost, and the loss warning compares against this layer, not the reader's own words.

pypdfium2 (Apache-2.0 / BSD-3) is installed with pdfplumber; a PDF it cannot open keeps the
reader's own accounting.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from tools.base import Block, Document, PageShare, TextAccount
from tools.ingest.pdf.accounting import add_block
from tools.ingest.pdf.accounting import tokens as _tokens

log = logging.getLogger(__name__)

SHINGLE = 5  # words in a run compared with the kept text (the floor's unit, as in bench.pdf_layouts)
MIN_RUN = 12  # fewer lost words are a sliver (a reference's accent, a label), not a paragraph to put back
MIN_PROSE = 0.6  # share of a run's words that must be words of two letters or more to be put back
MARGIN = 0.08  # the top and bottom 8 % of a page: running heads and feet (as tools/ingest/pdf/furniture.py)

Box = tuple[float, float, float, float]  # x0, top, x1, bottom, from the page's top-left

_HYPHEN_MARK = "\ufffe"
_PROSE_WORD = re.compile(r"[^\W\d_]{2,}")

# why a plain-layer word is not in the build, when it is not lost
MARGIN_REASON = "page margin (running head or foot, page number, venue line)"
REGION_REASON = "inside a figure or table body"
FRONT_REASON = "front matter (authors' affiliations and addresses)"


def fold(text: str) -> list[str]:
    """The build's word tokens without accents: how the two layers' words are compared (the
    layers compose accents differently)."""
    return _tokens(text, accents=False)


@dataclass(frozen=True)
class PlainWord:
    text: str
    box: Box | None  # None where pdfium gave no box


@dataclass
class PlainPage:
    number: int
    width: float
    height: float
    words: list[PlainWord] = field(default_factory=list)


def plain_pages(path: Path) -> list[PlainPage] | None:
    """Each page's words from pypdfium2's text layer with their boxes, or None when it cannot read
    the file."""
    try:
        import pypdfium2 as pdfium
    except ImportError:  # pragma: no cover - installed with pdfplumber
        return None
    try:
        pdf = pdfium.PdfDocument(str(path))
    except Exception as exc:  # pdfium's own errors; the reader has read the file already
        log.debug("%s: no plain text layer, the build is accounted against the reader's words (%s)", path, exc)
        return None
    try:
        return [_plain_page(pdf[i], i + 1) for i in range(len(pdf))]
    except Exception as exc:  # a page pdfium cannot read: keep the reader's own accounting
        log.debug("%s: a page of the plain text layer is unreadable (%s)", path, exc)
        return None
    finally:
        pdf.close()


def _plain_page(page, number: int) -> PlainPage:
    width, height = page.get_size()
    tp = page.get_textpage()
    n = tp.count_chars()
    text = tp.get_text_range(0, n) if n else ""
    out = PlainPage(number, width, height)
    if len(text) != n:  # characters outside the BMP: no per-character boxes, words without them
        out.words = [PlainWord(w, None) for w in text.replace(_HYPHEN_MARK, "").split()]
        return out
    chars: list[str] = []
    box: list[float] | None = None
    for i, c in enumerate([*text, " "]):
        if c.isspace():
            if chars:
                out.words.append(PlainWord("".join(chars), tuple(box) if box else None))  # type: ignore[arg-type]
            chars, box = [], None
            continue
        if c == _HYPHEN_MARK:
            continue
        chars.append(c)
        left, bottom, right, top = tp.get_charbox(i)
        if right > left:
            b = [left, height - top, right, height - bottom]
            box = b if box is None else [min(box[0], b[0]), min(box[1], b[1]), max(box[2], b[2]), max(box[3], b[3])]
    return out


@dataclass(frozen=True)
class Kept:
    """One text the build kept on a page: `owner` is the index of its block, or None for text
    outside the blocks (title, abstract, tables, bibliography, dropped text)."""

    owner: int | None
    kind: str  # block | heading | abstract | bibliography | other
    tokens: list[str]


def covered(plain: Sequence[str], kept: Sequence[Sequence[str]]) -> list[bool]:
    """Which tokens of `plain` (a page's plain-layer tokens in order) the kept texts hold: a token
    is covered when a run of `SHINGLE` tokens containing it is a run of some kept text, or when a
    kept text shorter than that (a heading, a label) appears whole around it."""
    return _covered(plain, [(k, _grams(k)) for k in kept])


def _covered(plain: Sequence[str], kept: Sequence[tuple[Sequence[str], set[tuple[str, ...]]]]) -> list[bool]:
    """`covered`, with each kept text's shingles already made: (tokens, shingles)."""
    grams: set[tuple[str, ...]] = set().union(*(g for _, g in kept))
    short = [k for k, _ in kept if 0 < len(k) < SHINGLE]
    n = len(plain)
    out = [False] * n
    for i in range(n - SHINGLE + 1):
        if tuple(plain[i : i + SHINGLE]) in grams:
            out[i : i + SHINGLE] = [True] * SHINGLE
    for k in short:  # each short text covers its first occurrence among the uncovered tokens
        m = len(k)
        for i in range(n - m + 1):
            if not any(out[i : i + m]) and list(plain[i : i + m]) == list(k):
                out[i : i + m] = [True] * m
                break
    return out


def runs(flags: Sequence[bool]) -> list[tuple[int, int]]:
    """Maximal [start, end) runs of False."""
    found, start = [], None
    for i, f in enumerate([*flags, True]):
        if not f and start is None:
            start = i
        elif f and start is not None:
            found.append((start, i))
            start = None
    return found


def is_prose(words: Sequence[str]) -> bool:
    """A run to put back: `MIN_RUN` words or more, most of them words of letters."""
    if len(words) < MIN_RUN:
        return False
    prose = sum(bool(_PROSE_WORD.fullmatch(w.strip(".,;:()[]\"'“”’‘!?"))) for w in words)
    return prose >= MIN_PROSE * len(words)


@dataclass(frozen=True)
class Floor:
    """What the floor made of a build: its blocks with the lost runs put back, and the account
    against the plain layer."""

    blocks: tuple[Block, ...]
    account: TextAccount


def floor(
    plain_layer: Sequence[PlainPage],
    doc: Document,
    extra: dict[int, list[tuple[str, str]]],
    regions: dict[int, list[Box]],
) -> Floor:
    """The build `doc` held against the plain layer. `extra` is what the build kept on each page
    outside its blocks, as (kind, text); `regions` the boxes of the figure and table bodies."""
    kept_on: dict[int, list[Kept]] = {}

    def keep(page: int | None, text: str | None, owner: int | None, kind: str) -> None:
        if page is not None and text:
            kept_on.setdefault(page, []).append(Kept(owner, kind, fold(text)))

    headings: set[tuple[int, str]] = set()
    for i, b in enumerate(doc.blocks):
        add_block(b, lambda page, text, i=i: keep(page, text, i, "block"))  # split at its page break
        for name in (b.section or "").split("›"):  # a heading's words are on the page its section starts
            if b.page is not None and (b.page, name.strip()) not in headings:
                headings.add((b.page, name.strip()))
                keep(b.page, name, i, "heading")
    for page_no, texts in extra.items():
        for kind, text in texts:
            keep(page_no, text, None, kind)
    for d in doc.dropped:
        keep(d.page, d.text, None, "dropped")

    put_back: list[tuple[int, int, Block]] = []  # (anchor block index, order on the page, block)
    shares: list[PageShare] = []
    reasons: Counter[str] = Counter()
    for d in doc.dropped:
        reasons[d.reason] += len(fold(d.text))
    for page in plain_layer:
        tokens: list[str] = []
        owner_word: list[int] = []
        for wi, w in enumerate(page.words):
            for t in fold(w.text):
                tokens.append(t)
                owner_word.append(wi)
        kept = kept_on.get(page.number, [])
        grams = [(k, _grams(k.tokens)) for k in kept]  # each kept text's shingles, made once
        flags = _covered(tokens, [(k.tokens, g) for k, g in grams])
        held = sum(flags)
        body_top = _body_top(page, tokens, owner_word, grams) if page.number == 1 else None
        for start, end in runs(flags):
            # a lost run can span a margin, the front matter and a paragraph: judged word by word
            for part_start, part_end, reason in _parts(page, tokens, owner_word, start, end, body_top, regions):
                if reason:
                    reasons[reason] += part_end - part_start
                    held += part_end - part_start
                    continue
                words = page.words[owner_word[part_start] : owner_word[part_end - 1] + 1]
                if not is_prose([w.text for w in words]):
                    continue
                prev, nxt = _neighbours(tokens, flags, part_start, part_end, grams)
                if _kind(prev) == _kind(nxt) == "bibliography" or (prev is None and nxt is None):
                    continue  # a fragment between bibliography entries stays counted as lost
                anchor = _anchor(prev, nxt, doc, page.number)
                section = doc.blocks[anchor].section if 0 <= anchor < len(doc.blocks) else None
                text = " ".join(w.text for w in words)
                put_back.append((anchor, part_start, Block(kind="text", text=text, page=page.number, section=section)))
                held += part_end - part_start
        shares.append(PageShare(page.number, len(tokens), held))
    account = TextAccount(
        tuple(shares),
        against="the PDF's plain text layer",
        put_back=len(put_back),
        put_back_words=sum(len(fold(b.text)) for _, _, b in put_back),
        dropped=tuple(sorted(reasons.items())),
    )
    return Floor(tuple(_insert(doc.blocks, put_back)), account)


Grams = list[tuple[Kept, set[tuple[str, ...]]]]


def _grams(tokens: Sequence[str]) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + SHINGLE]) for i in range(len(tokens) - SHINGLE + 1)}


def _body_top(page: PlainPage, tokens: Sequence[str], owner_word: Sequence[int], grams: Grams) -> float | None:
    """How far down the page the paper's own text starts: the top of the highest plain-layer word
    in a run of the abstract or a block (None when the page holds neither)."""
    text = set().union(*(g for k, g in grams if k.kind in ("abstract", "block")))
    tops = [
        box[1]
        for i in range(len(tokens) - SHINGLE + 1)
        if tuple(tokens[i : i + SHINGLE]) in text and (box := page.words[owner_word[i]].box) is not None
    ]
    return min(tops) if tops else None


def _parts(
    page: PlainPage,
    tokens: Sequence[str],
    owner_word: Sequence[int],
    start: int,
    end: int,
    body_top: float | None,
    regions: dict[int, list[Box]],
) -> list[tuple[int, int, str | None]]:
    """A lost run's tokens [start, end) cut where the reason its words are left out changes:
    (start, end, reason or None)."""
    where = regions.get(page.number, [])
    parts: list[tuple[int, int, str | None]] = []
    for i in range(start, end):
        reason = _reason(page, page.words[owner_word[i]].box, body_top, where)
        if parts and parts[-1][2] == reason:
            parts[-1] = (parts[-1][0], i + 1, reason)
        else:
            parts.append((i, i + 1, reason))
    return parts


def _reason(page: PlainPage, box: Box | None, body_top: float | None, regions: Sequence[Box]) -> str | None:
    """Why a word of the plain layer is not in the build on purpose, or None (it was lost)."""
    if box is None:
        return None
    if box[3] <= page.height * MARGIN or box[1] >= page.height * (1 - MARGIN):
        return MARGIN_REASON
    if any(_inside(box, r) for r in regions):
        return REGION_REASON
    if body_top is not None and box[3] <= body_top + 1:  # above the paper's text: page 1's front matter
        return FRONT_REASON
    return None


def _inside(b: Box, r: Box, slack: float = 2.0) -> bool:
    cx, cy = (b[0] + b[2]) / 2, (b[1] + b[3]) / 2
    return r[0] - slack <= cx <= r[2] + slack and r[1] - slack <= cy <= r[3] + slack


def _neighbours(
    tokens: Sequence[str], flags: Sequence[bool], start: int, end: int, grams: Grams
) -> tuple[Kept | None, Kept | None]:
    """The kept texts around a lost run in the plain layer: the one holding the nearest kept run
    before it, and after it."""

    def holder(at: int) -> Kept | None:
        gram = tuple(tokens[at : at + SHINGLE])
        return next((k for k, g in grams if gram in g), None)

    before = next(
        (h for at in range(start - SHINGLE, -1, -1) if all(flags[at : at + SHINGLE]) and (h := holder(at))), None
    )
    after = next(
        (h for at in range(end, len(tokens) - SHINGLE + 1) if all(flags[at : at + SHINGLE]) and (h := holder(at))),
        None,
    )
    return before, after


def _kind(k: Kept | None) -> str | None:
    return k.kind if k is not None else None


def _anchor(prev: Kept | None, nxt: Kept | None, doc: Document, page: int) -> int:
    """The block a put-back run goes after (-1: before the first block): after the block it
    follows in the plain layer, else before the block it precedes, else after the page's last."""
    if prev is not None and prev.owner is not None:
        return prev.owner
    if nxt is not None and nxt.owner is not None:
        return nxt.owner - 1
    on_page = [i for i, b in enumerate(doc.blocks) if b.page is not None and b.page <= page]
    return on_page[-1] if on_page else -1


def _insert(blocks: Sequence[Block], put_back: list[tuple[int, int, Block]]) -> list[Block]:
    """`blocks` with each put-back block after its anchor (-1: before the first block)."""
    after: dict[int, list[tuple[int, Block]]] = {}
    for anchor, order, block in put_back:
        after.setdefault(anchor, []).append((order, block))
    out = [b for _, b in sorted(after.get(-1, []), key=lambda x: x[0])]
    for i, b in enumerate(blocks):
        out.append(b)
        out.extend(x for _, x in sorted(after.get(i, []), key=lambda x: x[0]))
    return out


def with_floor(
    path: Path,
    doc: Document,
    extra: dict[int, list[tuple[str, str]]],
    regions: dict[int, list[Box]],
    fallback: TextAccount,
) -> Document:
    """`doc` with the floor's paragraphs put back and its account against the plain layer; with
    `fallback` (the reader's own accounting) when pypdfium2 cannot read the file."""
    layer = plain_pages(path)
    if layer is None:
        return replace(doc, text_account=fallback)
    found = floor(layer, doc, extra, regions)
    return replace(doc, blocks=found.blocks, text_account=found.account)
