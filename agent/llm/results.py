"""What an LLM call returns: each attempt, and the structured result over its attempts."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel

# invalid_json / invalid_schema / truncated: the model's output (a repair turn follows); call: the
# request failed after the client's retries (connection, timeout, rate limit, 5xx); reply: the
# endpoint answered with something that is not a chat completion (an HTML page, a body that is
# not JSON); not_sent: not sent, the endpoint had already failed in this run (`endpoint_watch`).
ErrorKind = Literal["invalid_json", "invalid_schema", "truncated", "call", "reply", "not_sent"]
ENDPOINT_KINDS: tuple[str, ...] = ("call", "reply", "not_sent")  # failures of the endpoint, not of the output

T = TypeVar("T", bound=BaseModel)


@dataclass(frozen=True)
class Attempt:
    """One LLM call of a structured_call: what came back and why it was not accepted."""

    raw: str | None
    error: str | None = None
    error_kind: ErrorKind | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0
    # the reply's tokens with their top alternatives, when the call asked for logprobs
    logprobs: tuple[dict[str, Any], ...] | None = None


@dataclass(frozen=True)
class StructuredResult(Generic[T]):
    """The parsed value, or a failure that records the error, the raw text and every attempt."""

    schema_name: str
    value: T | None
    attempts: tuple[Attempt, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return self.value is not None

    @property
    def calls(self) -> int:
        return len(self.attempts)

    @property
    def repaired(self) -> bool:
        return self.ok and self.calls > 1

    @property
    def error(self) -> str | None:
        return None if self.ok or not self.attempts else self.attempts[-1].error

    @property
    def error_kind(self) -> ErrorKind | None:
        return None if self.ok or not self.attempts else self.attempts[-1].error_kind

    @property
    def raw(self) -> str | None:
        return self.attempts[-1].raw if self.attempts else None

    @property
    def logprobs(self) -> tuple[dict[str, Any], ...] | None:
        """The accepted reply's tokens with their top log-probabilities (when asked for)."""
        return self.attempts[-1].logprobs if self.ok else None

    @property
    def input_tokens(self) -> int:
        return sum(a.input_tokens for a in self.attempts)

    @property
    def output_tokens(self) -> int:
        return sum(a.output_tokens for a in self.attempts)

    def to_record(self) -> dict[str, Any]:
        """JSON-ready summary for graph state and traces."""
        return {
            "schema": self.schema_name,
            "ok": self.ok,
            "value": self.value.model_dump(mode="json") if self.value is not None else None,
            "error": self.error,
            "error_kind": self.error_kind,
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "attempts": [{k: v for k, v in asdict(a).items() if k != "logprobs"} for a in self.attempts],
        }
