"""Compaction (`litloop index compact`): the live version's segments merged into one, the same
rows and scores, one dense store, switched to atomically."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.citations.model import Context
from tools.citations.store import CITATIONS_FILE
from tools.index.layout import GRAPH_FILE, PAPERS_FILE, Progress, _counting, _now, _progress
from tools.index.manifest import write_manifest
from tools.index.segment import _dense_store, write_segment
from tools.index.versions import (
    _build_lock,
    _collect,
    _remove_leftovers,
    _stage_version,
)
from tools.index.view import IndexView, open_index
from tools.settings import ToolSettings


@dataclass
class CompactReport:
    index: Path
    segments_before: int = 0
    segments_after: int = 0
    chunks: int = 0
    windows: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": str(self.index),
            "segments_before": self.segments_before,
            "segments_after": self.segments_after,
            "chunks": self.chunks,
            "windows": self.windows,
            "seconds": round(self.seconds, 2),
        }


def compact_index(root: Path, settings: ToolSettings, *, progress: Progress = False) -> CompactReport:
    """Merge the live version's segments into one (same rows, same scores, one dense store) and
    switch to it atomically; the old segments go when their last reader lets go.

    An index of one segment is left as it is. Time and disk are those of the whole index (every
    chunk and vector is rewritten), which is why adds do not do it: run it when searches have
    slowed down under many segments (`litloop index info` shows their number)."""
    root = Path(root).expanduser()
    report = CompactReport(index=root)
    t0 = time.perf_counter()
    with _build_lock(root):
        _remove_leftovers(root, settings.dense.url)
        old = open_index(root, settings)
        try:
            report.segments_before = report.segments_after = len(old.manifest.segments)
            report.chunks = len(old.chunks)
            if report.segments_before > 1:
                _stage_version(root, settings, lambda stage: _write_compacted(stage, old, settings, report, progress))
                report.segments_after = 1
        finally:
            old.close()
        _collect(root, settings.dense.url)
    report.seconds = time.perf_counter() - t0
    return report


def _old_contexts(old: IndexView) -> Iterator[Context] | None:
    """Every segment's citation contexts in segment order; None when no segment has any (an index
    written before litloop recorded them stays without)."""
    from tools.citations.store import CONTEXTS_FILE, read_contexts

    files = [d / CONTEXTS_FILE for d in old.segment_dirs if (d / CONTEXTS_FILE).is_file()]
    if not files:
        return None
    return (c for f in files for c in read_contexts(f))


def _write_compacted(
    stage: Path, old: IndexView, settings: ToolSettings, report: CompactReport, progress: Progress
) -> None:
    from tools.retrieval.bm25_segments import Postings

    root = stage.parent

    def fill(_seg: Path, dense: Any) -> int:
        with _progress(progress, "merging vectors", total=old.dense.count(), unit="window") as bar:
            report.windows = dense.copy_from(old.dense, progress=bar.update)
        return report.windows

    chunk_postings, paper_postings = (
        Postings.concat([Postings.load(d, part) for d in old.segment_dirs]) for part in ("chunk_bm25", "paper_bm25")
    )
    last = old.manifest.segments[-1]
    with _progress(progress, "merging chunks", total=len(old.chunks), unit="chunk") as bar:
        record = write_segment(
            root,
            store_for=lambda name: _dense_store(root, name, last, settings),
            chunks=_counting(old.chunks, bar),
            postings=(chunk_postings, paper_postings),
            fill=fill,
            paper_vectors=lambda: old.paper_embeddings,
            papers=old.manifest.counts["papers"],
            contexts=_old_contexts(old),
        )
    for part in (
        PAPERS_FILE,
        GRAPH_FILE,
        *([CITATIONS_FILE] if (old.version_dir / CITATIONS_FILE).exists() else []),
        *(f"{n}.{a}.npy" for n in ("chunk_bm25", "paper_bm25") for a in ("terms", "df")),
    ):
        shutil.copyfile(old.version_dir / part, stage / part)
    write_manifest(stage, old.manifest.model_copy(update={"updated": _now(), "segments": [record]}))
