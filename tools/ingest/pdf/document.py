"""The parsed pieces to a Document: paragraphs to blocks with their locators, references to
bibliography entries, and the paper record (title, authors, venue, year).
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from tools.base import Block, Document, Paper
from tools.ingest.pdf.layout import group_rows
from tools.ingest.pdf.model import Line, PageData, Paragraph, Parsed, Region, line_text
from tools.ingest.pdf.references import (
    bibliography_end,
    guess_venue_year,
    parse_reference,
    split_references,
)
from tools.ingest.pdf.text import dehyphenate, normalize_text

log = logging.getLogger(__name__)


def build_document(
    path: Path,
    paper_id: str | None,
    metadata: dict[str, Any],
    info: dict[str, Any],
    pages: list[PageData],
    parsed: Parsed,
) -> Document:
    """Paragraphs to blocks, references to entries, and the paper record around them."""
    vocabulary = _vocabulary(ln for p in pages for ln in p.lines)
    regions = {(p.number, r.label): r for p in pages for r in p.regions}
    blocks: list[Block] = []
    for para in parsed.body:
        block = _to_block(para, vocabulary, regions)
        running = [b for b in blocks[-3:] if b.footnote is None]  # footnotes sit between
        if block is not None and block.kind == "equation" and running:
            block = _with_lead_in(block, running[-1])
        if block is not None:
            blocks.append(block)
    abstract = " ".join(_join_lines(p.lines, vocabulary) for p in parsed.abstract if p.kind == "text").strip()
    entries = split_references(_reference_lines(parsed.references))
    end = bibliography_end(entries)
    bibliography = tuple(
        replace(parse_reference(dehyphenate(raw, vocabulary)), key=f"b{n}") for n, raw in enumerate(entries[:end])
    )
    if entries[end:]:  # the text after the list is the paper's: a paragraph after the bibliography
        blocks = _after_bibliography(blocks, entries[end:], parsed, vocabulary)
    venue, year = guess_venue_year(_first_page_margins(pages[0]))
    title = _choose_title(metadata, info, parsed.front or pages[0].lines[:12])
    paper = Paper(
        paper_id=str(paper_id or metadata.get("paper_id") or path.stem),
        title=title,
        abstract=abstract or str(metadata.get("abstract") or ""),
        authors=_authors(metadata, info),
        venue=metadata.get("venue") or venue,
        year=_int_or_none(metadata.get("year")) or year,
        source=str(path),
        bibliography=bibliography,
    )
    if not blocks:
        log.warning("%s: no body text blocks found", path)
    log.info(
        "%s: %d pages, %d blocks, %d sections, %d bibliography entries",
        path,
        len(pages),
        len(blocks),
        len(parsed.sections),
        len(bibliography),
    )
    return Document(paper=paper, blocks=tuple(blocks))


def _first_page_margins(page: PageData) -> str:
    """Text of the first page's header and footer, where ACL-style venue lines live.

    Only the margins: a 'Proceedings of ...' in a page-1 reference or sentence says nothing
    about where this paper appeared.
    """
    margin = [w for w in page.words if w.top > page.height * 0.85 or w.bottom < page.height * 0.12]
    rows = sorted(group_rows(margin), key=lambda r: min(w.top for w in r))
    return " ".join(line_text(sorted(r, key=lambda w: w.x0)) for r in rows)


def _vocabulary(lines: Iterable[Line]) -> frozenset[str]:
    """Lower-cased words and hyphenated compounds, without the halves of hyphenated words."""
    vocab: set[str] = set()
    broken = False
    for line in lines:
        tokens = re.findall(r"[\w]+(?:-[\w]+)*", line.text)
        if broken and tokens:
            tokens = tokens[1:]
        broken = line.text.endswith("-")
        if broken and tokens:
            tokens = tokens[:-1]
        for t in tokens:
            vocab.add(t.lower())
            vocab.update(p.lower() for p in t.split("-"))
    return frozenset(vocab)


def _join_lines(lines: list[Line], vocabulary: frozenset[str]) -> str:
    return dehyphenate("\n".join(ln.text for ln in lines), vocabulary)


# First-page footnotes marked with a symbol rather than a number are notes on the authors.
_AUTHOR_NOTE_MARKS = frozenset("∗*†‡")


def _with_lead_in(equation: Block, before: Block) -> Block:
    """The equation with the sentence that introduces it: the last sentence of the text block
    right before it ("... the following triplet margin loss function:"), when that block is
    running text of the same section, so the equation chunk says what it is."""
    if before.kind != "text" or before.footnote or before.section != equation.section:
        return equation
    from tools.retrieval.sentences import split_sentences

    sentences = split_sentences("", before.text)
    if not sentences:
        return equation
    return replace(equation, text=f"{sentences[-1]['text']}\n{equation.text}")


def _to_block(para: Paragraph, vocabulary: frozenset[str], regions: dict[tuple[int, str], Region]) -> Block | None:
    if para.label == "algorithm":  # one step per line, as printed
        text = "\n".join(ln.text for ln in para.lines)
    else:
        text = _join_lines(para.lines, vocabulary)
    if para.footnote and para.label:  # the mark is the locator's, not the text's
        text = re.sub(r"^" + re.escape(para.label) + r"\s?", "", text, count=1)
    if not text:
        return None
    page = para.lines[0].page
    if para.footnote:
        if page == 1 and para.label in _AUTHOR_NOTE_MARKS:
            return None  # "∗ Equal contribution", "† Work done at ...": about the authors, not the paper
        return Block("text", text, page=page, section=para.section, footnote=para.label or "")
    if para.kind == "table":
        region = regions.get((page, para.label or ""))
        if region and region.text:  # caption, then the grid (the chunker cuts a long one by rows)
            text = f"{text}\n{region.text}"
        return Block("table", text, page=page, section=para.section, table_id=para.label)
    if para.kind == "figure":
        return Block("figure", text, page=page, section=para.section, figure_id=para.label)
    section = para.section
    shift = 0
    if para.kind == "text" and para.label != "algorithm":
        heading = run_in_heading(para.lines[0])
        if heading is not None and text.startswith(heading) and text[len(heading) : len(heading) + 1] == " ":
            # "Selecting PDFs We remove ...": the heading is its own line of the text (a blank
            # line: its own sentence) and names the paragraph's subsection
            text = f"{heading}\n\n{text[len(heading) + 1 :]}"
            shift = 1
            name = heading.rstrip(".:").strip()
            section = f"{section} › {name}" if section else name
    page_end = para.lines[-1].page
    if para.kind == "text" and page_end != page:
        first = _join_lines([ln for ln in para.lines if ln.page == page], vocabulary)
        return Block(
            "text", text, page=page, section=section, page_end=page_end, page_end_at=min(len(first) + shift, len(text))
        )
    return Block(para.kind, text, page=page, section=section)


_RUN_IN_WORDS = 8  # a paragraph heading set in the line ("Training Data", "Entity mentions.")


def run_in_heading(line: Line) -> str | None:
    """The bold words that open a paragraph's first line and are followed by its plain text
    ("**Selecting PDFs** We remove PDFs ...", "**Papers.** We obtain ..."): a paragraph heading
    (LaTeX's \\paragraph), told by the fonts of the document itself. None when the line does
    not open so: at most eight bold words, the first capitalised, no mathematics."""
    words = line.words
    k = 0
    while k < len(words) and words[k].n_chars and words[k].n_bold == words[k].n_chars:
        k += 1
    if not 0 < k <= _RUN_IN_WORDS or k == len(words) or words[k].n_bold:
        return None
    run = words[:k]
    if not run[0].text[:1].isupper() or any(w.n_math for w in run):
        return None
    if not any(ch.isalpha() for w in run for ch in w.text):
        return None
    return line_text(run)


def _after_bibliography(
    blocks: list[Block], rest: list[str], parsed: Parsed, vocabulary: frozenset[str]
) -> list[Block]:
    """`blocks` with the text that followed the bibliography's last entry as a paragraph, on the
    page where it starts, after the blocks of that page and the pages before it."""
    first = rest[0].split("\n", 1)[0].strip()
    page = next(
        (p for (_, _, t), p in zip(parsed.references, parsed.reference_pages, strict=True) if t.strip() == first),
        parsed.reference_pages[-1] if parsed.reference_pages else None,
    )
    text = dehyphenate("\n".join(rest), vocabulary)
    at = max((i + 1 for i, b in enumerate(blocks) if page is None or (b.page or 0) <= page), default=0)
    return [*blocks[:at], Block("text", text, page=page), *blocks[at:]]


def _reference_lines(lines: list[tuple[float, float, str]]) -> list[tuple[float, str]]:
    """The reference list's own lines: footnotes that share its column have another size."""
    if not lines:
        return []
    size = Counter(s for s, _, _ in lines).most_common(1)[0][0]
    return [(indent, text) for s, indent, text in lines if abs(s - size) <= 0.4]


def _choose_title(metadata: dict[str, Any], info: dict[str, Any], front: list[Line]) -> str:
    """Trusted metadata, else the PDF's Title field when it is a title, else the page-1
    lines set in the largest font (LaTeX often leaves the Title field empty)."""
    if metadata.get("title"):
        return str(metadata["title"]).strip()
    meta_title = str(info.get("Title") or "").strip()
    if _sensible_title(meta_title):
        return normalize_text(meta_title)
    page1 = [ln for ln in front if ln.page == 1]
    if not page1:
        return ""
    biggest = max(ln.size for ln in page1)
    title_lines = [ln for ln in page1 if ln.size >= biggest - 0.3]
    return dehyphenate("\n".join(ln.text for ln in title_lines[:4]))


def _sensible_title(title: str) -> bool:
    """Word processors fill Title with file names ('paper.dvi', 'Microsoft Word - x')."""
    low = title.lower()
    return (
        len(title.split()) >= 2
        and not re.search(r"\.(pdf|dvi|docx?|tex|ps)$|^microsoft word|^untitled|^slide", low)
        and "/" not in title[:3]
    )


def _authors(metadata: dict[str, Any], info: dict[str, Any]) -> tuple[str, ...]:
    """Trusted metadata, else the PDF's Author field (ACL's hyperref writes 'A ; B ; C')."""
    given = metadata.get("authors")
    if isinstance(given, str):
        given = re.split(r"\s*;\s*|\s*,\s*|\s+and\s+", given)
    if given:
        return tuple(str(a).strip() for a in given if str(a).strip())
    raw = str(info.get("Author") or "").strip()
    if not raw:
        return ()
    parts = raw.split(";") if ";" in raw else re.split(r",\s*|\s+and\s+", raw)
    return tuple(normalize_text(p).strip() for p in parts if p.strip())


def _int_or_none(value: Any) -> int | None:
    """2020, '2020', '2020-05' -> 2020; anything else -> None."""
    try:
        return int(str(value)[:4]) if value not in (None, "") else None
    except ValueError:
        return None
