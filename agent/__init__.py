"""litloop's agent. `from agent import ask` answers a question from the configured index."""

from __future__ import annotations

from typing import Any


def ask(question: str, **kwargs: Any) -> dict[str, Any]:
    from agent.api import ask as _ask

    return _ask(question, **kwargs)


__all__ = ["ask"]
