"""Papers that give different figures for the same thing: found among an answer's checked
claims without a model, and said in the answer with both citations, so a reader sees the
disagreement instead of one figure chosen silently (or chosen for it by a paper's own text).

Two claims disagree when they cite different papers, each states a figure with the same unit
word after it ("95.7 F1", "81.1M papers", "12 %"), the figures differ, and the rest of their
words are mostly the same (Jaccard of their content stems at least `SAME_TOPIC`): the same
quantity, reported twice.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from tools.retrieval.text import tokenize

SAME_TOPIC = 0.5
# a figure and the word after it: "95.7 F1", "81.1M papers", "12 %", "3,186 abstracts"
_FIGURE = re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)*)\s*(%|[A-Za-z][\w-]*)?")


def figures(text: str) -> dict[str, tuple[str, str]]:
    """{unit word in lower case ("" for none): (figure, the unit as written)} of a claim; the
    first figure of each unit."""
    out: dict[str, tuple[str, str]] = {}
    for number, unit in _FIGURE.findall(text):
        out.setdefault((unit or "").lower(), (number.replace(",", ""), unit))
    return out


def _topic(text: str) -> set[str]:
    return {t for t in tokenize(text, stem=True) if not any(ch.isdigit() for ch in t)}


def disagreements(claims: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pairs of claims (their index in `claims`) that report different figures with the same
    unit for the same thing from different papers: [{"claims": [i, j], "unit": ..., "figures":
    [a, b], "papers": [p, q]}]. Each claim needs `text` and `sentences` (with `paper_id`)."""
    found = []
    for i, a in enumerate(claims):
        for j in range(i + 1, len(claims)):
            b = claims[j]
            pa = {s["paper_id"] for s in a.get("sentences", [])}
            pb = {s["paper_id"] for s in b.get("sentences", [])}
            if not pa or not pb or pa & pb:
                continue
            fa, fb = figures(a["text"]), figures(b["text"])
            ta, tb = _topic(a["text"]), _topic(b["text"])
            if not ta or len(ta & tb) / len(ta | tb) < SAME_TOPIC:
                continue
            for unit in fa.keys() & fb.keys():
                if unit and fa[unit][0] != fb[unit][0]:
                    found.append(
                        {
                            "claims": [i, j],
                            "unit": fa[unit][1],
                            "figures": [fa[unit][0], fb[unit][0]],
                            "papers": [sorted(pa)[0], sorted(pb)[0]],
                        }
                    )
                    break
    return found


def disagreement_note(found: Sequence[dict[str, Any]], claims: Sequence[dict[str, Any]]) -> str:
    """The sentence an answer adds for its disagreements: "The papers give different figures:
    95.7 F1 [1] against 42 F1 [2]." (empty when there are none)."""
    parts = []
    for d in found:
        i, j = d["claims"]
        marks = ["".join(f"[{n}]" for n in claims[k]["citations"]) for k in (i, j)]
        unit = "" if d["unit"] == "%" else " "
        parts.append(
            f"{d['figures'][0]}{unit}{d['unit']} {marks[0]} against {d['figures'][1]}{unit}{d['unit']} {marks[1]}"
        )
    return f"The papers give different figures: {'; '.join(parts)}." if parts else ""
