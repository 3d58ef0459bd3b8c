"""Paper search over one index with a chosen retriever: what `litloop search` runs.

Every retriever ends in the same shape: papers, best first, each with the chunk that put it
there. `hybrid` is DESIGN.md section 3 step 2: the chunk BM25, paper BM25 and dense rankings
each turned into a paper ranking (a paper ranks by its best chunk), fused by RRF with k = 60.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from tools.base import Passage
from tools.fusion import papers_by_best_chunk, rrf_scores, order_by_score
from tools.index import Index
from tools.text import tokenize

Retriever = Literal["bm25", "paper-bm25", "dense", "hybrid"]
RETRIEVERS: tuple[str, ...] = ("bm25", "paper-bm25", "dense", "hybrid")


@dataclass(frozen=True)
class PaperHit:
    paper_id: str
    title: str
    score: float
    chunk: Passage  # the evidence chunk that put the paper here

    def to_dict(self) -> dict[str, Any]:
        c = self.chunk
        return {
            "paper_id": self.paper_id,
            "title": self.title,
            "score": self.score,
            "chunk": {"chunk_id": c.chunk_id, "kind": c.kind, "text": c.text, "locator": c.locator.to_dict()},
        }


@dataclass(frozen=True)
class IndexRankings:
    """The three per-index paper rankings of one query, with each paper's best chunk per index."""

    bm25: list[str]
    paper_bm25: list[str]
    dense: list[str]
    evidence: dict[str, Passage]  # paper id -> its best chunk over the chunk-level indexes


def index_rankings(index: Index, query: str, per_index_k: int, use_dense: bool = True) -> IndexRankings:
    bm25_order, bm25_best = papers_by_best_chunk(index.bm25_chunks(query, per_index_k))
    if use_dense:
        dense_order, dense_best = papers_by_best_chunk(index.dense_chunks(query, per_index_k))
    else:
        dense_order, dense_best = [], {}
    paper_order = [pid for pid, _ in index.bm25_papers(query, per_index_k)]
    evidence: dict[str, Passage] = {}
    # Prefer the chunk that ranked its paper higher; a paper found only by paper BM25 gets its
    # best chunk by chunk BM25 within the paper.
    for pid in set(bm25_order) | set(dense_order):
        candidates = []
        if pid in bm25_best:
            candidates.append((bm25_order.index(pid), bm25_best[pid]))
        if pid in dense_best:
            candidates.append((dense_order.index(pid), dense_best[pid]))
        evidence[pid] = min(candidates, key=lambda rc: rc[0])[1]
    for pid in paper_order:
        if pid not in evidence:
            evidence[pid] = best_chunk_in_paper(index, pid, query)
    return IndexRankings(bm25_order, paper_order, dense_order, evidence)


def best_chunk_in_paper(index: Index, paper_id: str, query: str) -> Passage:
    """The paper's chunk with the highest chunk-BM25 score for the query (its title chunk if none)."""
    rows = index.chunks_of[paper_id]
    scores = index.chunk_bm25.scores(tokenize(query))[rows]
    best = int(scores.argmax()) if len(rows) and scores.max() > 0 else 0
    return Passage.from_chunk(index.chunks[rows[best]], float(scores[best]) if len(rows) else 0.0, "paper-bm25")


def search(index: Index, query: str, retriever: Retriever = "hybrid", k: int = 10) -> list[PaperHit]:
    if retriever not in RETRIEVERS:
        raise ValueError(f"unknown retriever {retriever!r}; choose one of {', '.join(RETRIEVERS)}")
    if not query.strip():
        raise ValueError("the query is empty; give some words to search for")
    depth = max(k, index.settings.retrieval.per_index_k)
    if retriever == "bm25":
        order, best = papers_by_best_chunk(index.bm25_chunks(query, depth))
        return [_hit(index, pid, best[pid].score, best[pid]) for pid in order[:k]]
    if retriever == "dense":
        order, best = papers_by_best_chunk(index.dense_chunks(query, depth))
        return [_hit(index, pid, best[pid].score, best[pid]) for pid in order[:k]]
    if retriever == "paper-bm25":
        return [
            _hit(index, pid, score, best_chunk_in_paper(index, pid, query))
            for pid, score in index.bm25_papers(query, k)
        ]
    r = index_rankings(index, query, depth)
    scores = rrf_scores([r.bm25, r.paper_bm25, r.dense], k=index.settings.retrieval.rrf_k)
    return [_hit(index, pid, scores[pid], r.evidence[pid]) for pid in order_by_score(scores)[:k]]


def _hit(index: Index, pid: str, score: float, chunk: Passage) -> PaperHit:
    return PaperHit(pid, index.papers[pid].title, float(score), chunk)
