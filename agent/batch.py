"""`litloop run`: LitTraceQA-shaped questions in, one submission line per question out.

- Every input gets exactly one output line, in input order, even when its question fails: the
  line is then a valid empty submission record, and the error goes to `<out>.runs.jsonl`
  (one record per question: ok, error, usage, seconds, trace id), so the submission file stays
  valid for the official scorer.
- Resumable: query ids already in the output are skipped; a line cut short by a crash is
  dropped and that question is run again.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


def read_inputs(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        raise ValueError(f"{path}: no such file")
    items, seen = [], set()
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{n}: not valid JSON ({exc.msg}); fix the line") from None
        for field in ("query_id", "question"):
            if not isinstance(rec.get(field), str) or not rec[field].strip():
                raise ValueError(f"{path}:{n}: field '{field}' must be a non-empty string")
        if rec["query_id"] in seen:
            raise ValueError(f"{path}:{n}: duplicate query_id {rec['query_id']!r}")
        seen.add(rec["query_id"])
        items.append(rec)
    return items


def ask_arguments(rec: dict[str, Any]) -> dict[str, Any]:
    """ask() keyword arguments from an input record (LitTraceQA input or benchmark record)."""
    options = None
    if rec.get("multiple_choice_options"):
        options = {o["label"]: o["text"] for o in rec["multiple_choice_options"]}
    elif (rec.get("answer") or {}).get("multiple_choice"):
        options = rec["answer"]["multiple_choice"].get("options")
    schema = rec.get("table_schema") or ((rec.get("answer") or {}).get("table") or {}).get("schema")
    return {"query_id": rec["query_id"], "answer_types": rec.get("answer_types") or ["freeform"],
            "options": options, "table_schema": schema}


def empty_record(rec: dict[str, Any]) -> dict[str, Any]:
    from agent.submission import submission_record

    return submission_record(rec["query_id"], {}, rec.get("answer_types"))


def done_ids(out: Path) -> set[str]:
    """Query ids already written; a torn last line (crash mid-write) is removed."""
    if not out.exists():
        return set()
    good, ids = [], set()
    for line in out.read_text(encoding="utf-8").splitlines():
        try:
            ids.add(json.loads(line)["query_id"])
            good.append(line)
        except (json.JSONDecodeError, KeyError, TypeError):
            log.warning("%s: dropping an incomplete line; its question runs again", out)
    out.write_text("".join(line + "\n" for line in good), encoding="utf-8")
    return ids


def run_batch(input_path: Path, out: Path, *, preset: str | None = None, index: str | None = None,
              progress: bool = False, ask_fn=None, corpora: list[str] | None = None) -> dict[str, int]:
    from tqdm import tqdm

    from agent.api import ask

    ask_fn = ask_fn or ask
    items = read_inputs(input_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = done_ids(out)
    runs = out.with_name(out.name + ".runs.jsonl")
    summary = {"written": 0, "skipped": 0, "failed": 0}
    with out.open("a", encoding="utf-8") as sub, runs.open("a", encoding="utf-8") as log_fh:
        for rec in tqdm(items, desc="questions", disable=not progress):
            if rec["query_id"] in done:
                summary["skipped"] += 1
                continue
            t = time.perf_counter()
            try:
                result = ask_fn(rec["question"], preset=preset, index=index, corpora=corpora or None,
                                **ask_arguments(rec))
                line, info = result["submission"], {"ok": True, "errors": result["errors"],
                                                    "usage": result["usage"], "trace_id": result.get("trace_id")}
                summary["written"] += 1
            except Exception as exc:  # one failing question must not stop the batch
                log.exception("question %s failed", rec["query_id"])
                line, info = empty_record(rec), {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
                summary["failed"] += 1
            sub.write(json.dumps(line, ensure_ascii=False) + "\n")
            sub.flush()
            log_fh.write(json.dumps({"query_id": rec["query_id"], "seconds": round(time.perf_counter() - t, 2), **info},
                                    ensure_ascii=False, default=str) + "\n")
            log_fh.flush()
    return summary
