"""Verify: whether the pool holds the evidence, by the LLM or, without it, by the coverage of
the question's content terms."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent import prompts
from agent.llm.schemas import Verification
from agent.methods.rra.read import question_chunk_scores, sentences_to_read
from agent.reading.evidence import (
    aspect_words,
    coverage_aspects,
    uncovered_aspects,
)
from agent.reading.injection import shown_field
from agent.runtime.calls import chunk_block, chunk_dict, llm, paper_label
from agent.runtime.resources import index_for
from agent.state import State
from tools.base import Hit
from tools.retrieval.fusion import by_paper

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

    from agent.context import Context


def verify_listing(pool: dict[str, Hit], n_papers: int, n_chunks: int) -> list[tuple[str, list[Hit]]]:
    """The pool's top papers by best chunk, each with its n best chunks: what the verifier sees."""
    return [(pid, hits[:n_chunks]) for pid, hits in list(by_paper(pool.values()).items())[:n_papers]]


def verify_prompt(state: State, runtime: Runtime[Context]) -> str:
    ctx = runtime.context
    idx = index_for(ctx)
    listing = []
    papers = verify_listing(state.get("pool", {}), ctx.verify_papers, ctx.verify_chunks_per_paper)
    for pid, hits in papers:
        p = idx.papers[pid]
        body = "\n".join(chunk_block(chunk_dict(idx, h["chunk_id"]), ctx.verify_chunk_chars) for h in hits)
        listing.append(f"PAPER {pid}: {shown_field(p.title, 'title')} ({paper_label(p)})\n{body}")
    return prompts.render("verify", question=state["question"], n_papers=len(papers), papers="\n\n".join(listing))


def verify(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """The LLM names the evidence papers, says whether they suffice and what is missing (step 6)."""
    if not state.get("new_subqueries"):
        return {}  # nothing new was searched: the previous verdict stands (the router ends the loop)
    pool = state.get("pool", {})
    if not pool:
        return {"verdict": {"sufficient": False, "evidence_papers": [], "missing": "nothing was found yet"}}
    ctx = runtime.context
    if not ctx.verify_with_llm:
        # no LLM verdict: the papers the verifier would be shown are the evidence; "listing" ends
        # the loop here, "coverage" goes on while a content term of the question is not covered
        listed = [pid for pid, _ in verify_listing(pool, ctx.verify_papers, 1)]
        verdict = {"sufficient": True, "missing": "", "evidence_papers": listed, "llm": False}
        if ctx.verify_without_llm == "coverage":
            verdict.update(coverage_verdict(state, runtime))
        return {"verdict": verdict, "evidence_papers": listed}
    call = llm("verify", Verification, verify_prompt(state, runtime), runtime)
    value, usage, errors = call.value, call.usage, call.errors
    known = {h["paper_id"] for h in pool.values()}
    if value is None:
        verdict = {"sufficient": False, "evidence_papers": [], "missing": "", "failed": True}
    else:
        verdict = {
            "sufficient": value.sufficient,
            "missing": value.missing.strip(),
            "evidence_papers": [p for p in dict.fromkeys(value.evidence_papers) if p in known],
        }
    return {"verdict": verdict, "evidence_papers": verdict["evidence_papers"], "usage": usage, "errors": errors}


def coverage_verdict(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """The LLM-free verdict of `verify_without_llm` "coverage": sufficient when each content term
    of the question (an aspect, `coverage_aspects`) occurs, as a Snowball stem, in the sentences
    the reader would be shown of the pool's top `read_papers` papers (`sentences_to_read`);
    else `missing_terms` are the question's words for the aspects none mentions, which the next
    round's LLM-free decomposition searches for (`agent.nodes.decompose.coverage_subquery`)."""
    ctx = runtime.context
    idx = index_for(ctx)
    top = [pid for pid, _ in verify_listing(state.get("pool", {}), ctx.read_papers, 1)]
    scores = question_chunk_scores(state, idx) if top else None
    texts = [s["text"] for pid in top for s in sentences_to_read(state, runtime, pid, scores)]
    words = aspect_words(state["question"], uncovered_aspects(coverage_aspects(state["question"]), texts))
    if not words:
        return {"sufficient": True, "missing": "", "missing_terms": []}
    note = f"the best sentences of the top papers do not mention: {', '.join(words)}"
    return {"sufficient": False, "missing": note, "missing_terms": words}
