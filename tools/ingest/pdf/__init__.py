"""PDF ingestion with pdfplumber: pages, columns, headings, captions, tables and references.

SEE: docs/design.md section 1 (locators are what answers cite, so page and section must be exact).

pdfplumber (MIT) gives characters with positions and fonts; everything else is reconstructed
here, tuned on two-column ACL-style papers but written so a one-column paper still reads in
order:

1. words per page (rotated words dropped), each with its font size, bold and math share;
2. columns: the page's gutter is the x with the fewest word rows crossing it; rows that run
   across it (titles, full-width captions) form full-width bands, and between them the left
   column is read before the right one;
3. table and figure bodies are located from the caption ("Table 2: ...") and the page's rules
   and graphics next to it, rendered (tables) or dropped (figure text) and removed from the
   running text; the layout is then redone without them;
4. lines become paragraphs (indent, gap, font-size change), headings are whole-bold lines
   that look like "3.2 Results" or a known name ("Abstract", "References"), and each
   paragraph becomes a Block with its page and the current heading;
5. the References section is split into entries by hanging indent and year, each with a
   guessed title for the resolver.

One module per stage: reading (words, fonts), furniture (line numbers, running heads), layout
(columns, lines), regions and tables (table and figure bodies, grids), notes (footnotes),
assemble (paragraphs, headings), references, document (blocks and the paper record); text
holds the pure text helpers and model the data they pass along.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from tools.base import Document, Dropped
from tools.ingest.pdf.accounting import account, dropped_running
from tools.ingest.pdf.assemble import Assembler
from tools.ingest.pdf.document import build_document
from tools.ingest.pdf.floor import with_floor
from tools.ingest.pdf.furniture import drop_line_numbers, is_running, running_lines
from tools.ingest.pdf.layout import inside, layout_lines
from tools.ingest.pdf.model import PageData, Parsed
from tools.ingest.pdf.notes import mark_footnotes, strip_note_marks
from tools.ingest.pdf.outline import read_outline
from tools.ingest.pdf.reading import document_style, open_pdf, read_pdf
from tools.ingest.pdf.references import (
    guess_venue_year,
    parse_reference,
    split_references,
)
from tools.ingest.pdf.regions import locate_regions
from tools.ingest.pdf.text import (
    dehyphenate,
    match_caption,
    match_heading,
    normalize_text,
)

__all__ = [
    "dehyphenate",
    "guess_venue_year",
    "match_caption",
    "match_heading",
    "normalize_text",
    "parse_pdf",
    "parse_reference",
    "split_references",
]


def parse_pdf(path: Path, paper_id: str | None = None, metadata: dict[str, Any] | None = None) -> Document:
    """Parse one PDF into a Document (blocks with exact page and section locators).

    `metadata` may hold title, authors, venue, year and paper_id from a trusted source; they
    win over what is guessed from the PDF. Raises IngestError for unreadable, encrypted or
    text-less PDFs.
    """
    path = Path(path)
    metadata = dict(metadata or {})
    with open_pdf(path) as pdf:
        info, pages = read_pdf(path, pdf)
        dropped: list[Dropped] = []
        for page in pages:
            dropped += [Dropped(page.number, n, "line number") for n in drop_line_numbers(page)]
        page_words = {page.number: [w.text for w in page.words] for page in pages}  # the reader's own words
        first_pass = [layout_lines(page, exclude=[]) for page in pages]
        running = running_lines(pages, first_pass)
        style = document_style(pages, first_pass)
        for page, lines in zip(pages, first_pass):
            locate_regions(page, lines, style, pdf.pages[page.number - 1])
            # Redo the layout without table and figure bodies: columns come out cleaner.
            if page.regions:
                page.lines = layout_lines(page, [r.bbox for r in page.regions])
                for r in page.regions:
                    if r.kind == "figure":  # the words drawn inside a figure: its own text, not prose
                        inside_words = " ".join(w.text for w in page.words if inside(w, r.bbox))
                        dropped.append(Dropped(page.number, inside_words, "text inside a figure"))
            else:
                page.lines = lines
            dropped += [dropped_running(page.number, ln.text) for ln in page.lines if is_running(ln, page, running)]
            page.lines = [ln for ln in page.lines if not is_running(ln, page, running)]
            mark_footnotes(page, style)
            strip_note_marks(page)
    parsed = Assembler(pages, style, read_outline(path)).run()
    doc = build_document(path, paper_id, metadata, info, pages, parsed)
    doc = replace(doc, dropped=(*doc.dropped, *dropped))
    extra = _kept_outside_blocks(doc, parsed, pages)
    regions = {page.number: [r.bbox for r in page.regions] for page in pages if page.regions}
    fallback = account(page_words, doc, {p: [t for _, t in texts] for p, texts in extra.items()})
    # the text floor: runs the plain text layer holds and the build lost go back in (floor.py)
    return with_floor(path, doc, extra, regions, fallback=fallback)


def _kept_outside_blocks(doc: Document, parsed: Parsed, pages: list[PageData]) -> dict[int, list[tuple[str, str]]]:
    """Page -> the texts the build kept on it outside its blocks, as (kind, text): title and
    authors, abstract lines (a paragraph's lines on one page joined, hyphens undone), tables'
    and figures' regions, bibliography lines."""
    extra: dict[int, list[tuple[str, str]]] = {}
    first = pages[0].number if pages else 1
    extra.setdefault(first, []).extend(
        ("other", t) for t in (doc.paper.title, " ".join(doc.paper.authors), doc.paper.venue or "")
    )
    for para in parsed.abstract:
        by_page: dict[int, list[str]] = {}
        for ln in para.lines:
            by_page.setdefault(ln.page, []).append(ln.text)
        for page_no, lines in by_page.items():
            extra.setdefault(page_no, []).append(("abstract", dehyphenate("\n".join(lines))))
    for page in pages:
        for r in page.regions:
            extra.setdefault(page.number, []).append(("other", r.text))
    for (_, _, text), page_no in zip(parsed.references, parsed.reference_pages, strict=True):
        extra.setdefault(page_no, []).append(("bibliography", text))
    return extra
