"""synthesize: one answer across the accepted papers, in the form asked (free text, a
multiple-choice option, a table), written as claims that each cite the sentences they rest on;
a claim that says what its sentences do not is dropped, and with no claim left the answer quotes
what the papers say instead of guessing. SEE: DESIGN.md section 5 and docs/attribution.md.

The answer carries its `status` (`answer_status`): a failed step is a failure, never an
answer, and a reading that failed is unknown, not "not relevant"."""

from __future__ import annotations

import re
import time
from typing import Any, Literal

from langgraph.runtime import Runtime

from agent import prompts
from agent.context import Context
from agent.evidence import listing, pick_sentences, sentence_record, support_context
from agent.methods.common import llm
from agent.models import ENDPOINT_KINDS
from agent.resources import index_for
from agent.schemas import Synthesis, synthesis_model
from agent.state import State
from agent.support import check_claim, normalise
from tools.fusion import round_robin
from tools.retrieve import chunk_of
from tools.sentences import Sentence, sentence_ids, sentence_index, sentence_scores
from tools.tables import cell_locator, split_cells

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
        lines.append(f"This is a multiple-choice question. Options:\n{opts}\nFirst write the claims that "
                     "decide it, then set \"choice\" to the one label they support.")
    if "table" in types and state.get("table_schema"):
        cols = ", ".join(f"{c['name']} ({c.get('type', 'string')}{', row key' if c.get('is_row_key') else ''})"
                         for c in state["table_schema"])
        lines.append(f"Also give the table in \"table_rows\": one object per row with exactly these columns: {cols}.")
    return "\n".join(lines)


def evidence_sentences(state: State, idx, ctx) -> list[Sentence]:
    """What the synthesis is shown: the sentences the readers selected in the relevant papers,
    taken in turn from each paper (reading order), at most `synthesize_sentences` from at most
    `synthesize_chunks` chunks. A reading that names chunks but no sentences (KADR's, which has
    no LLM reader) gets its chunks' sentences that best match the question."""
    per_paper: list[list[Sentence]] = []
    queries = [state["question"], *state.get("subqueries", [])]
    for r in state.get("readings", []):
        if not r.get("relevant"):
            continue
        if r.get("evidence"):
            sents = [Sentence(chunk_id=e["chunk_id"], start=e["start"], end=e["end"], text=e["text"])
                     for e in r["evidence"] if e["chunk_id"] in idx.chunk_row]
        else:
            ids = [c for c in r.get("evidence_chunk_ids", []) if c in idx.chunk_row]
            sents = pick_sentences(idx, ids, queries, ctx.read_sentence_chars)
        per_paper.append(sents)
    keyed = {(s["chunk_id"], s["start"]): s for sents in per_paper for s in sents}
    order = round_robin([[(s["chunk_id"], s["start"]) for s in sents] for sents in per_paper])
    out, chunks = [], set()
    for key in order:
        if len(out) >= ctx.synthesize_sentences:
            break
        if key[0] not in chunks and len(chunks) >= ctx.synthesize_chunks:
            continue
        chunks.add(key[0])
        out.append(keyed[key])
    # shown grouped by chunk, so a prompt lists each chunk's locator once
    first = {cid: i for i, cid in reversed(list(enumerate(s["chunk_id"] for s in out)))}
    return sorted(out, key=lambda s: (first[s["chunk_id"]], s["start"]))


def synthesis_schema(state: State, ctx, shown: list[Sentence]):
    types = state.get("answer_types") or ["freeform"]
    options = sorted(state.get("options") or {}) if "multiple_choice" in types else []
    table = "table" in types and bool(state.get("table_schema"))
    return synthesis_model(sentence_ids(len(shown)), ctx.synthesize_claims, options, table)


def synthesize_prompt(state: State, runtime, shown: list[Sentence] | None = None) -> str:
    ctx = runtime.context
    idx = index_for(ctx)
    shown = shown if shown is not None else evidence_sentences(state, idx, ctx)
    return prompts.render("synthesize", question=state["question"], answer_instructions=answer_instructions(state),
                          evidence=listing(idx, shown, with_paper=True), max_claims=ctx.synthesize_claims)


def synthesize(state: State, runtime: Runtime[Context]) -> dict:
    ctx = runtime.context
    idx = index_for(ctx)
    readings = state.get("readings", [])
    shown = evidence_sentences(state, idx, ctx)
    if not shown:
        status = answer_status(readings, state.get("errors", []))
        if status == "failed":
            return {"answer": failed_answer(failure_reason(readings, state.get("errors", [])))}
        return {"answer": {**build_answer(state, idx, None, [], failed_readings(readings)), "status": status}}
    schema = synthesis_schema(state, ctx, shown)
    value, usage, errors = llm("synthesize", schema, synthesize_prompt(state, runtime, shown), runtime)
    if value is None and any(e.get("kind") in ENDPOINT_KINDS for e in errors):
        return {"answer": failed_answer(f"the synthesis failed: {errors[0]['error'] if errors else 'no reply'}"),
                "usage": usage, "errors": errors}
    # a reply that could not be used even after the repair turn: the extractive answer
    scores = None
    if state.get("options") and "multiple_choice" in (state.get("answer_types") or []) and ctx.choice_scoring != "model":
        scores, u, e = score_options(state, runtime, shown)
        usage = _added(usage, u)
        errors = [*errors, *e]
    judge = None
    if ctx.support_judge and value is not None and value.claims:
        judge, judged = support_judge(runtime)
    status = answer_status(readings, [*state.get("errors", []), *errors])
    t = time.perf_counter()
    answer = build_answer(state, idx, value, shown, choice_scores=scores, judge=judge, threshold=ctx.support_threshold,
                          reanchor=ctx.support_reanchor)
    if judge is not None:
        usage = _added(usage, judged)
        usage["seconds_support"] = time.perf_counter() - t
    return {"answer": {**answer, "status": status}, "usage": usage, "errors": errors}


def _added(usage: dict, more: dict) -> dict:
    """Two usage records summed key by key."""
    return {k: usage.get(k, 0) + more.get(k, 0) for k in {*usage, *more}}


def _synthesis_model(ctx):
    """The synthesis's chat model, which the option scoring and the support judge also ask."""
    from agent.resources import chat_model, settings_for

    return chat_model("synthesize", settings_for(ctx), ctx.model_for("synthesize"))


def support_judge(runtime):
    """A judge for check_claims: the synthesis's model asked P(yes) per claim (agent/choice.py),
    and a counter of its calls. A failed call judges nothing (None): the deterministic check stands."""
    from agent import choice
    from agent.models import is_endpoint_error

    ctx = runtime.context
    model = _synthesis_model(ctx)
    judged: dict[str, float] = {}

    def judge(claim: str, sentences: list[str]) -> float | None:
        try:
            return choice.support_probability(model, claim, sentences, usage=judged)
        except Exception as exc:  # noqa: BLE001
            if not is_endpoint_error(exc):
                raise
            return None
    return judge, judged


def score_options(state: State, runtime, shown: list[Sentence]) -> tuple[dict | None, dict, list[dict]]:
    """The options scored as the model's next token with and without the selected sentences
    (agent/choice.py), and the label `choice_scoring` picks. (scores or None, usage, errors)."""
    from agent import choice

    ctx = runtime.context
    options = state["options"]
    labels = sorted(options)
    model = _synthesis_model(ctx)
    system = prompts.render("choose_system")
    evidence = "\n".join(s["text"] for s in shown)
    t = time.perf_counter()
    usage: dict[str, float] = {"llm_calls": 0}
    try:
        with_ev = choice.option_logprobs(model, system, choice.choice_prompt(state["question"], options, evidence), labels,
                                         options, usage=usage)
        prior = None
        if with_ev is not None and ctx.choice_scoring == "calibrated":
            prior = choice.option_logprobs(model, system, choice.choice_prompt(state["question"], options, None), labels,
                                             options, usage=usage)
    except Exception as exc:  # noqa: BLE001 - a failed scoring call leaves the synthesis's choice
        from agent.models import describe_error, is_endpoint_error

        if not is_endpoint_error(exc):
            raise
        import openai

        if isinstance(exc, openai.BadRequestError):  # the endpoint does not take logprobs: not a failure
            return {"method": ctx.choice_scoring, "unavailable": describe_error(exc)}, usage, []
        return None, usage, [{"node": "synthesize", "error": f"option scoring: {describe_error(exc)}", "kind": "call"}]
    usage["seconds_choice"] = time.perf_counter() - t
    if with_ev is None:
        return None, usage, []
    probs = choice.calibrated(with_ev, prior)
    label, margin = choice.decide(probs, choice.abstain_label(options), ctx.choice_abstain_margin)
    return ({"method": ctx.choice_scoring, "with_evidence": with_ev, "prior": prior, "probabilities": probs,
             "choice": label, "margin": margin, "abstain": choice.abstain_label(options)}, usage, [])


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
    return {"text": "", "insufficient_evidence": False, "choice": "", "table_rows": [], "citations": [], "claims": [],
            "rejected_claims": [], "papers": [], "fallback": "", "status": "failed", "failure": reason}


_MARKER = re.compile(r"\s*[\[(](?:\s*(?:S\d+|\d+|[^\[\]()\s]+#c\d+)\s*[,;]?)+[\])]")


_LEADING_IDS = re.compile(r"^(?:S\d+\s*[,;:.)\-–]?\s+)+")


def clean_claim(text: str) -> str:
    """A claim's text without citation markers the model wrote ([S3], (S1, S2), [P3#c12], [2],
    or ids leading the text: "S1 Patients with ..."), and without a sentence cut off by the
    length cap."""
    text = _LEADING_IDS.sub("", " ".join(_MARKER.sub("", text).split()))
    return whole_sentences(text[:1].upper() + text[1:])


def check_claims(claims, shown: list[Sentence], idx, judge=None, threshold: float = 0.5,
                 reanchor: int = 0) -> tuple[list[dict], list[dict]]:
    """(kept, rejected): each claim with the shown sentences it cites; a claim is rejected when
    it cites no shown sentence or says what its sentences do not (`agent.support.check_claim`).
    Ids that were not shown are dropped from a claim (and named in the rejection when none is left).
    `judge(claim, sentences) -> P(yes) or None`: a claim that passed is also dropped when the
    model's P(yes) is below `threshold`. With a judge and `reanchor` > 0, a claim that fails is
    tried on the `reanchor` other shown sentences that share most words with it, one at a time:
    one that passes both checks becomes its citation (`reanchored_from` keeps the ids the model
    gave), so a claim the model cited to the sentence next to the right one is kept, correctly
    cited, and never on the judge's word alone."""
    kept, rejected, seen = [], [], set()
    for claim in claims:
        text = clean_claim(claim.text)
        ids = list(dict.fromkeys(claim.sentences))
        known = [i for i in map(sentence_index, ids) if i is not None and i < len(shown)]
        unknown = [sid for sid in ids if sentence_index(sid) not in known]
        cited = [shown[i] for i in dict.fromkeys(known)]
        key = normalise(text)
        if not text or key in seen:
            continue
        seen.add(key)
        if not cited:
            why = f"it cites {', '.join(unknown)}, which was not shown" if unknown else "it cites no sentence"
        else:
            why = check_claim(text, [s["text"] for s in cited], support_context(idx, cited))
        p = None
        if not why and judge is not None:
            p = judge(text, [s["text"] for s in cited])
            if p is not None and p < threshold:
                why = f"the model judged that the cited sentences do not state it (P(yes) {p:.2f} < {threshold:.2f})"
        if why and judge is not None and reanchor > 0:
            moved = _reanchor(text, cited, shown, idx, judge, threshold, reanchor)
            if moved is not None:
                kept.append({"text": text, "sentences": [moved[0]], "unknown_ids": unknown, "support_p": moved[1],
                             "reanchored_from": {"sentence_ids": ids, "reason": why}})
                continue
        if why:
            rejected.append({"text": text, "sentence_ids": ids, "reason": why, **({"support_p": p} if p is not None else {})})
        else:
            kept.append({"text": text, "sentences": cited, "unknown_ids": unknown, "support_p": p})
    return kept, rejected


def _reanchor(text: str, cited: list[Sentence], shown: list[Sentence], idx, judge, threshold: float,
              tries: int) -> tuple[Sentence, float] | None:
    """The shown sentence (not among `cited`) that states the claim: the `tries` sentences with
    the best word match (BM25 over the shown sentences) are checked, best first, by the
    deterministic check and the judge; (sentence, P(yes)) of the first that passes both."""
    taken = {(s["chunk_id"], s["start"]) for s in cited}
    scores = sentence_scores(shown, [text])
    order = sorted((i for i, sc in enumerate(scores) if sc > 0 and (shown[i]["chunk_id"], shown[i]["start"]) not in taken),
                   key=lambda i: -scores[i])
    for i in order[:tries]:
        s = shown[i]
        if check_claim(text, [s["text"]], support_context(idx, [s])):
            continue
        p = judge(text, [s["text"]])
        if p is not None and p >= threshold:
            return s, p
    return None


def _with_markers(text: str, numbers: list[int]) -> str:
    marks = "".join(f"[{n}]" for n in numbers)
    if text and text[-1] in ".!?":
        return f"{text[:-1]} {marks}{text[-1]}"
    return f"{text} {marks}."


class _Citations:
    """Numbered citations, one per cited chunk, each quoting the sentences cited in it."""

    def __init__(self, idx) -> None:
        self.idx = idx
        self.by_chunk: dict[str, dict] = {}

    def cite(self, sentences: list[Sentence], claim: str = "") -> list[int]:
        numbers = []
        for s in sentences:
            c = self.by_chunk.get(s["chunk_id"])
            if c is None:
                c = self.by_chunk[s["chunk_id"]] = citation(self.idx, s["chunk_id"], len(self.by_chunk) + 1)
            if all(x["start"] != s["start"] for x in c["sentences"]):
                chunk = chunk_of(self.idx, s["chunk_id"])
                whole = chunk.locator
                c["sentences"].append({"start": s["start"], "end": s["end"], "text": s["text"],
                                       "page": whole.page_of(s["start"]),
                                       **(table_cell(chunk.text, s["text"], claim) if chunk.kind == "table" else {})})
                c["sentences"].sort(key=lambda x: x["start"])
                c["quote"] = " … ".join(x["text"] for x in c["sentences"])
                # the citation's page is where its quoted sentences are (a chunk may span two)
                c["locator"] = whole.at(c["sentences"][0]["start"], c["sentences"][-1]["end"]).to_dict()
            numbers.append(c["n"])
        return list(dict.fromkeys(numbers))

    def all(self) -> list[dict]:
        return sorted(self.by_chunk.values(), key=lambda c: c["n"])


def table_cell(table: str, row: str, claim: str) -> dict[str, Any]:
    """A cited table row's cell: {"row": its label, "column": the header of the cell holding the
    claim's first figure found in the row} (LitTraceQA table locators), {} for a caption line."""
    cells = split_cells(row)
    if not cells:
        return {}
    figures = re.findall(r"\d+(?:[.,]\d+)*%?", claim)
    value = next((f for f in figures if any(f in cell for cell in cells)), "")
    return cell_locator(table, row, value)


def extractive(shown: list[Sentence], limit: int = 3) -> list[Sentence]:
    """The sentences an extractive answer quotes: the first shown sentence of each paper's
    chunks in turn (the readers' selections), at most `limit`."""
    by_chunk = round_robin([[i for i, s in enumerate(shown) if s["chunk_id"] == cid]
                            for cid in dict.fromkeys(s["chunk_id"] for s in shown)])
    return [shown[i] for i in sorted(by_chunk[:limit])]


def _quote(text: str, limit: int = 400) -> str:
    return "\u201c" + (text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …") + "\u201d"


def build_answer(state: State, idx, value: Synthesis | None, shown: list[Sentence],
                 unread: tuple[int, int] = (0, 0), choice_scores: dict | None = None, judge=None,
                 threshold: float = 0.5, reanchor: int = 0) -> dict:
    """The answer record: the claims that passed the support check, rendered as prose with
    numbered citations that quote their sentences; the claims that failed in
    `rejected_claims`. With no claim left, or a reply that could not be used (`value` None
    with sentences shown), the answer quotes what the papers say and says that they do not
    answer the question (`fallback` "extractive"). With nothing shown at all, the no-evidence
    sentence; `unread` (failed, total readings) says how many papers could not be judged."""
    options = state.get("options") or {}
    base = {"choice": "", "table_rows": [], "claims": [], "rejected_claims": [], "citations": [], "papers": [],
            "fallback": ""}
    if not shown:
        none_found = NO_EVIDENCE_READ.format(failed=unread[0], total=unread[1]) if unread[0] else NO_EVIDENCE
        return {**base, "text": none_found, "insufficient_evidence": True}
    kept, rejected = check_claims(value.claims, shown, idx, judge, threshold, reanchor) if value is not None else ([], [])
    if value is not None and value.insufficient_evidence and kept:  # the model says they do not answer
        rejected += [{"text": c["text"], "sentence_ids": [], "reason": "the synthesis said the sentences do not "
                      "answer the question"} for c in kept]
        kept = []
    cites = _Citations(idx)
    choice = ""
    if value is not None:
        choice = value.choice.strip().upper()[:1] if value.choice else ""
        if options and choice not in options:
            choice = choice_from_text(" ".join(c.text for c in value.claims), options)
    model_choice = choice
    if choice_scores and choice_scores.get("choice") in options:
        choice = choice_scores["choice"]  # decided from the evidence (agent/choice.py)
    if kept:
        claims = [{"text": c["text"], "citations": cites.cite(c["sentences"], c["text"]),
                   "sentences": [sentence_record(idx, s) for s in c["sentences"]],
                   **({"support_p": c["support_p"]} if c["support_p"] is not None else {}),
                   **({"reanchored_from": c["reanchored_from"]} if c.get("reanchored_from") else {})} for c in kept]
        text = " ".join(_with_markers(c["text"], c["citations"]) for c in claims)
        insufficient, fallback = False, ""
    else:
        quoted = extractive(shown)
        said = " ".join(f"{_quote(s['text'])} [{n}]" for s in quoted for n in cites.cite([s]))
        if choice:
            lead = (f"{choice} ({options[choice]}) was chosen, but no claim for it could be checked "
                    "against the papers. What they say:")
        else:
            lead = "The papers found do not answer this question directly. What they say:"
        claims, text, insufficient, fallback = [], f"{lead} {said}", True, "extractive"
    columns = [c["name"] for c in state.get("table_schema") or []]
    rows = [{col: str(r.get(col, "")) for col in columns} for r in value.table_rows] if columns and value else []
    citations = cites.all()
    if options:
        base = {**base, "model_choice": model_choice, "choice_scores": choice_scores}
    return {**base, "text": text, "insufficient_evidence": insufficient, "choice": choice, "table_rows": rows,
            "claims": claims, "rejected_claims": rejected, "citations": citations, "fallback": fallback,
            "papers": list(dict.fromkeys(c["paper_id"] for c in citations))}


_SENTENCE_END = re.compile(r"[.!?](?:\s*\[[^\[\]]+\])*[\"')\]]*(?=\s|$)")


def whole_sentences(answer: str) -> str:
    """The text without a sentence cut off at the end (the embedded model's claims are capped
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
    """Citation n of a chunk; its `sentences` (offsets in `chunk_text`, the chunk's text) and
    `quote` are filled in by the claims that cite it."""
    chunk = chunk_of(idx, chunk_id)
    paper = idx.papers[chunk.paper_id]
    return {"n": n, "chunk_id": chunk_id, "paper_id": chunk.paper_id, "title": paper.title, "venue": paper.venue,
            "year": paper.year, "kind": chunk.kind, "locator": chunk.locator.to_dict(), "quote": "", "sentences": [],
            "chunk_text": chunk.text}
