"""The joint reading: the candidates' best sentences chosen without a model call per paper; for a
"which papers" question the papers that qualify are judged, picked or accepted by similarity."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from agent import prompts
from agent.answer.copy import chooses_fact
from agent.answer.qualify import by_similarity, paper_similarities, selected_reading, unread_reading
from agent.llm.schemas import selection_model
from agent.methods.rra.read import (
    chunks_to_read,
    matches_question,
    question_chunk_scores,
    reading_queries,
    sentences_to_read,
)
from agent.reading.evidence import (
    listing,
    phrase_coverage,
    question_aspects,
    question_phrases,
    sentence_record,
    term_coverage,
)
from agent.reading.injection import shown_field
from agent.reading.shape import COMPARE_COLUMN, comparison_columns, papers_to_read, shape_of
from agent.runtime.calls import llm
from agent.runtime.resources import index_for
from agent.state import RunError, State
from agent.tracing import trace_step
from tools.retrieval.sentences import Sentence, sentence_ids, sentence_index

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

    from agent.context import Context


def joint_budget(ctx: Context, shape: str, rank: int, chosen: bool = False) -> int:
    """Characters of a candidate's best sentences in a joint reading: for a "which papers"
    question or a comparison `list_sentence_chars` each; for a fact `read_sentence_chars` (with
    `chosen`, a fact answered by choose-then-copy, `choose_chars`) for the best-ranked paper and
    half of it for each other (the fact is most often in the first)."""
    if shape != "fact":  # "which papers", a comparison: every candidate alike
        return ctx.list_sentence_chars
    chars = ctx.choose_chars if chosen else ctx.read_sentence_chars
    return chars if rank == 0 else max(1, chars // 2)


def read_jointly(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """The joint reading: no model call per paper. The evidence selector picks each candidate's
    best sentences (a paper whose sentences share no content word with the question is left
    out). For a fact they are the readings, and the synthesis reads them together; for a "which
    papers" question one call is shown them all and picks the sentences that show their paper
    qualifies, and the papers it picks from are the relevant ones."""
    ctx = runtime.context
    idx = index_for(ctx)
    question = state["question"]
    shape = shape_of(ctx, question)
    papers = state.get("candidates", [])[: papers_to_read(ctx, question)]
    t = time.perf_counter()
    all_scores = question_chunk_scores(state, idx) if papers else None
    queries = reading_queries(state)
    shown: dict[str, list[Sentence]] = {}
    readings: dict[str, dict[str, Any]] = {}
    chosen = chooses_fact(ctx, state)
    for rank, pid in enumerate(papers):
        sents = sentences_to_read(state, runtime, pid, all_scores, joint_budget(ctx, shape, rank, chosen))
        if sents and matches_question(sents, queries):
            shown[pid] = sents
        else:
            readings[pid] = unread_reading(pid, "no sentence shares a content word with the question")
    usage: dict[str, float] = {"papers_read": len(papers)}
    errors: list[RunError] = []
    if shape == "fact" or not shown:
        for pid, sents in shown.items():
            readings[pid] = selected_reading(idx, pid, sents, "selector", len(sents))
    else:
        sims = paper_similarities(idx, question, shown)
        judged: tuple[dict[str, dict[str, Any]], dict[str, Any], list[RunError]] | None = None
        if ctx.list_reading == "similarity":
            aspects = question_aspects(question)
            if ctx.list_phrase:
                phrases = question_phrases(question)
                covs = {pid: phrase_coverage(idx, pid, aspects, phrases) for pid in shown}
            else:
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


def comparison_cells(
    state: State, runtime: Runtime[Context], paper_id: str, columns: list[str], all_scores: Any = None
) -> dict[str, dict[str, Any]]:
    """A comparison's row for one paper: for each column (an aspect the question names), the
    sentence of the paper's chunks to read (`chunks_to_read`) that best matches the aspect (BM25
    over stems; between equals, the one that matches the question better), as an answer records
    it; a column no sentence matches is left out (the table says the paper's sentences read do
    not state it). The one column of a question that names no aspect gets the paper's best
    sentence for the question. No model call."""
    from agent.reading.evidence import chunk_sentences
    from tools.retrieval.sentences import sentence_scores

    ctx = runtime.context
    idx = index_for(ctx)
    chunks = chunks_to_read(state, idx, paper_id, ctx.read_chunks_per_paper, all_scores)
    sents = [s for c in chunks for s in chunk_sentences(idx, c["chunk_id"])]
    if not sents:
        return {}
    by_question = sentence_scores(sents, reading_queries(state), stem=True)
    cells: dict[str, dict[str, Any]] = {}
    for col in columns:
        by_column = by_question if col == COMPARE_COLUMN else sentence_scores(sents, [col], stem=True)
        best = max(range(len(sents)), key=lambda i: (by_column[i], by_question[i], -i))
        if by_column[best] > 0:
            cells[col] = sentence_record(idx, sents[best])
    return cells


def judge_papers(
    state: State, runtime: Runtime[Context], shown: dict[str, list[Sentence]]
) -> tuple[dict[str, dict[str, Any]], dict[str, Any], list[RunError]] | None:
    """Each candidate of a "which papers" question judged on its title and best sentences by the
    model's next token (P(yes), one token a paper, the question first so that the prompt cache
    keeps it); a paper at or above `list_threshold` qualifies, quoted with those sentences.
    (readings, usage, errors), or None when the endpoint gives no log-probabilities."""
    from agent.answer.choice import CallFailed, qualifies_probability
    from agent.runtime.resources import chat_model, settings_for

    ctx = runtime.context
    idx = index_for(ctx)
    model = chat_model("read", settings_for(ctx), ctx.model_for("read"))
    usage: dict[str, float] = {}
    readings: dict[str, dict[str, Any]] = {}
    errors: list[RunError] = []
    for pid, sents in shown.items():
        with trace_step(f"judge {pid}", inputs={"paper_id": pid}, metadata={"paper_id": pid}) as step:
            try:
                p = qualifies_probability(
                    model,
                    state["question"],
                    shown_field(idx.papers[pid].title, "title"),
                    [s["text"] for s in sents],
                    usage=usage,
                )
            except CallFailed as exc:
                errors.append({"node": "read", "error": exc.error, "kind": exc.kind})
                readings[pid] = {"paper_id": pid, "relevant": False, "failed": True}
                continue
            step.outputs = {"p_yes": p}
        if p is None:
            return None
        if p >= ctx.list_threshold:
            readings[pid] = {**selected_reading(idx, pid, sents, "judge", len(sents)), "relevant_p": p}
        else:
            readings[pid] = {
                **unread_reading(pid, f"judged not to qualify (P(yes) {p:.2f} < {ctx.list_threshold:.2f})"),
                "relevant_p": p,
                "sentences_shown": len(sents),
            }
    return readings, usage, errors


def pick_papers(
    state: State, runtime: Runtime[Context], shown: dict[str, list[Sentence]]
) -> tuple[dict[str, dict[str, Any]], dict[str, Any], list[RunError]]:
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
    readings: dict[str, dict[str, Any]] = {}
    start = 0
    for pid, sents in shown.items():
        mine = [s for k, s in enumerate(sents, start) if k in picked]
        start += len(sents)
        if value is None:
            readings[pid] = {"paper_id": pid, "relevant": False, "failed": True}
        elif mine:
            readings[pid] = selected_reading(idx, pid, mine, "joint", len(sents))
        else:
            readings[pid] = {**unread_reading(pid, "not picked in the joint reading"), "sentences_shown": len(sents)}
    return readings, call.usage, call.errors
