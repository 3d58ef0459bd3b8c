"""The agent's state: typed, with named reducers for the fields that accumulate (STYLE.md 4).

Values are plain JSON-ready data so a SQLite checkpointer can store a thread. Chunks travel as
`Hit`s (chunk id, paper id, score, source); their texts stay in the index and are read where a
prompt needs them. Nodes return partial updates and never mutate what they were given.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from tools.base import Hit
from tools.fusion import (
    merge_pool,  # the pool's reducer: each chunk keeps its maximum score
)


def add_usage(left: dict[str, float] | None, right: dict[str, float] | None) -> dict[str, float]:
    out = dict(left or {})
    for k, v in (right or {}).items():
        out[k] = out.get(k, 0) + v
    return out


def union(left: list[str] | None, right: list[str] | None) -> list[str]:
    return list(dict.fromkeys([*(left or []), *(right or [])]))


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
    verdict: dict[str, Any]  # sufficient, evidence_papers, missing
    evidence_papers: Annotated[list[str], union]
    seeds: list[str]
    ranking: list[str]  # the fused A/B ranking (at least relate.reader_top papers)
    candidates: list[str]  # its top `read_papers`: the papers handed to the reader
    readings: list[dict[str, Any]]
    answer: dict[str, Any]  # the final answer with citations
    errors: Annotated[list[dict[str, Any]], operator.add]
    usage: Annotated[dict[str, float], add_usage]  # llm_calls, input_tokens, output_tokens, seconds per node


class OutputState(TypedDict, total=False):
    """What a run returns: the answer, and what the method did (so an evaluation reads the
    agent's own pool and rankings instead of recomputing them)."""

    question: str
    query_id: str
    answer: dict[str, Any]
    pool: dict[str, Hit]
    seeds: list[str]
    ranking: list[str]
    candidates: list[str]
    verdict: dict[str, Any]
    subqueries: list[str]
    round: int
    errors: list[dict[str, Any]]
    usage: dict[str, float]
