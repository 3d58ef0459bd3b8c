"""The agent's state: typed, with named reducers for the fields that accumulate.

Values are plain JSON-ready data so a SQLite checkpointer can store a thread. Chunks travel as
`Hit`s (chunk id, paper id, score, source); their texts stay in the index and are read where a
prompt needs them. Nodes return partial updates and never mutate what they were given.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, NotRequired, TypedDict

from typing_extensions import (
    TypedDict as Record,  # nested records: pydantic takes these on 3.11
)

from agent.records.answer import Answer, SentenceRecord
from tools.base import Hit
from tools.retrieval.fusion import (
    merge_pool,  # the pool's reducer: each chunk keeps its maximum score
)


def add_usage(left: dict[str, float] | None, right: dict[str, float] | None) -> dict[str, float]:
    out = dict(left or {})
    for k, v in (right or {}).items():
        out[k] = out.get(k, 0) + v
    return out


def union(left: list[str] | None, right: list[str] | None) -> list[str]:
    return list(dict.fromkeys([*(left or []), *(right or [])]))


class Reading(Record):
    """One candidate paper as the method read it. `failed`: the reader's call failed, so the
    paper is unknown, never "not relevant". RRA's reader gives sentences (`evidence`); KADR's
    reading names chunks only (`evidence_chunk_ids`)."""

    paper_id: str
    relevant: bool
    failed: NotRequired[bool]
    model_relevant: NotRequired[bool]  # what the reader said before `accept_reading`
    relevant_p: NotRequired[float | None]
    evidence: NotRequired[list[SentenceRecord]]
    evidence_chunk_ids: NotRequired[list[str]]
    sentences_shown: NotRequired[int]
    unknown_sentence_ids: NotRequired[list[str]]
    note: NotRequired[str]
    finding: NotRequired[str]
    rejected_finding: NotRequired[dict[str, str]]  # text, reason
    sufficient: NotRequired[bool]
    # who chose the evidence of a joint reading (`reading` "joint"): "selector", the evidence
    # selector alone (a fact, the synthesis reads them together); "joint", the one call that read
    # every candidate of a "which papers" question; "similarity" or "judge", a "which papers"
    # candidate accepted by its cosine with the question or the model's P(yes)
    reader: NotRequired[str]
    similarity: NotRequired[float]  # a "which papers" candidate's cosine with the question
    # a comparison's cells, column -> the sentence that fills it (chunk_id, text, ...)
    cells: NotRequired[dict[str, dict[str, Any]]]


class Verdict(Record, total=False):
    """The verifier's verdict on the pool: `failed` when its call failed, `llm` False when no
    LLM was asked, `missing_terms` the question's words that the coverage verdict found in none
    of the best sentences (`verify_without_llm` "coverage"), `knowledge` KADR's statements."""

    sufficient: bool
    evidence_papers: list[str]
    missing: str
    missing_terms: list[str]
    failed: bool
    llm: bool
    knowledge: Any


class RunError(Record):
    """A failed step of the run: the node, what went wrong, its kind (agent.llm.ErrorKind),
    the raw reply when there was one."""

    node: str
    error: str | None
    kind: str | None
    raw: NotRequired[str]


class InputState(TypedDict, total=False):
    question: str
    query_id: str
    answer_types: list[str]  # freeform | multiple_choice | table
    options: dict[str, str]  # multiple-choice label -> text
    table_schema: list[dict[str, Any]]


class State(InputState, total=False):
    round: Annotated[int, operator.add]  # rounds started; decompose adds 1
    subqueries: Annotated[list[str], operator.add]  # every subquery so far
    new_subqueries: list[str]  # this round's
    # this round's searches, one per subquery: subquery, prf_query, papers (its fused paper
    # ranking, top 50), hits (the chunk ranking handed to the reranker)
    retrieved: list[dict[str, Any]]
    pool: Annotated[dict[str, Hit], merge_pool]  # chunk id -> best hit over subqueries and rounds
    verdict: Verdict
    evidence_papers: Annotated[list[str], union]
    seeds: list[str]
    ranking: list[str]  # the fused A/B ranking (at least relate.reader_top papers)
    candidates: list[str]  # its top `read_papers`: the papers handed to the reader
    readings: list[Reading]
    # a question about a cited work (agent/nodes/citations.py): the works it names and each
    # citing sentence read (chunk_id, start, citation_id, cited, intent)
    cited_works: list[str]
    citation_contexts: list[dict[str, Any]]
    answer: Answer  # the final answer with citations
    errors: Annotated[list[RunError], operator.add]
    usage: Annotated[dict[str, float], add_usage]  # llm_calls, input_tokens, output_tokens, seconds per node


class OutputState(TypedDict, total=False):
    """What a run returns: the answer, and what the method did (so an evaluation reads the
    agent's own pool and rankings instead of recomputing them)."""

    question: str
    query_id: str
    answer: Answer
    pool: dict[str, Hit]
    seeds: list[str]
    ranking: list[str]
    candidates: list[str]
    verdict: Verdict
    subqueries: list[str]
    round: int
    errors: list[RunError]
    usage: dict[str, float]
