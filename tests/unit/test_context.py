"""The per-run context is validated in one place, whichever way it is built (agent/context.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.cli_eval import context_settings
from agent.context import (
    Context,
    ContextError,
    check_values,
    load_preset,
    make_context,
    preset_names,
)


@pytest.mark.parametrize("name", preset_names())
def test_every_shipped_preset_is_valid(name):
    ctx = make_context(name)
    assert ctx.preset == name


def test_set_values_are_typed_by_the_field():
    got = context_settings(
        [
            "max_rerank=5",
            "support_judge=false",
            "support_threshold=0.25",
            "choice_scoring=scored",
            "decompose_model=qwen",
        ]
    )
    assert got == {
        "max_rerank": 5,
        "support_judge": False,
        "support_threshold": 0.25,
        "choice_scoring": "scored",
        "decompose_model": "qwen",
    }


def test_set_refuses_a_number_that_is_not_one():
    with pytest.raises(ValueError, match=r"--set: field 'max_rerank': expected a whole number, got a string \('abc'\)"):
        context_settings(["max_rerank=abc"])


def test_a_misspelt_choice_names_the_field_the_value_and_the_choices():
    # it used to select the "scored" rule silently (anything but "model" and "calibrated")
    message = r"field 'choice_scoring': expected one of 'model', 'scored', 'calibrated', got a string \('calibratd'\)"
    with pytest.raises(ContextError, match=message):
        context_settings(["choice_scoring=calibratd"])
    with pytest.raises(ContextError, match=message):
        make_context("paper", choice_scoring="calibratd")  # ask(**overrides) and the chat come here
    with pytest.raises(ContextError, match=message):
        Context(choice_scoring="calibratd")


@pytest.mark.parametrize(
    ("field", "value", "why"),
    [
        ("read_papers", 0, "at least 1"),
        ("support_threshold", 1.5, "at most 1.0"),
        ("support_reanchor", -1, "at least 0"),
        ("reranker", "bm25", "one of 'none', 'cross-encoder', 'llm'"),
        ("read_concurrency", 2.5, "whole number"),
        ("verify_with_llm", "perhaps", "true or false"),
    ],
)
def test_types_choices_and_ranges_are_checked(field, value, why):
    with pytest.raises(ContextError, match=f"run setting: field '{field}': expected .*{why}"):
        make_context("paper", **{field: value})


def test_an_unknown_override_is_refused():
    with pytest.raises(ContextError, match="unknown field 'no_such_knob'"):
        check_values({"no_such_knob": 1}, "run setting")


def test_a_bad_preset_names_its_file(tmp_path, monkeypatch):
    monkeypatch.setattr("agent.context.PRESETS_DIR", tmp_path)
    (tmp_path / "bad.json").write_text(json.dumps({"description": "x", "max_rounds": "three"}))
    with pytest.raises(ContextError, match=r"preset 'bad' \(bad.json\): field 'max_rounds': expected a whole number"):
        load_preset("bad")


def test_values_are_stored_as_their_type():
    ctx = Context(max_rounds="2", index=Path("idx"))
    assert ctx.max_rounds == 2 and ctx.index == "idx"
