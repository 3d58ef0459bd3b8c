"""search: each new subquery over the three indexes, fused by RRF, with one PRF pass.
SEE: DESIGN.md section 3 steps 2-3."""

from __future__ import annotations

import time

from agent.nodes.kadr import kadr_search
from agent.resources import index_for
from agent.state import State
from agent.tracing import trace_step
from tools.retrieve import fused_with_prf, retrieval_chunks


def search(state: State, runtime) -> dict:
    if runtime.context.mode == "kadr":
        return kadr_search(state, runtime)  # sparse/dense interleaved (DESIGN.md section 6)
    idx = index_for(runtime.context)
    cfg = idx.settings.retrieval
    t = time.perf_counter()
    retrieved = []
    for q in state.get("new_subqueries", []):
        with trace_step("retrieve", run_type="retriever", inputs=q, metadata={"subquery": q}) as step:
            ranking, expanded = fused_with_prf(idx, q, cfg)
            chunks = retrieval_chunks(idx, ranking, cfg.rerank_depth)
            step.outputs = [c.to_dict() for c in chunks[:20]]  # the trace keeps ids, not texts
        retrieved.append({"subquery": q, "prf_query": expanded, "papers": ranking.papers[:50],
                          "chunks": [c.to_dict() for c in chunks]})
    return {"retrieved": retrieved, "usage": {"seconds_search": time.perf_counter() - t}}
