"""Choose, then copy: the values a fact's answer may copy are the offered sentences' own word
spans, and a claim must state the value it copied."""

from __future__ import annotations

import re

import pytest

from agent.answer.copy import copy_values, states_value, word_spans
from agent.llm.schemas import copied_fact_model

pytestmark = pytest.mark.unit


def test_spans_are_the_sentences_own_words_with_edge_punctuation_trimmed():
    spans = word_spans("The most populated category is Neoplasms (cancer) with 5.4K instances (23.3%).")
    assert "5.4K" in spans and "23.3%" in spans and "Neoplasms" in spans
    assert "5.4K instances" in spans and "5.4K instances 23.3%" in spans
    assert "(cancer)" not in spans and "cancer" in spans
    assert all(s in "The most populated category is Neoplasms cancer with 5.4K instances 23.3%" for s in spans)
    assert "6.1K" not in spans and "23%" not in spans  # nothing that is not written there


def test_a_table_row_gives_its_cells_and_no_span_across_two_cells():
    spans = word_spans("| SciBERT fine-tune on co-view | 83.0 | 84.2 | 84.1 |")
    assert {"83.0", "84.2", "SciBERT fine-tune on co-view"} <= set(spans)
    assert not any("83.0 84.2" in s or "co-view 83.0" in s for s in spans)


def test_a_quantity_keeps_only_spans_with_a_figure_when_the_sentence_has_one():
    spans = copy_values([word_spans("We train on a single Titan V GPU for 2 epochs.")], quantity=True)
    assert spans and all(any(ch.isdigit() for ch in s) for s in spans)
    assert "2 epochs" in spans and "Titan V" not in spans
    assert "Titan V" in copy_values([word_spans("We train on a single Titan V GPU.")], quantity=True)  # no figure


def test_long_sentences_are_capped_shortest_spans_first():
    text = " ".join(f"w{i}" for i in range(200))
    spans = word_spans(text)
    assert len(spans) == 400 and spans[0] == "w0" and all(" " not in s for s in spans[:200])


def test_a_claim_states_the_value_by_its_numbers_or_its_words():
    assert states_value("The MeSH data has 23K papers.", "23K academic medical papers")
    assert not states_value("The MeSH data has 2,300 papers.", "23K papers")
    assert not states_value("It improves nDCG by 4 points.", "4.0 points")  # 4.0 is not 4
    assert states_value("SPECTER was trained on a Titan V GPU.", "titan V")
    assert not states_value("SPECTER was trained on a GPU.", "Titan V")


def test_the_schema_lets_the_value_be_one_of_the_spans_only():
    schema = copied_fact_model(["5.4K", "23.3%"]).model_json_schema()
    assert schema["properties"]["value"]["enum"] == ["5.4K", "23.3%"]
    assert schema["required"][:2] == ["value", "claim"]


def test_references_to_tables_figures_and_sections_are_not_values():
    spans = copy_values(
        [word_spans("Table 6 and Figure 2 (§ 3.1) give the accuracy of 0.93 in Section 4.")], quantity=True
    )
    assert {n for s in spans for n in re.findall(r"\d+(?:\.\d+)?", s)} == {"0.93"}


def test_a_quote_names_the_copied_value_only_for_a_quantity_and_only_when_it_holds_a_figure():
    from agent.answer.copy import Chosen

    assert Chosen(shown=[], scores=[], value="23K papers").figure(quantity=True) == "23K papers"
    assert Chosen(shown=[], scores=[], value="the model receives one paper").figure(quantity=True) == ""
    assert Chosen(shown=[], scores=[], value="23K papers").figure(quantity=False) == ""
