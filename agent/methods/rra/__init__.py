"""Retrieve-Relate-Read, the paper's method, as the steps of the graph's nodes.

SEE: docs/design.md sections 3 (Retrieve), 4 (Relate) and 5 (Read).

Each step is a thin adapter over the retrieval core in tools/ (the functions `litloop retrieve`
and the benchmarks call): state in, partial update out. The state carries hits (chunk ids and
scores); chunk texts are read from the index where a prompt or the reranker needs them.
The steps live by what they do: `retrieve` (search, rerank), `verify`, `relate`
(expand_neighbors), `read` (each paper on its own) and `joint` (all candidates at once); which
papers qualify for a list answer is `agent.answer.qualify`.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from agent.answer.copy import chooses_fact
from agent.methods.base import register
from agent.methods.rra.joint import read_jointly
from agent.methods.rra.read import question_chunk_scores, read_one
from agent.methods.rra.relate import expand_neighbors
from agent.methods.rra.retrieve import rerank, search
from agent.methods.rra.verify import verify
from agent.reading.shape import papers_to_read, reads_jointly
from agent.runtime.resources import index_for
from agent.state import RunError, State

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

    from agent.context import Context


__all__ = ["expand_neighbors", "read_paper", "rerank", "search", "verify"]


def read_paper(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Each candidate paper read concurrently with a bound (docs/design.md section 5), or, with
    a joint reading (`agent.reading.shape.reads_jointly`), all of them at once (`read_jointly`)."""
    from langchain_core.runnables.config import ContextThreadPoolExecutor

    ctx = runtime.context
    if reads_jointly(ctx, state["question"]) or chooses_fact(ctx, state):
        return read_jointly(state, runtime)
    papers = state.get("candidates", [])[: papers_to_read(ctx, state["question"])]
    t = time.perf_counter()
    all_scores = question_chunk_scores(state, index_for(ctx)) if papers else None
    with ContextThreadPoolExecutor(max_workers=max(1, ctx.read_concurrency)) as pool:
        results = list(pool.map(lambda pid: read_one(state, runtime, pid, all_scores), papers))
    usage: dict[str, float] = {"seconds_read_paper": time.perf_counter() - t, "papers_read": len(papers)}
    errors: list[RunError] = []
    for _, u, e in results:
        for k, v in u.items():
            if not k.startswith("seconds_"):
                usage[k] = usage.get(k, 0) + v
        errors.extend(e)
    return {"readings": [r for r, _, _ in results], "usage": usage, "errors": errors}


register("rra", __name__)
