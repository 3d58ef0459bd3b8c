"""What `litloop index info` shows: the live version's manifest, sizes and whether it fits this
run's settings; reads the manifest only (fast)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tools.index.layout import LEASE, SEGMENTS, IndexProblem, dir_size
from tools.index.manifest import check_manifest, read_manifest
from tools.index.versions import lease_current_version
from tools.ingest import INGEST_VERSION
from tools.settings import ToolSettings


def index_info(root: Path, settings: ToolSettings) -> dict[str, Any]:
    """What `litloop index info` shows; reads the manifest only (fast). Sizes are per file of
    the version folder and per kind of segment file (summed over the segments), in bytes."""
    from tools.retrieval.dense import EMBEDDED

    root = Path(root).expanduser()
    lease = lease_current_version(root)
    try:
        version = lease.version
        manifest = read_manifest(version)
        sizes = {
            p.name: dir_size(p) if p.is_dir() else p.stat().st_size
            for p in sorted(version.iterdir())
            if p.name != LEASE
        }
        for seg in manifest.segments:
            folder = root / SEGMENTS / seg.name
            for p in sorted(folder.iterdir()) if folder.is_dir() else []:
                key = f"segments/{p.name}"
                sizes[key] = sizes.get(key, 0) + (dir_size(p) if p.is_dir() else p.stat().st_size)
    finally:
        lease.release()
    try:
        check_manifest(manifest, settings, root, version)
        compatible, problem = True, None
    except IndexProblem as exc:
        compatible, problem = False, str(exc)
    data = manifest.to_dict()
    segments = manifest.segments
    return {
        "index": str(root),
        "version": version.name,
        **{
            k: data[k]
            for k in (
                "format_version",
                "created",
                "updated",
                "embedder",
                "paper_embedder",
                "tokenizer",
                "bm25",
                "corpus_fingerprint",
                "counts",
            )
        },
        "ingest_version": manifest.ingest_version,
        "ingest_current": manifest.ingest_version >= INGEST_VERSION,
        "sources": len(manifest.sources),
        "sizes_bytes": sizes,
        "total_bytes": sum(sizes.values()),
        "segments": [
            {
                "name": s.name,
                "papers": s.papers,
                "chunks": s.chunks,
                "windows": s.windows,
                "contexts": s.contexts,
                "dense": s.dense or EMBEDDED,
            }
            for s in segments
        ],
        # where an add puts its vectors: the last segment's store (format 1: the version's)
        "dense": (segments[-1].dense or dict(EMBEDDED)) if segments else (manifest.dense or dict(EMBEDDED)),
        "compatible_with_settings": compatible,
        "problem": problem,
    }
