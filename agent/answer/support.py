"""The deterministic support check: does a claim say only what the sentences it cites say?

A claim passes when every number in it (with its unit, where it writes one), every quoted
phrase and every name or acronym occurs in a cited sentence. Names may also come from the cited
papers' titles and abstracts (so "SPECTER" may name the paper it cites), and text in another
script must occur in the evidence too (a 1.5B model sometimes switches language mid-word).

Matching is normalised: Unicode (NFKC), case, dashes and quotes, thousands separators, and
scale words ("81.1M" = "81.1 million" = 81,100,000). It is a check of facts, not of meaning: a
claim that rewords its sentence passes; a claim that changes a number, a unit or a name fails.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from agent.reading.figures import OTHER_SCRIPT, UNITS, names, normalise, numbers, quoted


def _contains_name(haystack: str, name: str) -> bool:
    n = normalise(name)
    variants = {n, n.replace("-", " "), n.replace("-", "")}
    hay = {haystack, haystack.replace("-", " ")}
    # not inside a longer word; a leading digit is fine ("mTc-WBC" in "99mTc-WBC")
    return any(re.search(rf"(?<![^\W\d_]){re.escape(v)}(?!\w)", h) for v in variants for h in hay)


def _spells_out(haystack: str, name: str) -> bool:
    """True when `name` is an acronym (capitals, optionally a plural s: "CRFs") of consecutive
    words of `haystack` ("conditional random fields"), so a claim may abbreviate a term."""
    letters = name[:-1] if name.endswith("s") and name[:-1].isupper() else name
    if not (letters.isalpha() and letters.isupper() and 3 <= len(letters) <= 8):  # 2 letters match by chance
        return False
    words = re.findall(r"[^\W\d_]+", haystack)
    initials = "".join(w[0] for w in words)
    return letters.casefold() in initials


def check_claim(claim: str, cited: Sequence[str], context: Iterable[str] = ()) -> str | None:
    """None when `claim` is supported by the `cited` sentences, else why not. `context`: text
    in which names may also be found (the cited papers' titles and abstracts)."""
    evidence = " ".join(cited)
    if not evidence.strip():
        return "it cites no sentence"
    ev_norm = normalise(evidence)
    ctx_norm = normalise(" ".join([evidence, *context]))
    ev_numbers = numbers(evidence) + [
        (v, None, w) for v, _, w in numbers(" ".join(context)) if v == v.to_integral_value() and 1900 <= v <= 2099
    ]  # a paper's year
    for value, unit, written in numbers(claim):
        same = {u for v, u, _ in ev_numbers if v == value}
        written = written.strip()
        if not same:
            return f"the number {written!r} is not in the cited sentences"
        if unit is None or unit in same:
            continue
        if None not in same:
            return f"{written!r}: the cited sentences give this number in other units"
        if not any(_contains_name(ev_norm, alias) for alias, u in UNITS.items() if u == unit):
            return f"{written!r}: the unit is not in the cited sentences"
    for phrase in quoted(claim):
        if normalise(phrase) not in ev_norm:
            return f"the quoted phrase {phrase!r} is not in the cited sentences"
    for name in names(claim):
        if re.fullmatch(r"S\d+", name):  # a sentence id of the prompt the model repeated, not a name
            continue
        if not _contains_name(ctx_norm, name) and not _spells_out(ctx_norm, name):
            return f"the name {name!r} is not in the cited sentences or the cited papers' titles and abstracts"
    for run in OTHER_SCRIPT.findall(claim):
        if run not in evidence:
            return f"text in another script ({run!r}) that the cited sentences do not have"
    return None
