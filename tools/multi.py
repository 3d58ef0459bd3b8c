"""Several corpora as one index: `MultiIndex` offers the interface the pipeline and the agent's
nodes use from `tools.index.Index`, over several indexes whose ids it namespaces.

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
- Paper embeddings come from the one embedder the settings name (the manifests are checked
  against it), so cosine similarity across corpora is meaningful for Relate.

Memory: the namespaced paper and chunk records are copies (a few hundred bytes per chunk); the
heavy parts (BM25 matrices, Chroma, embeddings) stay in the corpora's own indexes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import cached_property
from typing import Any, TypeVar

import numpy as np

from tools.base import Chunk, Paper, Passage, namespaced, split_namespaced
from tools.index import Index, PaperTable

T = TypeVar("T")


def fuse_rankings(rankings: Sequence[Sequence[T]], k: int, rrf_k: int = 60) -> list[tuple[T, float]]:
    """Equal-weight RRF of per-corpus rankings of disjoint items: (item, 1/(rrf_k + rank)), best
    first, the first `k`. Equal rank ties go to the corpus named first."""
    scored = [(1.0 / (rrf_k + r), c, r, item)
              for c, ranking in enumerate(rankings) for r, item in enumerate(ranking, start=1)]
    scored.sort(key=lambda s: (-s[0], s[1], s[2]))
    return [(item, score) for score, _, _, item in scored[:k]]


class _FusedBM25:
    """A BM25 index over several corpora: per-corpus rankings fused by rank, scores concatenated."""

    def __init__(self, get: Sequence[Callable[[], Any]], offsets: Sequence[int], rrf_k: int):
        self._get, self._offsets, self._rrf_k = list(get), list(offsets), rrf_k

    def top_k(self, query_tokens: list[str], k: int) -> list[tuple[int, float]]:
        rankings = [[off + row for row, _ in get().top_k(query_tokens, k)]
                    for get, off in zip(self._get, self._offsets, strict=True)]
        return fuse_rankings(rankings, k, self._rrf_k)

    def scores(self, query_tokens: list[str]) -> np.ndarray:
        return np.concatenate([get().scores(query_tokens) for get in self._get])

    def __len__(self) -> int:
        return sum(len(get()) for get in self._get)


class _FusedGraph:
    """The corpora's citation graphs side by side: a paper's neighbours come from its own corpus."""

    def __init__(self, parts: Mapping[str, Index]):
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
            c, g, local = self._split(str(pid))
        except (ValueError, KeyError):
            return False
        return local in g

    @property
    def num_edges(self) -> int:
        return sum(p.graph.num_edges for p in self._parts.values())


class MultiIndex(PaperTable):
    """A read-only, namespaced view of several corpora's indexes (see the module docstring)."""

    def __init__(self, parts: Mapping[str, Index]):
        if len(parts) < 2:
            raise ValueError("a MultiIndex joins two or more corpora; use the Index itself for one")
        self.parts: dict[str, Index] = dict(parts)
        self.names = list(self.parts)
        first = self.parts[self.names[0]]
        self.settings = first.settings
        self.root = None
        self.manifest = {"corpora": {n: p.manifest for n, p in self.parts.items()}}
        self.papers: dict[str, Paper] = {}
        self.chunks: list[Chunk] = []
        self._paper_offsets: list[int] = []
        self._chunk_offsets: list[int] = []
        for name, idx in self.parts.items():
            self._paper_offsets.append(len(self.papers))
            self._chunk_offsets.append(len(self.chunks))
            for p in idx.papers.values():
                ns = replace(p, paper_id=namespaced(name, p.paper_id),
                             references=tuple(namespaced(name, r) for r in p.references))
                self.papers[ns.paper_id] = ns
            self.chunks.extend(replace(c, chunk_id=namespaced(name, c.chunk_id), paper_id=namespaced(name, c.paper_id))
                               for c in idx.chunks)
        self._index_rows()
        rrf_k = self.settings.retrieval.rrf_k
        parts_list = list(self.parts.values())
        self.chunk_bm25 = _FusedBM25([lambda i=i: i.chunk_bm25 for i in parts_list], self._chunk_offsets, rrf_k)
        self.paper_bm25 = _FusedBM25([lambda i=i: i.paper_bm25 for i in parts_list], self._paper_offsets, rrf_k)
        self.graph = _FusedGraph(self.parts)

    @cached_property
    def paper_embeddings(self) -> np.ndarray:
        return np.vstack([idx.paper_embeddings for idx in self.parts.values()])

    @property
    def embedder(self):
        return self.parts[self.names[0]].embedder

    def dense_chunks_by_vector(self, vec: np.ndarray, k: int) -> list[Passage]:
        rankings = [[namespaced(name, p.chunk_id) for p in idx.dense_chunks_by_vector(vec, k)]
                    for name, idx in self.parts.items()]
        fused = fuse_rankings(rankings, k, self.settings.retrieval.rrf_k)
        return [Passage.from_chunk(self.chunks[self.chunk_row[cid]], s, "dense") for cid, s in fused]

    def corpus_of(self, ns_id: str) -> str:
        return split_namespaced(ns_id)[0]

    def close(self) -> None:
        for idx in self.parts.values():
            idx.close()
