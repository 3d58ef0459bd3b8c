"""Retrieve and Relate end to end, without an LLM: what `litloop retrieve` and the LLM-free
benchmarks run. Each step is the function the agent's nodes call (tools/retrieval/retrieve.py,
tools/retrieval/relate.py), so a benchmark measures exactly what the agent runs.

LLM-free mode (docs/design.md section 4): the subqueries are the question itself, the seeds are the
top papers of ranking A (`relate.seeds_without_llm`), and there is no verifier.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from tools.base import Hit
from tools.retrieval.fusion import by_paper, paper_hits, rrf_scores
from tools.retrieval.relate import fuse_a_b, ranking_b, select_seeds
from tools.retrieval.retrieve import SubqueryResult, ranking_a, retrieve_question
from tools.settings import ToolSettings

Stage = Literal["a", "b", "fused"]
STAGES: tuple[Stage, ...] = ("a", "b", "fused")


@dataclass
class RetrievalRun:
    question: str
    subqueries: list[str]
    pool: dict[str, Hit]
    a: list[str]
    seeds: list[str]
    b: list[str]
    b_why: dict[str, list[str]]
    fused: list[str]
    subquery_results: list[SubqueryResult]
    seconds: dict[str, float] = field(default_factory=dict)

    def evidence(self, paper_id: str, n: int = 3) -> list[Hit]:
        """The pooled chunks of a paper, best first: the chunks that put it in ranking A."""
        return paper_hits(self.pool, paper_id)[:n]

    def best_scores(self) -> dict[str, float]:
        return {pid: hits[0]["score"] for pid, hits in by_paper(self.pool.values()).items()}

    def ranking(self, stage: Stage) -> list[str]:
        """The paper ids of one stage, best first: a (question-anchored), b (paper-anchored) or
        fused (A+B, what the reader gets)."""
        return {"a": self.a, "b": self.b, "fused": self.fused}[stage]

    def stage_scores(self, stage: Stage, settings: ToolSettings) -> dict[str, float]:
        """The score that ranked each paper in `stage`: its best pooled chunk's for A, the RRF
        score over ranking B's list for B, and the A+B fusion's RRF score for fused (the same
        `rrf_k` and `ab_rrf_k` that built the rankings)."""
        if stage == "a":
            return self.best_scores()
        if stage == "b":
            return rrf_scores([self.b], k=settings.relate.rrf_k)
        return rrf_scores([self.a, self.b] if self.b else [self.a], k=settings.relate.ab_rrf_k)


def run_retrieval(
    index: Any,
    question: str,
    settings: ToolSettings,
    *,
    subqueries: Sequence[str] | None = None,
    seeds: Sequence[str] | None = None,
    reranker: Any = None,
    max_rerank: int | None = None,
    use_dense: bool = True,
    relate: bool = True,
    size: int | None = None,
) -> RetrievalRun:
    """Ranking A for the subqueries (default: the question), ranking B from the seeds (default:
    the top of A), their fusion at length `size` (default `relate.reader_top`)."""
    t0 = time.perf_counter()
    subs = list(subqueries) if subqueries else [question]
    pool, results = retrieve_question(index, subs, settings, reranker, budget=max_rerank, use_dense=use_dense)
    a = ranking_a(pool)
    t1 = time.perf_counter()
    seed_list = select_seeds(a, list(seeds) if seeds else None, settings.relate)
    b, why = ranking_b(index, seed_list, settings.relate) if relate else ([], {})
    fused = fuse_a_b(a, b, settings.relate, size)
    t2 = time.perf_counter()
    return RetrievalRun(
        question,
        subs,
        pool,
        a,
        seed_list,
        b,
        why,
        fused,
        results,
        {"retrieve": t1 - t0, "relate": t2 - t1, "total": t2 - t0},
    )
