"""The bounded run queue of `litloop serve`: at most `LITLOOP_SERVE__MAX_QUEUE` runs admitted and
not yet finished (running or waiting for the model); one more is refused at once with 429 and a
`Retry-After` (seconds, from the recent runs' mean duration), never left to hang.

Admission happens in the server's custom-auth hook for a new run (agent/serve_auth.py); the
release, when the run's graph ends (answer, error or cancellation), in a callback of the served
graph (`graph` below, the agent's graph with that callback). Both live in the server's process.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections import deque
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler

from agent.graph import build_graph

_lock = threading.Lock()
_admitted: deque[float] = deque()  # admission times of the runs not yet released
_durations: deque[float] = deque(maxlen=20)


def max_queue() -> int:
    return int(os.environ.get("LITLOOP_SERVE__MAX_QUEUE", "0") or 0)


def admit() -> int | None:
    """Admit a run; None when admitted, else the seconds a client should wait before retrying."""
    limit = max_queue()
    with _lock:
        if limit > 0 and len(_admitted) >= limit:
            mean = sum(_durations) / len(_durations) if _durations else 10.0
            return max(1, math.ceil(mean))
        _admitted.append(time.monotonic())
        return None


def release() -> None:
    with _lock:
        if _admitted:
            _durations.append(time.monotonic() - _admitted.popleft())


class _ReleaseAtEnd(BaseCallbackHandler):
    """Releases the queue slot when a run's root chain (the graph) ends or fails."""

    def __init__(self) -> None:
        self._roots: set[UUID] = set()

    def on_chain_start(
        self, serialized: Any, inputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kw: Any
    ) -> None:
        if parent_run_id is None:
            with _lock:
                self._roots.add(run_id)

    def _ended(self, run_id: UUID) -> None:
        with _lock:
            if run_id not in self._roots:
                return
            self._roots.discard(run_id)
        # the server loads this file by its path, as a module of another name than the one the
        # auth hook imports: release through the one the hook admits with
        from agent import serve_queue

        serve_queue.release()

    def on_chain_end(self, outputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kw: Any) -> None:
        self._ended(run_id)

    def on_chain_error(
        self, error: BaseException, *, run_id: UUID, parent_run_id: UUID | None = None, **kw: Any
    ) -> None:
        self._ended(run_id)


graph = build_graph().with_config(callbacks=[_ReleaseAtEnd()])
