"""Summarising and redacting what a tracer records: small, JSON-ready, secret-free data.

Chunk lists, the evidence pool and the per-subquery retrieval results become counts, paper counts
and the top ids; strings are cut at `tracing.max_field_chars`; API keys are masked by pattern
(`tracing.redact_patterns`) and by value (`known_secrets`: the keys this process knows).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from uuid import UUID

if TYPE_CHECKING:
    from agent.settings import Settings

log = logging.getLogger(__name__)

REDACTED = "[REDACTED]"
# Dict keys whose values are secrets whatever they look like.
_SECRET_KEY = re.compile(r"(?i)(api[_-]?key|access[_-]?token|secret|password|authorization|credential)")
# Environment variables whose values are masked verbatim wherever they appear.
SECRET_ENV = (
    "OPENAI_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "LANGSMITH_API_KEY",
    "LANGCHAIN_API_KEY",
    "LITLOOP_LLM__API_KEY",
    "LITLOOP_RERANK__API_KEY",
    "HF_TOKEN",
    "ANTHROPIC_API_KEY",
)
_LIST_ITEMS = 30  # longer lists keep their first items and a count
_TOP = 10  # ids kept in a summary of chunks or of the pool
_DEPTH = 8


@dataclass
class Summariser:
    """Turns anything LangChain hands a tracer into small, JSON-ready, secret-free data."""

    max_chars: int = 4000
    patterns: Sequence[str] = ()
    secrets: Sequence[str] = ()
    _compiled: list[re.Pattern] = field(default_factory=list, init=False, repr=False)

    def __post_init__(self) -> None:
        self._compiled = []
        for p in self.patterns:
            try:
                self._compiled.append(re.compile(p))
            except re.error as exc:
                log.warning("ignoring tracing redact pattern %r: %s", p, exc)
        # longest first, so a key that contains another is masked whole
        self.secrets = sorted({s for s in self.secrets if s and len(s) >= 6}, key=len, reverse=True)

    def text(self, s: str, limit: int | None = None) -> str:
        s = self.redact(s)
        limit = self.max_chars if limit is None else limit
        if limit and len(s) > limit:
            return f"{s[:limit]}… [cut: {len(s)} chars]"
        return s

    def redact(self, s: str) -> str:
        for secret in self.secrets:
            s = s.replace(secret, REDACTED)
        for pattern in self._compiled:
            s = pattern.sub(REDACTED, s)
        return s

    def __call__(self, value: Any, depth: int = 0) -> Any:
        if value is None or isinstance(value, (bool, int, float)):
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, (UUID, Path)):
            return str(value)
        if isinstance(value, datetime):
            return value.isoformat()
        if depth >= _DEPTH:
            return self.text(repr(value), 200)
        if isinstance(value, Mapping):
            return self._mapping(value, depth)
        if isinstance(value, (list, tuple, set, frozenset)):
            return self._sequence(list(value), depth)
        return self._object(value, depth)

    def _mapping(self, value: Mapping, depth: int) -> Any:
        if is_chunk(value):
            return self.chunk(value)
        if value and all(is_chunk(v) for v in value.values()):
            return self.pool(list(value.values()))
        out: dict[str, Any] = {}
        for k, v in value.items():
            key = str(k)
            if _SECRET_KEY.search(key) and isinstance(v, str) and v:
                out[key] = REDACTED
            elif key == "retrieved" and isinstance(v, list):
                out[key] = [self.retrieval(r) for r in v[:_LIST_ITEMS]]
            else:
                out[key] = self(v, depth + 1)
        return out

    def _sequence(self, items: list, depth: int) -> Any:
        items = [_document_dict(x) for x in items]
        if len(items) > 3 and all(is_chunk(x) for x in items):
            return self.chunks(items)
        if items and _is_message(items[0]):
            return [self.message(m) for m in items[:_LIST_ITEMS]]
        out = [self(x, depth + 1) for x in items[:_LIST_ITEMS]]
        if len(items) > _LIST_ITEMS:
            out.append({"_more": len(items) - _LIST_ITEMS})
        return out

    def _object(self, value: Any, depth: int) -> Any:
        if _is_message(value):
            return self.message(value)
        if type(value).__name__ == "Document":
            return self({"page_content": value.page_content, "metadata": value.metadata}, depth)
        if hasattr(value, "model_dump"):
            try:
                return self(value.model_dump(mode="json"), depth + 1)
            except Exception:
                pass
        if hasattr(value, "to_dict"):
            try:
                return self(value.to_dict(), depth + 1)
            except Exception:
                pass
        return self.text(repr(value), 500)

    # -- the shapes litloop passes around ----------------------------------------------------

    def chunk(self, c: Mapping) -> dict[str, Any]:
        keep = {
            k: self(c[k], _DEPTH - 2) for k in ("chunk_id", "paper_id", "kind", "score", "locator", "source") if k in c
        }
        keep["text"] = self.text(" ".join(str(c.get("text", "")).split()), min(self.max_chars or 400, 400))
        return keep

    def chunks(self, items: list[Mapping]) -> dict[str, Any]:
        papers = list(dict.fromkeys(str(c.get("paper_id")) for c in items))
        return {
            "_summary": "chunks",
            "count": len(items),
            "papers": len(papers),
            "chunk_ids": [str(c.get("chunk_id")) for c in items[:_TOP]],
        }

    def pool(self, items: list[Mapping]) -> dict[str, Any]:
        best = sorted(items, key=lambda c: (-float(c.get("score") or 0), str(c.get("chunk_id"))))[:_TOP]
        return {
            "_summary": "pool",
            "count": len(items),
            "papers": len({str(c.get("paper_id")) for c in items}),
            "top": [
                {
                    "chunk_id": c.get("chunk_id"),
                    "paper_id": c.get("paper_id"),
                    "score": round(float(c.get("score") or 0), 6),
                }
                for c in best
            ],
        }

    def retrieval(self, r: Any) -> Any:
        if not isinstance(r, Mapping):
            return self(r, 1)
        return {
            "subquery": self.text(str(r.get("subquery", ""))),
            "prf_query": self.text(str(r.get("prf_query") or ""), 300) or None,
            "papers": len(r.get("papers", [])),
            "top_papers": [str(p) for p in r.get("papers", [])[:_TOP]],
            "hits": self.chunks(list(r.get("hits", []))),
        }

    def message(self, m: Any) -> dict[str, Any]:
        """A chat message as {role, content} (LangChain objects or their `dumpd` form)."""
        if isinstance(m, Mapping) and m.get("lc") and isinstance(m.get("kwargs"), Mapping):
            kw = m["kwargs"]
            role = kw.get("type") or str((m.get("id") or ["?"])[-1]).replace("Message", "").lower()
            content, tool_calls = kw.get("content", ""), kw.get("tool_calls")
        elif isinstance(m, Mapping):
            role, content, tool_calls = m.get("type") or m.get("role"), m.get("content", ""), m.get("tool_calls")
        else:
            role, content, tool_calls = (
                getattr(m, "type", "?"),
                getattr(m, "content", ""),
                getattr(m, "tool_calls", None),
            )
        out: dict[str, Any] = {"role": role, "content": self(content, _DEPTH - 2)}
        if tool_calls:
            out["tool_calls"] = self(tool_calls, _DEPTH - 3)
        return out


def _document_dict(x: Any) -> Any:
    """A LangChain Document as a chunk-shaped dict (retriever outputs)."""
    if type(x).__name__ == "Document" and hasattr(x, "page_content"):
        return {**(x.metadata or {}), "text": x.page_content, "chunk_id": (x.metadata or {}).get("chunk_id", x.id)}
    return x


def is_chunk(x: Any) -> bool:
    """A chunk dict (with its text) or a hit (chunk id, paper id, score)."""
    return isinstance(x, Mapping) and "chunk_id" in x and ("text" in x or ("paper_id" in x and "score" in x))


def _is_message(x: Any) -> bool:
    if isinstance(x, Mapping):
        return bool(x.get("lc")) and "Message" in str((x.get("id") or [""])[-1])
    return hasattr(x, "content") and hasattr(x, "type") and type(x).__name__.endswith("Message")


def known_secrets(settings: Settings | None = None) -> list[str]:
    """Key values this process knows about, masked verbatim in traces."""
    values = [os.environ.get(v, "") for v in SECRET_ENV]
    if settings is not None:
        for secret in (settings.llm.api_key, getattr(settings.rerank, "api_key", None)):
            if secret is not None:
                values.append(secret.get_secret_value() if hasattr(secret, "get_secret_value") else str(secret))
    return [v for v in values if v]
