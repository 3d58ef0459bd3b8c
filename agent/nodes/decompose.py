"""decompose: the question into subqueries; later rounds ask for new ones given what is missing.
SEE: docs/design.md section 3 step 1."""

from __future__ import annotations

import re

from langgraph.runtime import Runtime

from agent import prompts
from agent.context import Context
from agent.llm.schemas import SUBQUERY_CHARS, decomposition_model
from agent.reading.evidence import aspect_words, coverage_aspects
from agent.reading.figures import OTHER_SCRIPT as _OTHER_SCRIPT
from agent.runtime.calls import llm, venue_year
from agent.state import State

NO_NOTE = "no specific note; search from a different angle"
_LEADING_TAG = re.compile(r"^\[[^\]]*\]\s*")


def decompose_prompt(state: State, n: int) -> str:
    vy = venue_year(state["question"])
    line = prompts.render("venue_year", venue=vy[0], year=vy[1]) if vy else ""
    if not state.get("round"):
        return prompts.render("decompose_first", question=state["question"], n_subqueries=n, venue_year_line=line)
    previous = "\n".join(f"- {q}" for q in state.get("subqueries", [])) or "- (none)"
    missing = (state.get("verdict") or {}).get("missing") or NO_NOTE
    return prompts.render(
        "decompose_next",
        question=state["question"],
        previous_subqueries=previous,
        missing=missing,
        n_subqueries=n,
        venue_year_line=line,
    )


_REPEAT = re.compile(r"\b((?:\w+\W+){0,3}?\w+)(?:\W+\1\b)+", re.IGNORECASE)


def tidy_subquery(q: str, question: str = "") -> str:
    """One subquery as searched: a phrase the model repeated ("interpretation interpretation
    ...") said once, text in a script the question does not use removed (a 1.5B model drifts
    into Chinese mid-word), whitespace collapsed, cut at a word within SUBQUERY_CHARS."""
    q = _REPEAT.sub(r"\1", " ".join(str(q).split()))
    q = _OTHER_SCRIPT.sub(lambda m: m.group(0) if m.group(0) in question else " ", q)
    q = " ".join(q.split())
    if len(q) > SUBQUERY_CHARS:
        q = q[:SUBQUERY_CHARS].rsplit(" ", 1)[0]
    return q


def new_subqueries(proposed: list[str], earlier: list[str], n: int, tag: str | None, question: str = "") -> list[str]:
    """Tidy (`tidy_subquery`), tag, de-duplicate against earlier rounds, cap at n."""
    seen = {q.strip().lower() for q in earlier}
    out: list[str] = []
    for q in proposed:
        q = tidy_subquery(q, question)
        if not tag:
            q = _LEADING_TAG.sub("", q)  # a small model imitates tags the question never asked for
        elif not q.startswith(tag):
            q = f"{tag} {q}"
        if q and q.lower() not in seen:
            seen.add(q.lower())
            out.append(q)
    return out[:n]


def coverage_subquery(state: State) -> list[str]:
    """The LLM-free subquery of a later round: the question's words that the coverage verdict
    found missing (`agent.methods.rra.verify.coverage_verdict`), then the question's other content
    words, so the search looks for the missing terms in the question's context. None when the
    verdict names no missing term."""
    missing = list((state.get("verdict") or {}).get("missing_terms") or [])
    if not missing:
        return []
    question = state["question"]
    rest = [w for w in aspect_words(question, coverage_aspects(question)) if w not in missing]
    return [" ".join([*missing, *rest])]


def decompose(state: State, runtime: Runtime[Context]) -> dict:
    ctx = runtime.context
    vy = venue_year(state["question"])
    tag = f"[{vy[0]} {vy[1]}]" if vy else None
    first = not state.get("round")
    if not ctx.decompose_with_llm:
        # no LLM: the question is the one subquery; a later round searches for the terms the
        # coverage verdict found missing, else brings nothing new (the loop ends)
        proposed = [state["question"]] if first else coverage_subquery(state)
        subs = new_subqueries(proposed, state.get("subqueries", []), 1, tag)
        return {"round": 1, "new_subqueries": subs, "subqueries": subs}
    schema = decomposition_model(ctx.subqueries_per_round)
    call = llm("decompose", schema, decompose_prompt(state, ctx.subqueries_per_round), runtime)
    value, usage, errors = call.value, call.usage, call.errors
    proposed = value.subqueries if value else []
    if first and not proposed:
        proposed = [state["question"]]  # a failed first decomposition still searches the question
    subs = new_subqueries(proposed, state.get("subqueries", []), ctx.subqueries_per_round, tag, state["question"])
    return {"round": 1, "new_subqueries": subs, "subqueries": subs, "usage": usage, "errors": errors}
