"""The LLM-free retrieval variants that `litloop eval --preset NAME` and the retrieval benchmarks
run: each gives a ranked paper list for a question, from one index alone up to Retrieve + Relate.

  bm25, dense, paper-bm25   one index alone (papers by best chunk)
  hybrid                    the three fused by RRF k 60 (docs/design.md section 3 step 2)
  hybrid+prf                plus one pseudo-relevance-feedback pass (step 3)
  rerank                    ranking A with the configured reranker (LITLOOP_RERANK__BACKEND)
  A                         ranking A: the pool of 20 reranked chunks (steps 4-5), no reranker
  B                         ranking B alone (seeds = top of A)
  A+B:paper                 the paper's fusion: three neighbour sources, 3 seeds
  A+B                       litloop's default: all five sources (co-citation and direct links
                            added), 5 seeds (LITLOOP_RELATE__SOURCES, __SEEDS_WITHOUT_LLM)
  A+B:all5                  the same, spelled out (kept so older result tables still read)
  prf+B:all5                like A+B:all5 but fusing B with the whole hybrid+prf ranking
                            instead of the 20-chunk pool (LLM-free mode has one subquery only)
"""

from __future__ import annotations

from collections.abc import Callable

from agent.settings import Settings
from tools.index import Index
from tools.retrieval.fusion import papers_by_best_chunk
from tools.retrieval.relate import fuse_a_b, ranking_b
from tools.retrieval.retrieve import fused_with_prf, query_ranking

Variant = Callable[[Index, str, Settings, object], list[str]]


def _single(kind: str) -> Variant:
    def run(idx: Index, q: str, s: Settings, _r) -> list[str]:
        k = s.retrieval.per_index_k
        if kind == "paper-bm25":
            return [pid for pid, _ in idx.bm25_papers(q, k)]
        hits = idx.bm25_chunks(q, k) if kind == "bm25" else idx.dense_chunks(q, k)
        return papers_by_best_chunk(p.hit() for p in hits)

    return run


def _hybrid(idx, q, s, _r):
    return query_ranking(idx, q, s.retrieval).papers


def _hybrid_prf(idx, q, s, _r):
    return fused_with_prf(idx, q, s.retrieval)[0].papers


def _pipeline(relate: bool, stage: str, *, sources=None, seeds=None, a_full=False, rerank=False) -> Variant:
    from tools.retrieval.pipeline import run_retrieval

    def run(idx, q, s: Settings, reranker) -> list[str]:
        if sources or seeds:
            s = s.model_copy(
                update={
                    "relate": s.relate.model_copy(
                        update={k: v for k, v in (("sources", sources), ("seeds_without_llm", seeds)) if v}
                    )
                }
            )
        r = run_retrieval(idx, q, s, relate=relate, reranker=reranker if rerank else None)
        if stage == "a":
            return r.a
        if stage == "b":
            return r.b
        if a_full:
            full = fused_with_prf(idx, q, s.retrieval)[0].papers
            b, _ = ranking_b(idx, full[: s.relate.seeds_without_llm], s.relate)
            return fuse_a_b(full, b, s.relate)
        return r.fused

    return run


ALL5 = ["embedding", "coupling", "bm25", "cocitation", "direct"]
PAPER3 = ["embedding", "coupling", "bm25"]
VARIANTS: dict[str, Variant] = {
    "bm25": _single("bm25"),
    "dense": _single("dense"),
    "paper-bm25": _single("paper-bm25"),
    "hybrid": _hybrid,
    "hybrid+prf": _hybrid_prf,
    "A": _pipeline(False, "a"),
    "rerank": _pipeline(False, "a", rerank=True),
    "B": _pipeline(True, "b"),
    "A+B:paper": _pipeline(True, "fused", sources=PAPER3, seeds=3),
    "A+B": _pipeline(True, "fused"),
    "A+B:all5": _pipeline(True, "fused", sources=ALL5, seeds=5),
    "prf+B:all5": _pipeline(True, "fused", sources=ALL5, seeds=5, a_full=True),
}
