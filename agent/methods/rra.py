"""Retrieve-Relate-Read, the paper's method, as the steps of the graph's nodes.
SEE: docs/design.md sections 3 (Retrieve), 4 (Relate) and 5 (Read).

Each step is a thin adapter over the retrieval core in tools/ (the functions `litloop retrieve`
and the benchmarks call): state in, partial update out. The state carries hits (chunk ids and
scores); chunk texts are read from the index where a prompt or the reranker needs them.
"""

from __future__ import annotations

import re
import time
from typing import Any

from agent import prompts
from agent.answer.support import check_claim
from agent.evidence import listing, pick_paper_sentences, pick_sentences, sentence_record, support_context
from agent.methods.base import register
from agent.methods.common import chunk_block, chunk_dict, llm, paper_label
from agent.resources import index_for, reranker_for
from agent.schemas import Verification, reading_model
from agent.state import RunError, State
from agent.tracing import trace_step
from tools.base import Hit
from tools.retrieval.fusion import by_paper, merge_pool, paper_hits
from tools.retrieval.relate import fuse_a_b, ranking_b, select_seeds
from tools.retrieval.retrieve import ranking_a, rerank_budget, rerank_pin_pool, search_subquery
from tools.retrieval.sentences import Sentence, sentence_ids, sentence_index
from tools.retrieval.text import tokenize

SEARCH_PAPERS_KEPT = 50  # papers of each subquery's fused ranking kept in the state (progress, traces)


# ----------------------------------------------------------------------------- Retrieve


def search(state: State, runtime) -> dict:
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


def rerank(state: State, runtime) -> dict:
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


def verify_listing(pool: dict[str, Hit], n_papers: int, n_chunks: int) -> list[tuple[str, list[Hit]]]:
    """The pool's top papers by best chunk, each with its n best chunks: what the verifier sees."""
    return [(pid, hits[:n_chunks]) for pid, hits in list(by_paper(pool.values()).items())[:n_papers]]


def verify_prompt(state: State, runtime) -> str:
    ctx = runtime.context
    idx = index_for(ctx)
    listing = []
    papers = verify_listing(state.get("pool", {}), ctx.verify_papers, ctx.verify_chunks_per_paper)
    for pid, hits in papers:
        p = idx.papers[pid]
        body = "\n".join(chunk_block(chunk_dict(idx, h["chunk_id"]), ctx.verify_chunk_chars) for h in hits)
        listing.append(f"PAPER {pid}: {p.title} ({paper_label(p)})\n{body}")
    return prompts.render("verify", question=state["question"], n_papers=len(papers), papers="\n\n".join(listing))


def verify(state: State, runtime) -> dict:
    """The LLM names the evidence papers, says whether they suffice and what is missing (step 6)."""
    if not state.get("new_subqueries"):
        return {}  # nothing new was searched: the previous verdict stands (the router ends the loop)
    pool = state.get("pool", {})
    if not pool:
        return {"verdict": {"sufficient": False, "evidence_papers": [], "missing": "nothing was found yet"}}
    ctx = runtime.context
    if not ctx.verify_with_llm:
        # no LLM verdict: the papers the verifier would be shown are the evidence, and the loop
        # ends here (there is no note of what is missing to search for)
        listed = [pid for pid, _ in verify_listing(pool, ctx.verify_papers, 1)]
        verdict = {"sufficient": True, "missing": "", "evidence_papers": listed, "llm": False}
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


# ----------------------------------------------------------------------------- Relate


def expand_neighbors(state: State, runtime) -> dict:
    """Seeds = the top paper of ranking A plus the verifier's evidence papers; ranking B from
    their neighbours; A/B fusion. `ranking` is the fused list at the length the benchmarks
    score (`relate.reader_top`, or more when more papers are read); the reader gets its top
    `read_papers` as `candidates`."""
    ctx = runtime.context
    idx = index_for(ctx)
    cfg = idx.settings.relate
    t = time.perf_counter()
    a = ranking_a(state.get("pool", {}))
    seeds = select_seeds(a, list(state.get("evidence_papers", [])), cfg)
    b, _ = ranking_b(idx, seeds, cfg)
    ranking = fuse_a_b(a, b, cfg, max(cfg.reader_top, ctx.read_papers))
    return {
        "seeds": seeds,
        "ranking": ranking,
        "candidates": ranking[: ctx.read_papers],
        "usage": {"seconds_expand": time.perf_counter() - t},
    }


# ----------------------------------------------------------------------------- Read


def question_chunk_scores(state: State, idx):
    """Chunk-BM25 scores of the question and its subqueries over the whole index (one pass,
    shared by every paper read in the node)."""
    return idx.chunk_bm25.scores(tokenize(" ".join([state["question"], *state.get("subqueries", [])])))


def chunks_to_read(state: State, idx, paper_id: str, n: int, all_scores=None) -> list[dict[str, Any]]:
    """The paper's pooled chunks (best first), then its best chunks for the question by BM25,
    then its title and abstract; n in all. `all_scores`: question_chunk_scores, when the caller
    already has them."""
    pooled = paper_hits(state.get("pool", {}), paper_id)
    rows = idx.chunks_of[paper_id]
    if len(rows) > 1:
        scores = (all_scores if all_scores is not None else question_chunk_scores(state, idx))[rows]
    else:
        scores = [0.0]
    by_bm25 = [idx.chunks[rows[i]].chunk_id for i in sorted(range(len(rows)), key=lambda i: (-scores[i], i))]
    ids = [h["chunk_id"] for h in pooled] + by_bm25 + [idx.title_abstract(paper_id).chunk_id]
    return [chunk_dict(idx, cid) for cid in list(dict.fromkeys(ids))[:n]]


def reading_queries(state: State) -> list[str]:
    """What the reader's sentences are chosen for: the question and its subqueries."""
    return [state["question"], *state.get("subqueries", [])]


def sentences_to_read(state: State, runtime, paper_id: str, all_scores=None) -> list[Sentence]:
    """The paper's sentences the reader is shown: those of its chunks to read (pooled first,
    then by BM25, then title and abstract) that best match the question, within
    `read_sentence_chars`, in chunk order."""
    ctx = runtime.context
    idx = index_for(ctx)
    chunks = chunks_to_read(state, idx, paper_id, ctx.read_chunks_per_paper, all_scores)
    ids = [c["chunk_id"] for c in chunks]
    if ctx.evidence_selector == "paper":
        return pick_paper_sentences(idx, paper_id, reading_queries(state), ctx.read_sentence_chars, ids)
    return pick_sentences(idx, ids, reading_queries(state), ctx.read_sentence_chars)


def read_prompt(state: State, runtime, paper_id: str, sentences: list[Sentence] | None = None) -> str:
    ctx = runtime.context
    idx = index_for(ctx)
    paper = idx.papers[paper_id]
    sentences = sentences if sentences is not None else sentences_to_read(state, runtime, paper_id)
    return prompts.render(
        "read_paper",
        question=state["question"],
        paper_id=paper_id,
        title=paper.title,
        venue_year=paper_label(paper),
        sentences=listing(idx, sentences),
        max_sentences=ctx.read_evidence_sentences,
    )


# A reader's own words that deny what its verdict says ("The paper does not provide any evidence")
_DENIAL = re.compile(
    r"\b(?:does|do|did|is|are)\s*(?:n['’]t|not)\s+(?:\w+\s+){0,2}(?:provide|contain|mention|address|discuss|report|"
    r"include|give|answer|say|state|relevant|related)|\bno (?:evidence|information|mention|data)\b|\bnot relevant\b",
    re.IGNORECASE,
)


def accept_reading(
    relevant: bool, evidence: list[dict], finding: str, relevant_p: float | None = None, threshold: float = 0.0
) -> tuple[bool, str]:
    """The reader's verdict as accepted: relevant only when it selected at least one sentence,
    its own finding does not deny evidence, and the probability it gave "true" for `relevant`
    (when known) reaches `threshold`. (accepted, why not, or "")."""
    if not relevant:
        return False, ""
    if not evidence:
        return False, "marked relevant but selected no sentence"
    if finding and _DENIAL.search(finding):
        return False, "marked relevant but its finding says the paper does not answer"
    if relevant_p is not None and relevant_p < threshold:
        return False, f"marked relevant with P(true) {relevant_p:.2f} < {threshold:.2f}"
    return True, ""


def relevance_probability(tokens) -> float | None:
    """P(true) of the reader's `relevant` value from its reply's token log-probabilities: the
    first token after `"relevant":`, its alternatives that begin "true" against those that
    begin "false", renormalised. None when the reply has no such token."""
    import math

    text = ""
    for tok in tokens or ():
        before = text
        text += tok.get("token", "")
        if not re.search(r'"relevant"\s*:\s*$', before):
            continue
        p = {"true": 0.0, "false": 0.0}
        for alt in tok.get("top_logprobs") or [tok]:
            word = alt.get("token", "").strip().lower()
            for value in p:
                if word and value.startswith(word):
                    p[value] += math.exp(alt.get("logprob", -math.inf))
        total = p["true"] + p["false"]
        return p["true"] / total if total else None
    return None


def read_one(state: State, runtime, paper_id: str, all_scores=None) -> tuple[dict, dict, list[RunError]]:
    """One candidate paper judged on its own from numbered sentences; the reader answers with
    sentence ids, which map back to the paper's own text, so evidence is never the model's
    words. A verdict its own reply contradicts is not accepted (`accept_reading`)."""
    ctx = runtime.context
    idx = index_for(ctx)
    shown = sentences_to_read(state, runtime, paper_id, all_scores)
    ids = sentence_ids(len(shown))
    if not shown:
        return (
            {
                "paper_id": paper_id,
                "relevant": False,
                "evidence": [],
                "evidence_chunk_ids": [],
                "note": "no sentence to read",
            },
            {},
            [],
        )
    schema = reading_model(ids, ctx.read_evidence_sentences)
    with trace_step(f"read {paper_id}", inputs={"paper_id": paper_id}, metadata={"paper_id": paper_id}) as step:
        call = llm(
            "read",
            schema,
            read_prompt(state, runtime, paper_id, shown),
            runtime,
            logprobs=5 if ctx.read_relevance_logprobs else None,
        )
        value, usage, errors = call.value, call.usage, call.errors
        relevant_p = relevance_probability(call.logprobs)
        step.outputs = {"relevant": value.relevant if value else None, "sentences": value.sentences if value else None}
    if value is None:
        return {"paper_id": paper_id, "relevant": False, "failed": True}, usage, errors
    given = list(dict.fromkeys(value.sentences))
    known = [i for i in map(sentence_index, given) if i is not None and i < len(shown)]
    picked = [shown[i] for i in sorted(known)][: ctx.read_evidence_sentences]
    evidence = [sentence_record(idx, s) for s in picked]
    unknown = [sid for sid in given if sentence_index(sid) not in known]
    finding = " ".join(value.finding.split())
    accepted, note = accept_reading(value.relevant, evidence, finding, relevant_p, ctx.read_relevance_threshold)
    reading = {
        "paper_id": paper_id,
        "relevant": accepted,
        "model_relevant": value.relevant,
        "relevant_p": relevant_p,
        "evidence": evidence if accepted else [],
        "evidence_chunk_ids": list(dict.fromkeys(e["chunk_id"] for e in evidence)) if accepted else [],
        "sentences_shown": len(shown),
        "unknown_sentence_ids": unknown,
    }
    if note:
        reading["note"] = note
    if finding and accepted:
        why = check_claim(finding, [e["text"] for e in evidence], support_context(idx, picked))
        reading["finding"] = "" if why else finding
        if why:
            reading["rejected_finding"] = {"text": finding, "reason": why}
    return reading, usage, errors


def read_paper(state: State, runtime) -> dict:
    """Each candidate paper read concurrently with a bound (docs/design.md section 5)."""
    from langchain_core.runnables.config import ContextThreadPoolExecutor

    ctx = runtime.context
    papers = state.get("candidates", [])[: ctx.read_papers]
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
