"""Figures and names as a text states them: the numbers (value, unit, as written), names and
acronyms, and quoted phrases of a sentence, read the same way wherever the agent compares text
with text (the claim support check, the evidence that holds a figure).

Matching is normalised: Unicode (NFKC), case, dashes and quotes, thousands separators, and
scale words ("81.1M" = "81.1 million" = 81,100,000). Numbers that are part of a name ("S2ORC",
"CoNLL-2003", "GPT-4") are not numbers.
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal, InvalidOperation

_DASHES = dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2212"), "-")
_QUOTES = {ord(c): '"' for c in "\u201c\u201d\u201e\u00ab\u00bb"} | {ord(c): "'" for c in "\u2018\u2019\u201a"}

# scale words and suffixes: a value "81.1M" and "81.1 million" is the same number
_SCALES = {
    "thousand": 10**3,
    "k": 10**3,
    "million": 10**6,
    "m": 10**6,
    "mio": 10**6,
    "billion": 10**9,
    "bn": 10**9,
    "b": 10**9,
    "trillion": 10**12,
}
_SCALE_WORDS = "thousand|million|billion|trillion"  # after a space or not; the letters only attached
# units a number may carry; aliases map to one spelling
UNITS = {
    "%": "%",
    "percent": "%",
    "per cent": "%",
    "pp": "pp",
    "points": "pt",
    "point": "pt",
    "ms": "ms",
    "milliseconds": "ms",
    "millisecond": "ms",
    "s": "s",
    "sec": "s",
    "seconds": "s",
    "second": "s",
    "min": "min",
    "minutes": "min",
    "minute": "min",
    "h": "h",
    "hours": "h",
    "hour": "h",
    "days": "day",
    "day": "day",
    "gb": "gb",
    "mb": "mb",
    "kb": "kb",
    "tb": "tb",
    "x": "x",
    "×": "x",
    "times": "x",
    "ghz": "ghz",
    "mhz": "mhz",
    "hz": "hz",
    "kg": "kg",
    "g": "g",
    "mg": "mg",
    "ml": "ml",
    "l": "l",
    "km": "km",
    "cm": "cm",
    "mm": "mm",
    "nm": "nm",
    "years": "year",
    "year": "year",
    "months": "month",
    "month": "month",
    "weeks": "week",
    "week": "week",
    "patients": "patients",
    "papers": "papers",
    "tokens": "tokens",
}
_UNIT_WORDS = sorted(UNITS, key=len, reverse=True)
_NUMBER = re.compile(
    r"(?<![\w.,])(?P<num>[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)"
    rf"(?:(?:\s?(?P<scale>{_SCALE_WORDS})|(?P<short>mio|bn|k|m|b))(?![a-z]))?"
    rf"(?:\s?(?P<unit>{'|'.join(map(re.escape, _UNIT_WORDS))})(?![a-z]))?"
    r"(?![\w])",
    re.IGNORECASE,
)
# a name: a word that starts with a letter and has a digit, two capitals, or a capital after
# its first letter (SPECTER, F1, S2ORC, SciBERT, fastText, CoNLL-2003, GPT-4o, BiLSTM-CRF)
_WORD = re.compile(r"[^\W\d_][\w]*(?:[-/][\w]+)*", re.UNICODE)
_QUOTED = re.compile(r"\"([^\"]{3,}?)\"|'([^']{3,}?)'")
# scripts other than Latin, Greek (symbols in papers) and common punctuation
OTHER_SCRIPT = re.compile(
    r"[\u0400-\u04ff\u0590-\u06ff\u0900-\u0dff\u0e00-\u0eff\u1100-\u11ff"
    r"\u3040-\u30ff\u3100-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+"
)


def normalise(text: str) -> str:
    """NFKC, case-folded, dashes and quotes unified, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text).translate(_DASHES).translate(_QUOTES).casefold()
    return " ".join(text.split())


def _value(num: str, scale: str | None) -> Decimal | None:
    try:
        value = Decimal(num.replace(",", ""))
    except InvalidOperation:
        return None
    if scale:
        value *= _SCALES[scale.lower()]
    return value.normalize()


def numbers(text: str) -> list[tuple[Decimal, str | None, str]]:
    """(value, unit or None, as written) of each number in `text`; numbers that are part of a
    name ("S2ORC", "CoNLL-2003", "GPT-4") are not numbers."""
    out = []
    norm = unicodedata.normalize("NFKC", text).translate(_DASHES)
    for m in _NUMBER.finditer(norm):
        before = norm[: m.start()]
        if before.endswith("-") and re.search(r"[^\W\d_]-$", before):
            continue  # CoNLL-2003, GPT-4
        value = _value(m.group("num"), m.group("scale") or m.group("short"))
        if value is None:
            continue
        unit = m.group("unit")
        out.append((value, UNITS[unit.lower()] if unit else None, m.group(0)))
    return out


def _is_name(word: str) -> bool:
    letters = [c for c in word if c.isalpha()]
    if len(word) < 2 or not letters:
        return False
    return any(c.isdigit() for c in word) or sum(c.isupper() for c in word) >= 2 or any(c.isupper() for c in word[1:])


def names(text: str) -> list[str]:
    """Names and acronyms in `text`, as written."""
    return list(dict.fromkeys(w for w in _WORD.findall(unicodedata.normalize("NFKC", text)) if _is_name(w)))


def quoted(text: str) -> list[str]:
    """Phrases the text puts in quotation marks."""
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    return [a or b for a, b in _QUOTED.findall(text)]
