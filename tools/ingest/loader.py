"""Find the supported files under the given paths and parse them into Documents.

Supported: `.jsonl` (normalised paper records, or S2ORC objects one per line), `.json` (one S2ORC
/ GROBID document), `.tei.xml` (GROBID's TEI XML, its `processFulltextDocument` output), `.pdf`
(with an optional `<name>.meta.json` beside it giving title, authors, venue, year, paper_id).
Bad input never stops the rest: each problem is collected with its file (and line) and what to
do, and the caller decides (`--strict` turns problems into a failure).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tools.base import Chunk, Document, IngestError
from tools.ingest.documents import document, each_record
from tools.ingest.records import (
    PdfMetadata,
    Unreadable,
    parse_json,
    read_json_lines,
    validate,
)

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

log = logging.getLogger(__name__)

SUFFIXES = (".jsonl", ".json", ".tei.xml", ".pdf")
S2ORC_KEYS = ("pdf_parse", "body_text", "grobid_parse", "latex_parse")


@dataclass
class LoadResult:
    documents: list[Document] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    already_indexed: list[str] = field(default_factory=list)  # paper ids skipped: not problems
    files: int = 0
    # each kept document's chunks, as the build indexes them (cut to the cap); empty when the
    # loader did not chunk (then `chunks_of` chunks them)
    chunks: list[list[Chunk]] = field(default_factory=list)

    def chunks_of(self, max_chunks: int | None) -> list[list[Chunk]]:
        """Each document's chunks cut to `max_chunks`: the loader's when it made them."""
        if len(self.chunks) == len(self.documents):
            return self.chunks
        from tools.ingest.chunker import chunk_document

        return [chunk_document(d, max_chunks) for d in self.documents]


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
                problems.append(f"{path}: no supported files in this folder (looked for {', '.join(SUFFIXES)})")
            files.extend(found)
        elif _supported(path):
            files.append(path)
        else:
            problems.append(f"{path}: unsupported file type; give {', '.join(SUFFIXES)} files")
    return list(dict.fromkeys(files)), problems


def _supported(p: Path) -> bool:
    name = p.name.lower()
    return name.endswith(SUFFIXES) and not name.endswith(".meta.json") and not name.startswith(".")


def parse_file(path: Path) -> Iterator[Document | IngestError]:
    """A Document per good record of `path`, an IngestError per bad one (or one for the file)."""
    from tools.ingest.tei import is_tei, parse_tei

    suffix = path.suffix.lower()
    try:
        if is_tei(path):
            yield from each_record(path, [(None, path)], lambda tei, _: parse_tei(tei))
        elif suffix == ".pdf":
            yield from each_record(path, [(None, path)], lambda pdf, _: _parse_pdf(pdf))
        elif suffix == ".json":
            from tools.ingest.s2orc import read_s2orc

            yield from read_s2orc(path)
        else:
            yield from _parse_jsonl(path)
    except OSError as exc:
        yield IngestError(str(path), f"cannot read the file ({exc}); check it is readable")


def _parse_pdf(path: Path) -> Document:
    from dataclasses import replace

    from tools.ingest.pdf import parse_pdf

    doc = parse_pdf(path, metadata=_sidecar(path))
    checked = document(doc.paper, doc.blocks, path, None)  # refused without title and abstract; repaired
    return replace(checked, dropped=doc.dropped, text_account=doc.text_account)


def _parse_jsonl(path: Path) -> Iterator[Document | IngestError]:
    """A JSONL file holds paper records unless its first JSON object looks like S2ORC."""
    from tools.ingest.jsonl import parse_records
    from tools.ingest.s2orc import read_s2orc

    lines = read_json_lines(path)
    head = []
    for item in lines:  # up to the first line that is a JSON object
        head.append(item)
        if not isinstance(item, IngestError) and isinstance(item[1], dict):
            break
    items = itertools.chain(head, lines)
    first = head[-1] if head and not isinstance(head[-1], IngestError) else None
    if first is not None and isinstance(first[1], dict) and any(k in first[1] for k in S2ORC_KEYS):
        yield from read_s2orc(path, items)
    else:
        yield from parse_records(path, items)


def _sidecar(pdf: Path) -> dict | None:
    meta = pdf.with_name(pdf.stem + ".meta.json")
    if not meta.exists():
        return None
    try:
        data = parse_json(meta.read_bytes().decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise IngestError(str(meta), "metadata file is not UTF-8 text; re-save it as UTF-8") from None
    except Unreadable as exc:
        raise IngestError(str(meta), f"metadata file is {exc.reason}; fix or remove it", exc.line) from None
    return validate(PdfMetadata, data, meta, None).as_metadata()


def _parse_in_worker(path: Path) -> list[Document | tuple[str, str, int | None]]:
    """parse_file in a pool worker; errors travel as (path, message, line) (IngestError's own
    pickling would lose its fields)."""
    return [(e.path, e.message, e.line) if isinstance(e, IngestError) else e for e in parse_file(path)]


class _PdfPool:
    """The PDFs of a build parsed ahead in worker processes (pdfplumber is pure Python: one
    core per file), handed back in file order; everything else is parsed where it is asked."""

    def __init__(self, files: list[Path], workers: int):
        import os

        self.pdfs = [f for f in files if f.suffix.lower() == ".pdf"]
        n = workers if workers > 0 else (os.cpu_count() or 1)
        self.n = min(n, len(self.pdfs))
        self.futures: dict[Path, Any] = {}
        self.executor: ProcessPoolExecutor | None = None

    def __enter__(self) -> _PdfPool:
        if self.n > 1:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            # spawn: the build may already hold threads (torch, Chroma) that a fork would copy mid-lock
            self.executor = ProcessPoolExecutor(self.n, mp_context=multiprocessing.get_context("spawn"))
            self.futures = {p: self.executor.submit(_parse_in_worker, p) for p in self.pdfs}
        return self

    def __exit__(self, *exc: object) -> None:
        if self.executor is not None:
            self.executor.shutdown(cancel_futures=True)

    def items(self, path: Path) -> Iterator[Document | IngestError]:
        future = self.futures.pop(path, None)
        if future is None:
            yield from parse_file(path)
            return
        try:
            got = future.result()
        except Exception as exc:
            log.warning("%s: the parsing worker failed (%s); parsing it in the main process", path, exc)
            yield from parse_file(path)
            return
        for item in got:
            yield IngestError(item[0], item[1], item[2]) if isinstance(item, tuple) else item


def load_documents(
    paths: Iterable[Path],
    known_ids: set[str] | None = None,
    on_file: Callable[[Path], None] | None = None,
    max_chunks: int | None = None,
    workers: int = 1,
) -> LoadResult:
    """Parse every supported file and admit its papers as a build does (tools/ingest/plan.py):
    papers in `known_ids` (already indexed) and duplicates of earlier input are skipped, the
    latter as problems; a paper that would make more than `max_chunks` chunks is kept and
    reported, cut to its first `max_chunks`. Each kept paper is chunked once, here
    (`LoadResult.chunks`). PDFs are parsed in a pool of `workers` processes (0: one per core)
    when there are several; the result is the same as parsing them one by one, in the same order."""
    from tools.ingest.chunker import chunk_document
    from tools.ingest.plan import (
        Admission,
        Item,
        duplicate_problem,
        too_many_chunks_problem,
    )

    files, problems = discover(paths)
    result = LoadResult(problems=problems, files=len(files))
    admission = Admission(known_ids, result.problems, result.already_indexed)
    with _PdfPool(files, workers) as pool:
        for path in files:
            for item in pool.items(path):
                if isinstance(item, IngestError):
                    admission.decide(Item(error=str(item)))
                    continue
                pid = item.paper.paper_id
                if not admission.wants(pid):  # skipped either way: not worth chunking
                    admission.decide(Item(paper_id=pid, duplicate=duplicate_problem(item.paper, path)))
                    continue
                chunks = chunk_document(item)
                too_many = ""
                if max_chunks is not None and len(chunks) > max_chunks:
                    too_many = too_many_chunks_problem(item.paper, len(chunks), max_chunks)
                verdict = admission.decide(Item(paper_id=pid, too_many=too_many))
                if verdict == "keep":
                    result.documents.append(item)
                    result.chunks.append(cut_chunks(chunks, max_chunks))
            if on_file:
                on_file(path)
    admission.log_outcome()
    return result


def cut_chunks(chunks: list[Chunk], max_chunks: int | None) -> list[Chunk]:
    """A paper's chunks as `chunk_document(doc, max_chunks)` gives them, from all of them (the
    cap keeps a prefix, and always the title-and-abstract chunk)."""
    return chunks if max_chunks is None else chunks[: max(1, max_chunks)]
