"""The read view of an index: `IndexView` (the live version of one index directory, read from
disk on demand) on `RecordView`, the lookups and retrievers every view shares (also
`tools.index.multi.MultiIndex`, over several).

Opening a view has no side effects: it takes the version's lease, reads the manifest and
connects to the record files. Removing superseded versions is the writers' job
(tools/index/versions.py)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tools.base import NAMESPACE_SEP, Chunk, Paper, Passage
from tools.index.layout import (
    BM25_EPSILON,
    CHUNKS_FILE,
    PAPER_EMB_FILE,
    PAPERS_FILE,
    SEGMENTS,
    IndexProblem,
)
from tools.index.manifest import Manifest, _check_format, check_manifest, manifest_tokenizer, read_manifest
from tools.index.versions import lease_current_version
from tools.settings import ToolSettings

if TYPE_CHECKING:
    from tools.index.store import PaperRecords


class RecordView:
    """What every index view shares (`IndexView`, read from disk on demand;
    `tools.index.multi.MultiIndex`, namespaced views over several): the paper and chunk records with
    their row lookups, and what reads only those, the view's BM25 indexes and its embedder.
    A subclass sets `papers`, `chunks`, `paper_ids`, `paper_row`, `chunk_row` and `chunks_of`."""

    papers: Mapping[str, Paper]
    chunks: Sequence[Chunk]
    paper_ids: Sequence[str]
    paper_row: Mapping[str, int]
    chunk_row: Mapping[str, int]
    chunks_of: Mapping[str, Sequence[int]]
    chunk_bm25: Any  # SegmentedBM25, or a MultiIndex's fusion of several
    paper_bm25: Any
    embedder: Any

    def tokenize(self, text: str) -> list[str]:
        """`text` as the query tokens of this view's BM25 indexes: tokenised with the tokenizer the
        index was built with (its manifest's), whatever LITLOOP_RETRIEVAL__TOKENIZER says now.
        Everything that scores text against `chunk_bm25` or `paper_bm25` tokenises with this."""
        raise NotImplementedError

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
            Passage.from_chunk(self.chunks[i], s, "bm25") for i, s in self.chunk_bm25.top_k(self.tokenize(query), k)
        ]

    def bm25_papers(self, query: str, k: int) -> list[tuple[str, float]]:
        return [(self.paper_ids[i], s) for i, s in self.paper_bm25.top_k(self.tokenize(query), k)]

    def dense_chunks(self, query: str, k: int) -> list[Passage]:
        vec = self.embedder.encode([query])[0]
        return self.dense_chunks_by_vector(vec, k)

    def dense_chunks_by_vector(self, vec: np.ndarray, k: int) -> list[Passage]:
        raise NotImplementedError


class IndexView(RecordView):
    """A read-only view of the live version of an index directory.

    Opening reads the manifest and connects to the record files; papers and chunks are read by
    row or id when asked for (tools/index/store.py), the BM25 arrays are memory-mapped on first use,
    and Chroma opens on the first dense query."""

    papers: PaperRecords  # the version's paper table (an add reads its file row by row)

    def __init__(self, root: Path, settings: ToolSettings, check: bool = True):
        self.root = root
        self.settings = settings
        self._lease = lease_current_version(root)
        self.version_dir = self._lease.version
        self._files: list[Any] = []
        try:
            self.manifest: Manifest = read_manifest(self.version_dir)
            if check:
                check_manifest(self.manifest, settings, root, self.version_dir)
            else:
                _check_format(self.manifest, root)
            self._open_records()
        except BaseException:
            self.close()
            raise

    def _open_records(self) -> None:
        from tools.index.store import (
            ChunkRanges,
            ChunkRows,
            ChunkTable,
            PaperIds,
            PaperRecords,
            PaperRows,
        )
        from tools.record_files import RecordFile, StoreProblem

        try:
            papers = RecordFile(self.version_dir / PAPERS_FILE)
            self._files.append(papers)
            chunk_files = []
            for seg in self.segment_dirs:
                chunk_files.append(RecordFile(seg / CHUNKS_FILE))
                self._files.append(chunk_files[-1])
        except StoreProblem as exc:
            raise IndexProblem(str(exc)) from None
        n = self.manifest.counts["papers"]
        self.papers = PaperRecords(papers, n)
        self.paper_ids = PaperIds(papers, n)
        self.paper_row = PaperRows(papers, n)
        self.chunks_of = ChunkRanges(papers, n)
        self.chunks = ChunkTable(chunk_files, [s.chunks for s in self.manifest.segments])
        self.chunk_row = ChunkRows(self.chunks)

    @cached_property
    def _tokenize(self) -> Callable[[str], list[str]]:
        return manifest_tokenizer(self.manifest, self.root, self.version_dir)

    def tokenize(self, text: str) -> list[str]:
        tokens: list[str] = self._tokenize(text)
        return tokens

    @property
    def segment_dirs(self) -> list[Path]:
        return [self.root / SEGMENTS / s.name for s in self.manifest.segments]

    # Heavy parts load on first use, so `index info` and BM25 search stay fast.
    def _bm25(self, name: str) -> Any:
        from tools.retrieval.bm25_segments import Postings, SegmentedBM25, Stats

        meta = self.manifest.bm25
        try:
            stats = Stats.load(self.version_dir, name, meta[name])
            parts = [Postings.load(seg, name) for seg in self.segment_dirs]
        except FileNotFoundError as exc:
            raise IndexProblem(
                f"{exc.filename}: BM25 file missing; this index version is incomplete or was "
                "removed while open. Open the index again, or rebuild it"
            ) from None
        return SegmentedBM25(stats, parts, meta["k1"], meta["b"], meta.get("epsilon", BM25_EPSILON))

    @cached_property
    def chunk_bm25(self) -> Any:
        return self._bm25("chunk_bm25")

    @cached_property
    def paper_bm25(self) -> Any:
        return self._bm25("paper_bm25")

    @cached_property
    def paper_embeddings(self) -> np.ndarray:
        parts = [np.load(seg / PAPER_EMB_FILE) for seg in self.segment_dirs]
        return np.vstack(parts) if len(parts) > 1 else parts[0]

    @cached_property
    def graph(self) -> Any:
        from graph_store.citation_graph import CitationGraph

        return CitationGraph.load(self.version_dir / "graph.json")

    @cached_property
    def citations(self) -> Any:
        """The version's citation contexts and targets (tools/citations/store.py); `available` is
        False for an index written before litloop recorded them."""
        from tools.citations.store import CitationStore

        return CitationStore(self.version_dir, self.segment_dirs)

    @cached_property
    def dense(self) -> Any:
        """The segments' dense stores as one (each where its record says; the setting's server first)."""
        from tools.retrieval.dense import DenseStoreProblem, SegmentedDense, open_dense

        stores = []
        try:
            for seg, record in zip(self.segment_dirs, self.manifest.segments, strict=True):
                stores.append(open_dense(seg, record.dense, self.settings.dense.url))
        except DenseStoreProblem as exc:
            for st in stores:
                st.close()
            raise IndexProblem(str(exc)) from None
        return SegmentedDense(stores)

    @cached_property
    def embedder(self) -> Any:
        from tools.ingest.plan import settings_embedder

        e = self.settings.embedder
        emb = settings_embedder(self.settings)
        if emb.dim != self.manifest.embedder.dim:
            raise IndexProblem(
                f"{self.root}: index embeddings have dimension {self.manifest.embedder.dim} "
                f"but embedder {e.model!r} gives {emb.dim}; use the embedder the index was built "
                "with or rebuild the index (`litloop index build ... --rebuild`)"
            )
        return emb

    def dense_chunks_by_vector(self, vec: np.ndarray, k: int) -> list[Passage]:
        from tools.retrieval.dense import DenseStoreProblem

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
        if "citations" in self.__dict__:
            self.citations.close()
        for f in self._files:
            f.close()
        self._files = []
        self._lease.release()


Index = IndexView  # the name most callers know


def open_index(path: Path, settings: ToolSettings, check: bool = True) -> IndexView:
    return IndexView(Path(path).expanduser(), settings, check=check)
