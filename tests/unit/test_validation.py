"""The one vocabulary of validation messages (tools/validation.py), as each layer shows it."""

from __future__ import annotations

from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tools.validation import field_messages, found, joined, location

pytestmark = pytest.mark.unit


class Inner(BaseModel):
    model_config = ConfigDict(extra="forbid")
    page: int
    kind: Literal["table", "figure"] = "table"


class Outer(BaseModel):
    items: list[Inner]
    share: Annotated[float, Field(ge=0, le=1)] = 0.5
    on: bool = True


def messages(value) -> list[str]:
    with pytest.raises(ValidationError) as info:
        Outer.model_validate(value)
    return field_messages(info.value)


def test_each_problem_names_the_field_what_was_expected_and_what_was_found():
    got = messages({"items": [{"page": 1}, {"page": "x", "kind": "chart", "row": 3}], "share": 2, "on": "perhaps"})
    assert got == [
        "field 'items[1].page': expected a whole number, got a string ('x')",
        "field 'items[1].kind': expected one of 'table', 'figure', got a string ('chart')",
        "field 'items[1].row' is not a known field",
        "field 'share': expected a value at most 1.0, got an integer (2)",
        "field 'on': expected true or false, got a string ('perhaps')",
    ]


def test_missing_fields_and_wrong_containers():
    assert messages({}) == ["field 'items' is missing"]
    assert messages({"items": "p"}) == ["field 'items': expected an array, got a string ('p')"]
    assert messages([1]) == ["expected a JSON object, got an array"]


def test_found_and_location_and_joined():
    assert found(None) == "null" and found(True) == "a boolean (True)" and found([1]) == "an array"
    assert found("x" * 50).endswith("'...)") and "digits" in found(10**40)
    assert location(("a", 3, "b c", "bare"), skip=("bare",)) == "a[3]['b c']"
    assert joined(["one", "two", "three"], 2) == "one; two; and 1 more problem in this record"
