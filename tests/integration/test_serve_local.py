"""Served is asked, with the embedded model: `litloop serve` given no preset and a run given no
context answer the demo question as `litloop ask` does on the same index (bench/served_local.py
also times both)."""

from __future__ import annotations

import pytest

from tests.conftest import needs_embedded_model

pytestmark = [pytest.mark.integration, pytest.mark.llm, pytest.mark.slow, pytest.mark.server]


@needs_embedded_model
def test_the_served_demo_question_with_no_context_is_answered_as_ask_answers_it(tmp_path):
    from bench.served_local import _small_index, served_and_asked, summary

    run = served_and_asked(_small_index(tmp_path), tmp_path / "data")
    got = summary(run)
    assert run["served"]["answer"]["text"], run["served"]["answer"]
    assert got["same_text"] and got["same_citations"], got
    assert got["citations"], "the demo answer cites the SPECTER paper"
