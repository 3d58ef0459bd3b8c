"""rerank: score each subquery's chunks, order by 0.6/(60+r_ret) + 0.4/(60+r_rr) with the top 20
pinned, and add the top 20 to the pool (max score per chunk). SEE: DESIGN.md section 3 steps 4-5."""

from __future__ import annotations

import time

from agent.nodes.kadr import kadr_rerank
from agent.resources import index_for, reranker_for
from agent.state import State
from tools.fusion import rerank_with_pinning


def rerank(state: State, runtime) -> dict:
    if runtime.context.mode == "kadr":
        return kadr_rerank(state, runtime)  # knowledge-aware diverse reranking (DESIGN.md section 6)
    cfg = index_for(runtime.context).settings.retrieval
    reranker = reranker_for(runtime.context)
    t = time.perf_counter()
    pool: dict[str, dict] = {}
    for item in state.get("retrieved", []):
        chunks = item["chunks"]
        ids = [c["chunk_id"] for c in chunks]
        order = ids
        if reranker is not None and chunks:
            budget = runtime.context.max_rerank or index_for(runtime.context).settings.rerank.max_chunks
            n = min(len(chunks), budget)
            scores = reranker.score(item["subquery"], [c["text"] for c in chunks[:n]])
            order = [ids[i] for i in sorted(range(n), key=lambda i: (-scores[i], i))] + ids[n:]
        ranked = rerank_with_pinning(ids, order, k=cfg.rerank_k, w_ret=cfg.rerank_weight_retrieval,
                                     w_rr=cfg.rerank_weight_reranker, pin_top=cfg.pin_top)
        by_id = {c["chunk_id"]: c for c in chunks}
        for cid, score in ranked[: cfg.pool_per_subquery]:
            if cid not in pool or score > pool[cid]["score"]:
                pool[cid] = {**by_id[cid], "score": score, "source": item["subquery"]}
    return {"pool": pool, "usage": {"seconds_rerank": time.perf_counter() - t}}
