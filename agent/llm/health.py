"""One run's endpoint health: the circuit breaker that stops calling an endpoint that failed the
run's last `ENDPOINT_FAILURES_TO_STOP` calls."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from agent.llm.results import Attempt

# Endpoint failures in a row (no reply in between) after which a run sends no more calls. Each
# failure already had the client's retries, so one more call to a dead, hanging or rate-limited
# endpoint only adds timeout_s x (max_retries + 1) seconds before the same error (hours for 50
# papers at the defaults). Three in a row, and any reply starts the count again: a few unlucky
# requests of a working endpoint (a long prompt that timed out) must not end a run.
ENDPOINT_FAILURES_TO_STOP = 3


@dataclass
class EndpointHealth:
    """The endpoint failures in a row (kinds `call`, `reply`) of one run, shared by its threads."""

    failures: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record(self, attempt: Attempt) -> None:
        """One attempt's outcome: a failure of the endpoint counts, any reply (even output that
        is not valid) shows it answers and starts the count again."""
        with self._lock:
            self.failures = self.failures + 1 if attempt.error_kind in ("call", "reply") else 0

    @property
    def down(self) -> bool:
        return self.failures >= ENDPOINT_FAILURES_TO_STOP

    def not_sent(self) -> Attempt:
        return Attempt(None, f"not sent: the endpoint failed the run's last {self.failures} calls", "not_sent")


# the run's health; LangGraph and ContextThreadPoolExecutor copy contextvars into their threads
_run_health: ContextVar[EndpointHealth | None] = ContextVar("litloop_endpoint_health", default=None)


@contextmanager
def endpoint_watch() -> Iterator[EndpointHealth]:
    """Count the endpoint failures of the calls made inside (one run); once there are
    `ENDPOINT_FAILURES_TO_STOP`, `structured_call` stops sending and fails at once."""
    health = EndpointHealth()
    token = _run_health.set(health)
    try:
        yield health
    finally:
        _run_health.reset(token)
