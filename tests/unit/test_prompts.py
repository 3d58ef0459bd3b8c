"""Prompt templates are data; each node passes exactly the variables its template uses."""

from __future__ import annotations

import pytest

from agent import prompts

pytestmark = pytest.mark.unit

EXPECTED = {
    "system": set(),
    "decompose_first": {"question", "n_subqueries", "venue_year_line"},
    "decompose_next": {"question", "previous_subqueries", "missing", "n_subqueries", "venue_year_line"},
    "venue_year": {"venue", "year"},
    "verify": {"question", "n_papers", "papers"},
    "read_paper": {"question", "paper_id", "title", "venue_year", "sentences", "max_sentences", "quantity"},
    "read_quantity": set(),
    "synthesize_quantity": set(),
    "synthesize_comparison": {"aspects"},
    "read_papers": {"question", "sentences"},
    "qualifies": {"question", "title", "sentences"},
    "qualifies_system": set(),
    "synthesize": {"question", "answer_instructions", "source", "evidence", "max_claims"},
    "repair": {"error", "schema"},
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_template_variables(name):
    assert prompts.variables(name) == EXPECTED[name]


def test_render_refuses_missing_or_extra_variables():
    with pytest.raises(ValueError, match="missing \\['year'\\]"):
        prompts.render("venue_year", venue="ACL")
    with pytest.raises(ValueError, match="unexpected \\['x'\\]"):
        prompts.render("venue_year", venue="ACL", year=2025, x=1)


def test_decompose_prompts_from_state():
    from agent.nodes.decompose import decompose_prompt

    first = decompose_prompt({"question": "Which ICCV 2025 papers prune keys?"}, 4)
    assert "at most 4" in first and "[ICCV 2025]" in first
    later = decompose_prompt({"question": "q", "round": 1, "subqueries": ["a", "b"], "verdict": {"missing": ""}}, 3)
    assert "- a\n- b" in later and "no specific note; search from a different angle" in later


def test_few_shot_examples_are_synthetic():
    # the example venue is invented, so no benchmark question can leak into a prompt
    assert "ABC corpus" in prompts.render("decompose_first", question="q", n_subqueries=4, venue_year_line="")


def test_new_subqueries_dedupes_tags_and_caps():
    from agent.nodes.decompose import new_subqueries

    out = new_subqueries(["  crf  F1 ", "CRF f1", "old", "x", "y"], ["[ACL 2005] old"], 2, "[ACL 2005]")
    assert out == ["[ACL 2005] crf F1", "[ACL 2005] x"]
    # no venue in the question: a tag the model invents is removed
    assert new_subqueries(["[SPECTER] citation loss", "plain"], [], 4, None) == ["citation loss", "plain"]


def test_venue_year_detection():
    from agent.runtime.calls import venue_year

    assert venue_year("For these two ICCV 2025 detection papers") == ("ICCV", "2025")
    assert venue_year("in neurips 2023, which") == ("NeurIPS", "2023")
    assert venue_year("no venue here 2023") is None
