"""search: each new subquery over the three indexes, fused by RRF, with one PRF pass.
SEE: DESIGN.md section 3 steps 2-3."""

from __future__ import annotations

import time

from agent.resources import index_for
from agent.state import State
from tools.retrieve import fused_with_prf, retrieval_chunks


def search(state: State, runtime) -> dict:
    idx = index_for(runtime.context)
    cfg = idx.settings.retrieval
    t = time.perf_counter()
    retrieved = []
    for q in state.get("new_subqueries", []):
        ranking, expanded = fused_with_prf(idx, q, cfg)
        chunks = retrieval_chunks(idx, ranking, cfg.rerank_depth)
        retrieved.append({"subquery": q, "prf_query": expanded, "papers": ranking.papers[:50],
                          "chunks": [c.to_dict() for c in chunks]})
    return {"retrieved": retrieved, "usage": {"seconds_search": time.perf_counter() - t}}
