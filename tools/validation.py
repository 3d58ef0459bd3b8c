"""The one vocabulary of validation messages: a pydantic ValidationError as phrases that name the
field, what was found and what to do, e.g.

    field 'evidence[1].locator.page': expected a whole number, got a string ('3')

Every layer where input enters formats its errors here: the ingest records
(`tools.ingest.records`), the LitTraceQA files (`evals.scoring`), the per-run context
(`agent.context`) and the model's structured replies (`agent.llm`). Each puts its own prefix
in front (the file and line, `--set`, a preset's file) and its own advice after.

Only pydantic and the standard library are imported.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from typing import Any

from pydantic import ValidationError

from tools.jsonl import json_type


def found(value: Any) -> str:
    """'an integer (5)', "a string ('soon')", 'an array': the JSON type, and short scalars."""
    kind = json_type(value)
    if value is None:
        return kind
    if isinstance(value, int) and abs(value) >= 10**15:  # str() of a 5,000-digit int raises
        return f"{kind} of about {int(value.bit_length() * 0.30103)} digits"
    if isinstance(value, (bool, int, float)):
        return f"{kind} ({value!r})"
    if isinstance(value, str):
        return f"{kind} ({value[:40]!r}{'...' if len(value) > 40 else ''})"
    return kind


def location(loc: Sequence[Any], skip: Collection[str] = ()) -> str:
    """('pdf_parse', 'body_text', 3, 'eq_spans') -> 'pdf_parse.body_text[3].eq_spans'.

    `skip` names location parts that are the validator's own (a model's internal wrapper)."""
    out = ""
    for part in loc:
        if part in skip:
            continue
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][\w-]*", str(part)):
            out += f".{part}" if out else str(part)
        else:
            out += f"[{str(part)[:40]!r}]"
    return out


def _choices(err: Any) -> str | None:
    """The allowed values of a `Literal` field, as the message lists them."""
    expected = (err.get("ctx") or {}).get("expected")
    if err["type"] != "literal_error" or not expected:
        return None
    return expected.replace(" or ", ", ")


def reason(err: Any) -> str:
    """What is wrong with one error's value, in the words of the messages above."""
    kind, value = err["type"], err.get("input")
    if kind == "value_error":
        return str(err["ctx"]["error"])
    if kind in ("model_type", "model_attributes_type", "dict_type", "dataclass_type"):
        what = "a JSON object" if not err["loc"] else "an object"
        return f"expected {what}, got {found(value)}"
    if kind in ("list_type", "tuple_type"):
        return f"expected an array, got {found(value)}"
    if (choices := _choices(err)) is not None:
        return f"expected one of {choices}, got {found(value)}"
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return f"expected a whole number, got {found(value)}"
    if kind in ("float_type", "float_parsing"):
        return f"expected a number, got {found(value)}"
    if kind in ("bool_type", "bool_parsing"):
        return f"expected true or false, got {found(value)}"
    if kind in ("string_type",):
        return f"expected a string, got {found(value)}"
    if kind == "extra_forbidden":
        return "is not a known field"
    bound = {
        "greater_than_equal": "at least",
        "greater_than": "more than",
        "less_than_equal": "at most",
        "less_than": "less than",
    }.get(kind)
    if bound is not None:
        limit = next(iter((err.get("ctx") or {}).values()), "?")
        return f"expected a value {bound} {limit}, got {found(value)}"
    return f"{err['msg'][:1].lower()}{err['msg'][1:]}, got {found(value)}" if "input" in err else err["msg"]


def field_messages(exc: ValidationError, skip: Collection[str] = ()) -> list[str]:
    """One phrase per error: "field 'a.b[2]': expected ..., got ...", "field 'x' is missing"."""
    out = []
    for err in exc.errors(include_url=False):
        loc = location(err["loc"], skip)
        why = reason(err)
        if not loc:
            out.append(why)
        elif err["type"] == "missing":
            out.append(f"field '{loc}' is missing")
        elif why.startswith("is "):
            out.append(f"field '{loc}' {why}")
        else:
            out.append(f"field '{loc}': {why}")
    return out


def joined(messages: Sequence[str], limit: int, unit: str = "record") -> str:
    """The first `limit` messages joined by '; ', then how many more there are."""
    text = "; ".join(messages[:limit])
    more = len(messages) - limit
    if more > 0:
        text += f"; and {more} more problem{'s' if more > 1 else ''} in this {unit}"
    return text
