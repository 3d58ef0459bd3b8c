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
from agent.evidence import (
    aspect_words,
    coverage_aspects,
    listing,
    pick_evidence,
    question_aspects,
    sentence_record,
    support_context,
    term_coverage,
    uncovered_aspects,
)
from agent.methods.base import register
from agent.methods.common import chunk_block, chunk_dict, llm, paper_label
from agent.resources import index_for, reranker_for
from agent.schemas import Verification, reading_model, selection_model
from agent.shape import COMPARE_COLUMN, asks_quantity, comparison_columns, papers_to_read, reads_jointly, shape_for
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


def coverage_verdict(state: State, runtime) -> dict:
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


# ----------------------------------------------------------------------------- Relate


def expand_neighbors(state: State, runtime) -> dict:
    """Seeds = the top paper of ranking A plus the verifier's evidence papers; ranking B from
    their neighbours; A/B fusion. `ranking` is the fused list at the length the benchmarks
    score (`relate.reader_top`, or more when more papers are read); the reader gets its top
    `read_papers` as `candidates` (`list_papers` for a "which papers" question: agent/shape.py)."""
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


# ----------------------------------------------------------------------------- Read


def question_chunk_scores(state: State, idx):
    """Chunk-BM25 scores of the question and its subqueries over the whole index (one pass,
    shared by every paper read in the node)."""
    return idx.chunk_bm25.scores(idx.tokenize(" ".join([state["question"], *state.get("subqueries", [])])))


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


def sentences_to_read(
    state: State, runtime, paper_id: str, all_scores=None, budget_chars: int | None = None
) -> list[Sentence]:
    """The paper's sentences the reader is shown: those that best match the question, within
    `budget_chars` (default `read_sentence_chars`), in the paper's order. Which sentences compete
    is `evidence_selector`: "chunks", those of its chunks to read (pooled first, then by BM25,
    then title and abstract); "paper", every sentence of the paper; "mixed", both
    (`agent.evidence.pick_evidence`)."""
    ctx = runtime.context
    idx = index_for(ctx)
    budget = budget_chars or ctx.read_sentence_chars
    chunks = chunks_to_read(state, idx, paper_id, ctx.read_chunks_per_paper, all_scores)
    ids = [c["chunk_id"] for c in chunks]
    return pick_evidence(idx, ctx.evidence_selector, paper_id, ids, reading_queries(state), budget)


def matches_question(sentences: list[Sentence], queries: list[str]) -> bool:
    """True when one of the sentences shares a content word (a Snowball stem) with the queries:
    a paper whose best sentences share none is not put before the model in a joint reading."""
    terms = {t for q in queries for t in tokenize(q, stem=True)}
    return any(terms.intersection(tokenize(s["text"], stem=True)) for s in sentences)


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
        sentences=listing(idx, sentences, labelled_rows=ctx.reading_hints),
        max_sentences=ctx.read_evidence_sentences,
        quantity=" " + prompts.render("read_quantity")
        if ctx.reading_hints and asks_quantity(state["question"])
        else "",
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
        why = check_claim(finding, [e["text"] for e in evidence], [*support_context(idx, picked), state["question"]])
        reading["finding"] = "" if why else finding
        if why:
            reading["rejected_finding"] = {"text": finding, "reason": why}
    return reading, usage, errors


def read_paper(state: State, runtime) -> dict:
    """Each candidate paper read concurrently with a bound (docs/design.md section 5), or, with
    a joint reading (`agent.shape.reads_jointly`), all of them at once (`read_jointly`)."""
    from langchain_core.runnables.config import ContextThreadPoolExecutor

    ctx = runtime.context
    if reads_jointly(ctx, state["question"]):
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


def joint_budget(ctx, shape: str, rank: int) -> int:
    """Characters of a candidate's best sentences in a joint reading: for a "which papers"
    question or a comparison `list_sentence_chars` each; for a fact `read_sentence_chars` for the best-ranked
    paper and half of it for each other (the fact is most often in the first)."""
    if shape != "fact":  # "which papers", a comparison: every candidate alike
        return ctx.list_sentence_chars
    return ctx.read_sentence_chars if rank == 0 else max(1, ctx.read_sentence_chars // 2)


def read_jointly(state: State, runtime) -> dict:
    """The joint reading: no model call per paper. The evidence selector picks each candidate's
    best sentences (a paper whose sentences share no content word with the question is left
    out). For a fact they are the readings, and the synthesis reads them together; for a "which
    papers" question one call is shown them all and picks the sentences that show their paper
    qualifies, and the papers it picks from are the relevant ones."""
    ctx = runtime.context
    idx = index_for(ctx)
    question = state["question"]
    shape = shape_for(question, ctx.answer_shape)
    papers = state.get("candidates", [])[: papers_to_read(ctx, question)]
    t = time.perf_counter()
    all_scores = question_chunk_scores(state, idx) if papers else None
    queries = reading_queries(state)
    shown: dict[str, list[Sentence]] = {}
    readings: dict[str, dict] = {}
    for rank, pid in enumerate(papers):
        sents = sentences_to_read(state, runtime, pid, all_scores, joint_budget(ctx, shape, rank))
        if sents and matches_question(sents, queries):
            shown[pid] = sents
        else:
            readings[pid] = _unread(pid, "no sentence shares a content word with the question")
    usage: dict[str, float] = {"papers_read": len(papers)}
    errors: list[RunError] = []
    if shape == "fact" or not shown:
        for pid, sents in shown.items():
            readings[pid] = _selected(idx, pid, sents, "selector", len(sents))
    else:
        sims = paper_similarities(idx, question, shown)
        judged: tuple[dict[str, dict], dict, list[RunError]] | None = None
        if ctx.list_reading == "similarity":
            aspects = question_aspects(question)
            covs = {pid: term_coverage(idx, pid, aspects) for pid in shown}
            judged = by_similarity(idx, shown, sims, covs, ctx), {}, []
        elif ctx.list_reading == "judge":
            judged = judge_papers(state, runtime, shown)
        if judged is not None:
            readings.update(judged[0])
            usage.update(judged[1])
            errors = judged[2]
        else:  # "pick", or an endpoint that gives no log-probabilities to judge by
            picked, usage_call, errors = pick_papers(state, runtime, shown)
            readings.update(picked)
            usage.update(usage_call)
        for pid, sim in sims.items():
            readings[pid]["similarity"] = sim
        if shape == "comparison":
            rows = [pid for pid in papers if readings.get(pid, {}).get("relevant")][: ctx.compare_papers]
            columns = comparison_columns(question)
            for pid in rows:
                readings[pid]["cells"] = comparison_cells(state, runtime, pid, columns, all_scores)
    usage["seconds_read_paper"] = time.perf_counter() - t
    return {"readings": [readings[pid] for pid in papers], "usage": usage, "errors": errors}


def comparison_cells(state: State, runtime, paper_id: str, columns: list[str], all_scores=None) -> dict[str, dict]:
    """A comparison's row for one paper: for each column (an aspect the question names), the
    sentence of the paper's chunks to read (`chunks_to_read`) that best matches the aspect (BM25
    over stems; between equals, the one that matches the question better), as an answer records
    it; a column no sentence matches is left out (the table says the paper's sentences read do
    not state it). The one column of a question that names no aspect gets the paper's best
    sentence for the question. No model call."""
    from agent.evidence import chunk_sentences
    from tools.retrieval.sentences import sentence_scores

    ctx = runtime.context
    idx = index_for(ctx)
    chunks = chunks_to_read(state, idx, paper_id, ctx.read_chunks_per_paper, all_scores)
    sents = [s for c in chunks for s in chunk_sentences(idx, c["chunk_id"])]
    if not sents:
        return {}
    by_question = sentence_scores(sents, reading_queries(state), stem=True)
    cells: dict[str, dict] = {}
    for col in columns:
        by_column = by_question if col == COMPARE_COLUMN else sentence_scores(sents, [col], stem=True)
        best = max(range(len(sents)), key=lambda i: (by_column[i], by_question[i], -i))
        if by_column[best] > 0:
            cells[col] = sentence_record(idx, sents[best])
    return cells


def paper_similarities(idx, question: str, shown: dict[str, list[Sentence]]) -> dict[str, float]:
    """The bundled embedder's cosine between the question and each paper's title with its best
    sentences (one batch): how a "which papers" candidate is accepted without a model call."""
    import numpy as np

    if not shown:
        return {}
    texts = [" ".join([idx.papers[pid].title, *(s["text"] for s in sents)]) for pid, sents in shown.items()]
    vecs = np.asarray(idx.embedder.encode([question, *texts]), dtype=float)
    vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
    return {pid: round(float(v @ vecs[0]), 4) for pid, v in zip(shown, vecs[1:], strict=True)}


def list_scores(sims: dict[str, float], covs: dict[str, float], weight: float) -> dict[str, float]:
    """Each candidate's score in a "which papers" reading by similarity: the embedder's cosine
    plus `weight` times the share of the question's aspects its text mentions
    (`agent.evidence.term_coverage`), so a paper that matches one part of the question only
    (association-rule mining with no privacy in it) scores below one that matches all of it."""
    return {pid: round(sims[pid] + weight * covs.get(pid, 0.0), 4) for pid in sims}


def qualifies(sim: float, score: float, best: float, floor: float, margin: float) -> str:
    """Why a candidate does not qualify, or "" when it does: its cosine must reach `floor` (an
    absolute minimum) and its score must be within `margin` of the best candidate's (a floor
    relative to the question: how similar papers are to a question depends on its wording)."""
    if sim < floor:
        return f"similarity {sim:.2f} < {floor:.2f}"
    if score < best - margin:
        return f"score {score:.2f} < {best:.2f} (the best) - {margin:.2f}"
    return ""


def by_similarity(
    idx, shown: dict[str, list[Sentence]], sims: dict[str, float], covs: dict[str, float], ctx
) -> dict[str, dict]:
    """The candidates that qualify (`qualifies`, on `list_scores`), quoted with their best
    sentences; each reading records its coverage and score."""
    scores = list_scores(sims, covs, ctx.list_coverage_weight)
    best = max(scores.values(), default=0.0)
    out: dict[str, dict] = {}
    for pid, sents in shown.items():
        why = qualifies(sims[pid], scores[pid], best, ctx.list_min_similarity, ctx.list_similarity_margin)
        if not why:
            out[pid] = _selected(idx, pid, sents, "similarity", len(sents))
        else:
            out[pid] = {**_unread(pid, why), "sentences_shown": len(sents)}
        out[pid].update(coverage=round(covs.get(pid, 0.0), 4), score=scores[pid])
    return out


def judge_papers(state: State, runtime, shown: dict[str, list[Sentence]]):
    """Each candidate of a "which papers" question judged on its title and best sentences by the
    model's next token (P(yes), one token a paper, the question first so that the prompt cache
    keeps it); a paper at or above `list_threshold` qualifies, quoted with those sentences.
    (readings, usage, errors), or None when the endpoint gives no log-probabilities."""
    from agent.answer.choice import CallFailed, qualifies_probability
    from agent.resources import chat_model, settings_for

    ctx = runtime.context
    idx = index_for(ctx)
    model = chat_model("read", settings_for(ctx), ctx.model_for("read"))
    usage: dict[str, float] = {}
    readings: dict[str, dict] = {}
    errors: list[RunError] = []
    for pid, sents in shown.items():
        with trace_step(f"judge {pid}", inputs={"paper_id": pid}, metadata={"paper_id": pid}) as step:
            try:
                p = qualifies_probability(
                    model, state["question"], idx.papers[pid].title, [s["text"] for s in sents], usage=usage
                )
            except CallFailed as exc:
                errors.append({"node": "read", "error": exc.error, "kind": exc.kind})
                readings[pid] = {"paper_id": pid, "relevant": False, "failed": True}
                continue
            step.outputs = {"p_yes": p}
        if p is None:
            return None
        if p >= ctx.list_threshold:
            readings[pid] = {**_selected(idx, pid, sents, "judge", len(sents)), "relevant_p": p}
        else:
            readings[pid] = {
                **_unread(pid, f"judged not to qualify (P(yes) {p:.2f} < {ctx.list_threshold:.2f})"),
                "relevant_p": p,
                "sentences_shown": len(sents),
            }
    return readings, usage, errors


def pick_papers(state: State, runtime, shown: dict[str, list[Sentence]]):
    """One call shown every candidate's best sentences picks those that show their paper
    qualifies; the papers it picks from are relevant. (readings, usage, errors)."""
    idx = index_for(runtime.context)
    flat = [s for sents in shown.values() for s in sents]
    ids = sentence_ids(len(flat))
    prompt = prompts.render("read_papers", question=state["question"], sentences=listing(idx, flat, with_paper=True))
    with trace_step("read papers", inputs={"papers": list(shown)}, metadata={"papers": len(shown)}) as step:
        call = llm("read", selection_model(ids, 2 * len(shown)), prompt, runtime)
        step.outputs = {"sentences": call.value.sentences if call.value else None}
    value = call.value
    picked = {i for i in map(sentence_index, value.sentences if value else []) if i is not None and i < len(flat)}
    readings: dict[str, dict] = {}
    start = 0
    for pid, sents in shown.items():
        mine = [s for k, s in enumerate(sents, start) if k in picked]
        start += len(sents)
        if value is None:
            readings[pid] = {"paper_id": pid, "relevant": False, "failed": True}
        elif mine:
            readings[pid] = _selected(idx, pid, mine, "joint", len(sents))
        else:
            readings[pid] = {**_unread(pid, "not picked in the joint reading"), "sentences_shown": len(sents)}
    return readings, call.usage, call.errors


def _selected(idx, pid: str, sentences: list[Sentence], by: str, shown: int) -> dict:
    evidence = [sentence_record(idx, s) for s in sentences]
    return {
        "paper_id": pid,
        "relevant": True,
        "reader": by,
        "evidence": evidence,
        "evidence_chunk_ids": list(dict.fromkeys(e["chunk_id"] for e in evidence)),
        "sentences_shown": shown,
    }


def _unread(pid: str, note: str) -> dict:
    return {"paper_id": pid, "relevant": False, "evidence": [], "evidence_chunk_ids": [], "note": note}


register("rra", __name__)
