"""Retrieve (docs/design.md section 3): each subquery searched over the three indexes, and the
hits reranked into the pool."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from agent.runtime.resources import index_for, reranker_for
from agent.state import State
from agent.tracing import trace_step
from tools.base import Hit
from tools.retrieval.fusion import merge_pool
from tools.retrieval.retrieve import rerank_budget, rerank_pin_pool, search_subquery

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

    from agent.context import Context

SEARCH_PAPERS_KEPT = 50  # papers of each subquery's fused ranking kept in the state (progress, traces)


def search(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Each new subquery over the three indexes, fused by RRF, with one PRF pass (steps 2-3)."""
    idx = index_for(runtime.context)
    t = time.perf_counter()
    retrieved = []
    for q in state.get("new_subqueries", []):
        with trace_step("retrieve", run_type="retriever", inputs=q, metadata={"subquery": q}) as step:
            found = search_subquery(idx, q, idx.settings.retrieval)
            step.outputs = found.hits[:20]
        retrieved.append(
            {
                "subquery": q,
                "prf_query": found.prf_query,
                "papers": found.papers[:SEARCH_PAPERS_KEPT],
                "hits": found.hits,
            }
        )
    return {"retrieved": retrieved, "usage": {"seconds_search": time.perf_counter() - t}}


def rerank(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Each subquery's hits reranked with the top 20 pinned; its top 20 into the pool (step 4-5)."""
    ctx = runtime.context
    idx = index_for(ctx)
    reranker = reranker_for(ctx)
    budget = rerank_budget(idx.settings, ctx.max_rerank)
    t = time.perf_counter()
    pool: dict[str, Hit] = {}
    for item in state.get("retrieved", []):
        pool = merge_pool(
            pool, rerank_pin_pool(idx, item["subquery"], item["hits"], idx.settings.retrieval, reranker, budget)
        )
    return {"pool": pool, "usage": {"seconds_rerank": time.perf_counter() - t}}
