"""The Document every reader returns, and the loop every reader runs its records through.

- `document`: a paper's Document, with the rule that a paper needs a title or an abstract, and
  the words that lost a ligature in extraction put back;
- `each_record`: the per-record loop, where any failure costs that record only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from tools.base import Block, Document, IngestError, Paper
from tools.ingest.records import READER_BUG

log = logging.getLogger(__name__)


def paper_id(pid: str | None, path: Path | str, line: int | None) -> str:
    """The record's paper id; a record without one is refused."""
    if pid is None:
        raise IngestError(str(path), "record has no 'paper_id'; give every paper a unique id (any string)", line)
    return pid


def document(paper: Paper, blocks: Iterable[Block], path: Path | str, line: int | None) -> Document:
    """The Document of a paper, refused when it has neither title nor abstract.

    Every paper is listed, embedded and cited through its title-and-abstract chunk (the paper
    embedding, the verifier's list, Relate's seeds); without either there is no such chunk, so
    the record is refused with what to add rather than indexed as a nameless paper.
    """
    blocks = tuple(blocks)
    if not paper.title.strip() and not paper.abstract.strip():
        body = f" (its {len(blocks)} body blocks are not indexed)" if blocks else ""
        raise IngestError(
            str(path),
            f"paper {paper.paper_id!r} has neither a title nor an abstract{body}; add a 'title' "
            "(or an 'abstract') to the record: every paper is indexed under its title and abstract",
            line,
        )
    return repaired(Document(paper=paper, blocks=blocks))


def repaired(doc: Document) -> Document:
    """`doc` with the words that lost a ligature in extraction put back ("speci c" ->
    "specific") in its title, abstract and blocks; citation marks and page breaks keep their
    place. The count is kept (`Document.ligatures_repaired`) for the build's report."""
    from dataclasses import replace

    from tools.base import CiteMark
    from tools.ingest.ligatures import own_words, repair_ligatures

    paper = doc.paper
    known = own_words([paper.title, paper.abstract, *(b.text for b in doc.blocks)])
    title, abstract = repair_ligatures(paper.title, known), repair_ligatures(paper.abstract, known)
    mended = title.words + abstract.words
    blocks = []
    for block in doc.blocks:
        fix = repair_ligatures(block.text, known)
        if fix.words:
            mended += fix.words
            block = replace(
                block,
                text=fix.text,
                page_end_at=None if block.page_end_at is None else fix.offset(block.page_end_at),
                cites=tuple(CiteMark(fix.offset(c.start), fix.offset(c.end), c.key) for c in block.cites),
            )
        blocks.append(block)
    if not mended:
        return doc
    return replace(
        doc,
        paper=replace(paper, title=title.text, abstract=abstract.text),
        blocks=tuple(blocks),
        ligatures_repaired=doc.ligatures_repaired + mended,
    )


def each_record(
    path: Path,
    items: Iterable[tuple[int | None, Any] | IngestError],
    build: Callable[[Any, int | None], Document],
) -> Iterator[Document | IngestError]:
    """`build` every (line, value); whatever goes wrong costs that record alone."""
    for item in items:
        if isinstance(item, IngestError):
            yield item
            continue
        line, value = item
        try:
            yield build(value, line)
        except IngestError as exc:
            yield exc
        except Exception as exc:
            log.exception("%s:%s: unexpected failure reading a record", path, line)
            yield IngestError(
                str(path),
                f"could not read this record ({type(exc).__name__}: {exc}); "
                f"{READER_BUG}: please report it with this record",
                line,
            )
