"""Question-anchored retrieval: ranking A. SEE: DESIGN.md section 3, steps 2 to 5.

Per subquery: the three indexes give paper rankings (a paper ranks by its best chunk), fused by
RRF (k 60); one pseudo-relevance-feedback pass appends the start of the top paper's
title-and-abstract chunk and fuses the two rankings with equal weights; the chunks behind the
fused paper ranking (up to `rerank_depth`) are reranked with the 0.6/0.4 score and top-20
pinning; the top `pool_per_subquery` chunks enter the question's pool, which keeps each chunk's
maximum score. Ranking A orders the pool's papers by their best chunk.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from tools.base import Passage
from tools.fusion import merge_pool, papers_by_best_chunk, rerank_with_pinning, rrf
from tools.index import Index
from tools.settings import RetrievalSettings
from tools.text import tokenize

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class QueryRanking:
    """One query's fused paper ranking and, per paper, its candidate chunks (best first)."""

    papers: list[str]
    chunks: dict[str, list[int]]  # paper id -> chunk rows, by their best rank in any index
    per_index: dict[str, list[str]]  # "bm25" | "paper-bm25" | "dense" -> paper ranking


@dataclass
class SubqueryResult:
    subquery: str
    prf_query: str | None
    papers: list[str]  # the fused (PRF) paper ranking
    retrieval: list[Passage]  # chunk ranking handed to the reranker, best first
    pooled: list[Passage]  # the chunks this subquery adds to the pool, with rerank scores
    seconds: dict[str, float] = field(default_factory=dict)


def query_ranking(index: Index, query: str, settings: RetrievalSettings, use_dense: bool = True) -> QueryRanking:
    """The three indexes for one query, fused at paper level (DESIGN.md section 3 step 2)."""
    k = settings.per_index_k
    tokens = tokenize(query)
    chunk_rank: dict[int, int] = {}  # chunk row -> best rank over the chunk-level indexes
    bm25_rows = [row for row, _ in index.chunk_bm25.top_k(tokens, k)]
    for r, row in enumerate(bm25_rows, start=1):
        chunk_rank[row] = r
    bm25_papers = _dedupe(index.chunks[row].paper_id for row in bm25_rows)
    dense_papers: list[str] = []
    if use_dense:
        dense = index.dense_chunks(query, k)
        dense_papers = _dedupe(p.paper_id for p in dense)
        for r, p in enumerate(dense, start=1):
            row = index.chunk_row[p.chunk_id]
            chunk_rank[row] = min(r, chunk_rank.get(row, r))
    paper_hits = index.paper_bm25.top_k(tokens, k)
    paper_papers = [index.paper_ids[i] for i, _ in paper_hits]
    per_index = {"bm25": bm25_papers, "paper-bm25": paper_papers, "dense": dense_papers}
    fused = rrf([lst for lst in per_index.values() if lst], k=settings.rrf_k)
    chunks: dict[str, list[int]] = {}
    for row, _ in sorted(chunk_rank.items(), key=lambda kv: (kv[1], kv[0])):
        chunks.setdefault(index.chunks[row].paper_id, []).append(row)
    chunk_scores = None
    for pid in fused:
        if pid not in chunks:  # found by paper BM25 alone: its best chunk by chunk BM25
            if chunk_scores is None:
                chunk_scores = index.chunk_bm25.scores(tokens)
            rows = index.chunks_of[pid]
            chunks[pid] = [rows[int(np.argmax(chunk_scores[rows]))]]
    return QueryRanking(fused, chunks, per_index)


def _dedupe(items) -> list[str]:
    return list(dict.fromkeys(items))


def prf_query(index: Index, query: str, top_paper: str, chars: int) -> str:
    """The subquery plus the first `chars` characters of the top paper's title-and-abstract chunk."""
    return f"{query} {index.title_abstract(top_paper).text[:chars]}"


def fused_with_prf(index: Index, query: str, settings: RetrievalSettings, use_dense: bool = True) -> tuple[QueryRanking, str | None]:
    """DESIGN.md section 3 step 3: one PRF pass, original and expanded rankings fused equally."""
    first = query_ranking(index, query, settings, use_dense)
    if not settings.prf or not first.papers:
        return first, None
    expanded_q = prf_query(index, query, first.papers[0], settings.prf_chars)
    second = query_ranking(index, expanded_q, settings, use_dense)
    papers = rrf([first.papers, second.papers], k=settings.rrf_k)
    chunks: dict[str, list[int]] = {}
    for pid in papers:
        a, b = first.chunks.get(pid, []), second.chunks.get(pid, [])
        chunks[pid] = _interleave(a, b)
    return QueryRanking(papers, chunks, first.per_index), expanded_q


def _interleave(a: Sequence[int], b: Sequence[int]) -> list[int]:
    out: list[int] = []
    for i in range(max(len(a), len(b))):
        for lst in (a, b):
            if i < len(lst) and lst[i] not in out:
                out.append(lst[i])
    return out


def retrieval_chunks(index: Index, ranking: QueryRanking, depth: int) -> list[Passage]:
    """The chunk ranking behind a paper ranking: papers in order, each with its candidate chunks,
    the first `depth` chunks. A paper's first chunk comes before any paper's second chunk so the
    ranking is not crowded by one long paper."""
    lists = [ranking.chunks[pid] for pid in ranking.papers]
    rows: list[int] = []
    for i in range(max((len(x) for x in lists), default=0)):
        for lst in lists:
            if i < len(lst):
                rows.append(lst[i])
                if len(rows) == depth:
                    break
        if len(rows) == depth:
            break
    n = len(rows)
    # retrieval score = a rank-based stand-in (higher is better) so Passage.score is meaningful
    return [Passage.from_chunk(index.chunks[row], (n - i) / n, "retrieval") for i, row in enumerate(rows)]


def retrieve_subquery(index: Index, subquery: str, settings: RetrievalSettings, reranker=None,
                      use_dense: bool = True, max_rerank: int | None = None) -> SubqueryResult:
    """Steps 2 to 4 for one subquery; returns the chunks it adds to the pool."""
    t0 = time.perf_counter()
    ranking, expanded = fused_with_prf(index, subquery, settings, use_dense)
    t1 = time.perf_counter()
    retrieval = retrieval_chunks(index, ranking, settings.rerank_depth)
    ids = [p.chunk_id for p in retrieval]
    reranked_ids = ids
    if reranker is not None and getattr(reranker, "name", "none") != "none" and retrieval:
        n = min(len(retrieval), max_rerank or len(retrieval))
        scores = reranker.score(subquery, [p.text for p in retrieval[:n]])
        head = [ids[i] for i in sorted(range(n), key=lambda i: (-scores[i], i))]
        reranked_ids = head + ids[n:]  # chunks beyond the reranker's budget keep retrieval order
    t2 = time.perf_counter()
    order = rerank_with_pinning(
        ids, reranked_ids, k=settings.rerank_k, w_ret=settings.rerank_weight_retrieval,
        w_rr=settings.rerank_weight_reranker, pin_top=settings.pin_top,
    )
    by_id = {p.chunk_id: p for p in retrieval}
    pooled = [
        Passage(by_id[c].paper_id, c, by_id[c].text, s, subquery, by_id[c].kind, by_id[c].locator)
        for c, s in order[: settings.pool_per_subquery]
    ]
    return SubqueryResult(subquery, expanded, ranking.papers, retrieval, pooled,
                          {"retrieve": t1 - t0, "rerank": t2 - t1})


def ranking_a(pool: dict[str, Passage]) -> list[str]:
    """Papers of the pool ordered by their best chunk score. SEE: DESIGN.md section 3."""
    return papers_by_best_chunk(pool.values())[0]


def retrieve_question(index: Index, subqueries: Sequence[str], settings: RetrievalSettings, reranker=None,
                      pool: dict[str, Passage] | None = None, use_dense: bool = True,
                      max_rerank: int | None = None) -> tuple[dict[str, Passage], list[SubqueryResult]]:
    """Run every subquery and merge its chunks into the pool (max score per chunk)."""
    pool = dict(pool or {})
    results = []
    for q in subqueries:
        res = retrieve_subquery(index, q, settings, reranker, use_dense, max_rerank)
        pool = merge_pool(pool, res.pooled)
        results.append(res)
    return pool, results

