"""expand_neighbors: Relate. Seeds = the top paper of ranking A plus the verifier's evidence
papers; ranking B from their neighbours; A/B fusion; the top papers go to the reader.
SEE: DESIGN.md section 4."""

from __future__ import annotations

import time

from agent.nodes.kadr import kadr_expand
from agent.nodes.verify import top_papers
from agent.resources import index_for
from agent.state import State
from tools.relate import fuse_a_b, ranking_b


def expand_neighbors(state: State, runtime) -> dict:
    if runtime.context.mode == "kadr":
        return kadr_expand(state, runtime)  # no Relate: the papers of the top N_ans chunks
    idx = index_for(runtime.context)
    cfg = idx.settings.relate.model_copy(update={"reader_top": runtime.context.read_papers})
    t = time.perf_counter()
    a = [pid for pid, _ in top_papers(state.get("pool", {}), 10**9, 1)]
    seeds = list(dict.fromkeys(a[:1] + list(state.get("evidence_papers", []))))
    b, _ = ranking_b(idx, seeds, cfg)
    return {"seeds": seeds, "candidates": fuse_a_b(a, b, cfg), "usage": {"seconds_expand": time.perf_counter() - t}}
