"""Turn a parsed Document into chunks with exact locators.

SEE: docs/design.md section 1. Rules:
- exactly one `title_abstract` chunk per paper, first, starting with `[VENUE YEAR]` when both are
  known; an abstract too long for the cap continues in `text` chunks of section "Abstract" (so
  does a title too long to leave the abstract room in the first chunk);
- body chunks follow paragraph, page and heading boundaries: paragraphs of one section on one
  page may be packed together (short paragraphs alone make poor retrieval units), never across
  a page or section change, and never past MAX_CHUNK_CHARS;
- figure, table and equation blocks are chunks of their own kind, keeping their object ids;
- a block longer than the cap is split at sentence boundaries (words as a last resort).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import replace

from tools.base import MAX_CHUNK_CHARS, Block, Chunk, ChunkKind, Document, Locator
from tools.tables import table_parts

# Paragraphs shorter than this are packed with the next one of the same page and section.
MIN_PACK_CHARS = 400
# The least of the abstract that shares the title-and-abstract chunk with the title; a longer
# title is cut across chunks instead (a sentence's worth keeps the chunk about the paper).
MIN_ABSTRACT_ROOM = 200

_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")


def chunk_id(paper_id: str, n: int) -> str:
    return f"{paper_id}#c{n}"


def split_text(text: str, cap: int = MAX_CHUNK_CHARS) -> list[str]:
    """Split text into pieces of at most `cap` characters, preferring sentence ends."""
    if cap < 1:  # no piece fits: cutting would never end
        raise ValueError(f"split_text needs a cap of at least 1 character, got {cap}")
    text = text.strip()
    if len(text) <= cap:
        return [text] if text else []
    pieces: list[str] = []
    current = ""
    for sentence in _SENTENCE_END.split(text):
        for part in _hard_split(sentence, cap):
            if not current:
                current = part
            elif len(current) + 1 + len(part) <= cap:
                current = f"{current} {part}"
            else:
                pieces.append(current)
                current = part
    if current:
        pieces.append(current)
    return pieces


def split_table(text: str, cap: int = MAX_CHUNK_CHARS) -> list[str]:
    """A table chunk cut by rows: each piece is the caption (its first sentence after the first
    piece, when the whole caption would crowd the rows out), the header rows, and as many body
    rows as fit, so every piece can be read, and cited, on its own."""
    if len(text) <= cap:
        return [text]
    caption, header, body = table_parts(text)
    if not body:
        return split_text(text, cap)
    head = "\n".join(caption)
    short = split_text(head, 300)[0] if head else ""

    def frame(first: bool) -> list[str]:
        return [x for x in (head if first else short, *header) if x]

    pieces: list[str] = []
    current: list[str] = []
    for row in body:
        lines = frame(not pieces)
        if current and len("\n".join([*lines, *current, row])) > cap:
            pieces.append("\n".join([*lines, *current]))
            current, lines = [], frame(False)
        current.append(row)
        if len("\n".join([*lines, *current])) > cap:  # a caption or a row too long on its own
            return [p for piece in [*pieces, "\n".join([*lines, *current])] for p in split_text(piece, cap)]
    if current:
        pieces.append("\n".join([*frame(not pieces), *current]))
    return pieces


def _hard_split(sentence: str, cap: int) -> Iterator[str]:
    """A 'sentence' longer than the cap (tables, run-on PDF text): cut at spaces, else anywhere."""
    while len(sentence) > cap:
        cut = sentence.rfind(" ", 0, cap + 1)
        if cut <= 0:
            cut = cap
        yield sentence[:cut].strip()
        sentence = sentence[cut:].strip()
    if sentence:
        yield sentence


def title_abstract_text(doc: Document) -> tuple[str, str]:
    """The title-and-abstract chunk text and any overflow beyond the cap.

    The head (`[VENUE YEAR]` tag and title) and the start of the abstract share the chunk. A head
    that leaves the abstract less than MIN_ABSTRACT_ROOM characters (a title of thousands of
    characters: an abstract or a whole page in the title field) is cut like any long text: the
    chunk holds the first piece, the rest of the head and the abstract overflow, so nothing is lost.
    """
    paper = doc.paper
    head = " ".join(p for p in (paper.venue_year_tag, paper.title.strip()) if p)
    abstract = paper.abstract.strip()
    full = f"{head}\n{abstract}".strip() if head else abstract
    if len(full) <= MAX_CHUNK_CHARS:
        return full, ""
    room = MAX_CHUNK_CHARS - len(head) - 1
    if room < MIN_ABSTRACT_ROOM:
        pieces = split_text(full)
    else:
        pieces = split_text(abstract, room)
        pieces[0] = f"{head}\n{pieces[0]}" if head else pieces[0]
    return pieces[0], " ".join(pieces[1:])


def chunk_document(doc: Document, max_chunks: int | None = None) -> list[Chunk]:
    """The paper's chunks, title-and-abstract first; only the first `max_chunks` when given
    (the ingestion cap, LITLOOP_INGEST__MAX_CHUNKS_PER_PAPER: the loader reports the cut)."""
    paper = doc.paper
    paged = any(b.page is not None for b in doc.blocks)
    # In a paginated source (a PDF) the title and abstract are on page 1.
    head_locator = Locator(page=1 if paged else None, section="Abstract")
    first, overflow = title_abstract_text(doc)
    chunks = [Chunk(chunk_id(paper.paper_id, 0), paper.paper_id, "title_abstract", first, head_locator)]
    blocks = list(doc.blocks)
    if overflow:
        blocks.insert(0, Block("text", overflow, page=head_locator.page, section="Abstract"))
    body = _body_units(blocks)
    if max_chunks is not None:
        body = itertools.islice(body, max(0, max_chunks - 1))
    for kind, text, locator in body:
        chunks.append(Chunk(chunk_id(paper.paper_id, len(chunks)), paper.paper_id, kind, text, locator))
    return chunks


def _pieces(text: str, loc: Locator, page_end_at: int | None) -> Iterator[tuple[str, Locator]]:
    """The text cut to the cap, each piece with its pages: a paragraph that runs onto the next
    page (`loc.page_end`, the later page starting at `page_end_at`) gives pieces that sit on
    the first page, on the second, or across both."""
    at = 0
    for piece in split_text(text):
        start = text.find(piece[:40], at)
        start = at if start < 0 else start
        at = start + len(piece)
        if loc.page_end is None or page_end_at is None:
            yield piece, loc
        elif at <= page_end_at:
            yield piece, replace(loc, page_end=None)
        elif start >= page_end_at:
            yield piece, replace(loc, page=loc.page_end, page_end=None)
        else:
            yield piece, replace(loc, page_end_at=page_end_at - start)


def _body_units(blocks: list[Block]) -> Iterator[tuple[ChunkKind, str, Locator]]:
    """Yield (kind, text, locator) for every body chunk, packing short paragraphs (and the
    footnotes of one page and section, apart from the running text)."""
    paragraph_no: dict[str | None, int] = {}
    pending: list[str] = []
    pending_loc: Locator | None = None
    pending_end_at: int | None = None
    notes: list[tuple[str, str]] = []  # (mark, text) of the footnotes of one page and section
    notes_at: tuple[int | None, str | None] | None = None

    def flush() -> Iterator[tuple[ChunkKind, str, Locator]]:
        nonlocal pending, pending_loc, pending_end_at
        if pending and pending_loc is not None:
            for piece, loc in _pieces("\n".join(pending), pending_loc, pending_end_at):
                yield "text", piece, loc
        pending, pending_loc, pending_end_at = [], None, None

    def flush_notes() -> Iterator[tuple[ChunkKind, str, Locator]]:
        nonlocal notes, notes_at
        if notes and notes_at is not None:
            marks = ", ".join(m for m, _ in notes if m)
            loc = Locator(page=notes_at[0], section=notes_at[1], footnote=marks or None)
            # a blank line between footnotes: each ends where it ends, with or without a full stop
            for piece in split_text("\n\n".join(t for _, t in notes)):
                yield "text", piece, loc
        notes, notes_at = [], None

    for block in blocks:
        text = block.text.strip()
        if not text:
            continue
        if block.footnote is not None:
            if (
                notes_at != (block.page, block.section)
                or sum(len(t) + 1 for _, t in notes) + len(text) > MAX_CHUNK_CHARS
            ):
                if notes_at is not None and notes_at != (block.page, block.section):
                    yield from flush()  # the page's running text before its footnotes
                yield from flush_notes()
            notes.append((block.footnote, text))
            notes_at = (block.page, block.section)
            continue
        if notes_at is not None and notes_at != (block.page, block.section):
            yield from flush()
            yield from flush_notes()
        if block.kind != "text":
            yield from flush()
            loc = Locator(page=block.page, section=block.section, table_id=block.table_id, figure_id=block.figure_id)
            for piece in split_table(text) if block.kind == "table" else split_text(text):
                yield block.kind, piece, loc
            continue
        paragraph_no[block.section] = paragraph_no.get(block.section, 0) + 1
        same_place = (
            pending_loc is not None
            and pending_loc.page_end is None
            and (pending_loc.page, pending_loc.section) == (block.page, block.section)
        )
        fits = sum(len(p) + 1 for p in pending) + len(text) <= MAX_CHUNK_CHARS
        if same_place and fits and sum(len(p) for p in pending) < MIN_PACK_CHARS:
            if block.page_end is not None and pending_loc is not None:  # this one runs onto the next page
                before = sum(len(p) + 1 for p in pending)
                pending_loc = replace(pending_loc, page_end=block.page_end)
                pending_end_at = before + (block.page_end_at if block.page_end_at is not None else len(text))
            pending.append(text)
            continue
        yield from flush()
        pending = [text]
        pending_loc = Locator(
            page=block.page, section=block.section, paragraph=paragraph_no[block.section], page_end=block.page_end
        )
        pending_end_at = block.page_end_at
    yield from flush()
    yield from flush_notes()
