"""verify: show the LLM the pool's top papers with their best chunks; it names the evidence
papers, says whether the evidence suffices and what is missing. SEE: DESIGN.md section 3 step 6."""

from __future__ import annotations

from agent import prompts
from agent.nodes.common import chunk_block, llm, paper_label
from agent.resources import index_for
from agent.schemas import Verification
from agent.state import State


def top_papers(pool: dict[str, dict], n_papers: int, n_chunks: int) -> list[tuple[str, list[dict]]]:
    """Papers by their best chunk score, each with its n best chunks (ties by id)."""
    by_paper: dict[str, list[dict]] = {}
    for c in pool.values():
        by_paper.setdefault(c["paper_id"], []).append(c)
    for chunks in by_paper.values():
        chunks.sort(key=lambda c: (-c["score"], c["chunk_id"]))
    order = sorted(by_paper, key=lambda pid: (-by_paper[pid][0]["score"], pid))
    return [(pid, by_paper[pid][:n_chunks]) for pid in order[:n_papers]]


def verify_prompt(state: State, runtime) -> str:
    ctx = runtime.context
    idx = index_for(ctx)
    listing = []
    papers = top_papers(state.get("pool", {}), ctx.verify_papers, ctx.verify_chunks_per_paper)
    for pid, chunks in papers:
        p = idx.papers[pid]
        body = "\n".join(chunk_block(c, ctx.verify_chunk_chars) for c in chunks)
        listing.append(f"PAPER {pid}: {p.title} ({paper_label(p)})\n{body}")
    return prompts.render("verify", question=state["question"], n_papers=len(papers), papers="\n\n".join(listing))


def verify(state: State, runtime) -> dict:
    if runtime.context.mode == "kadr":
        return {}  # KADR is one pass: its rerank step gave the verdict
    if not state.get("new_subqueries"):
        return {}  # nothing new was searched: the previous verdict stands (the router ends the loop)
    pool = state.get("pool", {})
    if not pool:
        return {"verdict": {"sufficient": False, "evidence_papers": [], "missing": "nothing was found yet"}}
    ctx = runtime.context
    if not ctx.verify_with_llm:
        # no LLM verdict: the papers the verifier would be shown are the evidence, and the loop
        # ends here (there is no note of what is missing to search for)
        listed = [pid for pid, _ in top_papers(pool, ctx.verify_papers, 1)]
        verdict = {"sufficient": True, "missing": "", "evidence_papers": listed, "llm": False}
        return {"verdict": verdict, "evidence_papers": listed}
    value, usage, errors = llm("verify", Verification, verify_prompt(state, runtime), runtime)
    known = {c["paper_id"] for c in pool.values()}
    if value is None:
        verdict = {"sufficient": False, "evidence_papers": [], "missing": "", "failed": True}
    else:
        verdict = {"sufficient": value.sufficient, "missing": value.missing.strip(),
                   "evidence_papers": [p for p in dict.fromkeys(value.evidence_papers) if p in known]}
    return {"verdict": verdict, "evidence_papers": verdict["evidence_papers"], "usage": usage, "errors": errors}
