"""Free-form answer metrics against a gold text: exact match and token F1 (pure functions).

The scorer's own ``freeform_exact_match`` (``evals.metrics``) folds case, Unicode and spaces
around punctuation but keeps the punctuation and every word, as the official evaluator prints
it. These are the looser SQuAD-style definitions (Rajpurkar et al. 2016, ``evaluate-v1.1.py``),
which read a long prose answer more fairly than an all-or-nothing match:

- ``answer_tokens``: NFKC, HTML entities decoded, case folded, punctuation and symbols replaced
  by a space (SQuAD deletes them; a space keeps ``state-of-the-art`` as words), except a decimal
  point or comma between digits (``14.70`` stays one token), the articles ``a``/``an``/``the``
  dropped, split on whitespace;
- ``exact_match``: the token sequences are equal;
- ``token_f1``: F1 of the two token *multisets* (a token predicted twice counts twice, but only
  as often as the gold has it). Two empty texts give 1.0; one empty text gives 0.0.

``prediction_text`` is the text of a run's answer these read; ``percentile``, ``mean_or_none``
and ``majority_baseline`` are the run's summary statistics.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

_ARTICLES = re.compile(r"\b(a|an|the)\b")


def _strip_punctuation(text: str) -> str:
    """Punctuation and symbols become spaces; a '.' or ',' between two digits stays (14.70)."""
    out = []
    for i, ch in enumerate(text):
        if ch in ".," and 0 < i < len(text) - 1 and text[i - 1].isdigit() and text[i + 1].isdigit():
            out.append(ch)
        elif unicodedata.category(ch)[0] in "PS":
            out.append(" ")
        else:
            out.append(ch)
    return "".join(out)


def answer_tokens(text: str | None) -> list[str]:
    """The normalised tokens of an answer text (see the module docstring)."""
    if not text:
        return []
    folded = unicodedata.normalize("NFKC", html.unescape(str(text))).casefold()
    folded = _strip_punctuation(folded)
    folded = _ARTICLES.sub(" ", folded)
    return folded.split()


def exact_match(prediction: str | None, gold: str | None) -> bool:
    """True when both texts have the same normalised token sequence."""
    return answer_tokens(prediction) == answer_tokens(gold)


def token_f1(prediction: str | None, gold: str | None) -> float:
    """SQuAD token F1 of a prediction against one gold text."""
    pred, ref = answer_tokens(prediction), answer_tokens(gold)
    if not pred or not ref:
        return float(pred == ref)
    common = sum((Counter(pred) & Counter(ref)).values())
    if not common:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def mean_or_none(values: Iterable[float | bool | None]) -> float | None:
    """Mean of the values that are not None; None when there are none."""
    present = [float(v) for v in values if v is not None]
    return sum(present) / len(present) if present else None


def percentile(values: Iterable[float], q: float) -> float | None:
    """The q-th percentile (0-100) by linear interpolation between ranks (numpy's default)."""
    data = sorted(float(v) for v in values)
    if not data:
        return None
    if not 0 <= q <= 100:
        raise ValueError(f"q must be between 0 and 100, got {q}")
    position = (len(data) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(data) - 1)
    return data[low] + (data[high] - data[low]) * (position - low)


def majority_baseline(labels: Iterable[str]) -> dict[str, float | str | int] | None:
    """Accuracy of always answering the most frequent gold label (ties: the first label)."""
    counts = Counter(label for label in labels if label)
    if not counts:
        return None
    label, hits = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    total = sum(counts.values())
    return {"label": label, "accuracy": hits / total, "questions": total}


def prediction_text(submission: Mapping[str, Any] | None, result: Mapping[str, Any] | None) -> str:
    """The free-form text a question is graded on: the submission's, else the agent's prose."""
    part = ((submission or {}).get("answer") or {}).get("freeform") or {}
    text = part.get("text") if isinstance(part, Mapping) else None
    return text if isinstance(text, str) and text.strip() else str((result or {}).get("answer_text") or "")
