"""The per-run context is validated in one place, whichever way it is built (agent/context.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.cli.evaluate import context_settings
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


def test_a_preset_extends_another_and_its_own_values_win(tmp_path, monkeypatch):
    import json

    import agent.context as context

    (tmp_path / "base.json").write_text(json.dumps({"description": "x", "max_rounds": 2, "read_papers": 4}))
    (tmp_path / "child.json").write_text(json.dumps({"extends": "base", "read_papers": 6}))
    (tmp_path / "loop-a.json").write_text(json.dumps({"extends": "loop-b"}))
    (tmp_path / "loop-b.json").write_text(json.dumps({"extends": "loop-a"}))
    (tmp_path / "orphan.json").write_text(json.dumps({"extends": "nowhere"}))
    monkeypatch.setattr(context, "PRESETS_DIR", tmp_path)
    assert context.load_preset("child") == {"max_rounds": 2, "read_papers": 6}
    with pytest.raises(ValueError, match="'extends' loops: loop-a -> loop-b -> loop-a"):
        context.load_preset("loop-a")
    with pytest.raises(ValueError, match="unknown preset 'nowhere'"):
        context.load_preset("orphan")


def test_local_fast_is_local_with_the_retrieve_loops_llm_steps_off_and_facts_chosen_then_copied():
    from dataclasses import fields

    fast, local = make_context("local-fast"), make_context("local")
    differ = {f.name for f in fields(fast) if getattr(fast, f.name) != getattr(local, f.name)}
    assert differ == {
        "preset",
        "max_rounds",
        "decompose_with_llm",
        "verify_with_llm",
        "subqueries_per_round",
        "verify_chunks_per_paper",
        "verify_chunk_chars",
        "fact_answer",
    }
    assert fast.fact_answer == "choose" and local.fact_answer == "write"
    assert not fast.decompose_with_llm and not fast.verify_with_llm and fast.max_rounds == 1
