"""The dense chunk index: a Chroma collection fed with litloop's own embeddings, kept in the
version folder (embedded, `<version>/chroma/`) or on a Chroma server (`LITLOOP_DENSE__URL`).

Chroma's default embedding function downloads a model, so the collection is created with
`embedding_function=None` and every add and query passes vectors explicitly. A chunk longer
than the embedder reads is stored as several windows (`<chunk_id>@w<n>`) whose hits map back to
the chunk by their best similarity.

Only a build creates a store (`create=True`). A reader opening a folder that holds none gets
`DenseStoreMissing`, never a fresh empty store: Chroma's `PersistentClient` creates whatever
folder it is pointed at, so a reader of a removed version would otherwise search an empty
collection and find nothing, silently. A reader of a server collection that is gone, or of a
server that does not answer, gets `DenseServerProblem` naming the URL, for the same reason.

The store a version's vectors live in is recorded in its manifest under `"dense"` (a manifest
without the key is an embedded index, as every index was before servers):

    {"kind": "embedded"}
    {"kind": "server", "url": "http://host:8000", "collection": "litloop_<root>_<version>"}

Decisions, for a team that shares one index (the folder on a shared disk or copied around, the
vectors on one server):

- One collection per index version, `litloop_<root>_<version>`: `<root>` is 10 hex digits of the
  SHA-1 of the index folder's resolved path, `<version>` the version folder's name (a UTC stamp,
  the builder's pid and a clock fraction). Two indexes, or two versions of one, never share a
  collection, and a new version can be filled while the old one is still searched. The name is
  at most about 51 characters of [a-zA-Z0-9._-] starting with a letter and ending with a digit:
  inside the 3-63 characters every Chroma version accepts.
- The manifest's collection is what a reader opens, on LITLOOP_DENSE__URL when that is set (the
  same server may have another name from another machine), else on the manifest's URL. The
  setting never makes a reader look in another kind of store: an embedded index opens its
  `chroma/` folder whatever the setting says.
- A build writes the new version's vectors to LITLOOP_DENSE__URL when it is set, else where the
  live version's are (an add never moves an index off its server unasked); `--rebuild` starts
  over from the settings alone, so a rebuild without the setting makes an embedded index.
- A server version also holds `dense.json` (the same record), written before its collection is
  made: the cleanup of a build killed before its manifest was written knows what to drop.
- A collection is deleted only by the cleanup that removes its version folder, and only when its
  `<root>` is this folder's: a copy of the index folder at another path reads the original's
  collection but never deletes it (it leaks instead, the safe direction). When the server cannot
  be reached the folder is emptied but for `dense.json`, and a later cleanup tries again.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

log = logging.getLogger(__name__)

COLLECTION = "chunks"  # the one collection of an embedded store
CHROMA_FILE = "chroma.sqlite3"  # the file every persistent Chroma store holds
STORE_FILE = "dense.json"  # a server version's record of its collection (see above)
EMBEDDED: dict[str, Any] = {"kind": "embedded"}
BATCH = 5000  # rows per add/get request: Chroma's own limit is larger, a request's size is not free


def window_id(chunk_id: str, n: int) -> str:
    return f"{chunk_id}@w{n}"


# ----------------------------------------------------------------------------- where vectors live


def store_of(manifest: dict[str, Any]) -> dict[str, Any]:
    """The manifest's record of where its version's vectors are (absent: embedded)."""
    return manifest.get("dense") or dict(EMBEDDED)


def root_tag(root: Path) -> str:
    return hashlib.sha1(str(Path(root).resolve()).encode()).hexdigest()[:10]


def collection_name(root: Path, version: str) -> str:
    return f"litloop_{root_tag(root)}_{version}"


def server_store(root: Path, version: str, url: str) -> dict[str, Any]:
    return {"kind": "server", "url": url, "collection": collection_name(root, version)}


def owned(root: Path, store: dict[str, Any]) -> bool:
    """Whether `store` is a collection an index in `root` made (a copy elsewhere did not)."""
    return store.get("kind") == "server" and str(store.get("collection", "")).startswith(f"litloop_{root_tag(root)}_")


def read_store_file(folder: Path) -> dict[str, Any] | None:
    try:
        record: dict[str, Any] | None = json.loads((folder / STORE_FILE).read_text())
        return record
    except (OSError, ValueError):
        return None


# ----------------------------------------------------------------------------- errors


class DenseStoreProblem(RuntimeError):
    """A dense store a reader or a build needs that is not there or does not answer."""


class DenseStoreMissing(DenseStoreProblem):
    """A dense store that a reader expected and that is not there."""

    def __init__(self, path: Path, what: str):
        super().__init__(
            f"{path}: {what}; this index version is incomplete or was removed while open. Open the "
            "index again, or rebuild it with `litloop index build PATH... --index DIR --rebuild`"
        )
        self.path = path


class DenseServerProblem(DenseStoreProblem):
    """A Chroma server that does not answer, or no longer holds a version's collection."""

    def __init__(self, url: str, collection: str, what: str, gone: bool = False):
        todo = (
            "set LITLOOP_DENSE__URL to the server this index was built on, or rebuild the index with "
            "`litloop index build PATH... --index DIR --rebuild`"
            if gone
            else "start it (`chroma run --path DIR --port PORT`) or set LITLOOP_DENSE__URL to where it runs"
        )
        super().__init__(f"Chroma server {url} (dense index collection {collection!r}): {what}; {todo}")
        self.url, self.collection, self.gone = url, collection, gone


# ----------------------------------------------------------------------------- the stores


class ChromaDense:
    """What the embedded and the server store share: one Chroma collection of chunk windows."""

    _client: Any
    _col: Any

    def _guard(self) -> AbstractContextManager[None]:
        """Where store errors become `DenseStoreProblem`s (the server's; an embedded store's
        errors are bugs, raised as they are)."""
        return nullcontext()

    def _batch(self) -> int:
        with self._guard():
            size: int = self._client.get_max_batch_size()
            return max(1, min(BATCH, size))

    # the window count, asked of Chroma once: its count() scans the collection (64 ms at 1M
    # windows, on every query before this was kept), and only this object's own add and
    # copy_from change it (a segment's collection is written by its build alone)
    _n: int | None = None

    def count(self) -> int:
        if self._n is None:
            with self._guard():
                self._n = self._col.count()
        return self._n

    def chunk_ids(self) -> set[str]:
        """Every chunk id already embedded (for incremental adds)."""
        out: set[str] = set()
        for _, _, metas in self.rows(include_embeddings=False):
            out.update(m["chunk_id"] for m in metas if m)
        return out

    def rows(
        self, include_embeddings: bool = True, batch: int = BATCH
    ) -> Iterator[tuple[list[str], Any, list[dict[str, Any]]]]:
        """(ids, embeddings or None, metadatas) of every stored window, a page at a time."""
        include = ["embeddings", "metadatas"] if include_embeddings else ["metadatas"]
        offset = 0
        while True:
            with self._guard():
                got = self._col.get(include=include, limit=batch, offset=offset)
            ids = got.get("ids") or []
            if ids:
                yield ids, got.get("embeddings") if include_embeddings else None, got.get("metadatas") or []
            if len(ids) < batch:
                return
            offset += len(ids)

    def copy_from(self, other: ChromaDense, progress: Callable[[int], None] | None = None) -> int:
        """Add every window of `other` (ids, vectors, metadata) to this store; the rows added."""
        batch, n = min(self._batch(), other._batch()), 0
        self._n = None
        for ids, vectors, metas in other.rows(batch=batch):
            with self._guard():
                self._col.add(ids=ids, embeddings=np.asarray(vectors, dtype=np.float32), metadatas=metas)
            n += len(ids)
            if progress:
                progress(len(ids))
        return n

    def add(
        self,
        items: Sequence[tuple[str, str, str]],
        embeddings: np.ndarray,
        progress: Callable[[int], None] | None = None,
    ) -> None:
        """Add (window_id, chunk_id, paper_id) rows with their vectors, in Chroma-sized batches."""
        batch = self._batch()
        self._n = None
        for start in range(0, len(items), batch):
            rows = items[start : start + batch]
            with self._guard():
                self._col.add(
                    ids=[r[0] for r in rows],
                    embeddings=embeddings[start : start + batch].tolist(),
                    metadatas=[{"chunk_id": r[1], "paper_id": r[2]} for r in rows],
                )
            if progress:
                progress(len(rows))

    def query(self, vector: np.ndarray, k: int, where: dict[str, Any] | None = None) -> list[tuple[str, float]]:
        """Top chunks as (chunk_id, cosine similarity), best window per chunk, best first."""
        n = self.count()
        if n == 0:
            return []
        # Ask for more windows than chunks wanted: several windows may belong to one chunk.
        with self._guard():
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

    def close(self) -> None:  # pragma: no cover - overridden by both stores
        raise NotImplementedError


def _new_collection(client: Any, name: str) -> Any:
    return client.get_or_create_collection(name, embedding_function=None, metadata={"hnsw:space": "cosine"})


class DenseIndex(ChromaDense):
    """The embedded store: a persistent Chroma folder in the version (`<version>/chroma/`)."""

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
            self._col = _new_collection(self._client, COLLECTION)
            return
        from chromadb.errors import NotFoundError

        try:
            self._col = self._client.get_collection(COLLECTION, embedding_function=None)
        except (NotFoundError, ValueError):  # ValueError: what Chroma before 0.6 raised
            self.close()
            raise DenseStoreMissing(path, f"the dense store holds no {COLLECTION!r} collection") from None

    def close(self) -> None:
        # Release the SQLite handles before the directory is renamed or removed.
        try:
            self._client.clear_system_cache()
        except Exception:  # pragma: no cover - best effort on shutdown
            log.debug("chroma cache clear failed", exc_info=True)


def _http_client(url: str) -> Any:
    """A Chroma HTTP client of `url` (http(s)://host:port, as DenseSettings spells it)."""
    from urllib.parse import urlsplit

    import chromadb
    from chromadb.config import Settings as ChromaSettings

    parts = urlsplit(url)
    ssl = parts.scheme == "https"
    return chromadb.HttpClient(
        host=parts.hostname or "localhost",
        port=parts.port or (443 if ssl else 8000),
        ssl=ssl,
        settings=ChromaSettings(anonymized_telemetry=False),
    )


class ServerDense(ChromaDense):
    """A collection on a Chroma server, one per index version (see the module docstring)."""

    def __init__(self, url: str, collection: str, create: bool = False):
        """Open `collection` on the server at `url`; only `create` (a build) makes it."""
        self.url, self.collection = url, collection
        self._client = None
        with self._guard():
            self._client = _connect(url, collection)
            try:
                self._col = (
                    _new_collection(self._client, collection)
                    if create
                    else self._client.get_collection(collection, embedding_function=None)
                )
            except BaseException:
                self.close()
                raise

    @contextmanager
    def _guard(self) -> Iterator[None]:
        with server_errors(self.url, self.collection):
            yield

    def close(self) -> None:
        if self._client is None:
            return
        try:
            self._client.close()  # the HTTP session; a server client holds nothing else
        except Exception:  # pragma: no cover - best effort on shutdown
            log.debug("chroma client close failed", exc_info=True)
        self._client = None


class SegmentedDense:
    """The dense stores of an index's segments as one: a query asks each and keeps the best
    chunks (a chunk's windows all live in its segment's store, and every store holds the same
    embedder's unit vectors, so the similarities compare across stores)."""

    def __init__(self, stores: Sequence[ChromaDense]):
        self.stores = list(stores)

    def count(self) -> int:
        return sum(s.count() for s in self.stores)

    def _batch(self) -> int:
        return min(s._batch() for s in self.stores)

    def chunk_ids(self) -> set[str]:
        return set().union(*(s.chunk_ids() for s in self.stores))

    def rows(
        self, include_embeddings: bool = True, batch: int = BATCH
    ) -> Iterator[tuple[list[str], Any, list[dict[str, Any]]]]:
        for s in self.stores:
            yield from s.rows(include_embeddings, batch)

    def query(self, vector: np.ndarray, k: int, where: dict[str, Any] | None = None) -> list[tuple[str, float]]:
        if len(self.stores) == 1:
            return self.stores[0].query(vector, k, where)
        hits = [h for s in self.stores for h in s.query(vector, k, where)]
        hits.sort(key=lambda kv: (-kv[1], kv[0]))
        return hits[:k]

    def close(self) -> None:
        for s in self.stores:
            s.close()


def _connect(url: str, collection: str) -> Any:
    try:
        return _http_client(url)
    except ValueError as exc:  # what chromadb's client makes of a refused connection
        raise DenseServerProblem(url, collection, f"cannot be reached ({exc})") from None


@contextmanager
def server_errors(url: str, collection: str) -> Iterator[None]:
    """Turn a server that does not answer, or a collection it does not hold, into a
    `DenseServerProblem` (never a half-done query that looks like zero hits)."""
    import httpx
    from chromadb.errors import NotFoundError

    try:
        yield
    except NotFoundError:
        raise DenseServerProblem(
            url,
            collection,
            "the server holds no such collection (deleted, or another server answers at this address)",
            gone=True,
        ) from None
    except httpx.TransportError as exc:
        raise DenseServerProblem(url, collection, f"cannot be reached ({type(exc).__name__}: {exc})") from None


def open_dense(
    version_dir: Path, store: dict[str, Any] | None = None, url: str | None = None, create: bool = False
) -> ChromaDense:
    """The dense store of the version in `version_dir`: `store` is its manifest's `"dense"` record
    (None: embedded), `url` the LITLOOP_DENSE__URL setting, which overrides the recorded server's
    address (the collection stays the recorded one). Only `create` (a build) makes a store."""
    store = store or EMBEDDED
    if store.get("kind") == "embedded":
        return DenseIndex(Path(version_dir) / "chroma", create=create)
    if store.get("kind") == "server":
        return ServerDense(url or store["url"], store["collection"], create=create)
    raise DenseStoreProblem(
        f"{version_dir}: unknown dense store {store!r} in the manifest; rebuild the "
        "index with `litloop index build PATH... --index DIR --rebuild`"
    )


def drop_collection(root: Path, folder: Path, url: str | None = None) -> bool:
    """Delete the server collection that `folder`'s `dense.json` names, when an index in `root`
    made it. True when nothing of the folder is left on a server (dropped, already gone, made by
    a copy elsewhere, or an embedded folder); False when the server could not be asked."""
    store = read_store_file(folder)
    if store is None or store.get("kind") != "server":
        return True
    if not owned(root, store):
        log.info("keeping collection %s: another index folder made it (this one is a copy)", store.get("collection"))
        return True
    address, name = url or store["url"], store["collection"]
    try:
        with server_errors(address, name):
            client = _connect(address, name)
            try:
                client.delete_collection(name)
            finally:
                client.close()
    except DenseServerProblem as exc:
        if exc.gone:
            return True
        log.warning("%s; its collection stays until a later cleanup reaches the server", exc)
        return False
    log.info("dropped collection %s on %s", name, address)
    return True


class Window(NamedTuple):
    """One embedded window of a chunk; its first three fields are what a dense store records."""

    window_id: str
    chunk_id: str
    paper_id: str
    text: str


def windows_for(chunks: Iterable[tuple[str, str, str]], window_chars: int) -> list[Window]:
    """A `Window` for every window of every (chunk_id, paper_id, text)."""
    from tools.models.embed import text_windows

    out = []
    for cid, pid, text in chunks:
        for n, w in enumerate(text_windows(text, window_chars)):
            out.append(Window(window_id(cid, n), cid, pid, w))
    return out
