"""A run's answer as a LitTraceQA submission record (the `--json` contract of `litloop ask`)."""

from __future__ import annotations

from typing import Any

# chunk kind -> LitTraceQA evidence source type
SOURCE_TYPE = {"table": "table", "figure": "figure", "equation": "equation_algorithm",
               "text": "text_span", "title_abstract": "text_span"}


def evidence_locator(locator: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(locator.get("page"), int) and locator["page"] >= 1:
        out["page"] = locator["page"]
    for key in ("section", "table_id", "figure_id"):
        if locator.get(key):
            out[key] = str(locator[key])
    return out


def submission_record(query_id: str, answer: dict[str, Any], answer_types: list[str] | None) -> dict[str, Any]:
    types = answer_types or ["freeform"]
    ans: dict[str, Any] = {}
    if "freeform" in types:
        ans["freeform"] = {"text": answer.get("text", "")}
    if "multiple_choice" in types:
        ans["multiple_choice"] = {"gold": answer.get("choice", "")}
    if "table" in types:
        ans["table"] = {"rows": answer.get("table_rows", [])}
    evidence = [
        {"evidence_id": f"e{c['n']}", "paper_id": c["paper_id"], "source_type": SOURCE_TYPE.get(c["kind"], "text_span"),
         "locator": evidence_locator(c["locator"])}
        for c in answer.get("citations", [])
    ]
    # evidence_id is not in the official submission schema; keep the record strictly valid
    for e in evidence:
        e.pop("evidence_id")
    return {"query_id": query_id, "gold_papers": [{"paper_id": p} for p in answer.get("papers", [])],
            "evidence": evidence, "answer": ans}
