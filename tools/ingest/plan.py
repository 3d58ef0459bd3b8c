"""The ingest-and-embed plan both build engines follow (the local loader, tools/ingest/loader.py,
and Ray, tools/index/ray_build.py): which parsed papers a build keeps, what it reports on the way, how
many windows one embedding call takes, and the embedder the settings name.

Equal indexes from both engines depend on these being one: the same papers kept in the same
order with the same problems, and the same slices of windows per `encode` call (an embedder's
vectors can depend on a call's other texts: padding, int8 activations quantised per batch)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from tools.base import Paper
from tools.settings import ToolSettings

log = logging.getLogger(__name__)

Verdict = Literal["error", "already_indexed", "duplicate", "keep"]


def too_many_chunks_problem(paper: Paper, chunks: int, max_chunks: int) -> str:
    return (
        f"{paper.source}: paper {paper.paper_id!r} makes {chunks} chunks, more than the limit of "
        f"{max_chunks} (LITLOOP_INGEST__MAX_CHUNKS_PER_PAPER); only its first {max_chunks} are "
        "indexed - raise the limit to index it whole"
    )


def duplicate_problem(paper: Paper, path: Path | str) -> str:
    return (
        f"{paper.source or path}: duplicate paper_id {paper.paper_id!r} (earlier in the input); "
        "skipped - give it a distinct id to keep both"
    )


@dataclass(frozen=True)
class Item:
    """One parsed record as admission sees it: a bad record's `error`, or a paper's id with the
    problems a build reports if it keeps it (`duplicate`, `too_many`: empty when none)."""

    error: str = ""
    paper_id: str = ""
    duplicate: str = ""
    too_many: str = ""


class Admission:
    """The admission policy, fed the input's records in input order: a bad record is a problem;
    a paper the index holds is counted as already indexed; a later duplicate is a problem and
    skipped; a paper with too many chunks is kept (the chunker keeps its first chunks) and
    reported."""

    def __init__(self, known_ids: Iterable[str] | None, problems: list[str], already_indexed: list[str]):
        self.known = set(known_ids or ())
        self.seen: set[str] = set()
        self.problems = problems
        self.already_indexed = already_indexed

    def wants(self, paper_id: str) -> bool:
        """Whether a paper of this id would be kept (not indexed, not seen earlier in the input)."""
        return paper_id not in self.known and paper_id not in self.seen

    def decide(self, item: Item) -> Verdict:
        if item.error:
            self.problems.append(item.error)
            return "error"
        if item.paper_id in self.known:
            self.already_indexed.append(item.paper_id)
            return "already_indexed"
        if item.paper_id in self.seen:
            self.problems.append(item.duplicate)
            return "duplicate"
        self.seen.add(item.paper_id)
        if item.too_many:
            self.problems.append(item.too_many)
        return "keep"

    def log_outcome(self) -> None:
        log_outcome(self.problems, self.already_indexed)


def log_outcome(problems: list[str], already_indexed: list[str]) -> None:
    """What a load reports once it is done, the same from either engine."""
    for p in problems:
        log.warning("%s", p)
    if already_indexed:
        log.info("%d papers of the input are already indexed; skipped (--rebuild re-reads them)", len(already_indexed))


def embed_call_size(batch_size: int) -> int:
    """Windows per `encode` call of a build, local or on Ray: a build's windows, in order, are
    embedded in slices of this many, so both engines give equal vectors."""
    return max(256, batch_size * 8)


def settings_embedder(settings: ToolSettings, model: str | None = None, device: str | None = None):
    """The embedder `settings` name (model, device, batch size, backend, data folder), or its
    `model` (the paper embedder) on `device` (a Ray worker's): every production caller passes
    the settings explicitly, never the environment's."""
    from tools.models.embed import get_embedder

    e = settings.embedder
    return get_embedder(model or e.model, device or settings.device, e.batch_size, e.backend, settings.data_dir)
