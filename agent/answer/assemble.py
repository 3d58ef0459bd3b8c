"""The answer record: the claims that passed their checks as prose with numbered citations,
the option and table asked for, the claims that failed; with no claim left, the extractive
answer that quotes what the papers say instead of guessing (docs/attribution.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from agent.answer.choice import choice_from_text
from agent.answer.citations import Citations, with_markers
from agent.answer.claims import check_claims
from agent.answer.disagree import disagreement_note, disagreements
from agent.answer.selection import extractive, reading_sentences
from agent.answer.titles import title_only
from agent.llm.schemas import Synthesis
from agent.reading.evidence import sentence_record
from agent.records.answer import Answer, ChoiceScores
from agent.state import State
from tools.retrieval.sentences import Sentence

if TYPE_CHECKING:
    from agent.answer.leads import LeadWriter
    from agent.state import Reading
    from tools.handle import IndexHandle

NO_EVIDENCE = "The indexed papers do not contain evidence that answers this question."
# no evidence, but some readings failed: what was not read is not known to lack evidence
NO_EVIDENCE_READ = (
    "No evidence that answers this question was found in the papers that could be read "
    "({failed} of {total} readings failed, so this says nothing about those papers)."
)


NOT_STATED = "not stated in the sentences read"
CELL_CHARS = 200  # a table cell quotes at most this much of its sentence; the claim keeps all of it


def _quote(text: str, limit: int = 400) -> str:
    return "\u201c" + (text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …") + "\u201d"


def _after_title(quote: str, title: str) -> str:
    """A paper's quote as its line shows it after its title: without the title where the quote
    opens with it (a record's first sentence often carries it), "… " marking the cut."""
    rest = quote[len(title) :].lstrip(" :.-") if title and quote.startswith(title) else ""
    return f"… {rest}" if rest else quote


def _blank() -> dict[str, Any]:
    """The fields of an answer record that say nothing yet: no choice, rows, claims, citations."""
    return {
        "choice": "",
        "table_rows": [],
        "claims": [],
        "rejected_claims": [],
        "citations": [],
        "papers": [],
        "fallback": "",
    }


def flagged_papers(idx: IndexHandle, shown: list[Sentence], read: Sequence[str] = ()) -> list[dict[str, str]]:
    """The papers among the shown sentences' (and `read`, the papers the run read) that contain
    text addressed to whoever reads them, each with the first such sentence: the answer names
    them so a reader knows a paper tried to steer it (their own sentences were withheld; their
    others support no claim alone)."""
    from agent.reading.evidence import flagged_sentences
    from tools.retrieval.retrieve import chunk_of

    papers = dict.fromkeys([*(chunk_of(idx, s["chunk_id"]).paper_id for s in shown), *read])
    return [
        {"paper_id": pid, "sentence": found[0][0], "why": found[0][1]}
        for pid in papers
        if (found := flagged_sentences(idx, pid))
    ]


def build_answer(
    state: State,
    idx: IndexHandle,
    value: Synthesis | None,
    shown: list[Sentence],
    unread: tuple[int, int] = (0, 0),
    choice_scores: ChoiceScores | None = None,
    judge: Any = None,
    threshold: float = 0.5,
    reanchor: int = 0,
    ranked: bool = False,
    figure: str = "",
) -> Answer:
    """The answer record: the claims that passed the support check, rendered as prose with
    numbered citations that quote their sentences; the claims that failed in
    `rejected_claims`. With no claim left, or a reply that could not be used (`value` None
    with sentences shown), the answer quotes what the papers say and says that they do not
    answer the question (`fallback` "extractive"). With nothing shown at all, the no-evidence
    sentence; `unread` (failed, total readings) says how many papers could not be judged.
    `ranked`: `shown` is best first (a chosen fact), and the quote follows that order; `figure`,
    the value copied from the first, which the quote's lead names."""
    options = state.get("options") or {}
    base = _blank()
    if not shown:
        none_found = NO_EVIDENCE_READ.format(failed=unread[0], total=unread[1]) if unread[0] else NO_EVIDENCE
        return cast(Answer, {**base, "text": none_found, "insufficient_evidence": True})
    kept, rejected = (
        check_claims(value.claims, shown, idx, judge, threshold, reanchor, state["question"])
        if value is not None
        else ([], [])
    )
    if value is not None and value.insufficient_evidence and kept:  # the model says they do not answer
        rejected += [
            {
                "text": c["text"],
                "sentence_ids": [],
                "reason": "the synthesis said the sentences do not answer the question",
            }
            for c in kept
        ]
        kept = []
    cites = Citations(idx)
    choice = ""
    if value is not None:
        choice = value.choice.strip().upper()[:1] if value.choice else ""
        if options and choice not in options:
            choice = choice_from_text(" ".join(c.text for c in value.claims), options)
    model_choice = choice
    if choice_scores and choice_scores.get("choice") in options:
        choice = choice_scores["choice"]  # decided from the evidence (agent/answer/choice.py)
    if kept:
        claims = [
            {
                "text": c["text"],
                "citations": cites.cite(c["sentences"], c["text"]),
                "sentences": [sentence_record(idx, s) for s in c["sentences"]],
                **({"support_p": c["support_p"]} if c["support_p"] is not None else {}),
                **({"reanchored_from": c["reanchored_from"]} if c.get("reanchored_from") else {}),
            }
            for c in kept
        ]
        text = " ".join(with_markers(c["text"], c["citations"]) for c in claims)
        if found := disagreements(claims):
            base = {**base, "disagreements": found}
            text = f"{text} {disagreement_note(found, claims)}"
        insufficient, fallback = False, ""
    else:
        quoted = shown[:3] if ranked else extractive(shown, question=state["question"])
        said = " ".join(f"{_quote(s['text'])} [{n}]" for s in quoted for n in cites.cite([s]))
        if choice:
            lead = (
                f"{choice} ({options[choice]}) was chosen, but no claim for it could be checked "
                "against the papers. What they say:"
            )
        elif figure:
            lead = (
                "No claim could be checked against the papers. The sentence most likely to answer, "
                f"quoted first, gives {figure}. What they say:"
            )
        else:
            lead = "The papers found do not answer this question directly. What they say:"
        claims, text, insufficient, fallback = [], f"{lead} {said}", True, "extractive"
    columns = [c["name"] for c in state.get("table_schema") or []]
    rows = [{col: str(r.get(col, "")) for col in columns} for r in value.table_rows] if columns and value else []
    citations = cites.all()
    flagged = flagged_papers(idx, shown)
    if flagged:
        base = {**base, "flagged_papers": flagged}
    if options:
        base = {**base, "model_choice": model_choice, "choice_scores": choice_scores}
    return cast(
        Answer,
        {
            **base,
            "text": text,
            "insufficient_evidence": insufficient,
            "choice": choice,
            "table_rows": rows,
            "claims": claims,
            "rejected_claims": rejected,
            "citations": citations,
            "fallback": fallback,
            "papers": list(dict.fromkeys(c["paper_id"] for c in citations)),
        },
    )


def _quoted_claim(
    idx: IndexHandle, cites: Citations, sents: list[Sentence], text: str | None = None
) -> tuple[dict[str, Any], str, str]:
    """A claim citing `sents`: (the claim, its text, its citation marks "[1][2]"); its text is
    `text` where given (a theme's lead), else the sentences themselves, quoted."""
    said = " ".join(s["text"] for s in sents) if text is None else text
    numbers = cites.cite(sents, said)
    claim = {"text": said, "citations": numbers, "sentences": [sentence_record(idx, s) for s in sents]}
    return claim, said, "".join(f"[{n}]" for n in numbers)


def _markdown_table(names: list[str], heads: list[str], rows: list[dict[str, str]]) -> list[str]:
    """The lines of a markdown table: `names` as its header, each row's `heads` as its cells."""
    return [
        "| " + " | ".join(names) + " |",
        "|" + "---|" * len(names),
        *("| " + " | ".join(row[h].replace("|", "/") for h in heads) + " |" for row in rows),
    ]


def papers_answer(state: State, idx: IndexHandle, readings: list[Reading]) -> Answer:
    """The answer to a "which papers" question read jointly (`list_reading` other than
    "per_paper"): each paper the
    reading picked, in the order of the fused ranking (the strength of its retrieval evidence),
    named with the sentences that show it qualifies, quoted as they stand in the paper. Each
    paper is one claim whose text is those sentences, so nothing in it is the model's words."""
    cites = Citations(idx)
    claims: list[Any] = []
    lines: list[str] = []
    for r in readings:
        sents = reading_sentences(r, idx) if r.get("relevant") else []
        if not sents:
            continue
        claim, quote, marks = _quoted_claim(idx, cites, sents)
        claims.append(claim)
        paper = idx.papers[r["paper_id"]]
        title = title_only(paper.title)
        lines.append(f"{len(lines) + 1}. {title} ({r['paper_id']}): {_quote(_after_title(quote, title))} {marks}")
    read = sum(1 for r in readings if not r.get("failed"))
    if not claims:
        text = f"None of the {read} papers read shows that it is one the question asks for."
        return cast(Answer, {**_blank(), "text": text, "insufficient_evidence": True, "shape": "papers"})
    lead = (
        f"{len(claims)} of the {read} papers read answer this:"
        if len(claims) > 1
        else f"1 of the {read} papers read answers this:"
    )
    shown = [s for c in claims for s in c["sentences"]]
    return _quoted_answer(idx, "\n".join([lead, *lines]), claims, cites, shown, "papers")


def overview_answer(
    state: State, idx: IndexHandle, readings: list[Reading], most_themes: int, write_lead: LeadWriter | None = None
) -> Answer:
    """The answer to an overview question read jointly: the papers that qualified (as for
    `papers_answer`), grouped into themes named by their key terms (agent/answer/overview.py),
    each paper quoted with its sentences and cited; a markdown table (theme, paper, what it
    says) instead of the list when the question asks for one. With `write_lead`
    (agent/answer/leads.py), each theme opens with the one sentence the model wrote from its
    papers' sentences where it passed the claims' checks (`themes[n]["lead"]`, a claim with
    `theme` set); a lead that failed is among `rejected_claims`. Nothing else in it is the
    model's words; `themes` holds each theme's name, terms and papers."""
    from agent.answer.leads import lead_sentences
    from agent.answer.overview import asks_for_table, theme_heading, themes

    picked = [(r, s) for r in readings if r.get("relevant") and (s := reading_sentences(r, idx))]
    read = sum(1 for r in readings if not r.get("failed"))
    if not picked:
        text = f"None of the {read} papers read shows that it is one the question asks about."
        return cast(Answer, {**_blank(), "text": text, "insufficient_evidence": True, "shape": "overview"})
    sents_of = {r["paper_id"]: s for r, s in picked}
    pids = list(sents_of)
    title_of = {p: title_only(idx.papers[p].title) for p in pids}
    texts = [" ".join([title_of[p], *(x["text"] for x in sents_of[p])]) for p in pids]
    grouped = themes(idx, state["question"], pids, texts, most_themes, list(title_of.values()))
    cites = Citations(idx)
    claims: list[Any] = []
    lines: list[str] = []
    rows: list[dict[str, str]] = []
    rejected: list[dict[str, Any]] = []
    for t_no, theme in enumerate(grouped, 1):
        lines.append(theme_heading(t_no, theme))
        if write_lead is not None:
            kept, dropped = write_lead(theme, lead_sentences(theme["papers"], sents_of))
            rejected += [{**r, "theme": t_no} for r in dropped]
            if kept is not None:
                claim, said, marks = _quoted_claim(idx, cites, kept["sentences"], kept["text"])
                claims.append({**claim, "theme": t_no})
                theme["lead"] = said
                lines.append(f"{said} {marks}")
        for pid in theme["papers"]:
            claim, quote, marks = _quoted_claim(idx, cites, sents_of[pid])
            claims.append(claim)
            title = f"{title_of[pid]} ({pid})"
            lines.append(f"- {title}: {_quote(_after_title(quote, title_of[pid]))} {marks}")
            rows.append(
                {"theme": theme["name"], "paper": title, "what it says": f"{_quote(quote, CELL_CHARS)} {marks}"}
            )
    lead = f"{len(picked)} of the {read} papers read answer this, in {len(grouped)} theme{'s' if len(grouped) != 1 else ''}:"
    if asks_for_table(state["question"]):
        body = _markdown_table(["Theme", "Paper", "What it says"], ["theme", "paper", "what it says"], rows)
        text = "\n".join([lead, *body])
    else:
        text = "\n".join([lead, *lines])
    shown = [x for _, s in picked for x in s]
    return _quoted_answer(
        idx, text, claims, cites, shown, "overview", themes=grouped, table_rows=rows, rejected_claims=rejected
    )


def comparison_answer(state: State, idx: IndexHandle, readings: list[Reading], columns: list[str]) -> Answer:
    """The answer to a comparison read jointly: a table, one row per paper that qualified (at most
    `compare_papers`, in the order of the fused ranking), one column per aspect the question
    names, each cell a quote of the paper's sentence for that aspect with its citation ("not
    stated in the sentences read" where none matched). Each cell is one claim whose text is its
    sentence, so nothing in the table is the model's words. `table_rows` holds the same cells,
    keyed by "paper" and the columns."""
    from agent.reading.shape import COMPARE_COLUMN

    cites = Citations(idx)
    claims: list[Any] = []
    rows: list[dict[str, str]] = []
    shown: list[Sentence] = []
    for r in readings:
        if not r.get("relevant") or "cells" not in r:
            continue
        paper = idx.papers[r["paper_id"]]
        row = {"paper": f"{title_only(paper.title)} ({r['paper_id']})"}
        for col in columns:
            cell = r["cells"].get(col)
            if cell is None or cell["chunk_id"] not in idx.chunk_row:
                row[col] = NOT_STATED
                continue
            sent = Sentence(chunk_id=cell["chunk_id"], start=cell["start"], end=cell["end"], text=cell["text"])
            numbers = cites.cite([sent], sent["text"])
            claims.append({"text": sent["text"], "citations": numbers, "sentences": [sentence_record(idx, sent)]})
            shown.append(sent)
            row[col] = f"{_quote(sent['text'], CELL_CHARS)} {''.join(f'[{n}]' for n in numbers)}"
        rows.append(row)
    read = sum(1 for r in readings if not r.get("failed"))
    if not claims:
        text = f"None of the {read} papers read has sentences to compare on this."
        return cast(Answer, {**_blank(), "text": text, "insufficient_evidence": True, "shape": "comparison"})
    heads = ["paper", *columns]
    names = ["Paper", *("What it says" if c == COMPARE_COLUMN else c for c in columns)]
    table = _markdown_table(names, heads, rows)
    lead = f"{len(rows)} of the {read} papers read compared:"
    return _quoted_answer(idx, "\n".join([lead, *table]), claims, cites, shown, "comparison", table_rows=rows)


def _quoted_answer(
    idx: IndexHandle, text: str, claims: list[Any], cites: Citations, shown: list[Any], shape: str, **extra: Any
) -> Answer:
    """An answer made of quoted claims (a papers list or a comparison table): its citations, the
    papers they cite, and the papers among `shown` flagged for steering sentences."""
    citations = cites.all()
    answer: dict[str, Any] = {
        **_blank(),
        "text": text,
        "insufficient_evidence": False,
        "claims": claims,
        "citations": citations,
        **extra,
        "papers": list(dict.fromkeys(c["paper_id"] for c in citations)),
        "shape": shape,
    }
    flagged = flagged_papers(idx, shown)
    if flagged:
        answer["flagged_papers"] = flagged
    return cast(Answer, answer)
