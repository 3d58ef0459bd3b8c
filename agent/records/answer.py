"""The answer's records as types: what the synthesize node writes to the state's `answer` and
what a run returns (agent/state.py `OutputState`, `agent.api.ask`). TypedDicts, not classes:
the values stay the plain JSON-ready dicts a checkpointer stores and the JSON they make is
unchanged; the types say which keys there are. `typing_extensions.TypedDict`, which pydantic
(LangGraph's schema export) accepts on Python 3.11."""

from __future__ import annotations

from typing import Any, Literal, NotRequired

from typing_extensions import TypedDict

Status = Literal["ok", "partial", "failed"]


class SentenceRecord(TypedDict):
    """A sentence as a reading or a claim records it (`agent.reading.evidence.sentence_record`)."""

    chunk_id: str
    paper_id: str
    start: int
    end: int
    text: str
    locator: dict[str, Any]  # tools.base.Locator.to_dict() of the sentence's span


class QuotedSentence(TypedDict):
    """A sentence a citation quotes: offsets in the chunk's text, its page, and for a table row
    the cell holding the claim's figure (`row`, `column`)."""

    start: int
    end: int
    text: str
    page: int | None
    row: NotRequired[str | int]  # the row's label, else its index
    column: NotRequired[str | int]  # the column's name, else its index


class Citation(TypedDict):
    """Citation `n`: one cited chunk, quoting the sentences the claims cite in it."""

    n: int
    chunk_id: str
    paper_id: str
    title: str
    authors: NotRequired[list[str]]
    venue: str | None
    year: int | None
    kind: str
    locator: dict[str, Any]
    quote: str
    sentences: list[QuotedSentence]
    chunk_text: str
    # a citing sentence of a question about a cited work: "citation_context", and the entries cited
    source: NotRequired[str]
    cited: NotRequired[list[dict[str, Any]]]


class Reanchored(TypedDict):
    """The ids the model cited for a claim that was moved to the sentence that states it."""

    sentence_ids: list[str]
    reason: str


class Claim(TypedDict):
    """A claim that passed its checks, with its citation numbers and the sentences it rests on."""

    text: str
    citations: list[int]
    sentences: list[SentenceRecord]
    support_p: NotRequired[float]  # the judge's P(yes), when it was asked
    reanchored_from: NotRequired[Reanchored]
    theme: NotRequired[int]  # an overview theme's lead (agent/answer/leads.py): the theme's number, from 1


class RejectedClaim(TypedDict):
    """A claim the answer dropped, and why."""

    text: str
    sentence_ids: list[str]
    reason: str
    support_p: NotRequired[float]
    theme: NotRequired[int]  # a theme's lead that was dropped


class ChoiceScores(TypedDict, total=False):
    """The options scored from the evidence (`agent.answer.choice.score_options`); only `method`
    and `unavailable` when the endpoint gave no log-probabilities."""

    method: str
    unavailable: str
    with_evidence: dict[str, float]
    prior: dict[str, float] | None
    probabilities: dict[str, float]
    choice: str
    margin: float
    abstain: str | None


class ChosenSentence(TypedDict, total=False):
    """A fact chosen, then copied (`agent.answer.copy`): what ordered the sentences offered to the
    copy step ("words": BM25, no model call; "letter", "yesno": the model's probabilities), their
    scores in the order the answer quotes them (the one holding the value first), the value
    copied, and why no claim was made from it when none was."""

    chooser: str
    scores: list[float]
    value: str
    note: str


class Answer(TypedDict):
    """The answer record (`agent.answer.assemble.build_answer`, `agent.answer.status.failed_answer`)."""

    text: str
    insufficient_evidence: bool
    choice: str
    table_rows: list[dict[str, str]]
    claims: list[Claim]
    rejected_claims: list[RejectedClaim]
    citations: list[Citation]
    papers: list[str]
    fallback: str  # "" or "extractive"
    status: NotRequired[Status]  # set by the node; absent only on the record build_answer returns
    failure: NotRequired[str]  # why there is no answer (status failed)
    model_choice: NotRequired[str]  # multiple choice: the synthesis's own label
    choice_scores: NotRequired[ChoiceScores | None]
    flagged_papers: NotRequired[list[dict[str, str]]]  # papers with text addressed to their reader
    disagreements: NotRequired[list[dict[str, Any]]]  # claims giving different figures (answer/disagree.py)
    # "fact", "papers", "overview" or "comparison" (agent/reading/shape.py): what the question asked for
    shape: NotRequired[str]
    chosen: NotRequired[ChosenSentence]  # a fact's sentence chosen and its value copied
    # an overview's themes (agent/answer/overview.py): name, key terms, the papers in the theme,
    # and `lead`, the one sentence that opens it where one was written and kept (agent/answer/leads.py)
    themes: NotRequired[list[dict[str, Any]]]
