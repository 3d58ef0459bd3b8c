"""The bounded run queue of `litloop serve`: at most `LITLOOP_SERVE__MAX_QUEUE` runs waiting or
running at once; one more is refused at once with 429 and a `Retry-After` (seconds, from the recent
runs' mean duration), never left to hang.

Admission happens in the server's custom-auth hook for a new run (agent/serve/auth.py), in the
server's process. It counts the places from the server's own run records (the runtime's `pending`
and `running` runs), not with a counter of its own, so a place comes back however its run ends:
an answer, an error, a cancellation before or after the graph started, or a crash and restart.
The hook runs before the server stores the new run, so the runs it admitted and the server has not
stored yet are counted too (`admitted`), for a few seconds at most.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

ACTIVE = ("pending", "running")
FRESH_S = 10.0  # an admitted run the server has not stored within this is taken as refused later
_admitted: dict[str, float] = {}  # run id -> when admitted, until the server stores the run


def max_queue() -> int:
    """The queue's bound: `LITLOOP_SERVE__MAX_QUEUE` through the settings (one place, one
    default: 32), as `litloop serve` passed it to the server's process. 0: no bound."""
    from agent.settings import default_settings

    return default_settings().serve.max_queue


def places_taken(runs: Iterable[Mapping[str, Any]], admitted: Mapping[str, float], now: float) -> int:
    """The runs waiting or running, plus those admitted within FRESH_S that are not stored yet."""
    stored: set[str] = set()
    active = 0
    for run in runs:
        stored.add(str(run["run_id"]))
        active += run.get("status") in ACTIVE
    fresh = sum(1 for rid, t in admitted.items() if rid not in stored and now - t < FRESH_S)
    return active + fresh


def retry_after(runs: Iterable[Mapping[str, Any]], last: int = 20) -> int:
    """Seconds to wait: the mean duration of the last finished runs (10 s when none has finished)."""
    durations = [
        (r["updated_at"] - r["created_at"]).total_seconds()
        for r in runs
        if r.get("status") == "success"
        and isinstance(r.get("created_at"), datetime)
        and isinstance(r.get("updated_at"), datetime)
    ][-last:]
    mean = sum(durations) / len(durations) if durations else 10.0
    return max(1, math.ceil(mean))


def admit(run_id: str, runs: list[Mapping[str, Any]], now: float | None = None) -> int | None:
    """Admit the run `run_id` given the server's runs: None when admitted, else the seconds a
    client should wait before retrying. Call it with no await between reading `runs` and here."""
    now = time.monotonic() if now is None else now
    for rid, t in list(_admitted.items()):  # forget the admissions the server has had time to store
        if now - t >= FRESH_S:
            del _admitted[rid]
    limit = max_queue()
    if limit > 0 and places_taken(runs, _admitted, now) >= limit:
        return retry_after(runs)
    _admitted[str(run_id)] = now
    return None


async def server_runs() -> list[Mapping[str, Any]]:
    """The run records of the server this process runs (langgraph-api's in-memory runtime),
    without the stand-ins for other servers' runs (agent/serve/durable.py)."""
    from langgraph_runtime.database import connect

    from agent.serve.durable import foreign

    async with connect() as conn:
        return [r for r in getattr(conn, "store", {}).get("runs", []) if str(r["run_id"]) not in foreign]
