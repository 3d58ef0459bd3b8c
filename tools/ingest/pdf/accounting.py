"""How much of each page's text a PDF build kept: the reader's own words of the page (what
pdfplumber read, line numbers aside) against what reached the document (its blocks, title,
abstract, the bibliography, the tables' grids) or was dropped for a stated reason (running heads
and feet, a figure's own text). Words are compared as lower-case tokens, counted with
multiplicity, so a page whose text never reached a chunk shows as a share near 0.

A build reports a paper that keeps less than `MIN_SHARE` of its text, or any page that keeps
less than `MIN_PAGE_SHARE` of its own, so that no build loses pages in silence.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

from tools.base import MIN_PAGE_SHARE, MIN_SHARE, Block, Document, Dropped, PageShare, TextAccount
from tools.ingest.pdf.text import normalize_text

__all__ = ["MIN_PAGE_SHARE", "MIN_SHARE", "PageShare", "TextAccount", "account", "dropped_running", "tokens"]

_TOKEN = re.compile(r"[^\W_]+")


def tokens(text: str, accents: bool = True) -> list[str]:
    """Lower-case letter-and-digit runs: how words are compared (hyphens, ligatures and
    punctuation aside); with `accents=False` their accents dropped too (two text layers of one
    PDF compose accents differently: tools/ingest/pdf/floor.py)."""
    text = normalize_text(text)
    if not accents:
        text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return [t.lower() for t in _TOKEN.findall(text)]


def account(
    page_words: dict[int, list[str]],
    doc: Document,
    extra: dict[int, list[str]],
) -> TextAccount:
    """Each page's words (`page_words`: page -> the reader's word texts) against the document's
    text on that page: its blocks (split at their page break), `extra` (page -> texts kept on
    that page outside the blocks: title and abstract lines, tables' grids, bibliography lines)
    and `doc.dropped` (texts dropped for a stated reason: running heads, figures' own words)."""
    kept: dict[int, Counter[str]] = {}

    def add(page: int | None, text: str) -> None:
        if page is not None and text:
            kept.setdefault(page, Counter()).update(tokens(text))

    for block in doc.blocks:
        add_block(block, add)
    for page, texts in extra.items():
        for text in texts:
            add(page, text)
    for d in doc.dropped:
        add(d.page, d.text)
    shares = []
    for page in sorted(page_words):
        have = Counter(t for w in page_words[page] for t in tokens(w))
        matched = (have & kept.get(page, Counter())).total()  # each word counted as often as both hold it
        shares.append(PageShare(page, have.total(), matched))
    return TextAccount(tuple(shares))


def add_block(block: Block, add) -> None:
    """Feed `add(page, text)` a block's text, split where it runs onto the next page."""
    if block.page_end is not None and block.page_end_at is not None and block.page_end != block.page:
        add(block.page, block.text[: block.page_end_at])
        add(block.page_end, block.text[block.page_end_at :])
    else:
        add(block.page, block.text)


def dropped_running(page: int, text: str) -> Dropped:
    return Dropped(page=page, text=text, reason="running head or foot")
