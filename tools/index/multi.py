"""Several corpora as one index: `MultiIndex` offers the interface the pipeline and the agent's
nodes use from `tools.index.IndexView`, over several indexes whose ids it namespaces.

Decision: multi-corpus search is a view at the index level, not a second pipeline.
Each retriever (chunk BM25, paper BM25, dense) is asked per corpus and its per-corpus rankings
are fused by equal-weight reciprocal rank fusion; everything above that (the three-index RRF,
PRF, reranking, the pool, Relate, reading, citations) runs unchanged on the fused view. So
`litloop search/retrieve/ask --corpus A --corpus B` and the graph share one code path, and a
single corpus (or `--index`) keeps the plain `Index`, untouched and as fast as before.

- Ids: paper `P` of corpus `c` is `c:P`, its chunk `P#c3` is `c:P#c3`; references are
  namespaced too, so the citation graph never links across corpora.
- Fusion: BM25 scores of different corpora are not comparable (different idf, lengths), so only
  ranks are fused: RRF with one ranking per corpus, `1/(k + rank)`, which orders by rank and,
  at equal rank, by the order the corpora were named. Dense rankings are fused the same way,
  so no corpus wins merely by having longer or more similar-looking texts.
- `chunk_bm25.scores(tokens)` concatenates each corpus's own scores; callers compare them only
  within one paper (best chunk of a paper), which lies in one corpus.
- Tokens: each corpus's BM25 indexes are queried with its own tokenizer (the one its manifest
  records: plain or Snowball-stemmed). `MultiIndex.tokenize` gives the corpora's common tokens,
  or, where they differ, `PartTokens`, which the fused BM25 hands each corpus its own of.
- Paper embeddings come from the one embedder the settings name (the manifests are checked
  against it), so cosine similarity across corpora is meaningful for Relate.

Memory: nothing is copied. The papers and chunks are views that namespace a corpus's record when
it is read (`_Papers`, `_Chunks`, ...), so joining corpora of millions of chunks costs what
opening them does; the heavy parts (BM25 arrays, Chroma, embeddings) stay in the corpora's own
indexes.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from functools import cached_property
from typing import Any, TypeVar

import numpy as np

from tools.base import Chunk, Paper, Passage, namespaced, split_namespaced
from tools.index import IndexView, RecordView

T = TypeVar("T")


def fuse_rankings(rankings: Sequence[Sequence[T]], k: int, rrf_k: int = 60) -> list[tuple[T, float]]:
    """Equal-weight RRF of per-corpus rankings of disjoint items: (item, 1/(rrf_k + rank)), best
    first, the first `k`. Equal rank ties go to the corpus named first."""
    scored = [
        (1.0 / (rrf_k + r), c, r, item) for c, ranking in enumerate(rankings) for r, item in enumerate(ranking, start=1)
    ]
    scored.sort(key=lambda s: (-s[0], s[1], s[2]))
    return [(item, score) for score, _, _, item in scored[:k]]


def _bm25_of(index: Any, name: str) -> Callable[[], Any]:
    """One corpus's BM25 index, opened when a query first asks for it."""
    return lambda: getattr(index, name)


class PartTokens(list[str]):
    """The query tokens of a MultiIndex whose corpora tokenise differently: a list (the first
    corpus's tokens) that also holds every corpus's own, in the order the corpora were named."""

    def __init__(self, per_part: Sequence[list[str]]):
        super().__init__(per_part[0])
        self.per_part = list(per_part)


def _part_tokens(query_tokens: list[str], i: int) -> list[str]:
    return query_tokens.per_part[i] if isinstance(query_tokens, PartTokens) else query_tokens


class _FusedBM25:
    """A BM25 index over several corpora: per-corpus rankings fused by rank, scores concatenated."""

    def __init__(self, get: Sequence[Callable[[], Any]], offsets: Sequence[int], rrf_k: int):
        self._get, self._offsets, self._rrf_k = list(get), list(offsets), rrf_k

    def top_k(self, query_tokens: list[str], k: int) -> list[tuple[int, float]]:
        rankings = [
            [off + row for row, _ in get().top_k(_part_tokens(query_tokens, i), k)]
            for i, (get, off) in enumerate(zip(self._get, self._offsets, strict=True))
        ]
        return fuse_rankings(rankings, k, self._rrf_k)

    def scores(self, query_tokens: list[str]) -> np.ndarray:
        return np.concatenate([get().scores(_part_tokens(query_tokens, i)) for i, get in enumerate(self._get)])

    def __len__(self) -> int:
        return sum(len(get()) for get in self._get)


class _FusedGraph:
    """The corpora's citation graphs side by side: a paper's neighbours come from its own corpus."""

    def __init__(self, parts: Mapping[str, IndexView]):
        self._parts = parts

    def _split(self, pid: str) -> tuple[str, Any, str]:
        corpus, local = split_namespaced(pid)
        return corpus, self._parts[corpus].graph, local

    def coupling_neighbours(self, seed: str, **kwargs: Any) -> list[tuple[str, float]]:
        c, g, local = self._split(seed)
        return [(namespaced(c, p), s) for p, s in g.coupling_neighbours(local, **kwargs)]

    def cocitation_neighbours(self, seed: str, **kwargs: Any) -> list[tuple[str, float]]:
        c, g, local = self._split(seed)
        return [(namespaced(c, p), s) for p, s in g.cocitation_neighbours(local, **kwargs)]

    def direct_neighbours(self, seed: str) -> list[str]:
        c, g, local = self._split(seed)
        return [namespaced(c, p) for p in g.direct_neighbours(local)]

    def references(self, pid: str) -> set[str]:
        c, g, local = self._split(pid)
        return {namespaced(c, p) for p in g.references(local)}

    def citations(self, pid: str) -> set[str]:
        c, g, local = self._split(pid)
        return {namespaced(c, p) for p in g.citations(local)}

    def __contains__(self, pid: object) -> bool:
        try:
            _, g, local = self._split(str(pid))
        except (ValueError, KeyError):
            return False
        return local in g

    @property
    def num_edges(self) -> int:
        return sum(p.graph.num_edges for p in self._parts.values())


def _ns_paper(name: str, p: Paper) -> Paper:
    return replace(
        p, paper_id=namespaced(name, p.paper_id), references=tuple(namespaced(name, r) for r in p.references)
    )


def _ns_chunk(name: str, c: Chunk) -> Chunk:
    return replace(c, chunk_id=namespaced(name, c.chunk_id), paper_id=namespaced(name, c.paper_id))


class _Parts:
    """The corpora in order with their row offsets in the joined paper and chunk rows."""

    def __init__(self, parts: Mapping[str, Any]):
        self.names = list(parts)
        self.indexes = list(parts.values())
        self.paper_offsets, self.chunk_offsets = [0], [0]
        for idx in self.indexes:
            self.paper_offsets.append(self.paper_offsets[-1] + len(idx.paper_ids))
            self.chunk_offsets.append(self.chunk_offsets[-1] + len(idx.chunks))

    def split(self, ns_id: object) -> tuple[int, str] | None:
        """(corpus position, local id) of a namespaced id; None when it names no corpus here."""
        if not isinstance(ns_id, str):
            return None
        try:
            corpus, local = split_namespaced(ns_id)
        except ValueError:
            return None
        return (self.names.index(corpus), local) if corpus in self.names else None

    @staticmethod
    def locate(offsets: list[int], row: int) -> tuple[int, int]:
        if not 0 <= row < offsets[-1]:
            raise IndexError(f"row {row} outside 0..{offsets[-1] - 1}")
        i = bisect.bisect_right(offsets, row) - 1
        return i, row - offsets[i]


class _Papers(Mapping[str, Paper]):
    def __init__(self, parts: _Parts):
        self._p = parts

    def __getitem__(self, ns_id: str) -> Paper:
        at = self._p.split(ns_id)
        if at is None:
            raise KeyError(ns_id)
        i, local = at
        return _ns_paper(self._p.names[i], self._p.indexes[i].papers[local])

    def __contains__(self, ns_id: object) -> bool:
        at = self._p.split(ns_id)
        return at is not None and at[1] in self._p.indexes[at[0]].papers

    def __iter__(self) -> Iterator[str]:
        for name, idx in zip(self._p.names, self._p.indexes, strict=True):
            for pid in idx.papers:
                yield namespaced(name, pid)

    def __len__(self) -> int:
        return self._p.paper_offsets[-1]

    def values(self) -> Iterator[Paper]:  # type: ignore[override]  # a stream, not a view
        for name, idx in zip(self._p.names, self._p.indexes, strict=True):
            for p in idx.papers.values():
                yield _ns_paper(name, p)


class _Chunks(Sequence[Chunk]):
    def __init__(self, parts: _Parts):
        self._p = parts

    def __len__(self) -> int:
        return self._p.chunk_offsets[-1]

    def __getitem__(self, row: Any) -> Any:
        if isinstance(row, slice):
            return [self[i] for i in range(*row.indices(len(self)))]
        row = int(row) + (len(self) if int(row) < 0 else 0)
        i, local = self._p.locate(self._p.chunk_offsets, row)
        return _ns_chunk(self._p.names[i], self._p.indexes[i].chunks[local])

    def __iter__(self) -> Iterator[Chunk]:
        for name, idx in zip(self._p.names, self._p.indexes, strict=True):
            for c in idx.chunks:
                yield _ns_chunk(name, c)


class _PaperIds(Sequence[str]):
    def __init__(self, parts: _Parts):
        self._p = parts

    def __len__(self) -> int:
        return self._p.paper_offsets[-1]

    def __getitem__(self, row: Any) -> Any:
        if isinstance(row, slice):
            return [self[i] for i in range(*row.indices(len(self)))]
        row = int(row) + (len(self) if int(row) < 0 else 0)
        i, local = self._p.locate(self._p.paper_offsets, row)
        return namespaced(self._p.names[i], self._p.indexes[i].paper_ids[local])


class _Rows(Mapping[str, Any]):
    """A namespaced id -> a corpus's row mapping (`paper_row`, `chunk_row`) or chunk rows
    (`chunks_of`), shifted by that corpus's offset."""

    def __init__(self, parts: _Parts, attr: str, offsets: list[int], ranges: bool = False):
        self._p, self._attr, self._offsets, self._ranges = parts, attr, offsets, ranges

    def __getitem__(self, ns_id: str) -> Any:
        at = self._p.split(ns_id)
        if at is None:
            raise KeyError(ns_id)
        i, local = at
        got = getattr(self._p.indexes[i], self._attr)[local]
        off = self._offsets[i]
        return [off + r for r in got] if self._ranges else off + got

    def __contains__(self, ns_id: object) -> bool:
        at = self._p.split(ns_id)
        return at is not None and at[1] in getattr(self._p.indexes[at[0]], self._attr)

    def __iter__(self) -> Iterator[str]:
        for name, idx in zip(self._p.names, self._p.indexes, strict=True):
            for local in getattr(idx, self._attr):
                yield namespaced(name, local)

    def __len__(self) -> int:
        return sum(len(getattr(idx, self._attr)) for idx in self._p.indexes)


class MultiIndex(RecordView):
    """A read-only, namespaced view of several corpora's indexes (see the module docstring)."""

    def __init__(self, parts: Mapping[str, IndexView]):
        if len(parts) < 2:
            raise ValueError("a MultiIndex joins two or more corpora; use the Index itself for one")
        self.parts: dict[str, IndexView] = dict(parts)
        self.names = list(self.parts)
        first = self.parts[self.names[0]]
        self.settings = first.settings
        self.root = None
        self.manifest = {"corpora": {n: p.manifest for n, p in self.parts.items()}}
        layout = _Parts(self.parts)
        self._paper_offsets, self._chunk_offsets = layout.paper_offsets[:-1], layout.chunk_offsets[:-1]
        self.papers = _Papers(layout)
        self.chunks = _Chunks(layout)
        self.paper_ids = _PaperIds(layout)
        self.paper_row = _Rows(layout, "paper_row", layout.paper_offsets)
        self.chunk_row = _Rows(layout, "chunk_row", layout.chunk_offsets)
        self.chunks_of = _Rows(layout, "chunks_of", layout.chunk_offsets, ranges=True)
        rrf_k = self.settings.retrieval.rrf_k
        parts_list = list(self.parts.values())
        self.chunk_bm25 = _FusedBM25([_bm25_of(i, "chunk_bm25") for i in parts_list], self._chunk_offsets, rrf_k)
        self.paper_bm25 = _FusedBM25([_bm25_of(i, "paper_bm25") for i in parts_list], self._paper_offsets, rrf_k)
        self.graph = _FusedGraph(self.parts)

    def tokenize(self, text: str) -> list[str]:
        """Each corpus's query tokens, tokenised as its manifest says (see the module docstring)."""
        by_name: dict[str | None, list[str]] = {}
        for idx in self.parts.values():
            if idx.manifest.tokenizer not in by_name:
                by_name[idx.manifest.tokenizer] = idx.tokenize(text)
        if len(by_name) == 1:
            return next(iter(by_name.values()))
        return PartTokens([by_name[idx.manifest.tokenizer] for idx in self.parts.values()])

    @cached_property
    def paper_embeddings(self) -> np.ndarray:
        return np.vstack([idx.paper_embeddings for idx in self.parts.values()])

    @property
    def embedder(self) -> Any:
        return self.parts[self.names[0]].embedder

    def dense_chunks_by_vector(self, vec: np.ndarray, k: int) -> list[Passage]:
        rankings = [
            [namespaced(name, p.chunk_id) for p in idx.dense_chunks_by_vector(vec, k)]
            for name, idx in self.parts.items()
        ]
        fused = fuse_rankings(rankings, k, self.settings.retrieval.rrf_k)
        return [Passage.from_chunk(self.chunks[self.chunk_row[cid]], s, "dense") for cid, s in fused]

    def corpus_of(self, ns_id: str) -> str:
        return split_namespaced(ns_id)[0]

    def close(self) -> None:
        for idx in self.parts.values():
            idx.close()
