"""Retrieve and Relate end to end, without an LLM: what `litloop retrieve` and the LLM-free
benchmarks run, and what the agent's nodes call piece by piece.

LLM-free mode (DESIGN.md section 4, issue 3): the subqueries are the question itself, the seeds
are the top papers of ranking A, and there is no verifier.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from tools.base import Passage
from tools.fusion import papers_by_best_chunk
from tools.index import Index
from tools.relate import fuse_a_b, ranking_b
from tools.retrieve import SubqueryResult, ranking_a, retrieve_question
from tools.settings import ToolSettings


@dataclass
class RetrievalRun:
    question: str
    subqueries: list[str]
    pool: dict[str, Passage]
    a: list[str]
    seeds: list[str]
    b: list[str]
    b_why: dict[str, list[str]]
    fused: list[str]
    subquery_results: list[SubqueryResult]
    seconds: dict[str, float] = field(default_factory=dict)

    def evidence(self, paper_id: str, n: int = 3) -> list[Passage]:
        """The pooled chunks of a paper, best first: the chunks that put it in ranking A."""
        return sorted((p for p in self.pool.values() if p.paper_id == paper_id), key=lambda p: -p.score)[:n]

    def best_scores(self) -> dict[str, float]:
        return {pid: p.score for pid, p in papers_by_best_chunk(self.pool.values())[1].items()}


def run_retrieval(
    index: Index,
    question: str,
    settings: ToolSettings,
    *,
    subqueries: Sequence[str] | None = None,
    seeds: Sequence[str] | None = None,
    reranker=None,
    max_rerank: int | None = None,
    use_dense: bool = True,
    relate: bool = True,
) -> RetrievalRun:
    t0 = time.perf_counter()
    subs = list(subqueries) if subqueries else [question]
    pool, results = retrieve_question(index, subs, settings.retrieval, reranker, use_dense=use_dense,
                                      max_rerank=max_rerank)
    a = ranking_a(pool)
    t1 = time.perf_counter()
    # seeds: the top paper of A plus the given (verifier's) papers; LLM-free, the top of A
    if seeds:
        seed_list = list(dict.fromkeys(a[:1] + list(seeds)))
    else:
        seed_list = a[: settings.relate.seeds_without_llm]
    b, why = ranking_b(index, seed_list, settings.relate) if relate else ([], {})
    fused = fuse_a_b(a, b, settings.relate)
    t2 = time.perf_counter()
    return RetrievalRun(question, subs, pool, a, seed_list, b, why, fused, results,
                        {"retrieve": t1 - t0, "relate": t2 - t1, "total": t2 - t0})
