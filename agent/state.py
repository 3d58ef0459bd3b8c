"""The agent's state: typed, with named reducers for the fields that accumulate (STYLE.md 4).

Values are plain JSON-ready data (chunks as dicts) so a SQLite checkpointer can store a thread.
Nodes return partial updates and never mutate what they were given.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict


def merge_pool(left: dict[str, dict] | None, right: dict[str, dict] | None) -> dict[str, dict]:
    """The evidence pool across subqueries and rounds: each chunk keeps its maximum score.
    SEE: DESIGN.md section 3 step 5."""
    out = dict(left or {})
    for cid, p in (right or {}).items():
        if cid not in out or p["score"] > out[cid]["score"]:
            out[cid] = p
    return out


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
    retrieved: list[dict[str, Any]]  # this round's per-subquery retrieval rankings (for rerank)
    pool: Annotated[dict[str, dict], merge_pool]
    verdict: dict[str, Any]  # sufficient, evidence_papers, missing
    evidence_papers: Annotated[list[str], union]
    seeds: list[str]
    candidates: list[str]  # fused A/B ranking handed to the reader
    readings: list[dict[str, Any]]
    answer: dict[str, Any]  # the final answer with citations
    errors: Annotated[list[dict[str, Any]], operator.add]
    usage: Annotated[dict[str, float], add_usage]  # llm_calls, input_tokens, output_tokens, seconds per node


class OutputState(TypedDict, total=False):
    question: str
    query_id: str
    answer: dict[str, Any]
    candidates: list[str]
    subqueries: list[str]
    round: int
    errors: list[dict[str, Any]]
    usage: dict[str, float]
