"""The status of an answer: a failed step is a failure, never an answer, and a reading that
failed is unknown, not "not relevant". `agent.api` uses it for a run an endpoint error stopped."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent.records.answer import Answer, Status

if TYPE_CHECKING:
    from agent.state import Reading

if TYPE_CHECKING:
    from agent.state import Reading, RunError


def answer_status(readings: list[Reading], errors: list[RunError]) -> Status:
    """The status of an answer written from these readings (a failed synthesis call is `failed`
    before this is asked): `failed` when every paper read failed (none was judged, so "no
    evidence" would be a guess); `partial` when some LLM call of the run failed (a
    decomposition, a verdict, some readings: `errors` says which); `ok` when none did."""
    if readings and all(r.get("failed") for r in readings):
        return "failed"
    return "partial" if errors else "ok"


def failed_readings(readings: list[Reading]) -> tuple[int, int]:
    """(failed, total) readings."""
    return sum(bool(r.get("failed")) for r in readings), len(readings)


def failure_reason(readings: list[Reading], errors: list[RunError]) -> str:
    """One line on why there is no answer, for a run whose every reading failed: the first
    failure of the endpoint itself when there was one (what the calls not sent after it repeat),
    else the last reading's error."""
    failed, total = failed_readings(readings)
    endpoint = next((e for e in errors if e.get("kind") in ("call", "reply")), None)
    cause = endpoint or next((e for e in reversed(errors) if e.get("node") == "read"), None)
    because = f"; {cause['node']}: {cause['error']}" if cause and cause.get("error") else ""
    return f"every paper read failed ({failed} of {total}){because}"


def failed_answer(reason: str) -> Answer:
    """The answer record of a run that produced no answer: empty, with `status` failed and
    `failure` saying why (never the no-evidence sentence, which is a finding)."""
    return {
        "text": "",
        "insufficient_evidence": False,
        "choice": "",
        "table_rows": [],
        "citations": [],
        "claims": [],
        "rejected_claims": [],
        "papers": [],
        "fallback": "",
        "status": "failed",
        "failure": reason,
    }
