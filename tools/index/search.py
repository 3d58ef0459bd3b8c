"""Paper search over one index with a chosen retriever: what `litloop search` runs.

Every retriever ends in the same shape: papers, best first, each with the chunk that put it
there. `hybrid` is docs/design.md section 3 step 2: the chunk BM25, paper BM25 and dense rankings
each turned into a paper ranking (a paper ranks by its best chunk), fused by RRF with k = 60.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from tools.base import Passage
from tools.index import Index
from tools.retrieval.fusion import by_paper, rrf_scores

Retriever = Literal["bm25", "paper-bm25", "dense", "hybrid"]
RETRIEVERS: tuple[Retriever, ...] = ("bm25", "paper-bm25", "dense", "hybrid")


@dataclass(frozen=True)
class PaperHit:
    paper_id: str
    title: str
    score: float
    chunk: Passage  # the evidence chunk that put the paper here


def best_chunk_in_paper(index: Index, paper_id: str, chunk_scores: np.ndarray) -> Passage:
    """The paper's chunk with the highest chunk-BM25 score (its title chunk if none); the scores
    are the query's over the whole chunk index, computed once per query by the caller."""
    rows = index.chunks_of[paper_id]
    scores = chunk_scores[rows]
    best = int(scores.argmax()) if len(rows) and scores.max() > 0 else 0
    return Passage.from_chunk(index.chunks[rows[best]], float(scores[best]) if len(rows) else 0.0, "paper-bm25")


def search(index: Index, query: str, retriever: Retriever = "hybrid", k: int = 10) -> list[PaperHit]:
    if retriever not in RETRIEVERS:
        raise ValueError(f"unknown retriever {retriever!r}; choose one of {', '.join(RETRIEVERS)}")
    if not query.strip():
        raise ValueError("the query is empty; give some words to search for")
    depth = max(k, index.settings.retrieval.per_index_k)
    if retriever in ("bm25", "dense"):
        found = index.bm25_chunks(query, depth) if retriever == "bm25" else index.dense_chunks(query, depth)
        passages = {p.chunk_id: p for p in found}
        best = {pid: passages[hits[0]["chunk_id"]] for pid, hits in by_paper(p.hit() for p in found).items()}
        return [_hit(index, pid, p.score, p) for pid, p in list(best.items())[:k]]
    if retriever == "paper-bm25":
        chunk_scores = index.chunk_bm25.scores(index.tokenize(query))
        return [
            _hit(index, pid, score, best_chunk_in_paper(index, pid, chunk_scores))
            for pid, score in index.bm25_papers(query, k)
        ]
    # the paper ranking of docs/design.md section 3 step 2; each paper's evidence is its best-ranked chunk
    from tools.retrieval.retrieve import query_ranking

    cfg = index.settings.retrieval.model_copy(update={"per_index_k": depth})
    r = query_ranking(index, query, cfg)
    scores = rrf_scores([lst for lst in r.per_index.values() if lst], k=cfg.rrf_k)
    return [
        _hit(index, pid, scores[pid], Passage.from_chunk(index.chunks[r.chunks[pid][0]], scores[pid], "hybrid"))
        for pid in r.papers[:k]
    ]


def _hit(index: Index, pid: str, score: float, chunk: Passage) -> PaperHit:
    return PaperHit(pid, index.papers[pid].title, float(score), chunk)
