"""Writing one segment (`segments/s-<stamp>/`), the one sequence build, compact and upgrade
share: chunks, postings, the dense store (its server record first, then the vectors; a dense
store's errors become `IndexProblem`), paper vectors, the segment record, fsync and the rename
that makes it complete and immutable. Also what a build embeds into it: windows and paper
vectors."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from tools.base import Chunk, Paper
from tools.citations.model import Context
from tools.index.layout import (
    CHUNKS_FILE,
    PAPER_EMB_FILE,
    SEGMENT_FILE,
    SEGMENTS,
    IndexProblem,
    Progress,
    _fsync_dir,
    _fsync_tree,
    _progress,
    _stamp,
)
from tools.index.manifest import SegmentRecord
from tools.settings import ToolSettings

# What fills a new segment's dense store: given the segment's staging folder and the store
# opened for writing (None for a store that `fill` makes itself by copying a folder), the number
# of windows it holds.
Fill = Callable[[Path, Any], int]


def _new_segment(root: Path) -> tuple[str, Path]:
    """A segment's name and its staging folder (`segments/.building-<name>`)."""
    name = f"s-{_stamp()}"
    stage = root / SEGMENTS / f".building-{name}"
    stage.mkdir(parents=True)
    return name, stage


def _finish_segment(stage: Path, record: dict[str, Any]) -> Path:
    """Write the segment's record, fsync it and rename it to its name: complete and immutable."""
    (stage / SEGMENT_FILE).write_text(json.dumps(record, indent=2))
    _fsync_tree(stage)
    final = stage.parent / record["name"]
    os.replace(stage, final)
    _fsync_dir(stage.parent)
    return Path(final)


def write_segment(
    root: Path,
    *,
    store_for: Callable[[str], dict[str, Any]],
    chunks: Iterable[Chunk],
    postings: tuple[Any, Any],
    fill: Fill,
    paper_vectors: Callable[[], np.ndarray],
    papers: int,
    open_store: bool = True,
    seconds: dict[str, float] | None = None,
    contexts: Iterable[Context] | None = None,
) -> SegmentRecord:
    """Write a complete segment under `root/segments/` and return its record (what the manifest
    lists). `store_for(name)` says where its vectors go; `fill` writes them (into the store opened
    for writing, or, with `open_store` False, itself: a copied Chroma folder); `paper_vectors()`,
    called after `fill`, gives the papers' embeddings. `contexts`, the citation contexts of its
    papers, go in its contexts.sqlite; None (an upgrade of an index that has none) writes none."""
    from tools.citations.store import CONTEXTS_FILE, write_contexts
    from tools.index.store import write_chunks
    from tools.retrieval.dense import STORE_FILE, DenseStoreProblem, open_dense

    seconds = seconds if seconds is not None else {}
    name, stage = _new_segment(root)
    n_chunks = write_chunks(stage / CHUNKS_FILE, chunks)
    n_contexts = write_contexts(stage / CONTEXTS_FILE, contexts) if contexts is not None else None
    t = time.perf_counter()
    for part, p in zip(("chunk_bm25", "paper_bm25"), postings, strict=True):
        p.save(stage, part)
    seconds["bm25"] = seconds.get("bm25", 0.0) + time.perf_counter() - t

    t = time.perf_counter()
    store = store_for(name)
    if store["kind"] == "server":
        # recorded before the collection exists: the cleanup of a build killed from here on
        # finds what to drop (the manifest comes last)
        (stage / STORE_FILE).write_text(json.dumps(store))
    try:
        if open_store:
            dense = open_dense(stage, store, create=True)
            try:
                windows = fill(stage, dense)
            finally:
                dense.close()
        else:
            windows = fill(stage, None)
    except DenseStoreProblem as exc:
        raise IndexProblem(str(exc)) from None
    np.save(stage / PAPER_EMB_FILE, paper_vectors())
    seconds["embed"] = time.perf_counter() - t
    record = SegmentRecord(name=name, papers=papers, chunks=n_chunks, windows=windows, dense=store, contexts=n_contexts)
    _finish_segment(stage, record.model_dump())
    return record


def _dense_store(root: Path, segment: str, last: SegmentRecord | None, settings: ToolSettings) -> dict[str, Any]:
    """Where a new segment's vectors go: LITLOOP_DENSE__URL when set, else where the live
    version's `last` segment's are (an add keeps a server index on its server; a rebuild follows
    the settings)."""
    from tools.retrieval.dense import EMBEDDED, server_store

    url = settings.dense.url
    if url is None and last is not None:
        live = last.dense or EMBEDDED
        url = live.get("url") if live.get("kind") == "server" else None
    return server_store(root, segment, url) if url else dict(EMBEDDED)


# ----------------------------------------------------------------------------- a build's vectors


def _embed_windows(
    windows: Any, emb: Any, imported: Any, settings: ToolSettings, report: Any, progress: Progress
) -> np.ndarray:
    """The vectors of `windows`: the imported file's where it has them, the embedder's for the rest."""
    from tools.ingest.plan import embed_call_size

    vectors = np.zeros((len(windows), emb.dim), dtype=np.float32)
    todo = list(range(len(windows)))
    if imported is not None:
        at, rows = imported.match(windows)
        vectors[at] = imported.vectors[rows]
        done = set(at)
        todo = [i for i in todo if i not in done]
        report.windows_imported = len(at)
        report.vectors_ignored = len(imported.ids) - len(rows)
    batch = embed_call_size(settings.embedder.batch_size)
    with _progress(progress, "embedding chunks", total=len(todo), unit="window") as bar:
        for s in range(0, len(todo), batch):
            rows = todo[s : s + batch]
            vectors[rows] = emb.encode([windows[i].text for i in rows])
            bar.update(len(rows))
    report.windows_embedded = len(todo)
    return vectors


def _paper_vectors(
    papers: list[Paper], chunks: list[Chunk], windows: Any, vectors: Any, settings: ToolSettings, progress: Progress
) -> np.ndarray:
    """Paper embeddings: the title-and-abstract chunk's first window, unless a separate
    scientific-document embedder is configured (SEE: docs/design.md section 2, paper embeddings)."""
    from tools.ingest.plan import settings_embedder

    if settings.embedder.paper_model:
        emb = settings_embedder(settings, settings.embedder.paper_model)
        texts = [f"{p.title}\n{p.abstract}" for p in papers]
        return np.asarray(emb.encode(texts, progress=progress is True))  # a sink hears of the stage, not of this
    first_window = {w.chunk_id: i for i, w in reversed(list(enumerate(windows)))}
    head = {c.paper_id: c.chunk_id for c in chunks if c.kind == "title_abstract"}
    rows = [first_window[head[p.paper_id]] for p in papers]
    return vectors[rows] if rows else np.zeros((0, vectors.shape[1]), dtype=np.float32)
