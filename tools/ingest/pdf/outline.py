"""The PDF's outline (its bookmarks: most LaTeX PDFs carry one, written by hyperref) as the
evidence of where sections start: an entry names a heading and its page, so a line of that page
whose text is the entry's title (its number aside) is that heading, whatever its font.

pypdfium2 (Apache-2.0 / BSD-3, installed with pdfplumber) reads the outline; a PDF without
one, or one pypdfium2 cannot open, has an empty outline and the headings come from the fonts.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tools.ingest.pdf.model import Line, line_text

log = logging.getLogger(__name__)

_NUMBER_RE = re.compile(r"^\s*(?:(?:\d{1,2}|[A-Z]|[IVX]{1,5})(?:\.\d{1,2}){0,3}\.?|Appendix\s+[A-Z0-9]+[.:]?)\s+")
_MAX_ENTRIES = 400  # a book-length outline is no section list of a paper
# An outline entry's title may wrap over lines: a line that holds this share of it starts it.
_PREFIX_SHARE = 0.3


@dataclass(frozen=True)
class Entry:
    level: int
    title: str
    page: int  # 1-based


def read_outline(path: Path) -> list[Entry]:
    """The outline's entries in order, [] when the PDF has none (or it cannot be read)."""
    try:
        import pypdfium2 as pdfium
    except ImportError:  # pragma: no cover - installed with pdfplumber
        return []
    try:
        pdf = pdfium.PdfDocument(str(path))
    except Exception as exc:  # pdfplumber reports unreadable files; the outline is optional
        log.debug("%s: outline not read (%s)", path, exc)
        return []
    entries: list[Entry] = []
    try:
        for item in pdf.get_toc(max_depth=6):
            dest = item.get_dest()
            index = dest.get_index() if dest is not None else None
            title = " ".join((item.get_title() or "").split())
            if index is not None and title:
                entries.append(Entry(int(item.level), title, int(index) + 1))
            if len(entries) > _MAX_ENTRIES:
                return []
    except Exception as exc:  # a broken outline tree: headings come from the fonts
        log.debug("%s: outline unreadable (%s)", path, exc)
        return []
    finally:
        pdf.close()
    return entries


def heading_key(text: str) -> str:
    """A heading's text compared with an outline title: number, case, accents of TeX and
    punctuation aside ('2.1. Data sets' and 'Data sets' are one)."""
    text = _NUMBER_RE.sub("", text)
    return re.sub(r"[^a-z0-9]+", "", text.lower())


def outline_headings(lines: Sequence[Line], entries: list[Entry], body_size: float) -> dict[int, tuple[str, int]]:
    """The lines that print the outline's entries: {index of the heading's first line:
    (the heading's text, index of the line after it)}, or (text, -k) for a heading run into its
    paragraph's first line (its first k words), matched in outline order (an entry
    matches a line of its page or the next one, whose text is its title, or starts it and
    the next lines of the same column complete it). Empty for fewer than two entries."""
    usable = [e for e in entries if heading_key(e.title)]
    if len(usable) < 2:
        return {}
    keys = [heading_key(e.title) for e in usable]
    found: dict[int, tuple[str, int]] = {}
    nxt = 0
    for i, line in enumerate(lines):
        if nxt >= len(usable):
            break
        if line.footnote or line.size < body_size - 1.5 or len(line.text) > 200:
            continue
        key = heading_key(line.text)
        if not key:
            continue
        for k in range(nxt, min(len(usable), nxt + 4)):
            entry, want = usable[k], keys[k]
            if not entry.page <= line.page <= entry.page + 1:
                continue
            if key == want:
                found[i] = (line.text, i + 1)
            elif entry.level <= 1 and key.startswith(want) and (k_words := _run_in(line, want)):
                # a run-in section or subsection heading ('8.1. Bold symbols. In the amsmath
                # package ...'): the heading is the line's first words, its paragraph goes on
                # after them (a run-in sub-subsection stays a paragraph of its subsection)
                found[i] = (line_text(line.words[:k_words]).rstrip(".:"), -k_words)
            elif want.startswith(key) and len(key) >= max(6, _PREFIX_SHARE * len(want)):
                end, text = _complete(lines, i, want)
                if end is None:
                    continue
                found[i] = (text, end)
            else:
                continue
            nxt = k + 1
            break
    return found


def _run_in(line: Line, want: str) -> int | None:
    """How many of the line's first words print the outline title `want`, when more words
    follow them (a heading run into its paragraph); None otherwise."""
    for k in range(1, min(len(line.words), 24)):
        key = heading_key(line_text(line.words[:k]))
        if key == want:
            return k
        if len(key) > len(want):
            return None
    return None


def _complete(lines: Sequence[Line], i: int, want: str) -> tuple[int | None, str]:
    """(index after the last line, text) of a heading wrapped over lines i, i+1, ... of one
    column whose keys add up to `want`; (None, '') when they do not."""
    text, j = lines[i].text, i + 1
    while j < len(lines) and j - i < 4:
        nxt = lines[j]
        if (nxt.page, nxt.seg) != (lines[i].page, lines[i].seg):
            break
        joined = f"{text} {nxt.text}"
        key = heading_key(joined)
        if not want.startswith(key) and key != want:
            break
        text, j = joined, j + 1
        if key == want:
            return j, text
    return None, ""
