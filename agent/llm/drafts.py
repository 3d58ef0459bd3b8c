"""The words of an answer while the model is still writing its JSON: the claims' text read out of
a reply that is not yet complete, for a chat to show as it grows (`structured_call(on_text=...)`
sends each reply so far; `draft_text` turns it into what a reader sees).

Nothing here is the answer: the claims are checked against their sentences once the reply is
whole, and a claim that fails is dropped, so a chat shows the draft as a draft and replaces it.
"""

from __future__ import annotations

import re

# the fields that hold an answer's words: a claim's `text` (the synthesis, a theme's lead) and
# a copied fact's `claim`
DRAFT_FIELDS = ("text", "claim")

_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _string_at(raw: str, start: int) -> tuple[str, int]:
    """The JSON string that opens at `raw[start]` (after its quote), decoded as far as it goes;
    and where it ends (len(raw) when the reply stops inside it). An escape cut off at the end
    is left out, not shown half-written."""
    out: list[str] = []
    i = start
    while i < len(raw):
        ch = raw[i]
        if ch == '"':
            return "".join(out), i + 1
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        if i + 1 >= len(raw):
            break
        code = raw[i + 1]
        if code == "u":
            hex4 = raw[i + 2 : i + 6]
            if len(hex4) < 4:
                break
            try:
                out.append(chr(int(hex4, 16)))
            except ValueError:
                out.append("\ufffd")
            i += 6
            continue
        out.append(_ESCAPES.get(code, code))
        i += 2
    return "".join(out), len(raw)


def draft_parts(raw: str, fields: tuple[str, ...] = DRAFT_FIELDS) -> list[str]:
    """The values of `fields` in a reply so far, in order, the last one possibly unfinished."""
    key = re.compile(r'"(' + "|".join(map(re.escape, fields)) + r')"\s*:\s*"')
    parts: list[str] = []
    pos = 0
    while m := key.search(raw, pos):
        value, pos = _string_at(raw, m.end())
        parts.append(value)
    return parts


def draft_text(raw: str, fields: tuple[str, ...] = DRAFT_FIELDS) -> str:
    """What a reader sees of a reply so far: its claims' words joined as prose."""
    return " ".join(" ".join(p.split()) for p in draft_parts(raw, fields) if p.strip())
