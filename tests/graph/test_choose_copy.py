"""Choose, then copy (`fact_answer` "choose"): the answer's value can only be words of the
sentences offered, the claim must state it, and with no claim left the quote starts with the
sentence that holds it and names it. The real graph index, the scripted model."""

from __future__ import annotations

import pytest

from agent.api import ask

from .conftest import cite_first_chunk

pytestmark = pytest.mark.graph

CHOOSE = dict(preset="local-fast", fact_answer="choose")
QUESTION = "What F1 do conditional random fields reach on chunking?"


def _copy_call(model):
    calls = [c for c in model.calls if c.kwargs.get("scripted_method")]
    assert len(calls) == 1, "one structured call copies the value and writes the claim"
    return calls[0]


def test_the_value_is_copied_from_the_offered_sentences_and_the_claim_cites_the_one_holding_it(scripted):
    m = scripted(synthesize=[{"value": "95.7 F1", "claim": "Conditional random fields reach 95.7 F1 on chunking."}])
    answer = ask(QUESTION, **CHOOSE)["answer"]
    call = _copy_call(m["synthesize"])
    enum = call.kwargs["scripted_schema"]["properties"]["value"]["enum"]
    assert "95.7 F1" in enum and "95.7" in enum
    # a quantity question: every value holds a figure, and each is words of the offered sentences
    assert all(any(ch.isdigit() for ch in v) for v in enum)
    assert all(w in call.user for v in enum for w in v.split())
    assert answer["chosen"]["value"] == "95.7 F1" and answer["fallback"] == ""
    [claim] = answer["claims"]
    assert "95.7 F1" in claim["text"] and "95.7 F1" in claim["sentences"][0]["text"]
    assert answer["citations"][0]["paper_id"] == "crf"


def test_a_claim_without_the_copied_value_is_dropped_and_the_quote_names_the_value(scripted):
    # the value of the sentence ranked second by the words: that sentence is then quoted first
    scripted(synthesize=[{"value": "90.9 F1", "claim": "A BiLSTM-CRF is the best sequence labeller."}])
    answer = ask(QUESTION, **CHOOSE)["answer"]
    assert answer["claims"] == [] and answer["fallback"] == "extractive"
    assert "the value copied" in answer["rejected_claims"][0]["reason"]
    assert "gives 90.9 F1" in answer["text"]
    quotes = answer["text"].split("What they say:")[1].split("” [")
    assert "90.9 F1" in quotes[0] and "95.7 F1" in answer["text"]


def test_a_value_the_offered_sentences_do_not_hold_is_never_copied(scripted):
    # an endpoint that ignores the schema's enum and writes a figure of its own
    scripted(synthesize=[{"value": "97.0 F1", "claim": "Conditional random fields reach 97.0 F1 on chunking."}])
    answer = ask(QUESTION, **CHOOSE)["answer"]
    assert answer["claims"] == [] and "97.0" not in answer["text"]
    assert answer["chosen"]["value"] == "" and "no value" in answer["chosen"]["note"]


def test_write_stays_the_path_of_the_other_presets_and_a_setting_away(scripted):
    from agent.context import make_context

    assert make_context("local-fast").fact_answer == "choose"
    assert {make_context(p).fact_answer for p in ("paper", "local", "kadr", "kadr-local")} == {"write"}
    m = scripted(synthesize=[{"claims": [{"text": "CRFs reach 95.7 F1 on chunking.", "sentences": ["S1"]}]}])
    answer = ask(QUESTION, preset="local-fast", reading="joint", fact_answer="write")["answer"]
    assert "chosen" not in answer and answer["claims"]
    assert "claims" in _copy_call(m["synthesize"]).kwargs["scripted_schema"]["properties"]


def test_a_multiple_choice_question_is_read_per_paper_and_written_even_when_facts_are_chosen(scripted):
    m = scripted(
        read=(cite_first_chunk,),
        synthesize=[{"claims": [{"text": "CRFs reach 95.7 F1 on chunking.", "sentences": ["S1"]}], "choice": "A"}],
    )
    options = {"A": "95.7 F1", "B": "96.1 F1"}
    answer = ask(QUESTION, options=options, answer_types=["multiple_choice"], **CHOOSE)["answer"]
    assert "chosen" not in answer and answer["choice"] == "A"
    assert m["read"].calls, "the readers read each paper"
