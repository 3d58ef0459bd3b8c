"""Find the supported files under the given paths and parse them into Documents.

Supported: `.jsonl` (normalised paper records, or S2ORC objects one per line), `.json` (one S2ORC
/ GROBID document), `.pdf` (with an optional `<name>.meta.json` beside it giving title, authors,
venue, year, paper_id). Bad input never stops the rest: each problem is collected with its file
(and line) and what to do, and the caller decides (`--strict` turns problems into a failure).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tools.base import Document, IngestError
from tools.jsonl import read_lines

log = logging.getLogger(__name__)

SUFFIXES = (".jsonl", ".json", ".pdf")
S2ORC_KEYS = ("pdf_parse", "body_text", "grobid_parse", "latex_parse")


@dataclass
class LoadResult:
    documents: list[Document] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    files: int = 0


def discover(paths: Iterable[Path]) -> tuple[list[Path], list[str]]:
    """Supported files under `paths` (sorted within each folder) and a problem per bad path."""
    files: list[Path] = []
    problems: list[str] = []
    for raw in paths:
        path = Path(raw).expanduser()
        if not path.exists():
            problems.append(f"{path}: no such file or folder")
        elif path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and _supported(p))
            if not found:
                problems.append(
                    f"{path}: no supported files in this folder (looked for {', '.join(SUFFIXES)})"
                )
            files.extend(found)
        elif _supported(path):
            files.append(path)
        else:
            problems.append(f"{path}: unsupported file type; give {', '.join(SUFFIXES)} files")
    return list(dict.fromkeys(files)), problems


def _supported(p: Path) -> bool:
    return p.suffix.lower() in SUFFIXES and not p.name.endswith(".meta.json") and not p.name.startswith(".")


def parse_file(path: Path) -> Iterator[Document | IngestError]:
    suffix = path.suffix.lower()
    try:
        if suffix == ".pdf":
            from tools.ingest.pdf import parse_pdf

            yield parse_pdf(path, metadata=_sidecar(path))
        elif suffix == ".json":
            from tools.ingest.s2orc import parse_s2orc

            yield from parse_s2orc(path)
        else:
            yield from _parse_jsonl(path)
    except IngestError as exc:
        yield exc
    except (OSError, UnicodeDecodeError) as exc:
        yield IngestError(str(path), f"cannot read the file ({exc}); check it is readable UTF-8 text or a PDF")


def _parse_jsonl(path: Path) -> Iterator[Document | IngestError]:
    """A JSONL file holds paper records unless its first object looks like S2ORC."""
    from tools.ingest.jsonl import parse_records

    first = next(read_lines(path), None)
    if first is not None and isinstance(first.value, dict) and any(k in first.value for k in S2ORC_KEYS):
        from tools.ingest.s2orc import parse_s2orc

        yield from parse_s2orc(path)
    else:
        yield from parse_records(path)


def _sidecar(pdf: Path) -> dict | None:
    meta = pdf.with_name(pdf.stem + ".meta.json")
    if not meta.exists():
        return None
    try:
        data = json.loads(meta.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise IngestError(str(meta), f"metadata file is not valid JSON ({exc.msg}); fix or remove it") from None
    if not isinstance(data, dict):
        raise IngestError(str(meta), "metadata file must hold one JSON object")
    return data


def load_documents(
    paths: Iterable[Path],
    known_ids: set[str] | None = None,
    on_file: Callable[[Path], None] | None = None,
) -> LoadResult:
    """Parse every supported file; duplicates of `known_ids` or of earlier input are skipped."""
    files, problems = discover(paths)
    result = LoadResult(problems=problems, files=len(files))
    seen = set(known_ids or ())
    for path in files:
        for item in parse_file(path):
            if isinstance(item, IngestError):
                result.problems.append(str(item))
                continue
            pid = item.paper.paper_id
            if pid in seen:
                result.problems.append(
                    f"{item.paper.source or path}: duplicate paper_id {pid!r} (already indexed or "
                    "earlier in the input); skipped - give it a distinct id to keep both"
                )
                continue
            seen.add(pid)
            result.documents.append(item)
        if on_file:
            on_file(path)
    for p in result.problems:
        log.warning("%s", p)
    return result
