"""Reading traces back: find a trace file by id, read its records, summarise it for a list.

Serves `litloop trace list|show`, the chats and the tests; drawing the run tree is the viewer's
(`agent.chat.trace_view`).
"""

from __future__ import annotations

import logging
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tools.jsonl import load_jsonl

if TYPE_CHECKING:
    from agent.settings import Settings

log = logging.getLogger(__name__)


class TraceNotFound(LookupError):
    pass


def traces_dir(settings: Settings | None = None) -> Path:
    if settings is None:
        from agent.settings import default_settings

        settings = default_settings()
    return settings.traces_dir


def read_records(path: Path) -> list[dict[str, Any]]:
    """The records of one trace file, in dotted order (parents before children, by start); a
    line a stopped run cut short is skipped."""
    return sorted(load_jsonl(path, skip_bad=True), key=lambda r: r.get("dotted_order") or "")


def trace_files(directory: Path) -> list[Path]:
    """Trace files, most recent first."""
    if not directory.is_dir():
        return []
    files = [(p.stat().st_mtime, p) for p in directory.glob("*.jsonl")]
    return [p for _, p in sorted(files, key=lambda x: (-x[0], x[1].name))]


def find_trace(directory: Path, trace_id: str) -> Path:
    """A trace file by id, a unique start or end of the id, or `last`."""
    files = trace_files(directory)
    if trace_id in ("last", "latest"):
        if not files:
            raise TraceNotFound(f"no traces in {directory} yet: ask a question first")
        return files[0]
    exact = directory / f"{trace_id}.jsonl"
    if exact.exists():
        return exact
    # run ids are UUIDv7 (time first), so questions asked close together share a prefix:
    # the end of the id is the distinctive part
    matches = [p for p in files if p.stem.startswith(trace_id) or p.stem.endswith(trace_id)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise TraceNotFound(f"no trace {trace_id!r} in {directory} (see `litloop trace list`)")
    raise TraceNotFound(f"{trace_id!r} matches {len(matches)} traces; give more of the id")


def load_trace(trace_id: str, directory: Path | None = None) -> list[dict[str, Any]]:
    return read_records(find_trace(directory or traces_dir(), trace_id))


def run_seconds(rec: dict[str, Any]) -> float | None:
    """A record's duration, or None while it has no end (a run stopped mid-way)."""
    try:
        return (datetime.fromisoformat(rec["end_time"]) - datetime.fromisoformat(rec["start_time"])).total_seconds()
    except (KeyError, TypeError, ValueError):
        return None


def summary_of(records: list[dict[str, Any]], trace_id: str) -> dict[str, Any]:
    """One line of `trace list`: question, time, status, tokens, duration."""
    root = next((r for r in records if not r.get("parent_run_id")), None)
    meta = (root or {}).get("metadata") or {}
    usage = meta.get("token_usage") or {}
    if root is None:  # stopped mid-run: add up the LLM calls that did finish
        llm = [(r.get("metadata") or {}).get("token_usage") or {} for r in records if r.get("run_type") == "llm"]
        usage = {k: sum(u.get(k, 0) for u in llm) for k in ("input_tokens", "output_tokens", "total_tokens")}
        usage["llm_calls"] = len(llm)
    if root is None:
        status = "incomplete"
    elif root.get("error"):
        status = "error"
    elif any(r.get("error") or (r.get("metadata") or {}).get("node_errors") for r in records):
        status = "partial"
    else:
        status = "ok"
    # without a root (the process stopped mid-run) the nodes' inputs, the state, still hold it
    question = next(
        (
            r["inputs"]["question"]
            for r in ([root] if root else []) + records
            if isinstance(r.get("inputs"), dict) and r["inputs"].get("question")
        ),
        None,
    )
    start = (root or (records[0] if records else {})).get("start_time")
    return {
        "trace_id": trace_id,
        "question": question,
        "start_time": start,
        "status": status,
        "input_tokens": usage.get("input_tokens", 0),
        "output_tokens": usage.get("output_tokens", 0),
        "total_tokens": usage.get("total_tokens", 0),
        "llm_calls": usage.get("llm_calls", 0),
        "cost_estimate_usd": meta.get("cost_estimate_usd"),
        "duration_s": run_seconds(root) if root else None,
        "runs": len(records),
        "thread_id": meta.get("thread_id"),
        "preset": meta.get("preset"),
    }


def list_traces(directory: Path | None = None, limit: int = 20) -> list[dict[str, Any]]:
    directory = directory or traces_dir()
    out = []
    for path in trace_files(directory)[:limit]:
        try:
            out.append(summary_of(read_records(path), path.stem))
        except OSError as exc:
            log.warning("cannot read %s: %s", path, exc)
    return out
