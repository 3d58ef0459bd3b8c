"""Token log-probabilities read from a model's reply: the first token's top alternatives (a
next-token call) and the probability a reply gave one JSON value (the reader's `relevant`)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any


def top_logprobs_of(message: Any) -> list[dict[str, Any]] | None:
    """The first generated token's top alternatives from a chat reply's metadata, or None."""
    meta = getattr(message, "response_metadata", None) or {}
    return first_token_top((meta.get("logprobs") or {}).get("content"))


def first_token_top(content: Sequence[Mapping[str, Any]] | None) -> list[dict[str, Any]] | None:
    """The first token's top alternatives from a reply's per-token log-probabilities, or None."""
    if not content:
        return None
    top = content[0].get("top_logprobs") or []
    return [{"token": t.get("token", ""), "logprob": float(t.get("logprob", -math.inf))} for t in top] or None


def relevance_probability(tokens: Any) -> float | None:
    """P(true) of the reader's `relevant` value from its reply's token log-probabilities: the
    first token after `"relevant":`, its alternatives that begin "true" against those that
    begin "false", renormalised. None when the reply has no such token."""
    text = ""
    for tok in tokens or ():
        before = text
        text += tok.get("token", "")
        if not re.search(r'"relevant"\s*:\s*$', before):
            continue
        p = {"true": 0.0, "false": 0.0}
        for alt in tok.get("top_logprobs") or [tok]:
            word = alt.get("token", "").strip().lower()
            for value in p:
                if word and value.startswith(word):
                    p[value] += math.exp(alt.get("logprob", -math.inf))
        total = p["true"] + p["false"]
        return p["true"] / total if total else None
    return None
