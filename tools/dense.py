"""The dense chunk index: a persistent Chroma collection fed with litloop's own embeddings.

Chroma's default embedding function downloads a model, so the collection is created with
`embedding_function=None` and every add and query passes vectors explicitly. A chunk longer
than the embedder reads is stored as several windows (`<chunk_id>@w<n>`) whose hits map back to
the chunk by their best similarity.

Only a build creates a store (`create=True`). A reader opening a folder that holds none gets
`DenseStoreMissing`, never a fresh empty store: Chroma's `PersistentClient` creates whatever
folder it is pointed at, so a reader of a removed version would otherwise search an empty
collection and find nothing, silently.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

COLLECTION = "chunks"
CHROMA_FILE = "chroma.sqlite3"  # the file every persistent Chroma store holds


def window_id(chunk_id: str, n: int) -> str:
    return f"{chunk_id}@w{n}"


class DenseStoreMissing(RuntimeError):
    """A dense store that a reader expected and that is not there."""

    def __init__(self, path: Path, what: str):
        super().__init__(
            f"{path}: {what}; this index version is incomplete or was removed while open. Open the "
            "index again, or rebuild it with `litloop index build PATH... --index DIR --rebuild`"
        )
        self.path = path


class DenseIndex:
    def __init__(self, path: Path, create: bool = False):
        """Open the store in `path`; only `create` (a build) makes one where there is none."""
        path = Path(path)
        if not create and not (path / CHROMA_FILE).is_file():
            # checked before Chroma sees the path: PersistentClient would create it
            raise DenseStoreMissing(path, f"no dense store here (no {CHROMA_FILE})")
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        self.path = path
        self._client = chromadb.PersistentClient(
            path=str(path), settings=ChromaSettings(anonymized_telemetry=False, allow_reset=False)
        )
        if create:
            self._col = self._client.get_or_create_collection(
                COLLECTION, embedding_function=None, metadata={"hnsw:space": "cosine"}
            )
            return
        from chromadb.errors import NotFoundError

        try:
            self._col = self._client.get_collection(COLLECTION, embedding_function=None)
        except (NotFoundError, ValueError):  # ValueError: what Chroma before 0.6 raised
            self.close()
            raise DenseStoreMissing(path, f"the dense store holds no {COLLECTION!r} collection") from None

    def count(self) -> int:
        return self._col.count()

    def chunk_ids(self) -> set[str]:
        """Every chunk id already embedded (for incremental adds)."""
        out: set[str] = set()
        offset, page = 0, 5000
        while True:
            got = self._col.get(include=["metadatas"], limit=page, offset=offset)
            metas = got.get("metadatas") or []
            out.update(m["chunk_id"] for m in metas if m)
            if len(metas) < page:
                return out
            offset += page

    def add(
        self,
        items: Sequence[tuple[str, str, str]],
        embeddings: np.ndarray,
        progress: Callable[[int], None] | None = None,
    ) -> None:
        """Add (window_id, chunk_id, paper_id) rows with their vectors, in Chroma-sized batches."""
        batch = max(1, min(5000, self._client.get_max_batch_size()))
        for start in range(0, len(items), batch):
            rows = items[start:start + batch]
            self._col.add(
                ids=[r[0] for r in rows],
                embeddings=embeddings[start:start + batch].tolist(),
                metadatas=[{"chunk_id": r[1], "paper_id": r[2]} for r in rows],
            )
            if progress:
                progress(len(rows))

    def query(self, vector: np.ndarray, k: int, where: dict | None = None) -> list[tuple[str, float]]:
        """Top chunks as (chunk_id, cosine similarity), best window per chunk, best first."""
        n = self.count()
        if n == 0:
            return []
        # Ask for more windows than chunks wanted: several windows may belong to one chunk.
        res = self._col.query(
            query_embeddings=[vector.tolist()],
            n_results=min(n, k * 2),
            where=where,
            include=["metadatas", "distances"],
        )
        best: dict[str, float] = {}
        for meta, dist in zip(res["metadatas"][0], res["distances"][0], strict=True):
            sim = 1.0 - float(dist)
            cid = meta["chunk_id"]
            if sim > best.get(cid, -2.0):
                best[cid] = sim
        ranked = sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))
        return ranked[:k]

    def close(self) -> None:
        # Release the SQLite handles before the directory is renamed or removed.
        try:
            self._client.clear_system_cache()
        except Exception:  # pragma: no cover - best effort on shutdown
            log.debug("chroma cache clear failed", exc_info=True)


def windows_for(chunks: Iterable[tuple[str, str, str]], window_chars: int) -> list[tuple[str, str, str, str]]:
    """(window_id, chunk_id, paper_id, text) for every window of every (chunk_id, paper_id, text)."""
    from tools.embed import text_windows

    out = []
    for cid, pid, text in chunks:
        for n, w in enumerate(text_windows(text, window_chars)):
            out.append((window_id(cid, n), cid, pid, w))
    return out
