"""synthesize: one answer across the accepted papers, in the form asked (free text, a
multiple-choice option, a table), written as claims that each cite the sentences they rest on;
a claim that says what its sentences do not is dropped, and with no claim left the answer quotes
what the papers say instead of guessing. SEE: docs/design.md section 5 and docs/attribution.md.

The node only composes the parts in `agent/answer/`: the sentences shown (selection), the
option scoring (choice), the support judge and checks (claims), the record (assemble), and its
`status` (status): a failed step is a failure, never an answer, and a reading that failed is
unknown, not "not relevant"."""

from __future__ import annotations

import time

from langgraph.runtime import Runtime

from agent import prompts
from agent.answer.assemble import build_answer, comparison_answer, flagged_papers, overview_answer, papers_answer
from agent.answer.choice import score_options
from agent.answer.citations import mark_contexts
from agent.answer.claims import support_judge
from agent.answer.copy import choose_then_copy, chooses_fact, offered_sentences
from agent.answer.leads import LeadCalls
from agent.answer.selection import evidence_sentences
from agent.answer.status import (
    answer_status,
    failed_answer,
    failed_readings,
    failure_reason,
)
from agent.context import Context
from agent.llm import ENDPOINT_KINDS
from agent.llm.schemas import synthesis_model
from agent.reading.evidence import listing
from agent.reading.shape import asks_quantity, claims_cap, comparison_columns, reads_jointly, shape_of
from agent.runtime.calls import llm
from agent.runtime.resources import index_for
from agent.state import State, add_usage
from tools.retrieval.fusion import by_paper
from tools.retrieval.sentences import Sentence, sentence_ids


def answer_instructions(state: State, ctx) -> str:
    types = state.get("answer_types") or ["freeform"]
    lines = []
    shape = shape_of(ctx, state["question"])
    if shape in ("papers", "overview") and "multiple_choice" not in types:
        lines.append(
            "The question asks which papers qualify: write one claim for each paper whose sentences show "
            "that it does, naming the paper, the best-supported first."
        )
    elif shape == "comparison" and "multiple_choice" not in types:
        lines.append(prompts.render("synthesize_comparison", aspects="; ".join(comparison_columns(state["question"]))))
    elif ctx.reading_hints and asks_quantity(state["question"]) and "multiple_choice" not in types:
        lines.append(prompts.render("synthesize_quantity"))
    if "multiple_choice" in types and state.get("options"):
        opts = "\n".join(f"{k}: {v}" for k, v in sorted(state["options"].items()))
        lines.append(
            f"This is a multiple-choice question. Options:\n{opts}\nFirst write the claims that "
            'decide it, then set "choice" to the one label they support.'
        )
    if "table" in types and state.get("table_schema"):
        cols = ", ".join(
            f"{c['name']} ({c.get('type', 'string')}{', row key' if c.get('is_row_key') else ''})"
            for c in state["table_schema"]
        )
        lines.append(f'Also give the table in "table_rows": one object per row with exactly these columns: {cols}.')
    return "\n".join(lines)


def synthesis_schema(state: State, ctx, shown: list[Sentence]):
    types = state.get("answer_types") or ["freeform"]
    options = sorted(state.get("options") or {}) if "multiple_choice" in types else []
    table = "table" in types and bool(state.get("table_schema"))
    return synthesis_model(sentence_ids(len(shown)), claims_cap(ctx, state["question"]), options, table)


def synthesize_prompt(state: State, runtime, shown: list[Sentence] | None = None) -> str:
    ctx = runtime.context
    idx = index_for(ctx)
    shown = shown if shown is not None else evidence_sentences(state, idx, ctx)
    return prompts.render(
        "synthesize",
        question=state["question"],
        answer_instructions=answer_instructions(state, ctx),
        source=(
            "the best-matching passages of the papers found"
            if reads_jointly(ctx, state["question"])
            else "the papers judged relevant"
        ),
        evidence=listing(idx, shown, with_paper=True, labelled_rows=ctx.reading_hints),
        max_claims=claims_cap(ctx, state["question"]),
    )


def synthesize(state: State, runtime: Runtime[Context]) -> dict:
    out = _synthesize(state, runtime)
    # every paper the run read or weighed that tries to steer an answer is named, even one whose
    # every shown sentence was withheld (it has none among the answer's sentences): the papers
    # read, the candidates, and the top of the search's pool (those the verifier is shown)
    pool = list(by_paper((state.get("pool") or {}).values()))[: runtime.context.verify_papers]
    read = list(
        dict.fromkeys([*(r["paper_id"] for r in state.get("readings") or []), *state.get("candidates", []), *pool])
    )
    answer = out["answer"]
    if read and answer.get("status") != "failed":
        known = {f["paper_id"] for f in answer.get("flagged_papers") or []}
        more = [f for f in flagged_papers(index_for(runtime.context), [], read) if f["paper_id"] not in known]
        if more:
            out = {**out, "answer": {**answer, "flagged_papers": [*(answer.get("flagged_papers") or []), *more]}}
    if state.get("citation_contexts") and out["answer"].get("citations"):
        cited = mark_contexts(out["answer"]["citations"], state["citation_contexts"])
        out = {**out, "answer": {**out["answer"], "citations": cited}}
    return out


def _synthesize(state: State, runtime: Runtime[Context]) -> dict:
    ctx = runtime.context
    idx = index_for(ctx)
    readings = state.get("readings", [])
    shape = shape_of(ctx, state["question"])
    if shape != "fact" and reads_jointly(ctx, state["question"]) and ctx.mode == "rra" and not state.get("options"):
        # the joint reading already chose each paper's sentences: the answer names them, no call
        if any(r.get("failed") for r in readings) and all(r.get("failed") or not r.get("relevant") for r in readings):
            return {"answer": failed_answer(failure_reason(readings, state.get("errors", [])))}
        usage: dict = {}
        errors: list = []
        if shape == "overview":
            leads = LeadCalls(state, runtime, idx) if ctx.overview_leads else None
            answer = overview_answer(state, idx, readings, ctx.overview_themes, leads.write if leads else None)
            if leads is not None:
                usage, errors = leads.cost(), leads.errors
        elif shape == "comparison":
            answer = comparison_answer(state, idx, readings, comparison_columns(state["question"]))
        else:
            answer = papers_answer(state, idx, readings)
        status = answer_status(readings, [*state.get("errors", []), *errors])
        return {"answer": {**answer, "status": status}, **({"usage": usage, "errors": errors} if usage else {})}
    chooses = chooses_fact(ctx, state)  # choose, then copy (agent/answer/copy.py): its own pool
    shown = offered_sentences(state, idx, ctx) if chooses else evidence_sentences(state, idx, ctx)
    if not shown:
        status = answer_status(readings, state.get("errors", []))
        if status == "failed":
            return {"answer": failed_answer(failure_reason(readings, state.get("errors", [])))}
        return {"answer": {**build_answer(state, idx, None, [], failed_readings(readings)), "status": status}}
    chosen = choose_then_copy(state, runtime, shown) if chooses else None
    if chosen is not None:
        shown, value, usage, errors = chosen.shown, chosen.synthesis, chosen.usage, chosen.errors
    else:
        schema = synthesis_schema(state, ctx, shown)
        call = llm("synthesize", schema, synthesize_prompt(state, runtime, shown), runtime, draft=True)
        value, usage, errors = call.value, call.usage, call.errors
    if value is None and any(e.get("kind") in ENDPOINT_KINDS for e in errors):
        return {
            "answer": failed_answer(f"the synthesis failed: {errors[0]['error'] if errors else 'no reply'}"),
            "usage": usage,
            "errors": errors,
        }
    # a reply that could not be used even after the repair turn: the extractive answer
    scores = None
    if (
        state.get("options")
        and "multiple_choice" in (state.get("answer_types") or [])
        and ctx.choice_scoring != "model"
    ):
        scores, u, e = score_options(state, runtime, shown)
        usage = add_usage(usage, u)
        errors = [*errors, *e]
    judge = None
    if ctx.support_judge and value is not None and value.claims:
        judge, judged = support_judge(runtime)
    status = answer_status(readings, [*state.get("errors", []), *errors])
    t = time.perf_counter()
    answer = build_answer(
        state,
        idx,
        value,
        shown,
        choice_scores=scores,
        judge=judge,
        threshold=ctx.support_threshold,
        reanchor=ctx.support_reanchor,
        ranked=chosen is not None,
        figure=chosen.figure(asks_quantity(state["question"])) if chosen is not None else "",
    )
    if chosen is not None:
        answer["rejected_claims"] = [*chosen.rejected, *answer["rejected_claims"]]
        answer["chosen"] = chosen.record()
    if judge is not None:
        usage = add_usage(usage, judged)
        usage["seconds_support"] = time.perf_counter() - t
    return {"answer": {**answer, "shape": shape, "status": status}, "usage": usage, "errors": errors}
