"""synthesize: one answer across the accepted papers, in the form asked (free text, a
multiple-choice option, a table), citing only chunk ids that exist in the index; with no
supporting evidence it says so instead of guessing. SEE: DESIGN.md section 5.

The answer carries its `status` (`answer_status`): a failed step is a failure, never an
answer, and a reading that failed is unknown, not "not relevant"."""

from __future__ import annotations

import re
from typing import Any, Literal

from langgraph.runtime import Runtime

from agent import prompts
from agent.context import Context
from agent.methods.common import chunk_block, chunk_dict, llm
from agent.resources import index_for
from agent.schemas import Synthesis
from agent.state import State
from tools.retrieve import chunk_of

NO_EVIDENCE = "The indexed papers do not contain evidence that answers this question."
# no evidence, but some readings failed: what was not read is not known to lack evidence
NO_EVIDENCE_READ = ("No evidence that answers this question was found in the papers that could be read "
                    "({failed} of {total} readings failed, so this says nothing about those papers).")
Status = Literal["ok", "partial", "failed"]
_CITE = re.compile(r"\[([^\[\]]+?#c\d+)\]")


def answer_instructions(state: State) -> str:
    types = state.get("answer_types") or ["freeform"]
    lines = []
    if "multiple_choice" in types and state.get("options"):
        opts = "\n".join(f"{k}: {v}" for k, v in sorted(state["options"].items()))
        lines.append(f"This is a multiple-choice question. Options:\n{opts}\nSet \"choice\" to exactly one label.")
    if "table" in types and state.get("table_schema"):
        cols = ", ".join(f"{c['name']} ({c.get('type', 'string')}{', row key' if c.get('is_row_key') else ''})"
                         for c in state["table_schema"])
        lines.append(f"Answer with a table in \"table_rows\": one object per row with exactly these columns: {cols}.")
    lines.append("Write the answer in \"answer\" in a few sentences.")
    return "\n".join(lines)


def evidence_chunks(state: State, idx, limit: int) -> list[dict]:
    """Cited chunks of the relevant papers, in reading order, at most `limit`."""
    out, seen = [], set()
    for r in state.get("readings", []):
        if not r.get("relevant"):
            continue
        for cid in r.get("evidence_chunk_ids", []):
            if cid in idx.chunk_row and cid not in seen:
                seen.add(cid)
                out.append(chunk_dict(idx, cid))
    return out[:limit]


def synthesize_prompt(state: State, runtime, chunks: list[dict] | None = None) -> str:
    ctx = runtime.context
    idx = index_for(ctx)
    chunks = chunks if chunks is not None else evidence_chunks(state, idx, ctx.synthesize_chunks)
    blocks = "\n\n".join(f"{chunk_block(c, ctx.read_chunk_chars)}\n(paper {c['paper_id']}: {idx.papers[c['paper_id']].title})"
                         for c in chunks)
    return prompts.render("synthesize", question=state["question"], answer_instructions=answer_instructions(state),
                          evidence=blocks)


def synthesize(state: State, runtime: Runtime[Context]) -> dict:
    ctx = runtime.context
    idx = index_for(ctx)
    readings = state.get("readings", [])
    chunks = evidence_chunks(state, idx, ctx.synthesize_chunks)
    if not chunks:
        status = answer_status(readings, state.get("errors", []))
        if status == "failed":
            return {"answer": failed_answer(failure_reason(readings, state.get("errors", [])))}
        return {"answer": {**build_answer(state, idx, None, [], failed_readings(readings)), "status": status}}
    value, usage, errors = llm("synthesize", Synthesis, synthesize_prompt(state, runtime, chunks), runtime)
    if value is None:
        return {"answer": failed_answer(f"the synthesis failed: {errors[0]['error'] if errors else 'no reply'}"),
                "usage": usage, "errors": errors}
    status = answer_status(readings, [*state.get("errors", []), *errors])
    return {"answer": {**build_answer(state, idx, value, chunks), "status": status}, "usage": usage, "errors": errors}


def answer_status(readings: list[dict[str, Any]], errors: list[dict[str, Any]]) -> Status:
    """The status of an answer written from these readings (a failed synthesis call is `failed`
    before this is asked): `failed` when every paper read failed (none was judged, so "no
    evidence" would be a guess); `partial` when some LLM call of the run failed (a
    decomposition, a verdict, some readings: `errors` says which); `ok` when none did."""
    if readings and all(r.get("failed") for r in readings):
        return "failed"
    return "partial" if errors else "ok"


def failed_readings(readings: list[dict[str, Any]]) -> tuple[int, int]:
    """(failed, total) readings."""
    return sum(bool(r.get("failed")) for r in readings), len(readings)


def failure_reason(readings: list[dict[str, Any]], errors: list[dict[str, Any]]) -> str:
    """One line on why there is no answer, for a run whose every reading failed: the first
    failure of the endpoint itself when there was one (what the calls not sent after it repeat),
    else the last reading's error."""
    failed, total = failed_readings(readings)
    endpoint = next((e for e in errors if e.get("kind") in ("call", "reply")), None)
    cause = endpoint or next((e for e in reversed(errors) if e.get("node") == "read"), None)
    because = f"; {cause['node']}: {cause['error']}" if cause and cause.get("error") else ""
    return f"every paper read failed ({failed} of {total}){because}"


def failed_answer(reason: str) -> dict[str, Any]:
    """The answer record of a run that produced no answer: empty, with `status` failed and
    `failure` saying why (never the no-evidence sentence, which is a finding)."""
    return {"text": "", "insufficient_evidence": False, "choice": "", "table_rows": [], "citations": [], "facts": [],
            "papers": [], "invalid_citations": [], "status": "failed", "failure": reason}


def build_answer(state: State, idx, value: Synthesis | None, shown: list[dict],
                 unread: tuple[int, int] = (0, 0)) -> dict:
    """The answer record with validated citations: ids the model cited that were not shown
    (or do not exist) are dropped and reported. `value` None: no evidence was found, and
    `unread` (failed, total readings) says how many papers could not be judged."""
    shown_ids = [c["chunk_id"] for c in shown]
    if value is None or value.insufficient_evidence:
        none_found = NO_EVIDENCE_READ.format(failed=unread[0], total=unread[1]) if unread[0] else NO_EVIDENCE
        text = none_found if value is None or not value.answer.strip() else value.answer.strip()
        return {"text": text, "insufficient_evidence": True, "choice": "", "table_rows": [], "citations": [],
                "facts": [], "papers": [], "invalid_citations": []}
    cited = _CITE.findall(value.answer) + [f.chunk_id for f in value.facts]
    valid = [c for c in dict.fromkeys(cited) if c in shown_ids]
    if not valid:
        valid = shown_ids[:3]  # the model cited nothing usable: cite the evidence it was given
    invalid = [c for c in dict.fromkeys(cited) if c not in shown_ids]
    numbers = {cid: n for n, cid in enumerate(valid, start=1)}
    text = _CITE.sub(lambda m: f"[{numbers[m.group(1)]}]" if m.group(1) in numbers else "",
                     whole_sentences(value.answer)).strip()
    options = state.get("options") or {}
    choice = value.choice.strip().upper()[:1] if value.choice else ""
    if options and choice not in options:
        choice = choice_from_text(value.answer, options)
    columns = [c["name"] for c in state.get("table_schema") or []]
    rows = [{col: str(r.get(col, "")) for col in columns} for r in value.table_rows] if columns else []
    citations = [citation(idx, cid, n) for cid, n in numbers.items()]
    facts = [f.model_dump() for f in value.facts if f.chunk_id in numbers]
    return {"text": text, "insufficient_evidence": False, "choice": choice, "table_rows": rows,
            "citations": citations, "facts": facts, "reasoning": value.reasoning,
            "papers": list(dict.fromkeys(c["paper_id"] for c in citations)), "invalid_citations": invalid}


_SENTENCE_END = re.compile(r"[.!?](?:\s*\[[^\[\]]+\])*[\"')\]]*(?=\s|$)")


def whole_sentences(answer: str) -> str:
    """The answer without a sentence cut off at the end (the embedded model's answer is capped
    by its grammar, LITLOOP_LLM__LOCAL_TEXT_CHARS): up to the last sentence end, when there is one."""
    text = answer.strip()
    ends = list(_SENTENCE_END.finditer(text))
    if not ends or ends[-1].end() == len(text):
        return text
    return text[: ends[-1].end()]


_LEAD = re.compile(r"^[\s\"'(\[]*(?:answer\s*[:=-]\s*)?(?:option\s+)?", re.IGNORECASE)


def choice_from_text(answer: str, options: dict[str, str]) -> str:
    """The option an answer names when the model left `choice` empty: the answer starts with a
    label ("B", "B)", "B: no") or with exactly one option's text ("No, ..."). Else empty: a
    guess is worse than no choice."""
    text = _LEAD.sub("", _CITE.sub("", answer)).strip()
    label = re.match(r"([A-Za-z])(?:$|[).:,;])", text)  # "B", "B)", "B: no"; not "A study"
    if label and label.group(1).upper() in options:
        return label.group(1).upper()
    words = text.lower()
    hits = [k for k, v in options.items() if v and re.match(rf"{re.escape(v.strip().lower())}\b", words)]
    return hits[0] if len(hits) == 1 else ""


def citation(idx, chunk_id: str, n: int) -> dict:
    chunk = chunk_of(idx, chunk_id)
    paper = idx.papers[chunk.paper_id]
    quote = " ".join(chunk.text.split())
    return {"n": n, "chunk_id": chunk_id, "paper_id": chunk.paper_id, "title": paper.title, "venue": paper.venue,
            "year": paper.year, "kind": chunk.kind, "locator": chunk.locator.to_dict(),
            "quote": quote[:240] + ("…" if len(quote) > 240 else "")}
