"""Relate (docs/design.md section 4): the seeds' neighbours in the citation graph fused with the
pool's ranking."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from agent.reading.shape import papers_to_read
from agent.runtime.resources import index_for
from agent.state import State
from tools.retrieval.relate import fuse_a_b, ranking_b, select_seeds
from tools.retrieval.retrieve import ranking_a

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

    from agent.context import Context


def expand_neighbors(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Seeds = the top paper of ranking A plus the verifier's evidence papers; ranking B from
    their neighbours; A/B fusion. `ranking` is the fused list at the length the benchmarks
    score (`relate.reader_top`, or more when more papers are read); the reader gets its top
    `read_papers` as `candidates` (`list_papers` for a "which papers" question: agent/reading/shape.py)."""
    ctx = runtime.context
    idx = index_for(ctx)
    cfg = idx.settings.relate
    t = time.perf_counter()
    a = ranking_a(state.get("pool", {}))
    seeds = select_seeds(a, list(state.get("evidence_papers", [])), cfg)
    b, _ = ranking_b(idx, seeds, cfg)
    n = papers_to_read(ctx, state["question"])
    ranking = fuse_a_b(a, b, cfg, max(cfg.reader_top, n))
    return {
        "seeds": seeds,
        "ranking": ranking,
        "candidates": ranking[:n],
        "usage": {"seconds_expand": time.perf_counter() - t},
    }
