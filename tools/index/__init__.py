"""The on-disk index: papers, chunks, two BM25 indexes, dense chunks in Chroma (embedded in a
segment folder, or a collection on a Chroma server: tools/dense.py), paper embeddings and the
citation graph, under one manifest per version.

Layout of an index directory DIR (format 2):

    DIR/CURRENT             name of the live version folder (replaced atomically)
    DIR/v-<stamp>/          one complete version, small: what changes with every add
        manifest.json       format, embedder, tokenizer, BM25 parameters and corpus-wide statistics,
                            fingerprint, counts, and the segments the version is made of, in order
        papers.sqlite       paper records (references resolved to corpus ids), each with the rows
                            of its chunks; rows in paper order (paper BM25, paper embeddings)
        chunk_bm25.*.npy    corpus-wide term statistics of the chunk BM25 index (terms, df)
        paper_bm25.*.npy    the same for the paper BM25 index (all chunks of a paper)
        graph.json          citation graph (node-link JSON, no pickle)
        .readers            the readers' lease: each open `Index` holds a shared flock on it
    DIR/segments/s-<stamp>/ one segment: the papers one build or add brought, never changed after
        segment.json        its record (name, counts, where its vectors are), as the manifest lists it
        chunks.sqlite       its chunks with locators, rows following the previous segments'
        chunk_bm25.*.npy    its chunks' term frequencies (tools/bm25_segments.py), memory-mapped
        paper_bm25.*.npy    its papers' term frequencies
        paper_emb.npy       its papers' embeddings
        chroma/             persistent Chroma collection of its chunk windows (embedded store), or
        dense.json          its collection on a Chroma server (LITLOOP_DENSE__URL)
    DIR/.building-<stamp>/  a version being written (removed when the next build starts)
    DIR/segments/.building-<name>/  a segment being written (likewise)
    DIR/.removing-<name>/   a superseded version being deleted

Opening an index reads the manifest and connects to the record files: papers and chunks are
read by row or id when a query needs them (tools/store.py), BM25 arrays are memory-mapped, and
each segment's Chroma opens on the first dense query. So an index opens in the same fraction of
a second at any size.

A build or an add writes one new segment and a new version folder naming the old segments and
the new one, and only then points CURRENT at it: time and disk are those of the new papers (the
version folder is rewritten whole, but it holds papers, not chunks). A crash at any moment leaves
the previous version usable; what the crash left (a half-written segment or version, a complete
segment no version names) is removed by the next build. `litloop index compact` merges the
segments into one when there are many. An index of format 1 (the whole version in one folder,
records read whole on every open) is converted in place by `litloop index upgrade`, which keeps
its vectors. SEE: DESIGN.md section 2.

A reader keeps the version it opened: the heavy parts load lazily, so a version deleted under an
open `Index` would be read half from the old files and half from nothing. A superseded version is
therefore removed only by whoever gets an exclusive flock on its `.readers` (the build right
after its switch, or any later build or `open_index`); a version some reader holds stays until a
later one finds it free. Removal renames the folder away while holding that lock, so a reader that
read CURRENT just before sees it gone and reads CURRENT again. A segment goes when no version
folder names it any more, and only under the build lock (no build is then between writing a
segment and naming it).

A server segment's collection goes with its folder: the cleanup that removes a segment (one no
version names, an interrupted build's `.building-*`) first drops the collection its `dense.json`
names, so a collection stays searchable while any version uses it and a build killed at any
moment leaves the old version and its collections usable. When the server cannot be reached the
folder is emptied but for `dense.json`, and the next cleanup tries again.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import shutil
import time
import weakref
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from tools.base import CHUNK_KINDS, NAMESPACE_SEP, Chunk, Paper, Passage
from tools.ingest import INGEST_VERSION
from tools.jsonl import iter_jsonl
from tools.settings import ToolSettings
from tools.text import TOKENIZER_VERSION, tokenize

log = logging.getLogger(__name__)

FORMAT_VERSION = 2  # 1: whole-index JSONL records and BM25 matrices, one Chroma per version
BM25_K1, BM25_B = 1.5, 0.75  # SEE: DESIGN.md section 2 (paper values)
BM25_EPSILON = 0.25  # rank_bm25's floor of negative idfs (times the mean idf)
SEGMENTS = "segments"
PAPERS_FILE = "papers.sqlite"
CHUNKS_FILE = "chunks.sqlite"
PAPER_EMB_FILE = "paper_emb.npy"
SEGMENT_FILE = "segment.json"
LEASE = ".readers"
LEASE_ATTEMPTS = 5  # CURRENT moving this often during one open means builds are looping


class IndexProblem(RuntimeError):
    """An index that is missing, half-made, or does not match this run's settings."""


class IndexFormatOld(IndexProblem):
    """An index of an earlier format that `litloop index upgrade` converts."""


# ----------------------------------------------------------------------------- reading


class PaperTable:
    """The paper and chunk records of an index view (`Index`, read from disk on demand;
    `tools.multi.MultiIndex`, namespaced views over several), their row lookups, and what reads
    only those and the view's BM25 indexes and embedder."""

    papers: Mapping[str, Paper]
    chunks: Sequence[Chunk]

    def _index_rows(self) -> None:
        """Row lookups of in-memory `papers` and `chunks` (a table made by hand): paper ids in
        order, paper and chunk rows, and each paper's chunk rows in order."""
        self.paper_ids: list[str] = list(self.papers)
        self.paper_row = {pid: i for i, pid in enumerate(self.paper_ids)}
        self.chunk_row = {c.chunk_id: i for i, c in enumerate(self.chunks)}
        self.chunks_of: dict[str, list[int]] = {}
        for i, c in enumerate(self.chunks):
            self.chunks_of.setdefault(c.paper_id, []).append(i)

    def title_abstract(self, paper_id: str) -> Chunk:
        return self.chunks[self.chunks_of[paper_id][0]]

    def paper_text(self, paper_id: str) -> str:
        """All chunks of a paper, in order: the document the paper BM25 index holds."""
        return "\n".join(self.chunks[i].text for i in self.chunks_of[paper_id])

    def paper_chunks(self, paper_id: str) -> list[Chunk]:
        """A known paper's chunks in chunk order (title and abstract first); empty for a paper
        that has none."""
        return [self.chunks[i] for i in self.chunks_of.get(paper_id, [])]

    def ids_like(self, wanted: str, limit: int = 5) -> list[str]:
        """Paper ids a mistyped `wanted` may have meant, at most `limit`: the paper of a chunk id,
        then ids equal to it but for case, then ids it begins (a truncated id). A namespaced id
        `corpus:P` is also compared by its `P`, so a bare id finds its corpora's papers."""
        low = wanted.lower()
        if not low:
            return []

        def local(pid: str) -> str:
            return pid.lower().partition(NAMESPACE_SEP)[2] or pid.lower()

        found = [self.chunks[self.chunk_row[wanted]].paper_id] if wanted in self.chunk_row else []
        found += [p for p in self.paper_ids if low in (p.lower(), local(p))]
        found += [p for p in self.paper_ids if p.lower().startswith(low) or local(p).startswith(low)]
        return [p for p in dict.fromkeys(found) if p != wanted][:limit]

    # --- the three retrievers; each returns chunk-level passages, best first
    def bm25_chunks(self, query: str, k: int) -> list[Passage]:
        return [
            Passage.from_chunk(self.chunks[i], s, "bm25") for i, s in self.chunk_bm25.top_k(tokenize(query), k)
        ]

    def bm25_papers(self, query: str, k: int) -> list[tuple[str, float]]:
        return [(self.paper_ids[i], s) for i, s in self.paper_bm25.top_k(tokenize(query), k)]

    def dense_chunks(self, query: str, k: int) -> list[Passage]:
        vec = self.embedder.encode([query])[0]
        return self.dense_chunks_by_vector(vec, k)


class Index(PaperTable):
    """A read-only view of the live version of an index directory.

    Opening reads the manifest and connects to the record files; papers and chunks are read by
    row or id when asked for (tools/store.py), the BM25 arrays are memory-mapped on first use,
    and Chroma opens on the first dense query."""

    def __init__(self, root: Path, settings: ToolSettings, check: bool = True):
        self.root = root
        self.settings = settings
        self._lease = lease_current_version(root)
        self.version_dir = self._lease.version
        self._files: list = []
        try:
            remove_superseded(root, settings.dense.url)
            self.manifest: dict[str, Any] = json.loads((self.version_dir / "manifest.json").read_text())
            if check:
                check_manifest(self.manifest, settings, root)
            else:
                _check_format(self.manifest, root)
            self._open_records()
        except BaseException:
            self.close()
            raise

    def _open_records(self) -> None:
        from tools.store import (
            ChunkRanges,
            ChunkRows,
            ChunkTable,
            PaperIds,
            PaperRecords,
            PaperRows,
            RecordFile,
            StoreProblem,
        )

        try:
            papers = RecordFile(self.version_dir / PAPERS_FILE)
            self._files.append(papers)
            chunk_files = []
            for seg in self.segment_dirs:
                chunk_files.append(RecordFile(seg / CHUNKS_FILE))
                self._files.append(chunk_files[-1])
        except StoreProblem as exc:
            raise IndexProblem(str(exc)) from None
        n = self.manifest["counts"]["papers"]
        self.papers = PaperRecords(papers, n)
        self.paper_ids = PaperIds(papers, n)
        self.paper_row = PaperRows(papers, n)
        self.chunks_of = ChunkRanges(papers, n)
        self.chunks = ChunkTable(chunk_files, [s["chunks"] for s in self.manifest["segments"]])
        self.chunk_row = ChunkRows(self.chunks)

    @property
    def segment_dirs(self) -> list[Path]:
        return [self.root / SEGMENTS / s["name"] for s in self.manifest["segments"]]

    # Heavy parts load on first use, so `index info` and BM25 search stay fast.
    def _bm25(self, name: str):
        from tools.bm25_segments import Postings, SegmentedBM25, Stats

        meta = self.manifest["bm25"]
        try:
            stats = Stats.load(self.version_dir, name, meta[name])
            parts = [Postings.load(seg, name) for seg in self.segment_dirs]
        except FileNotFoundError as exc:
            raise IndexProblem(f"{exc.filename}: BM25 file missing; this index version is incomplete or was "
                               "removed while open. Open the index again, or rebuild it") from None
        return SegmentedBM25(stats, parts, meta["k1"], meta["b"], meta.get("epsilon", BM25_EPSILON))

    @cached_property
    def chunk_bm25(self):
        return self._bm25("chunk_bm25")

    @cached_property
    def paper_bm25(self):
        return self._bm25("paper_bm25")

    @cached_property
    def paper_embeddings(self) -> np.ndarray:
        parts = [np.load(seg / PAPER_EMB_FILE) for seg in self.segment_dirs]
        return np.vstack(parts) if len(parts) > 1 else parts[0]

    @cached_property
    def graph(self):
        from graph_store.citation_graph import CitationGraph

        return CitationGraph.load(self.version_dir / "graph.json")

    @cached_property
    def dense(self):
        """The segments' dense stores as one (each where its record says; the setting's server first)."""
        from tools.dense import DenseStoreProblem, SegmentedDense, open_dense

        stores = []
        try:
            for seg, record in zip(self.segment_dirs, self.manifest["segments"], strict=True):
                stores.append(open_dense(seg, record.get("dense"), self.settings.dense.url))
        except DenseStoreProblem as exc:
            for st in stores:
                st.close()
            raise IndexProblem(str(exc)) from None
        return SegmentedDense(stores)

    @cached_property
    def embedder(self):
        from tools.embed import get_embedder

        e = self.settings.embedder
        emb = get_embedder(e.model, self.settings.device, e.batch_size)
        if emb.dim != self.manifest["embedder"]["dim"]:
            raise IndexProblem(
                f"{self.root}: index embeddings have dimension {self.manifest['embedder']['dim']} "
                f"but embedder {e.model!r} gives {emb.dim}; use the embedder the index was built "
                "with or rebuild the index (`litloop index build ... --rebuild`)"
            )
        return emb

    def dense_chunks_by_vector(self, vec: np.ndarray, k: int) -> list[Passage]:
        from tools.dense import DenseStoreProblem

        try:
            hits = self.dense.query(vec, k)
        except DenseStoreProblem as exc:  # a server that went away or lost the collection meanwhile
            raise IndexProblem(str(exc)) from None
        out = []
        for cid, s in hits:
            row = self.chunk_row.get(cid)
            if row is not None:
                out.append(Passage.from_chunk(self.chunks[row], s, "dense"))
        return out

    def close(self) -> None:
        """Release Chroma, the record files and the version's lease; the version may be removed after this."""
        if "dense" in self.__dict__:
            self.dense.close()
        for f in self._files:
            f.close()
        self._files = []
        self._lease.release()


def current_version(root: Path) -> Path:
    version = _pointed_version(root)
    if not (version / "manifest.json").exists():
        raise IndexProblem(f"{version}: index version is incomplete (no manifest.json); rebuild the index")
    return version


def _pointed_version(root: Path) -> Path:
    pointer = root / "CURRENT"
    if not root.exists():
        raise IndexProblem(f"{root}: no index here; build one with `litloop index build PATH --index {root}`")
    if not pointer.exists():
        raise IndexProblem(
            f"{root}: not a litloop index (no CURRENT file); build one with "
            f"`litloop index build PATH --index {root}` or point --index at an index folder"
        )
    return root / pointer.read_text().strip()


class VersionLease:
    """A shared flock on one version's `.readers`: while held, no cleanup removes the version."""

    def __init__(self, version: Path, fd: int | None):
        self.version = version
        self._release = weakref.finalize(self, os.close, fd) if fd is not None else None

    @classmethod
    def take(cls, version: Path, create: bool = False) -> VersionLease | None:
        """The lease of `version`, or None when the version is gone (removed meanwhile)."""
        path = version / LEASE
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644) if create else os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            if create or not version.is_dir():
                return None
            return cls.take(version, create=True)  # a version built before leases existed
        except OSError:  # EACCES, EROFS
            log.warning("%s: cannot take a reader lease (read-only index?); a build may remove it "
                        "while it is open", version)
            return cls(version, None)
        # Blocks only while a cleanup holds the exclusive lock, i.e. is renaming the version away.
        fcntl.flock(fd, fcntl.LOCK_SH)
        try:
            here = os.stat(path)
        except FileNotFoundError:
            here = None
        mine = os.fstat(fd)
        if here is None or (here.st_dev, here.st_ino) != (mine.st_dev, mine.st_ino):
            os.close(fd)
            return None
        return cls(version, fd)

    def release(self) -> None:
        if self._release is not None:
            self._release()


def lease_current_version(root: Path) -> VersionLease:
    """Lease the version CURRENT names; read CURRENT again if a cleanup removed it meanwhile."""
    for _ in range(LEASE_ATTEMPTS):
        version = _pointed_version(root)
        lease = VersionLease.take(version)
        if lease is None:
            if _current_name(root) == version.name:  # not removed meanwhile: never there
                raise IndexProblem(f"{version}: CURRENT names a version folder that is not there; rebuild the index")
            continue
        if not (version / "manifest.json").exists():
            lease.release()
            raise IndexProblem(f"{version}: index version is incomplete (no manifest.json); rebuild the index")
        return lease
    raise IndexProblem(
        f"{root}: the live version changed {LEASE_ATTEMPTS} times while opening it (builds in a "
        "loop?); try again when the builds are done"
    )


def remove_superseded(root: Path, dense_url: str | None = None) -> list[str]:
    """Remove every version CURRENT no longer names and no reader holds, with its server
    collection (on `dense_url`, LITLOOP_DENSE__URL, when given); return their names.

    Best effort: a version some reader holds, or one this process may not delete (a read-only
    index), stays for a later build or `open_index`."""
    for p in root.glob(".removing-*"):
        _dispose(root, p, dense_url)
    removed = []
    for p in sorted(root.glob("v-*")):
        if p.name != _current_name(root) and _remove_if_free(root, p, dense_url):
            removed.append(p.name)
    return removed


def _dispose(root: Path, folder: Path, dense_url: str | None) -> None:
    """Delete a folder no reader may use any more (renamed away, or an interrupted build's), after
    its server collection; when the server cannot be reached, keep its `dense.json` alone, for the
    next cleanup to drop the collection."""
    from tools.dense import STORE_FILE, drop_collection

    if drop_collection(root, folder, dense_url):
        shutil.rmtree(folder, ignore_errors=True)
        return
    for p in folder.iterdir():
        if p.name != STORE_FILE:
            shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)


def _current_name(root: Path) -> str | None:
    try:
        return (root / "CURRENT").read_text().strip()
    except FileNotFoundError:
        return None


def _remove_if_free(root: Path, version: Path, dense_url: str | None = None) -> bool:
    try:
        fd = os.open(version / LEASE, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.info("keeping %s: a reader holds it", version)
            return False
        # Under the exclusive lock no build can be between switching to this version and
        # releasing its own lease on it, so CURRENT read now is final for this version.
        if _current_name(root) == version.name:
            return False
        doomed = root / f".removing-{version.name}"
        try:
            os.rename(version, doomed)
        except OSError:
            return False
    finally:
        os.close(fd)
    _dispose(root, doomed, dense_url)
    return True


def _check_format(manifest: dict[str, Any], root: Path) -> None:
    fmt = manifest.get("format_version")
    if fmt == 1:
        raise IndexFormatOld(
            f"{root}: index format 1 (records read whole on every open) but this litloop reads format "
            f"{FORMAT_VERSION}; convert it in place with `litloop index upgrade --index {root}` (keeps the "
            f"embeddings, about a minute per 100,000 chunks) or rebuild it with "
            f"`litloop index build PATH... --index {root} --rebuild`"
        )
    if fmt != FORMAT_VERSION:
        raise IndexProblem(
            f"{root}: index format {fmt} but this litloop reads format {FORMAT_VERSION}; "
            f"rebuild it with `litloop index build PATH... --index {root} --rebuild`"
        )


def check_manifest(manifest: dict[str, Any], settings: ToolSettings, root: Path) -> None:
    _check_format(manifest, root)
    built = manifest["embedder"]["name"]
    if built != settings.embedder.model:
        raise IndexProblem(
            f"{root}: index was built with embedder {built!r} but this run uses "
            f"{settings.embedder.model!r}; set LITLOOP_EMBEDDER__MODEL={built} or rebuild the index"
        )
    if manifest["embedder"].get("window_chars") != settings.embedder.window_chars:
        raise IndexProblem(
            f"{root}: index embedded {manifest['embedder'].get('window_chars')}-character windows but "
            f"LITLOOP_EMBEDDER__WINDOW_CHARS is {settings.embedder.window_chars}; use the built value or rebuild"
        )
    if manifest.get("tokenizer") != TOKENIZER_VERSION:
        raise IndexProblem(
            f"{root}: index tokenizer {manifest.get('tokenizer')!r} differs from this litloop's "
            f"{TOKENIZER_VERSION!r}; rebuild the index"
        )


def open_index(path: Path, settings: ToolSettings, check: bool = True) -> Index:
    return Index(Path(path).expanduser(), settings, check=check)


# ----------------------------------------------------------------------------- building


@dataclass
class BuildReport:
    index: Path
    papers_added: int = 0
    chunks_added: int = 0
    windows_embedded: int = 0  # by the embedder in this build
    windows_imported: int = 0  # taken from an --embeddings file
    vectors_ignored: int = 0  # rows of that file for no window this build embeds
    references_resolved: int = 0
    already_indexed: int = 0  # papers of the input the index already holds: skipped, not problems
    problems: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    totals: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": str(self.index),
            "papers_added": self.papers_added,
            "chunks_added": self.chunks_added,
            "windows_embedded": self.windows_embedded,
            "windows_imported": self.windows_imported,
            "vectors_ignored": self.vectors_ignored,
            "references_resolved": self.references_resolved,
            "already_indexed": self.already_indexed,
            "problems": self.problems,
            "seconds": {k: round(v, 2) for k, v in self.seconds.items()},
            "totals": self.totals,
        }


class BuildFailed(RuntimeError):
    def __init__(self, message: str, problems: Sequence[str] = ()):
        super().__init__(message)
        self.problems = list(problems)


@contextmanager
def _build_lock(root: Path):
    """Hold the index's build lock. A build that fails in a folder it made leaves no folder
    behind: an empty index folder holding a `.lock` would look like an index to the next command."""
    made = [p for p in (root, *root.parents) if not p.exists()]  # deepest first
    root.mkdir(parents=True, exist_ok=True)
    try:
        with open(root / ".lock", "w") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise IndexProblem(f"{root}: another build is writing this index; wait for it to finish") from None
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)
    except BaseException:
        if made:
            (root / ".lock").unlink(missing_ok=True)
            for p in made:
                try:
                    p.rmdir()  # only while empty: never anything another process put there
                except OSError:
                    break
        raise


def build_index(
    inputs: Iterable[Path],
    root: Path,
    settings: ToolSettings,
    *,
    rebuild: bool = False,
    strict: bool = False,
    progress: bool = False,
    embeddings: Path | None = None,
    loader: Callable[[Sequence[Path], set[str] | None], tuple[Any, Any]] | None = None,
) -> BuildReport:
    """Index the papers under `inputs` into `root`, adding to what is there unless `rebuild`.

    Already-indexed papers are not re-embedded: the new version starts as a copy of the live one
    (Chroma included) and only new chunks are embedded. Input papers the index already holds are
    counted in `already_indexed`, not as problems, so `strict` (fail on any problem, writing
    nothing) holds for rerunning the same input.

    `embeddings` names a file of window vectors computed elsewhere (tools/vector_file.py): the
    windows it has are imported, the rest embedded; a file that does not fit this build fails it
    before anything is written.

    `loader(inputs, known_ids)` replaces the local parse (tools.ingest.loader.load_documents) with
    another engine's (tools/ray_build.py): it returns the same `LoadResult` and, optionally, a
    `VectorFile` of the windows it embedded, which the build imports as it would `embeddings`.
    """
    from tools.ingest.loader import load_documents

    root = Path(root).expanduser()
    report = BuildReport(index=root)
    imported = _load_imported(embeddings, settings) if embeddings is not None else None
    with _build_lock(root):
        _remove_leftovers(root, settings.dense.url)
        old = None if rebuild or not (root / "CURRENT").exists() else open_index(root, settings)
        if imported is not None and old is not None:
            _check_imported(imported, settings, old)
        t0 = time.perf_counter()
        known = set(old.papers) if old else None
        if loader is not None:
            loaded, computed = loader(list(inputs), known)
            imported = computed if computed is not None else imported
        else:
            with _progress(progress, "reading", unit="file") as bar:
                loaded = load_documents(inputs, known, on_file=lambda _: bar.update(1),
                                        max_chunks=settings.ingest.max_chunks_per_paper,
                                        workers=settings.ingest.workers)
        report.problems = loaded.problems
        report.already_indexed = len(loaded.already_indexed)
        report.seconds["parse"] = time.perf_counter() - t0
        if strict and loaded.problems:
            raise BuildFailed(f"{len(loaded.problems)} input problem(s) and --strict given; nothing written", loaded.problems)
        if not loaded.documents and old is not None:
            report.totals = old.manifest["counts"]
            old.close()
            return report
        if not loaded.documents:
            raise BuildFailed("no papers could be read from the input; nothing written", loaded.problems)
        try:
            _stage_version(root, settings, lambda stage: _write_version(
                stage, old, loaded.documents, settings, report, progress, imported))
        finally:
            if old is not None:
                old.close()
        _collect(root, settings.dense.url)
    return report


def _stage_version(root: Path, settings: ToolSettings, write: Callable[[Path], None]) -> None:
    """Write a version with `write` into a staging folder, then rename it and point CURRENT at
    it; on any failure remove what was made (the staging folder, segments no version names)."""
    stage = root / f".building-{_stamp()}"
    stage.mkdir(parents=True)
    # The build leases its own version until CURRENT names it, so that no `open_index`
    # elsewhere takes it for a leftover between the rename and the switch.
    own = VersionLease.take(stage, create=True)
    try:
        write(stage)
        final = root / _version_name(stage)
        os.replace(stage, final)
        _point_current(root, final.name)
    except BaseException:
        if stage.exists():
            _dispose(root, stage, settings.dense.url)  # with the collection it made, if any
        _collect_segments(root, settings.dense.url)
        raise
    finally:
        if own is not None:
            own.release()


def _collect(root: Path, dense_url: str | None) -> None:
    """After a switch: the superseded versions no reader holds, then the segments none names."""
    remove_superseded(root, dense_url)
    _collect_segments(root, dense_url)


def _collect_segments(root: Path, dense_url: str | None = None) -> list[str]:
    """Remove the segments no version folder names (an interrupted build's, a compacted index's
    old ones once their last version is gone), with their server collections; only under the
    build lock, so no build is between writing a segment and naming it. Return their names."""
    folder = root / SEGMENTS
    if not folder.is_dir():
        return []
    named: set[str] = set()
    for v in root.glob("v-*"):
        try:
            manifest = json.loads((v / "manifest.json").read_text())
        except FileNotFoundError:
            continue  # removed meanwhile: its readers are gone
        except (OSError, ValueError):
            log.warning("%s: unreadable manifest; keeping every segment", v)
            return []
        named.update(seg["name"] for seg in manifest.get("segments", []))
    removed = []
    for seg in sorted(folder.iterdir()):
        if seg.name not in named and seg.is_dir():
            log.info("removing segment %s: no version names it", seg.name)
            _dispose(root, seg, dense_url)
            removed.append(seg.name)
    return removed


def _version_name(stage: Path) -> str:
    """The version folder a build's staging folder becomes (and names its collection after)."""
    return stage.name.replace(".building-", "v-")


def _write_version(stage: Path, old: Index | None, docs, settings: ToolSettings, report: BuildReport, progress: bool,
                   imported=None) -> None:
    """A build's version: one new segment with the new papers' chunks, vectors and postings,
    after the live version's segments (none for a rebuild); all papers, re-resolved; the
    corpus-wide BM25 statistics; the citation graph."""
    from graph_store.citation_graph import CitationGraph
    from tools.bm25_segments import Stats
    from tools.ingest.chunker import chunk_document
    from tools.ingest.resolve import resolve_references
    from tools.store import write_papers

    root = stage.parent
    old_papers = list(old.papers.values()) if old else []
    new_papers = [d.paper for d in docs]
    # Re-resolve every bibliography against the grown corpus: an old full-text paper may cite
    # a paper that only arrives now.
    papers, report.references_resolved = resolve_references(old_papers + new_papers)
    t = time.perf_counter()
    new_chunks = [c for d in docs for c in chunk_document(d, settings.ingest.max_chunks_per_paper)]
    report.seconds["chunk"] = time.perf_counter() - t

    segment = _write_segment(root, old, new_chunks, new_papers, settings, report, progress, imported)

    t = time.perf_counter()
    n_old = len(old.chunks) if old else 0
    ranges = _old_ranges(old) if old else {}
    at = n_old
    for group in _group(new_chunks, new_papers):
        if group:
            ranges[group[0].paper_id] = (at, len(group))
        at += len(group)
    write_papers(stage / PAPERS_FILE, ((p, *ranges.get(p.paper_id, (at, 0))) for p in papers))
    bm25_meta: dict[str, Any] = {"k1": BM25_K1, "b": BM25_B, "epsilon": BM25_EPSILON}
    for name, postings in (("chunk_bm25", segment.chunk_postings), ("paper_bm25", segment.paper_postings)):
        base = Stats.load(old.version_dir, name, old.manifest["bm25"][name]) if old else Stats.empty()
        bm25_meta[name] = base.add(postings).save(stage, name)
    report.seconds["bm25"] += time.perf_counter() - t

    t = time.perf_counter()
    graph = CitationGraph.from_papers(papers)
    graph.save(stage / "graph.json")
    report.seconds["graph"] = time.perf_counter() - t

    report.papers_added = len(new_papers)
    report.chunks_added = len(new_chunks)
    by_kind = Counter(old.manifest["counts"]["chunks_by_kind"] if old else {})
    by_kind.update(c.kind for c in new_chunks)
    counts = {
        "papers": len(papers),
        "chunks": n_old + len(new_chunks),
        "chunks_by_kind": {k: by_kind.get(k, 0) for k in CHUNK_KINDS},
        "citation_edges": graph.num_edges,
        "coupling_pairs": graph.coupling_edge_count(min_shared=2),
        "dense_windows": ((old.manifest["counts"]["dense_windows"] if old else 0)
                          + report.windows_embedded + report.windows_imported),
    }
    report.totals = counts
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    manifest = {
        "format_version": FORMAT_VERSION,
        "created": old.manifest["created"] if old else now,
        "updated": now,
        "embedder": {"name": settings.embedder.model, "dim": segment.dim, "window_chars": settings.embedder.window_chars},
        "paper_embedder": {"name": settings.embedder.paper_model or settings.embedder.model,
                           "dim": segment.paper_dim},
        "tokenizer": TOKENIZER_VERSION,
        "bm25": bm25_meta,
        "corpus_fingerprint": _fingerprint(new_chunks, old.manifest["corpus_fingerprint"] if old else ""),
        # the oldest ingestion that cut papers kept here (an add keeps the old papers' chunks)
        "ingest_version": min(old.manifest.get("ingest_version", 1), INGEST_VERSION) if old else INGEST_VERSION,
        "counts": counts,
        "sources": sorted({p.source for p in papers if p.source}),
        "segments": (old.manifest["segments"] if old else []) + [segment.record],
    }
    (stage / "manifest.json").write_text(json.dumps(manifest, indent=2))
    _fsync_tree(stage)


def _old_ranges(old: Index) -> dict[str, tuple[int, int]]:
    """Every live paper's chunk rows (first, count), read in one pass."""
    f = old.papers.file
    out: dict[str, tuple[int, int]] = {}
    for page in f.pages("SELECT row, paper_id, first_chunk, n_chunks FROM papers WHERE row > ? ORDER BY row LIMIT ?"):
        for _, pid, first, n in page:
            out[pid] = (first, n)
    return out


@dataclass
class _Segment:
    record: dict[str, Any]  # what the manifest lists: name, papers, chunks, windows, dense
    chunk_postings: Any
    paper_postings: Any
    dim: int
    paper_dim: int


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
    return final


def _write_segment(root: Path, old: Index | None, chunks: list[Chunk], papers: list[Paper], settings: ToolSettings,
                   report: BuildReport, progress: bool, imported=None) -> _Segment:
    from tools.bm25_segments import Postings
    from tools.store import write_chunks

    name, stage = _new_segment(root)
    write_chunks(stage / CHUNKS_FILE, chunks)
    t = time.perf_counter()
    chunk_postings = Postings.build(tokenize(c.text) for c in chunks)
    paper_postings = Postings.build(tokenize("\n".join(c.text for c in cs)) for cs in _group(chunks, papers))
    chunk_postings.save(stage, "chunk_bm25")
    paper_postings.save(stage, "paper_bm25")
    report.seconds["bm25"] = time.perf_counter() - t

    t = time.perf_counter()
    store = _dense_store(root, name, old, settings)
    dim, paper_vecs = _write_dense(stage, store, chunks, papers, settings, report, progress, imported)
    report.seconds["embed"] = time.perf_counter() - t
    record = {"name": name, "papers": len(papers), "chunks": len(chunks),
              "windows": report.windows_embedded + report.windows_imported, "dense": store}
    _finish_segment(stage, record)
    return _Segment(record, chunk_postings, paper_postings, dim, int(paper_vecs.shape[1]))


def _dense_store(root: Path, segment: str, old: Index | None, settings: ToolSettings) -> dict[str, Any]:
    """Where a new segment's vectors go: LITLOOP_DENSE__URL when set, else where the live
    version's last segment's are (an add keeps a server index on its server; a rebuild follows
    the settings)."""
    from tools.dense import EMBEDDED, server_store

    url = settings.dense.url
    if url is None and old is not None:
        live = old.manifest["segments"][-1].get("dense") or EMBEDDED
        url = live.get("url") if live.get("kind") == "server" else None
    return server_store(root, segment, url) if url else dict(EMBEDDED)


def _load_imported(path: Path, settings: ToolSettings):
    """The --embeddings file, read and checked against this build's embedder (before the build
    lock: a file that does not fit fails the build before it touches the index)."""
    from tools import vector_file
    from tools.embed import get_embedder

    e = settings.embedder
    try:
        vf = vector_file.load(path)
        vector_file.check(vf, e.model, get_embedder(e.model, settings.device, e.batch_size).dim, e.window_chars)
    except vector_file.VectorFileProblem as exc:
        raise BuildFailed(f"{exc}; nothing written") from None
    return vf


def _check_imported(vf, settings: ToolSettings, old: Index) -> None:
    """An add's --embeddings file against the index it adds to (its vectors' dimension)."""
    from tools import vector_file

    e = settings.embedder
    try:
        vector_file.check(vf, e.model, vf.dim, e.window_chars, old.manifest["embedder"]["dim"], old.root)
    except vector_file.VectorFileProblem as exc:
        old.close()
        raise BuildFailed(f"{exc}; nothing written") from None


def _embed_windows(windows, emb, imported, settings: ToolSettings, report: BuildReport, progress: bool) -> np.ndarray:
    """The vectors of `windows`: the imported file's where it has them, the embedder's for the rest."""
    vectors = np.zeros((len(windows), emb.dim), dtype=np.float32)
    todo = list(range(len(windows)))
    if imported is not None:
        at, rows = imported.match(windows)
        vectors[at] = imported.vectors[rows]
        done = set(at)
        todo = [i for i in todo if i not in done]
        report.windows_imported = len(at)
        report.vectors_ignored = len(imported.ids) - len(rows)
    batch = max(256, settings.embedder.batch_size * 8)
    with _progress(progress, "embedding chunks", total=len(todo), unit="window") as bar:
        for s in range(0, len(todo), batch):
            rows = todo[s:s + batch]
            vectors[rows] = emb.encode([windows[i][3] for i in rows])
            bar.update(len(rows))
    report.windows_embedded = len(todo)
    return vectors


def _write_dense(stage: Path, store: dict[str, Any], chunks: list[Chunk], papers: list[Paper], settings: ToolSettings,
                 report: BuildReport, progress: bool, imported=None) -> tuple[int, np.ndarray]:
    """The segment's window vectors into its dense store and its paper vectors into
    `paper_emb.npy`; the vectors' dimension and the paper vectors."""
    from tools.dense import STORE_FILE, DenseStoreProblem, open_dense, windows_for
    from tools.embed import get_embedder

    if store["kind"] == "server":
        # recorded before the collection exists: the cleanup of a build killed from here on
        # finds what to drop (the manifest comes last)
        (stage / STORE_FILE).write_text(json.dumps(store))
    emb = get_embedder(settings.embedder.model, settings.device, settings.embedder.batch_size)
    try:
        dense = open_dense(stage, store, create=True)
    except DenseStoreProblem as exc:
        raise IndexProblem(str(exc)) from None
    try:
        windows = windows_for(((c.chunk_id, c.paper_id, c.text) for c in chunks), settings.embedder.window_chars)
        vectors = _embed_windows(windows, emb, imported, settings, report, progress)
        dense.add([w[:3] for w in windows], vectors)
        paper_vecs = _paper_vectors(papers, chunks, windows, vectors, settings, progress)
    except DenseStoreProblem as exc:
        raise IndexProblem(str(exc)) from None
    finally:
        dense.close()
    np.save(stage / PAPER_EMB_FILE, paper_vecs)
    return emb.dim, paper_vecs


def _paper_vectors(papers, chunks, windows, vectors, settings: ToolSettings, progress: bool) -> np.ndarray:
    """Paper embeddings: the title-and-abstract chunk's first window, unless a separate
    scientific-document embedder is configured (SEE: DESIGN.md section 2, paper embeddings)."""
    from tools.embed import get_embedder

    if settings.embedder.paper_model:
        emb = get_embedder(settings.embedder.paper_model, settings.device, settings.embedder.batch_size)
        texts = [f"{p.title}\n{p.abstract}" for p in papers]
        return emb.encode(texts, progress=progress)
    first_window = {w[1]: i for i, w in reversed(list(enumerate(windows)))}
    head = {c.paper_id: c.chunk_id for c in chunks if c.kind == "title_abstract"}
    rows = [first_window[head[p.paper_id]] for p in papers]
    return vectors[rows] if rows else np.zeros((0, vectors.shape[1]), dtype=np.float32)


def _group(chunks: list[Chunk], papers: list[Paper]) -> list[list[Chunk]]:
    by_paper: dict[str, list[Chunk]] = {}
    for c in chunks:
        by_paper.setdefault(c.paper_id, []).append(c)
    return [by_paper.get(p.paper_id, []) for p in papers]


def _fingerprint(chunks: Iterable[Chunk], previous: str = "") -> str:
    """A digest of the chunk ids and texts, chained onto the previous version's: it changes with
    every add, and the same builds in the same order give the same fingerprint."""
    h = hashlib.sha256(previous.encode())
    for c in chunks:
        h.update(c.chunk_id.encode())
        h.update(hashlib.sha1(c.text.encode()).digest())
    return h.hexdigest()[:16]


# ----------------------------------------------------------------------------- compacting


@dataclass
class CompactReport:
    index: Path
    segments_before: int = 0
    segments_after: int = 0
    chunks: int = 0
    windows: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"index": str(self.index), "segments_before": self.segments_before,
                "segments_after": self.segments_after, "chunks": self.chunks, "windows": self.windows,
                "seconds": round(self.seconds, 2)}


def compact_index(root: Path, settings: ToolSettings, *, progress: bool = False) -> CompactReport:
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
            report.segments_before = report.segments_after = len(old.manifest["segments"])
            report.chunks = len(old.chunks)
            if report.segments_before > 1:
                _stage_version(root, settings, lambda stage: _write_compacted(stage, old, settings, report, progress))
                report.segments_after = 1
        finally:
            old.close()
        _collect(root, settings.dense.url)
    report.seconds = time.perf_counter() - t0
    return report


def _write_compacted(stage: Path, old: Index, settings: ToolSettings, report: CompactReport, progress: bool) -> None:
    from tools.bm25_segments import Postings
    from tools.dense import STORE_FILE, DenseStoreProblem, open_dense
    from tools.store import write_chunks

    root = stage.parent
    name, seg = _new_segment(root)
    with _progress(progress, "merging chunks", total=len(old.chunks), unit="chunk") as bar:
        write_chunks(seg / CHUNKS_FILE, _counting(old.chunks, bar))
    for part in ("chunk_bm25", "paper_bm25"):
        Postings.concat([Postings.load(d, part) for d in old.segment_dirs]).save(seg, part)
    np.save(seg / PAPER_EMB_FILE, old.paper_embeddings)
    store = _dense_store(root, name, old, settings)
    if store["kind"] == "server":
        (seg / STORE_FILE).write_text(json.dumps(store))
    try:
        dense = open_dense(seg, store, create=True)
        try:
            with _progress(progress, "merging vectors", total=old.dense.count(), unit="window") as bar:
                report.windows = dense.copy_from(old.dense, progress=bar.update)
        finally:
            dense.close()
    except DenseStoreProblem as exc:
        raise IndexProblem(str(exc)) from None
    record = {"name": name, "papers": old.manifest["counts"]["papers"], "chunks": len(old.chunks),
              "windows": report.windows, "dense": store}
    _finish_segment(seg, record)
    for part in (PAPERS_FILE, "graph.json", *(f"{n}.{a}.npy" for n in ("chunk_bm25", "paper_bm25") for a in ("terms", "df"))):
        shutil.copyfile(old.version_dir / part, stage / part)
    manifest = {**old.manifest, "updated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "segments": [record]}
    (stage / "manifest.json").write_text(json.dumps(manifest, indent=2))
    _fsync_tree(stage)


# ----------------------------------------------------------------------------- upgrading


def upgrade_index(root: Path, settings: ToolSettings, *, progress: bool = False) -> dict[str, Any]:
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
            manifest = json.loads((lease.version / "manifest.json").read_text())
            fmt = manifest.get("format_version")
            if fmt == FORMAT_VERSION:
                return {"index": str(root), "upgraded": False, "format_version": fmt}
            if fmt != 1:
                _check_format(manifest, root)
            _stage_version(root, settings, lambda stage: _write_upgraded(stage, lease.version, manifest, settings, progress))
        finally:
            lease.release()
        _collect(root, settings.dense.url)
    return {"index": str(root), "upgraded": True, "format_version": FORMAT_VERSION,
            "chunks": manifest["counts"]["chunks"], "seconds": round(time.perf_counter() - t0, 2)}


def _write_upgraded(stage: Path, v1: Path, manifest: dict[str, Any], settings: ToolSettings, progress: bool) -> None:
    from tools.bm25_segments import Postings, Stats
    from tools.dense import STORE_FILE, DenseStoreProblem, open_dense, store_of
    from tools.store import write_chunks, write_papers

    root = stage.parent
    papers = [Paper.from_dict(r) for _, r in iter_jsonl(v1 / "papers.jsonl")]

    def chunks():
        return (Chunk.from_dict(r) for _, r in iter_jsonl(v1 / "chunks.jsonl"))

    ranges: dict[str, list[int]] = {}
    for i, c in enumerate(chunks()):
        first_n = ranges.setdefault(c.paper_id, [i, 0])
        if first_n[0] + first_n[1] != i:
            raise IndexProblem(f"{v1}: the chunks of paper {c.paper_id!r} are not consecutive; rebuild the "
                               f"index with `litloop index build PATH... --index {root} --rebuild`")
        first_n[1] += 1
    n_chunks = sum(n for _, n in ranges.values())

    name, seg = _new_segment(root)
    with _progress(progress, "upgrading chunks", total=n_chunks, unit="chunk") as bar:
        write_chunks(seg / CHUNKS_FILE, _counting(chunks(), bar))
    chunk_postings = Postings.build(tokenize(c.text) for c in chunks())
    chunk_postings.save(seg, "chunk_bm25")

    def paper_docs():
        texts: dict[str, list[str]] = {}
        for c in chunks():
            texts.setdefault(c.paper_id, []).append(c.text)
        for p in papers:
            yield tokenize("\n".join(texts.pop(p.paper_id, [])))

    paper_postings = Postings.build(paper_docs())
    paper_postings.save(seg, "paper_bm25")
    shutil.copyfile(v1 / PAPER_EMB_FILE, seg / PAPER_EMB_FILE)
    live = store_of(manifest)
    if live.get("kind") == "embedded":
        shutil.copytree(v1 / "chroma", seg / "chroma")
        store: dict[str, Any] = dict(live)
    else:  # a server version's collection is copied to the segment's (the old one goes with its version)
        store = _dense_store(root, name, None, settings) if settings.dense.url else \
            {**live, "collection": _segment_collection(root, name)}
        (seg / STORE_FILE).write_text(json.dumps(store))
        try:
            src = open_dense(v1, live, settings.dense.url)
            dst = open_dense(seg, store, settings.dense.url, create=True)
            try:
                with _progress(progress, "copying vectors", total=src.count(), unit="window") as bar:
                    dst.copy_from(src, progress=bar.update)
            finally:
                src.close()
                dst.close()
        except DenseStoreProblem as exc:
            raise IndexProblem(str(exc)) from None
    record = {"name": name, "papers": len(papers), "chunks": n_chunks,
              "windows": manifest["counts"]["dense_windows"], "dense": store}
    _finish_segment(seg, record)

    write_papers(stage / PAPERS_FILE, ((p, *ranges.get(p.paper_id, (n_chunks, 0))) for p in papers))
    bm25_meta: dict[str, Any] = {"k1": manifest["bm25"]["k1"], "b": manifest["bm25"]["b"], "epsilon": BM25_EPSILON}
    for part, postings in (("chunk_bm25", chunk_postings), ("paper_bm25", paper_postings)):
        bm25_meta[part] = Stats.empty().add(postings).save(stage, part)
    shutil.copyfile(v1 / "graph.json", stage / "graph.json")
    upgraded = {k: v for k, v in manifest.items() if k != "dense"}
    upgraded.update(format_version=FORMAT_VERSION, bm25=bm25_meta, segments=[record],
                    updated=datetime.now(timezone.utc).isoformat(timespec="seconds"))
    (stage / "manifest.json").write_text(json.dumps(upgraded, indent=2))
    _fsync_tree(stage)


def _counting(items: Iterable[Any], bar) -> Iterator[Any]:
    for item in items:
        bar.update(1)
        yield item


def _segment_collection(root: Path, segment: str) -> str:
    from tools.dense import collection_name

    return collection_name(root, segment)


def _stamp() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S") + f"-{os.getpid()}-{time.monotonic_ns() % 10**6}"


def _point_current(root: Path, name: str) -> None:
    """Atomic switch: write CURRENT.tmp, fsync, rename over CURRENT."""
    tmp = root / "CURRENT.tmp"
    with open(tmp, "w") as fh:
        fh.write(name + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, root / "CURRENT")
    _fsync_dir(root)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_tree(path: Path) -> None:
    for p in path.rglob("*"):
        if p.is_file():
            with open(p, "rb") as fh:
                os.fsync(fh.fileno())


def _remove_leftovers(root: Path, dense_url: str | None = None) -> None:
    """What interrupted builds left, with the collections they made (only a build, holding the
    build lock, may remove these), and the superseded versions their readers have let go of
    since the last build."""
    for p in root.glob(".building-*"):
        log.info("removing an interrupted build: %s", p)
        _dispose(root, p, dense_url)
    _collect(root, dense_url)


@contextmanager
def _progress(enabled: bool, desc: str, total: int | None = None, unit: str = "it"):
    from tqdm import tqdm

    bar = tqdm(total=total, desc=desc, unit=unit, disable=not enabled, leave=False)
    try:
        yield bar
    finally:
        bar.close()


# ----------------------------------------------------------------------------- info


def dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def index_info(root: Path, settings: ToolSettings) -> dict[str, Any]:
    """What `litloop index info` shows; reads the manifest only (fast). Sizes are per file of
    the version folder and per kind of segment file (summed over the segments), in bytes."""
    from tools.dense import EMBEDDED, store_of

    root = Path(root).expanduser()
    lease = lease_current_version(root)
    try:
        version = lease.version
        manifest = json.loads((version / "manifest.json").read_text())
        sizes = {p.name: dir_size(p) if p.is_dir() else p.stat().st_size
                 for p in sorted(version.iterdir()) if p.name != LEASE}
        segments = manifest.get("segments", [])
        for seg in segments:
            folder = root / SEGMENTS / seg["name"]
            for p in sorted(folder.iterdir()) if folder.is_dir() else []:
                key = f"segments/{p.name}"
                sizes[key] = sizes.get(key, 0) + (dir_size(p) if p.is_dir() else p.stat().st_size)
    finally:
        lease.release()
    try:
        check_manifest(manifest, settings, root)
        compatible, problem = True, None
    except IndexProblem as exc:
        compatible, problem = False, str(exc)
    return {
        "index": str(root),
        "version": version.name,
        **{k: manifest[k] for k in ("format_version", "created", "updated", "embedder", "paper_embedder",
                                     "tokenizer", "bm25", "corpus_fingerprint", "counts")},
        "ingest_version": manifest.get("ingest_version", 1),
        "ingest_current": manifest.get("ingest_version", 1) >= INGEST_VERSION,
        "sources": len(manifest.get("sources", [])),
        "sizes_bytes": sizes,
        "total_bytes": sum(sizes.values()),
        "segments": [{k: seg[k] for k in ("name", "papers", "chunks", "windows")} | {"dense": seg.get("dense") or EMBEDDED}
                     for seg in segments],
        # where an add puts its vectors: the last segment's store (format 1: the version's)
        "dense": (segments[-1].get("dense") or dict(EMBEDDED)) if segments else store_of(manifest),
        "compatible_with_settings": compatible,
        "problem": problem,
    }
