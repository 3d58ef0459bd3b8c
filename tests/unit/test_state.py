"""The agent state's reducers: what each accumulating field does with an update."""

from __future__ import annotations

import operator
import typing

import pytest

from agent.state import State, add_usage, union
from tools.retrieval.fusion import merge_pool

pytestmark = pytest.mark.unit


def test_each_accumulating_field_has_its_named_reducer():
    hints = typing.get_type_hints(State, include_extras=True)
    reducers = {name: h.__metadata__[0] for name, h in hints.items() if hasattr(h, "__metadata__")}
    assert reducers == {
        "round": operator.add,
        "subqueries": operator.add,
        "pool": merge_pool,
        "evidence_papers": union,
        "errors": operator.add,
        "usage": add_usage,
    }


def test_add_usage_sums_per_key_and_does_not_mutate():
    left = {"llm_calls": 2, "seconds_verify": 1.5}
    out = add_usage(left, {"llm_calls": 1, "input_tokens": 300})
    assert out == {"llm_calls": 3, "seconds_verify": 1.5, "input_tokens": 300}
    assert left == {"llm_calls": 2, "seconds_verify": 1.5}
    assert add_usage(None, None) == {} and add_usage(None, {"a": 1}) == {"a": 1}


def test_union_keeps_first_seen_order_without_duplicates():
    left = ["p1", "p2"]
    assert union(left, ["p3", "p1", "p3"]) == ["p1", "p2", "p3"]
    assert left == ["p1", "p2"]
    assert union(None, ["b", "a"]) == ["b", "a"] and union(["a"], None) == ["a"]
