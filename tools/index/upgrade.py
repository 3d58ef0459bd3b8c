"""Upgrading (`litloop index upgrade`): an index of format 1 (the whole version in one folder,
records read whole on every open) converted in place to format 2, keeping its vectors."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from tools.base import Chunk, Paper
from tools.index.layout import (
    BM25_EPSILON,
    FORMAT_VERSION,
    GRAPH_FILE,
    MANIFEST_FILE,
    PAPER_EMB_FILE,
    PAPERS_FILE,
    IndexProblem,
    Progress,
    _counting,
    _now,
    _progress,
)
from tools.index.manifest import Manifest, _check_format, write_manifest
from tools.index.segment import _dense_store, write_segment
from tools.index.versions import (
    _build_lock,
    _collect,
    _remove_leftovers,
    _stage_version,
    lease_current_version,
)
from tools.jsonl import iter_jsonl
from tools.retrieval.text import tokenizer_for
from tools.settings import TOKENIZERS, ToolSettings


def upgrade_index(root: Path, settings: ToolSettings, *, progress: Progress = False) -> dict[str, Any]:
    """Convert an index of format 1 to this format in place, keeping its embeddings: one segment
    with the version's chunks, postings (recounted from the chunk texts, the same tokenizer) and
    vectors (the Chroma folder copied, or a server collection copied to the segment's), then an
    atomic switch; the old version goes when its last reader lets go. An index of this format
    is left as it is."""
    root = Path(root).expanduser()
    t0 = time.perf_counter()
    with _build_lock(root):
        _remove_leftovers(root, settings.dense.url)
        lease = lease_current_version(root)
        try:
            manifest = json.loads((lease.version / MANIFEST_FILE).read_text())
            fmt = manifest.get("format_version")
            if fmt == FORMAT_VERSION:
                return {"index": str(root), "upgraded": False, "format_version": fmt}
            if fmt != 1:
                _check_format(manifest, root)
            _stage_version(
                root, settings, lambda stage: _write_upgraded(stage, lease.version, manifest, settings, progress)
            )
        finally:
            lease.release()
        _collect(root, settings.dense.url)
    return {
        "index": str(root),
        "upgraded": True,
        "format_version": FORMAT_VERSION,
        "chunks": manifest["counts"]["chunks"],
        "seconds": round(time.perf_counter() - t0, 2),
    }


def _write_upgraded(
    stage: Path, v1: Path, manifest: dict[str, Any], settings: ToolSettings, progress: Progress
) -> None:
    from tools.index.store import write_papers
    from tools.retrieval.bm25_segments import Postings, Stats
    from tools.retrieval.dense import open_dense, store_of

    root = stage.parent
    # the postings are recounted with the tokenizer the version was built with (its manifest keeps it)
    if manifest.get("tokenizer") not in TOKENIZERS:
        raise IndexProblem(
            f"{v1 / MANIFEST_FILE}: index tokenizer {manifest.get('tokenizer')!r} is not one this litloop "
            f"knows ({', '.join(TOKENIZERS)}); rebuild the index with "
            f"`litloop index build PATH... --index {root} --rebuild`"
        )
    tokenize = tokenizer_for(manifest["tokenizer"])
    papers = [Paper.from_dict(r) for _, r in iter_jsonl(v1 / "papers.jsonl")]

    def chunks() -> Iterator[Chunk]:
        return (Chunk.from_dict(r) for _, r in iter_jsonl(v1 / "chunks.jsonl"))

    ranges: dict[str, list[int]] = {}
    for i, c in enumerate(chunks()):
        first_n = ranges.setdefault(c.paper_id, [i, 0])
        if first_n[0] + first_n[1] != i:
            raise IndexProblem(
                f"{v1}: the chunks of paper {c.paper_id!r} are not consecutive; rebuild the "
                f"index with `litloop index build PATH... --index {root} --rebuild`"
            )
        first_n[1] += 1
    n_chunks = sum(n for _, n in ranges.values())

    def paper_docs() -> Iterator[list[str]]:
        texts: dict[str, list[str]] = {}
        for c in chunks():
            texts.setdefault(c.paper_id, []).append(c.text)
        for p in papers:
            yield tokenize("\n".join(texts.pop(p.paper_id, [])))

    chunk_postings = Postings.build(tokenize(c.text) for c in chunks())
    paper_postings = Postings.build(paper_docs())
    live = store_of(manifest)
    embedded = live.get("kind") == "embedded"

    def store_for(name: str) -> dict[str, Any]:
        if embedded:
            return dict(live)
        # a server version's collection is copied to the segment's (the old one goes with its version)
        return (
            _dense_store(root, name, None, settings)
            if settings.dense.url
            else {**live, "collection": _segment_collection(root, name)}
        )

    def fill(seg: Path, dst: Any) -> int:
        if dst is None:
            shutil.copytree(v1 / "chroma", seg / "chroma")
        else:
            src = open_dense(v1, live, settings.dense.url)
            try:
                with _progress(progress, "copying vectors", total=src.count(), unit="window") as bar:
                    dst.copy_from(src, progress=bar.update)
            finally:
                src.close()
        return int(manifest["counts"]["dense_windows"])

    with _progress(progress, "upgrading chunks", total=n_chunks, unit="chunk") as bar:
        record = write_segment(
            root,
            store_for=store_for,
            chunks=_counting(chunks(), bar),
            postings=(chunk_postings, paper_postings),
            fill=fill,
            open_store=not embedded,
            paper_vectors=lambda: np.load(v1 / PAPER_EMB_FILE),
            papers=len(papers),
        )

    write_papers(stage / PAPERS_FILE, ((p, *ranges.get(p.paper_id, (n_chunks, 0))) for p in papers))
    bm25_meta: dict[str, Any] = {"k1": manifest["bm25"]["k1"], "b": manifest["bm25"]["b"], "epsilon": BM25_EPSILON}
    for part, postings in (("chunk_bm25", chunk_postings), ("paper_bm25", paper_postings)):
        bm25_meta[part] = Stats.empty().add(postings).save(stage, part)
    shutil.copyfile(v1 / GRAPH_FILE, stage / GRAPH_FILE)
    upgraded = {k: v for k, v in manifest.items() if k != "dense"}
    upgraded.update(format_version=FORMAT_VERSION, bm25=bm25_meta, segments=[record.model_dump()], updated=_now())
    write_manifest(stage, Manifest.model_validate(upgraded))


def _segment_collection(root: Path, segment: str) -> str:
    from tools.retrieval.dense import collection_name

    return collection_name(root, segment)
