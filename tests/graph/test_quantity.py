"""A question that asks for a quantity: with `reading_hints` the reader and the synthesis are
told the answer is a number; when no claim survives, the quote shows the sentences that hold
the figures. The real graph index, the scripted model."""

from __future__ import annotations

import pytest

from agent.api import ask

from .conftest import cite_first_chunk

pytestmark = pytest.mark.graph

FAST = dict(preset="local-fast", reading_hints=True, fact_answer="write")  # hints are for the readers' path


def _users(model) -> list[str]:
    return [c.user for c in model.calls if c.kwargs.get("scripted_method")]


def test_with_reading_hints_a_quantity_question_tells_the_reader_and_the_synthesis_to_give_the_number(scripted):
    m = scripted(
        read=(cite_first_chunk,), synthesize=[{"claims": [{"text": "CRFs reach 95.7 F1.", "sentences": ["S1"]}]}]
    )
    ask("What F1 do conditional random fields reach on chunking?", **FAST)
    assert all("asks for a quantity" in u for u in _users(m["read"])) and _users(m["read"])
    assert "asks for a quantity" in _users(m["synthesize"])[0]

    m = scripted(read=(cite_first_chunk,), synthesize=[{"claims": [], "insufficient_evidence": True}])
    ask("What do conditional random fields model?", **FAST)
    assert not any("asks for a quantity" in u for u in [*_users(m["read"]), *_users(m["synthesize"])])

    m = scripted(read=(cite_first_chunk,), synthesize=[{"claims": [], "insufficient_evidence": True}])
    ask("What F1 do conditional random fields reach on chunking?", preset="local-fast", fact_answer="write")  # no hints
    assert not any("asks for a quantity" in u for u in [*_users(m["read"]), *_users(m["synthesize"])])


def test_with_no_claim_left_a_quantity_question_quotes_the_figures_the_papers_give(scripted):
    scripted(read=(cite_first_chunk,), synthesize=[{"claims": [], "insufficient_evidence": True}])
    answer = ask("What F1 do conditional random fields reach on chunking?", **FAST)["answer"]
    assert answer["fallback"] == "extractive" and answer["claims"] == []
    assert "do not answer this question directly" in answer["text"] and "95.7 F1" in answer["text"]
