"""The LLM-free coverage verdict and the subquery it leads to (`verify_without_llm` "coverage":
agent/reading/evidence.py, agent/nodes/decompose.py, the loop's cap in agent/graph.py)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from agent.context import ContextError, make_context
from agent.graph import route_after_verify
from agent.nodes.decompose import coverage_subquery, decompose
from agent.reading.evidence import aspect_words, coverage_aspects, question_aspects, uncovered_aspects

pytestmark = pytest.mark.unit

QUESTION = "Which margin does SPECTER use in its triplet loss?"


def test_a_term_in_the_sentences_is_covered_and_one_absent_is_not():
    aspects = question_aspects(QUESTION)
    missing = uncovered_aspects(aspects, ["SPECTER is trained with a triplet loss."])
    assert missing == [frozenset({"margin"})]
    assert aspect_words(QUESTION, missing) == ["margin"]


def test_every_term_covered_leaves_nothing_missing():
    texts = ["SPECTER is trained with a triplet loss.", "We use a margin m=1."]
    assert uncovered_aspects(question_aspects(QUESTION), texts) == []


def test_terms_are_compared_as_stems():
    aspects = question_aspects("Which parser reads the title of a paper?")
    assert uncovered_aspects(aspects, ["The parser reads titles and headings."]) == []
    assert aspect_words("Which parser reads the title of a paper?", uncovered_aspects(aspects, ["parser"])) == [
        "reads",
        "title",
    ]


def test_one_alternative_covers_an_or_aspect():
    aspects = question_aspects("Does it use GROBID or ScienceParse for PDFs?")
    assert uncovered_aspects(aspects, ["PDFs are parsed by ScienceParse."]) == []
    assert aspect_words("Does it use GROBID or ScienceParse for PDFs?", uncovered_aspects(aspects, ["PDFs"])) == [
        "grobid",
        "scienceparse",
    ]


def test_words_that_ask_for_a_value_are_not_looked_for():
    question = "How many papers does S2ORC hold and what F1 does it reach?"
    assert {"mani", "reach"} <= set().union(*question_aspects(question))  # content terms elsewhere
    assert uncovered_aspects(coverage_aspects(question), ["S2ORC holds 8.1M papers with an F1 of 0.9."]) == []


def test_the_next_subquery_puts_the_missing_words_before_the_other_content_words():
    state = {"question": QUESTION, "verdict": {"missing_terms": ["margin"]}}
    assert coverage_subquery(state) == ["margin specter triplet loss"]  # no frame word ("which", "use")
    assert coverage_subquery({"question": QUESTION, "verdict": {"sufficient": True}}) == []


def test_llm_free_decompose_searches_the_missing_terms_once():
    runtime = SimpleNamespace(context=make_context("local-fast", verify_without_llm="coverage"))
    state = {"question": QUESTION, "round": 1, "subqueries": [QUESTION], "verdict": {"missing_terms": ["margin"]}}
    assert decompose(state, runtime)["new_subqueries"] == ["margin specter triplet loss"]
    again = {**state, "subqueries": [QUESTION, "margin specter triplet loss"]}
    assert decompose(again, runtime)["new_subqueries"] == []  # nothing new: the loop ends


@pytest.mark.parametrize(("rounds", "route"), [(1, "decompose"), (2, "expand_neighbors"), (3, "expand_neighbors")])
def test_an_uncovered_term_loops_until_max_rounds(rounds, route):
    runtime = SimpleNamespace(context=make_context("local-fast", verify_without_llm="coverage", max_rounds=2))
    state = {
        "question": QUESTION,
        "round": rounds,
        "new_subqueries": ["q"],
        "verdict": {"sufficient": False, "missing_terms": ["margin"]},
    }
    assert route_after_verify(state, runtime) == route


def test_an_unknown_verdict_is_refused():
    with pytest.raises(ContextError, match="verify_without_llm"):
        make_context("local-fast", verify_without_llm="judge")
