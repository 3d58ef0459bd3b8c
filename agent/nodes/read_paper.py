"""read_paper: each candidate paper judged on its own, concurrently with a bound: is it
relevant, does it hold enough evidence, which chunks support it. Chunk ids are checked against
the index, so a locator can never come from the model's imagination. SEE: DESIGN.md section 5."""

from __future__ import annotations

import time

from agent import prompts
from agent.nodes.common import chunk_block, llm, paper_label
from agent.nodes.kadr import kadr_read
from agent.resources import index_for
from agent.schemas import PaperReading
from agent.state import State
from agent.tracing import trace_step
from tools.text import tokenize


def question_chunk_scores(state: State, idx):
    """Chunk-BM25 scores of the question and its subqueries over the whole index (one pass,
    shared by every paper read in the node)."""
    return idx.chunk_bm25.scores(tokenize(" ".join([state["question"], *state.get("subqueries", [])])))


def chunks_to_read(state: State, idx, paper_id: str, n: int, all_scores=None) -> list[dict]:
    """The paper's pooled chunks (best first), then its best chunks for the question by BM25,
    then its title and abstract; n in all. `all_scores`: question_chunk_scores, when the caller
    already has them."""
    pooled = sorted((c for c in state.get("pool", {}).values() if c["paper_id"] == paper_id),
                    key=lambda c: (-c["score"], c["chunk_id"]))
    rows = idx.chunks_of[paper_id]
    if len(rows) > 1:
        scores = (all_scores if all_scores is not None else question_chunk_scores(state, idx))[rows]
    else:
        scores = [0.0]
    by_bm25 = [rows[i] for i in sorted(range(len(rows)), key=lambda i: (-scores[i], i))]
    out, seen = [], set()
    for c in pooled + [idx.chunks[r].to_dict() for r in by_bm25] + [idx.title_abstract(paper_id).to_dict()]:
        if c["chunk_id"] not in seen:
            seen.add(c["chunk_id"])
            out.append(c)
    return out[:n]


def read_prompt(state: State, runtime, paper_id: str, chunks: list[dict] | None = None) -> str:
    ctx = runtime.context
    idx = index_for(ctx)
    paper = idx.papers[paper_id]
    chunks = chunks if chunks is not None else chunks_to_read(state, idx, paper_id, ctx.read_chunks_per_paper)
    return prompts.render("read_paper", question=state["question"], paper_id=paper_id, title=paper.title,
                          venue_year=paper_label(paper),
                          chunks="\n".join(chunk_block(c, ctx.read_chunk_chars) for c in chunks))


def read_one(state: State, runtime, paper_id: str, all_scores=None) -> tuple[dict, dict, list[dict]]:
    ctx = runtime.context
    idx = index_for(ctx)
    chunks = chunks_to_read(state, idx, paper_id, ctx.read_chunks_per_paper, all_scores)
    with trace_step(f"read {paper_id}", inputs={"paper_id": paper_id}, metadata={"paper_id": paper_id}) as step:
        value, usage, errors = llm("read", PaperReading, read_prompt(state, runtime, paper_id, chunks), runtime)
        step.outputs = {"relevant": value.relevant if value else None}
    if value is None:
        return {"paper_id": paper_id, "relevant": False, "failed": True}, usage, errors
    own = set(idx.chunks_of[paper_id])
    cited = [c for c in dict.fromkeys(value.evidence_chunk_ids)
             if c in idx.chunk_row and idx.chunk_row[c] in own]
    if value.relevant and not cited:
        cited = [chunks[0]["chunk_id"]]  # relevant but cited nothing valid: its best shown chunk
    return ({"paper_id": paper_id, "relevant": value.relevant, "sufficient": value.sufficient,
             "evidence_chunk_ids": cited, "finding": value.finding.strip(),
             "dropped_chunk_ids": [c for c in value.evidence_chunk_ids if c not in cited]}, usage, errors)


def read_paper(state: State, runtime) -> dict:
    from langchain_core.runnables.config import ContextThreadPoolExecutor

    ctx = runtime.context
    if ctx.mode == "kadr":
        return kadr_read(state, runtime)  # the top N_ans chunks as they stand
    papers = state.get("candidates", [])[: ctx.read_papers]
    t = time.perf_counter()
    all_scores = question_chunk_scores(state, index_for(ctx)) if papers else None
    with ContextThreadPoolExecutor(max_workers=max(1, ctx.read_concurrency)) as pool:
        results = list(pool.map(lambda pid: read_one(state, runtime, pid, all_scores), papers))
    usage: dict[str, float] = {"seconds_read_paper": time.perf_counter() - t, "papers_read": len(papers)}
    errors: list[dict] = []
    for _, u, e in results:
        for k, v in u.items():
            if not k.startswith("seconds_"):
                usage[k] = usage.get(k, 0) + v
        errors.extend(e)
    return {"readings": [r for r, _, _ in results], "usage": usage, "errors": errors}
