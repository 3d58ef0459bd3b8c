"""Normalised JSONL paper records (the shape of every corpus in ../shared/data).

One JSON object per line: `paper_id`, `title`, `abstract` always; `references` (corpus ids),
`year`, `venue`, `field`, `authors` when known. Records carry no full text, so a Document from
here has no body blocks: its evidence is the title-and-abstract chunk.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tools.base import Document, IngestError, Paper
from tools.jsonl import read_lines


def record_to_paper(rec: Any, path: Path, line: int) -> Paper:
    if not isinstance(rec, dict):
        raise IngestError(str(path), "expected a JSON object per line", line)
    pid = rec.get("paper_id")
    if pid is None or str(pid).strip() == "":
        raise IngestError(str(path), "record has no 'paper_id'; give every paper a unique id", line)
    title = rec.get("title") or ""
    abstract = rec.get("abstract") or ""
    if not isinstance(title, str) or not isinstance(abstract, str):
        raise IngestError(str(path), "'title' and 'abstract' must be strings", line)
    if not title.strip() and not abstract.strip():
        raise IngestError(str(path), f"paper {pid!r} has neither title nor abstract; nothing to index", line)
    refs = rec.get("references") or []
    if not isinstance(refs, list):
        raise IngestError(str(path), "'references' must be a list of paper ids", line)
    return Paper(
        paper_id=str(pid).strip(),
        title=" ".join(title.split()),
        abstract=abstract.strip(),
        authors=tuple(_authors(rec.get("authors"))),
        venue=(rec.get("venue") or None),
        year=_year(rec.get("year"), path, line),
        references=tuple(str(r) for r in refs),
        source=str(path),
        field=rec.get("field"),
    )


def _year(value: Any, path: Path, line: int) -> int | None:
    if value in (None, ""):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise IngestError(str(path), f"'year' must be a whole number, got {value!r}", line) from None


def _authors(value: Any) -> list[str]:
    if not value:
        return []
    if isinstance(value, str):
        return [a.strip() for a in value.split(",") if a.strip()]
    out = []
    for a in value:
        if isinstance(a, dict):
            out.append(" ".join(str(a.get(k) or "") for k in ("first", "last")).strip() or str(a.get("name", "")))
        else:
            out.append(str(a))
    return [a for a in out if a]


def iter_jsonl(path: Path) -> Iterator[tuple[int, Any] | IngestError]:
    """Yield (line number, parsed object), or an IngestError for a line that is not JSON."""
    for line in read_lines(path):
        if line.error is None:
            yield line.number, line.value
        else:
            yield IngestError(str(path), f"not valid JSON ({line.error.msg} at column {line.error.colno}); "
                              "fix or remove the line", line.number)


def parse_records(path: Path) -> Iterator[Document | IngestError]:
    for item in iter_jsonl(path):
        if isinstance(item, IngestError):
            yield item
            continue
        n, rec = item
        try:
            yield Document(record_to_paper(rec, path, n))
        except IngestError as exc:
            yield exc
