"""Question-anchored retrieval, ranking A: one function per step of the method, called by the
agent's nodes, by `litloop retrieve` (tools/retrieval/pipeline.py) and by every benchmark.
SEE: docs/design.md section 3, steps 2 to 5.

Per subquery (`search_subquery`): the three indexes give paper rankings (a paper ranks by its
best chunk), fused by RRF (k 60); one pseudo-relevance-feedback pass appends the start of the top
paper's title-and-abstract chunk and fuses the two rankings with equal weights; the chunks behind
the fused paper ranking, up to `rerank_depth`, are the subquery's retrieval ranking.
`rerank_pin_pool` reranks that ranking (the first `budget` chunks scored), orders it by the
0.6/0.4 rerank score with the top 20 pinned, and returns the top `pool_per_subquery` chunks for
the question's pool, which keeps each chunk's maximum score (`tools.retrieval.fusion.merge_pool`).
`ranking_a` orders the pool's papers by their best chunk.

Rankings are `Hit`s (chunk id, paper id, score, source): the text of a chunk is read from the
index with `chunk_of` where a reranker or a prompt needs it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tools.base import Chunk, Hit, Passage
from tools.retrieval.fusion import (
    merge_pool,
    papers_by_best_chunk,
    rerank_with_pinning,
    reranked,
    round_robin,
    rrf,
)
from tools.settings import RetrievalSettings, ToolSettings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class QueryRanking:
    """One query's fused paper ranking and, per paper, its candidate chunks (best first)."""

    papers: list[str]
    chunks: dict[str, list[int]]  # paper id -> chunk rows, by their best rank in any index
    per_index: dict[str, list[str]]  # "bm25" | "paper-bm25" | "dense" -> paper ranking


@dataclass(frozen=True)
class SubquerySearch:
    """Steps 2-3 for one subquery: the fused (PRF) paper ranking and the chunk ranking behind it."""

    subquery: str
    prf_query: str | None
    papers: list[str]
    hits: list[Hit]  # the retrieval ranking handed to the reranker, best first
    seconds: float = 0.0


@dataclass(frozen=True)
class SubqueryResult:
    """Steps 2-4 for one subquery: its search and the chunks it adds to the pool."""

    search: SubquerySearch
    pooled: list[Hit]
    seconds: dict[str, float] = field(default_factory=dict)


def chunk_of(index: Any, chunk_id: str) -> Chunk:
    """The indexed chunk behind a hit (its text, kind and locator)."""
    chunk: Chunk = index.chunks[index.chunk_row[chunk_id]]
    return chunk


def passage_of(index: Any, hit: Hit) -> Passage:
    """A hit with its chunk's text, kind and locator."""
    return Passage.from_chunk(chunk_of(index, hit["chunk_id"]), hit["score"], hit["source"])


def query_ranking(index: Any, query: str, settings: RetrievalSettings, use_dense: bool = True) -> QueryRanking:
    """The three indexes for one query, fused at paper level (docs/design.md section 3 step 2)."""
    k = settings.per_index_k
    tokens = index.tokenize(query)  # the index's own tokenizer (its manifest's)
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


def _dedupe(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def prf_query(index: Any, query: str, top_paper: str, chars: int) -> str:
    """The subquery plus the first `chars` characters of the top paper's title-and-abstract chunk."""
    return f"{query} {index.title_abstract(top_paper).text[:chars]}"


def fused_with_prf(
    index: Any, query: str, settings: RetrievalSettings, use_dense: bool = True
) -> tuple[QueryRanking, str | None]:
    """docs/design.md section 3 step 3: one PRF pass, original and expanded rankings fused equally."""
    first = query_ranking(index, query, settings, use_dense)
    if not settings.prf or not first.papers:
        return first, None
    expanded_q = prf_query(index, query, first.papers[0], settings.prf_chars)
    second = query_ranking(index, expanded_q, settings, use_dense)
    papers = rrf([first.papers, second.papers], k=settings.rrf_k)
    chunks = {pid: round_robin([first.chunks.get(pid, []), second.chunks.get(pid, [])]) for pid in papers}
    return QueryRanking(papers, chunks, first.per_index), expanded_q


def retrieval_hits(index: Any, ranking: QueryRanking, depth: int) -> list[Hit]:
    """The chunk ranking behind a paper ranking: papers in order, each with its candidate chunks,
    the first `depth` chunks. A paper's first chunk comes before any paper's second chunk so the
    ranking is not crowded by one long paper. The score is rank-based (higher is better)."""
    rows = round_robin([ranking.chunks[pid] for pid in ranking.papers])[:depth]
    n = len(rows)
    return [
        Hit(
            chunk_id=index.chunks[row].chunk_id,
            paper_id=index.chunks[row].paper_id,
            score=(n - i) / n,
            source="retrieval",
        )
        for i, row in enumerate(rows)
    ]


def search_subquery(index: Any, subquery: str, settings: RetrievalSettings, use_dense: bool = True) -> SubquerySearch:
    """Steps 2-3 for one subquery: hybrid retrieval with one PRF pass, its chunk ranking."""
    t = time.perf_counter()
    ranking, expanded = fused_with_prf(index, subquery, settings, use_dense)
    hits = retrieval_hits(index, ranking, settings.rerank_depth)
    return SubquerySearch(subquery, expanded, ranking.papers, hits, time.perf_counter() - t)


def rerank_budget(settings: ToolSettings, max_rerank: int | None = None) -> int:
    """Chunks per subquery the reranker scores: this run's cap, else `LITLOOP_RERANK__MAX_CHUNKS`."""
    return max_rerank or settings.rerank.max_chunks


def rerank_pin_pool(
    index: Any, subquery: str, hits: Sequence[Hit], settings: RetrievalSettings, reranker: Any, budget: int
) -> list[Hit]:
    """Step 4 for one subquery: the reranker orders the first `budget` hits (the rest keep their
    retrieval order), the 0.6/0.4 rerank score with the top `pin_top` pinned orders them all, and
    the top `pool_per_subquery` go to the pool with their rerank score, sourced to the subquery."""
    ids = [h["chunk_id"] for h in hits]
    order = reranked(reranker, subquery, ids, lambda c: chunk_of(index, c).text, budget)
    ranked = rerank_with_pinning(
        ids,
        order,
        k=settings.rerank_k,
        w_ret=settings.rerank_weight_retrieval,
        w_rr=settings.rerank_weight_reranker,
        pin_top=settings.pin_top,
    )
    by_id = {h["chunk_id"]: h for h in hits}
    return [
        Hit(chunk_id=c, paper_id=by_id[c]["paper_id"], score=s, source=subquery)
        for c, s in ranked[: settings.pool_per_subquery]
    ]


def ranking_a(pool: Mapping[str, Hit]) -> list[str]:
    """Papers of the pool ordered by their best chunk score. SEE: docs/design.md section 3."""
    return papers_by_best_chunk(pool.values())


def retrieve_subquery(
    index: Any,
    subquery: str,
    settings: ToolSettings,
    reranker: Any = None,
    budget: int | None = None,
    use_dense: bool = True,
) -> SubqueryResult:
    """Steps 2 to 4 for one subquery; `budget` as `rerank_budget`."""
    found = search_subquery(index, subquery, settings.retrieval, use_dense)
    t = time.perf_counter()
    pooled = rerank_pin_pool(index, subquery, found.hits, settings.retrieval, reranker, rerank_budget(settings, budget))
    return SubqueryResult(found, pooled, {"retrieve": found.seconds, "rerank": time.perf_counter() - t})


def retrieve_question(
    index: Any,
    subqueries: Sequence[str],
    settings: ToolSettings,
    reranker: Any = None,
    pool: Mapping[str, Hit] | None = None,
    budget: int | None = None,
    use_dense: bool = True,
) -> tuple[dict[str, Hit], list[SubqueryResult]]:
    """Every subquery through steps 2-4, its chunks merged into the pool (max score per chunk)."""
    merged = dict(pool or {})
    results = []
    for q in subqueries:
        res = retrieve_subquery(index, q, settings, reranker, budget, use_dense)
        merged = merge_pool(merged, res.pooled)
        results.append(res)
    return merged, results
