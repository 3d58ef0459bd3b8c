"""`litloop run`: LitTraceQA-shaped questions in, one submission line per question out.

- Every input gets exactly one output line, in input order, even when its question fails: the
  line is then a valid empty submission record, so the submission file stays valid for the
  official scorer. A question fails when `ask()` raises or its answer's status is `failed` (the
  model endpoint failed: there is no answer); a `partial` answer is written and counted as such.
- Resumable with the shared ledger (`agent.records.ledger`): `<out>.runs.jsonl` holds one record per
  attempt (ok or error, usage, seconds, trace id). A rerun skips the questions whose latest
  record succeeded and retries the failed ones, whose empty line is then replaced; a line cut
  short by a crash is dropped and that question runs again.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from agent.records.ledger import Ledger
from agent.records.submission import ask_arguments, submission_record
from tools.jsonl import append_line, iter_jsonl

log = logging.getLogger(__name__)


def read_inputs(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        raise ValueError(f"{path}: no such file")
    items, seen = [], set()
    for n, rec in iter_jsonl(path):
        for field in ("query_id", "question"):
            if not isinstance(rec.get(field), str) or not rec[field].strip():
                raise ValueError(f"{path}:{n}: field '{field}' must be a non-empty string")
        if rec["query_id"] in seen:
            raise ValueError(f"{path}:{n}: duplicate query_id {rec['query_id']!r}")
        seen.add(rec["query_id"])
        items.append(rec)
    return items


def empty_record(rec: dict[str, Any]) -> dict[str, Any]:
    return submission_record(rec["query_id"], {}, rec.get("answer_types"))


def outcome_of(rec: dict[str, Any], result: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(submission line, ledger info) of an answered run. A `failed` answer is a failure of the
    question (an empty line, retried by the next run), never its answer; a `partial` one counts
    as answered, with its status and errors kept."""
    status = result.get("status", "ok")
    info = {
        "ok": status != "failed",
        "status": status,
        "errors": result["errors"],
        "usage": result["usage"],
        "trace_id": result.get("trace_id"),
    }
    if status == "failed":
        failure = (result.get("answer") or {}).get("failure") or "the run failed"
        return empty_record(rec), {**info, "error": f"no answer: {failure}"}
    return result["submission"], info


def runs_path(out: Path) -> Path:
    """The ledger beside a submission file: `<out>.runs.jsonl`."""
    return out.with_name(out.name + ".runs.jsonl")


def run_batch(
    input_path: Path,
    out: Path,
    *,
    preset: str | None = None,
    index: str | None = None,
    progress: bool = False,
    ask_fn=None,
    corpora: list[str] | None = None,
) -> dict[str, int]:
    from tqdm import tqdm

    from agent.api import ask

    ask_fn = ask_fn or ask
    items = read_inputs(input_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    ledger, submission = Ledger(runs_path(out)), Ledger(out)
    # done: a submission line and a successful latest attempt; the lines of the others (failed,
    # or written just before a crash cut their ledger line) go, and those questions run again
    done = ledger.done() & submission.ids()
    submission.keep_only(done)
    summary = {"written": 0, "partial": 0, "skipped": 0, "failed": 0}
    with submission.open() as sub, ledger.open() as runs:
        for rec in tqdm(items, desc="questions", disable=not progress):
            if rec["query_id"] in done:
                summary["skipped"] += 1
                continue
            t = time.perf_counter()
            try:
                result = ask_fn(
                    rec["question"], preset=preset, index=index, corpora=corpora or None, **ask_arguments(rec)
                )
                line, info = outcome_of(rec, result)
            except Exception as exc:  # one failing question must not stop the batch
                log.exception("question %s failed", rec["query_id"])
                line, info = empty_record(rec), {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
            status = info.get("status", "ok" if info["ok"] else "failed")
            summary["written" if info["ok"] else "failed"] += 1
            summary["partial"] += status == "partial"
            append_line(sub, line)
            # last: the ledger line says the question is done (or failed, to be retried)
            append_line(runs, {"query_id": rec["query_id"], "seconds": round(time.perf_counter() - t, 2), **info})
    submission.sort([rec["query_id"] for rec in items])  # retried questions back in input order
    return summary
