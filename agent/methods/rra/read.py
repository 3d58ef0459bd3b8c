"""Read (docs/design.md section 5): the sentences each candidate paper is shown by, and each paper
read on its own by the model."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from agent import prompts
from agent.answer.logprobs import relevance_probability
from agent.answer.support import check_claim
from agent.llm.schemas import reading_model
from agent.reading.evidence import (
    listing,
    pick_evidence,
    sentence_record,
    support_context,
)
from agent.reading.injection import shown_field
from agent.reading.shape import asks_quantity
from agent.runtime.calls import chunk_dict, llm, paper_label
from agent.runtime.resources import index_for
from agent.state import RunError, State
from agent.tracing import trace_step
from tools.retrieval.fusion import paper_hits
from tools.retrieval.sentences import Sentence, sentence_ids, sentence_index
from tools.retrieval.text import tokenize

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

    from agent.context import Context
    from tools.handle import IndexHandle


def question_chunk_scores(state: State, idx: IndexHandle) -> Any:
    """Chunk-BM25 scores of the question and its subqueries over the whole index (one pass,
    shared by every paper read in the node)."""
    return idx.chunk_bm25.scores(idx.tokenize(" ".join([state["question"], *state.get("subqueries", [])])))


def chunks_to_read(
    state: State, idx: IndexHandle, paper_id: str, n: int, all_scores: Any = None
) -> list[dict[str, Any]]:
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
    state: State, runtime: Runtime[Context], paper_id: str, all_scores: Any = None, budget_chars: int | None = None
) -> list[Sentence]:
    """The paper's sentences the reader is shown: those that best match the question, within
    `budget_chars` (default `read_sentence_chars`), in the paper's order. Which sentences compete
    is `evidence_selector`: "chunks", those of its chunks to read (pooled first, then by BM25,
    then title and abstract); "paper", every sentence of the paper; "mixed", both
    (`agent.reading.evidence.pick_evidence`)."""
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


def read_prompt(state: State, runtime: Runtime[Context], paper_id: str, sentences: list[Sentence] | None = None) -> str:
    ctx = runtime.context
    idx = index_for(ctx)
    paper = idx.papers[paper_id]
    sentences = sentences if sentences is not None else sentences_to_read(state, runtime, paper_id)
    return prompts.render(
        "read_paper",
        question=state["question"],
        paper_id=paper_id,
        title=shown_field(paper.title, "title"),
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
    relevant: bool,
    evidence: list[dict[str, Any]],
    finding: str,
    relevant_p: float | None = None,
    threshold: float = 0.0,
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


def read_one(
    state: State, runtime: Runtime[Context], paper_id: str, all_scores: Any = None
) -> tuple[dict[str, Any], dict[str, Any], list[RunError]]:
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
