"""Normalised JSONL paper records (the shape of every corpus in ../shared/data).

One JSON object per line: `paper_id`, `title`, `abstract` always; `references` (corpus ids),
`year`, `venue`, `field`, `authors` when known. Records carry no full text, so a Document from
here has no body blocks: its evidence is the title-and-abstract chunk. Each line is validated as
a `records.PaperRecord`; a bad line costs that line only (see tools/ingest/records.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from tools.base import Document, IngestError, Paper
from tools.ingest.documents import document, each_record, paper_id
from tools.ingest.records import (
    PaperRecord,
    read_json_lines,
    validate,
)


def record_to_document(value: Any, path: Path, line: int | None) -> Document:
    rec = validate(PaperRecord, value, path, line)
    paper = Paper(
        paper_id=paper_id(rec.paper_id, path, line),
        title=" ".join(rec.title.split()),
        abstract=rec.abstract.strip(),
        authors=rec.authors,
        venue=rec.venue.strip() or None,
        year=rec.year,
        references=rec.references,
        source=str(path),
        field=rec.field.strip() or None,
    )
    return document(paper, (), path, line)


def parse_records(
    path: Path, items: Iterable[tuple[int, Any] | IngestError] | None = None
) -> Iterator[Document | IngestError]:
    """A Document per good line of `path`, an IngestError per bad one (`items`: its lines, when
    the caller has already started reading them)."""
    lines = read_json_lines(path) if items is None else items
    yield from each_record(path, lines, lambda value, line: record_to_document(value, path, line))
