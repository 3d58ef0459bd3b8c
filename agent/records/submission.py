"""LitTraceQA records and the agent: a question record as `ask()` arguments, and a run's answer
as a submission record (the `--json` contract of `litloop ask`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# chunk kind -> LitTraceQA evidence source type
SOURCE_TYPE = {
    "table": "table",
    "figure": "figure",
    "equation": "equation_algorithm",
    "text": "text_span",
    "title_abstract": "text_span",
}


# ----------------------------------------------------------------------------- questions in


def answer_part(record: Mapping[str, Any], part: str) -> Mapping[str, Any] | None:
    """A record's `answer.<part>` object (`freeform`, `multiple_choice`, `table`), if it has one."""
    answer = record.get("answer")
    value = answer.get(part) if isinstance(answer, Mapping) else None
    return value if isinstance(value, Mapping) else None


def question_options(record: Mapping[str, Any]) -> dict[str, str] | None:
    """Multiple-choice options, label -> text: a LitTraceQA input's `multiple_choice_options`
    list, or a benchmark record's `answer.multiple_choice.options` map."""
    listed = record.get("multiple_choice_options")
    if isinstance(listed, list) and listed:
        return {str(o["label"]): str(o["text"]) for o in listed}
    part = answer_part(record, "multiple_choice")
    options = part.get("options") if part else None
    return {str(k): str(v) for k, v in options.items()} if isinstance(options, Mapping) and options else None


def question_table_schema(record: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The table's columns: `table_schema`, or a benchmark record's `answer.table.schema`."""
    schema = record.get("table_schema")
    if not schema:
        part = answer_part(record, "table")
        schema = part.get("schema") if part else None
    return [dict(c) for c in schema] if isinstance(schema, list) and schema else None


def ask_arguments(record: Mapping[str, Any]) -> dict[str, Any]:
    """`ask()` keyword arguments from a question record (LitTraceQA input or benchmark record)."""
    return {
        "query_id": record["query_id"],
        "answer_types": list(record.get("answer_types") or ["freeform"]),
        "options": question_options(record),
        "table_schema": question_table_schema(record),
    }


# ----------------------------------------------------------------------------- answers out


def evidence_locator(locator: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(locator.get("page"), int) and locator["page"] >= 1:
        out["page"] = locator["page"]
    for key in ("section", "table_id", "figure_id"):
        if locator.get(key):
            out[key] = str(locator[key])
    return out


def evidence_items(citation: dict[str, Any]) -> list[dict[str, Any]]:
    """A citation as LitTraceQA evidence: one item, or for a table one per cited row, its
    locator naming the row (its label) and the column of the cited value."""
    base = {
        "paper_id": citation["paper_id"],
        "source_type": SOURCE_TYPE.get(citation["kind"], "text_span"),
        "locator": evidence_locator(citation["locator"]),
    }
    if citation.get("source") == "citation_context":  # one item per entry the sentence cites
        items = [
            {
                **base,
                "source_type": "citation_context",
                "locator": {**base["locator"], "citation_id": str(c["citation_id"])},
            }
            for c in citation.get("cited") or []
            if c.get("citation_id") is not None
        ]
        return items or [{**base, "source_type": "citation_context"}]
    rows = [s for s in citation.get("sentences") or [] if "row" in s]
    if citation.get("kind") != "table" or not rows:
        return [base]
    return [{**base, "locator": {**base["locator"], **{k: s[k] for k in ("row", "column") if k in s}}} for s in rows]


def attribution(answer: dict[str, Any]) -> dict[str, Any]:
    """Where each part of an answer comes from (the `attribution` key of `litloop ask --json`,
    docs/attribution.md): its claims with the sentences they cite (chunk, offsets, text), the
    citations with their quotes and locators, the claims the support check dropped and why, and
    whether the answer fell back to quoting the papers."""
    citations = [
        {
            k: c.get(k)
            for k in ("n", "chunk_id", "paper_id", "title", "kind", "locator", "quote", "sentences", "chunk_text")
        }
        for c in answer.get("citations", [])
    ]
    return {
        "claims": answer.get("claims", []),
        "citations": citations,
        "rejected_claims": answer.get("rejected_claims", []),
        "fallback": answer.get("fallback", ""),
        "insufficient_evidence": bool(answer.get("insufficient_evidence")),
    }


def submission_record(query_id: str, answer: dict[str, Any], answer_types: list[str] | None) -> dict[str, Any]:
    types = answer_types or ["freeform"]
    ans: dict[str, Any] = {}
    if "freeform" in types:
        ans["freeform"] = {"text": answer.get("text", "")}
    if "multiple_choice" in types:
        ans["multiple_choice"] = {"gold": answer.get("choice", "")}
    if "table" in types:
        ans["table"] = {"rows": answer.get("table_rows", [])}
    evidence = [item for c in answer.get("citations", []) for item in evidence_items(c)]
    return {
        "query_id": query_id,
        "gold_papers": [{"paper_id": p} for p in answer.get("papers", [])],
        "evidence": evidence,
        "answer": ans,
    }
