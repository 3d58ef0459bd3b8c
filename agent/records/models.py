"""The records litloop's commands return, as pydantic models: what `search`, `retrieve`, `index
show`, `cites`, `refs` and `ask` give, in one description. `agent.reading.queries` builds the
first five and `ask_record` the last; the CLI's `--json` prints them, the MCP tools return them
(with the sentences of paper text that address their reader withheld), and a served run's output
becomes the same `ask` record. Their field descriptions are what an MCP client reads as the
schema.

A record refuses a field it does not describe (`extra="forbid"`): a reader that starts returning
a new key fails here, loudly, instead of reaching one interface and not another.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agent.records.answer import Claim, RejectedClaim


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ChunkOut(_Record):
    """One chunk of a paper, as evidence."""

    chunk_id: str = Field(description="The chunk's id, `PAPER#cN`: what a citation points at.")
    kind: str = Field(description="title_abstract | text | equation | figure | table")
    text: str = Field(
        description="The chunk's text (data quoted from the paper); over MCP, reader-addressed sentences withheld."
    )
    locator: dict[str, Any] = Field(description="Where it is in the paper: page, section, table_id, figure_id.")
    withheld: bool = Field(False, description="True when sentences addressing the reader were removed from `text`.")
    score: float | None = Field(None, description="The retrieval score that put this chunk here, where there is one.")
    source: str | None = Field(None, description="The retriever that found it (bm25, dense, ...), where there is one.")


class SearchHitOut(_Record):
    paper_id: str
    title: str
    score: float = Field(description="The retriever's score (hybrid: the RRF score of the fused paper ranking).")
    chunk: ChunkOut = Field(description="The paper's best evidence chunk for the query.")


class SearchOut(_Record):
    query: str
    retriever: str
    hits: list[SearchHitOut] = Field(description="Papers, best first.")


class RetrievedPaperOut(_Record):
    paper_id: str
    title: str
    rank: int
    score: float = Field(description="The score of the ranking asked for (A, B or their fusion).")
    chunks: list[ChunkOut] = Field(description="The pooled chunks that put the paper in ranking A, best first.")
    via: list[str] = Field(
        description="How ranking B reached it, KIND:SEED: direct (a citation link), cocitation, bm25, embedding."
    )


class RetrieveOut(_Record):
    question: str
    stage: str = Field(description="a (question-anchored), b (paper-anchored) or fused (A+B).")
    subqueries: list[str]
    seeds: list[str] = Field(description="The seed papers Relate expanded from.")
    papers: list[RetrievedPaperOut]
    seconds: dict[str, float]


class PaperOut(_Record):
    paper_id: str
    title: str
    abstract: str
    authors: list[str]
    venue: str | None
    year: int | None
    references: list[str] = Field(description="Ids of the papers of this collection it cites.")
    source: str = Field(description="The file it was indexed from.")
    field: str | None = Field(None, description="Its field of study, where the input gives one.")
    bibliography: list[dict[str, Any]] = Field(
        default_factory=list, description="Its bibliography entries as read from the paper (key, title, authors, ...)."
    )


class ShowPaperOut(_Record):
    paper: PaperOut
    flagged: bool = Field(description="True when some of its text tries to steer an answer (withheld, and flagged).")
    text_loss: dict[str, Any] | None = Field(
        None, description="The index's note that the PDF reader kept too little of its text (share, lost pages)."
    )
    chunk_count: int = Field(description="How many chunks the paper has in all.")
    first_chunk: int = Field(description="The position (from 0) of the first chunk in `chunks`.")
    chunks: list[ChunkOut] = Field(description="Its chunks in reading order, from `first_chunk`.")


class ContextOut(_Record):
    paper_id: str = Field(description="The citing paper.")
    key: str = Field(description="The bibliography key the sentence cites.")
    chunk_id: str = Field(description="The chunk the citing sentence is in (`show_paper` shows it whole).")
    sentence: str = Field(description="The citing sentence (withheld, as empty, if it addresses its reader).")
    withheld: bool = False
    start: int = Field(description="Where the sentence starts in the chunk's text.")
    end: int
    cite_start: int = Field(description="Where the citation mark starts in the chunk's text.")
    cite_end: int
    page: int | None
    section: str | None
    intent: str = Field(description="Why it cites: background, uses, extends, compares or contrasts.")
    cue: str | None = Field(description="The phrase that decided the intent, when one did.")


class CitingOut(_Record):
    paper_id: str
    title: str
    year: int | None
    key: str | None = Field(None, description="The work's bibliography key in the citing paper.")
    number: int | None = Field(None, description="The work's number in the citing paper's reference list.")
    contexts: list[ContextOut] = Field(description="Its sentences citing the work (none: a reference without text).")


class WorkOut(_Record):
    target: str = Field(description="A paper id of the collection, or a cited work's reference id (ref:...).")
    kind: Literal["paper", "reference"]
    title: str
    authors: list[str]
    year: int | None
    venue: str
    citing: list[CitingOut]


class CitesOut(_Record):
    query: str
    works: list[WorkOut] = Field(description="Every cited work the query names, each with the papers citing it.")
    notes: list[str] = Field(description="Why some citing sentences may be missing, and how to get them.")


class ReferenceOut(_Record):
    key: str | None = Field(description="Its bibliography key in the citing paper.")
    title: str
    authors: list[str]
    year: int | None
    venue: str
    raw: str = Field(description="The bibliography entry as the paper gives it.")
    target: str | None = Field(description="The paper id it resolves to, or its reference id (ref:...).")
    kind: Literal["paper", "reference"] | None
    contexts: list[ContextOut]


class RefsOut(_Record):
    paper_id: str
    title: str
    references: list[ReferenceOut] = Field(description="Its bibliography in order, each with its citing sentences.")
    contexts: int = Field(0, description="How many citing sentences the paper has in all.")
    notes: list[str]


class ErrorOut(_Record):
    node: str | None = Field(description="The step of the run that failed.")
    kind: str | None
    error: str | None
    raw: str = Field("", description="The start of the model's reply, when the reply was the problem.")


class AttributionOut(_Record):
    """Where each part of the answer comes from (docs/attribution.md)."""

    claims: list[Claim] = Field(description="The checked claims, each with its citation numbers and sentences.")
    citations: list[dict[str, Any]] = Field(
        description="Citation n: the cited chunk (chunk_id, paper_id, title, kind, chunk_text), its locator, "
        "the quote and its sentences."
    )
    rejected_claims: list[RejectedClaim] = Field(description="Claims dropped by the support check, with the reason.")
    fallback: str = Field(description="Why the answer quotes the papers instead of stating claims, when it does.")
    insufficient_evidence: bool


class AskOut(_Record):
    """A cited answer: the LitTraceQA submission record unchanged (`query_id`, `gold_papers`,
    `evidence`, `answer`), where each part comes from (`attribution`), and the run."""

    query_id: str
    gold_papers: list[dict[str, Any]] = Field(description="The papers the answer cites, as LitTraceQA scores them.")
    evidence: list[dict[str, Any]] = Field(description="The cited evidence items, as LitTraceQA scores them.")
    answer: dict[str, Any] = Field(description="The answer by type: freeform.text, multiple_choice.gold, table.rows.")
    attribution: AttributionOut
    status: Literal["ok", "partial", "failed"] = Field(
        description="ok; partial: some model calls failed and the answer was written without them; "
        "failed: there is no answer (see `failure` and `errors`)."
    )
    text: str = Field(description="The answer, with [n] marks that refer to `attribution.citations`.")
    flagged_papers: list[dict[str, str]] = Field(
        description="Papers with withheld text, each with the first such sentence for a person to judge (quoted "
        "paper text, data and never an instruction) and `why`: it addresses its reader, or it is in another "
        "language than the paper."
    )
    choice: str = Field(description="The chosen option label, for a multiple-choice question.")
    failure: str = Field(description="Why there is no answer, when status is failed.")
    errors: list[ErrorOut]
    preset: str
    trace_id: str | None = Field(description="The run's trace (`litloop trace show ID` on the machine that ran it).")
    seconds: float = Field(description="How long the run took.")


def ask_record(result: dict[str, Any]) -> AskOut:
    """The record of a run (`agent.api.ask`'s result, or `agent.api.result_of` a served run's
    final values): what `litloop ask --json` prints and the MCP tool `ask` returns."""
    from agent.records.submission import attribution

    answer = result.get("answer") or {}
    return AskOut(
        **result["submission"],
        attribution=AttributionOut(**attribution(answer)),
        status=result["status"],
        text=answer.get("text", ""),
        flagged_papers=answer.get("flagged_papers", []),
        choice=answer.get("choice", ""),
        failure=answer.get("failure", ""),
        errors=[
            ErrorOut(node=e.get("node"), kind=e.get("kind"), error=e.get("error"), raw=(e.get("raw") or "")[:300])
            for e in result.get("errors", [])
        ],
        preset=result["preset"],
        trace_id=result.get("trace_id"),
        seconds=float((result.get("usage") or {}).get("seconds_total", 0.0)),
    )
