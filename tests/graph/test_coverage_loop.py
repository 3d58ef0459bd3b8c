"""The Retrieve loop without the LLM (`verify_without_llm` "coverage"): a second round runs when a
content term of the question is in none of the best sentences, and not when all are."""

from __future__ import annotations

import pytest

from agent.api import ask

from .conftest import ANSWER, NOT_SATISFIED, cite_first_chunk, numbered

pytestmark = pytest.mark.graph

COVERED = "What F1 do conditional random fields reach on chunking?"
UNCOVERED = "What F1 do conditional random fields reach on chunking of zebrafish genomes?"
LOOP = dict(preset="local-fast", verify_without_llm="coverage", fact_answer="write")  # the readers' path


def install(scripted):
    return scripted(decompose=numbered("never"), verify=[NOT_SATISFIED], read=(cite_first_chunk,), synthesize=[ANSWER])


def test_all_terms_covered_is_one_round(scripted):
    m = install(scripted)
    out = ask(COVERED, max_rounds=2, **LOOP)
    assert out["rounds"] == 1 and out["subqueries"] == [COVERED]
    assert out["verdict"]["sufficient"] and out["verdict"]["missing_terms"] == []
    assert not m["decompose"].calls and not m["verify"].calls  # LLM-free


def test_an_uncovered_term_is_searched_in_a_second_round(scripted):
    m = install(scripted)
    out = ask(UNCOVERED, max_rounds=2, **LOOP)
    assert out["rounds"] == 2
    assert out["subqueries"] == [UNCOVERED, "zebrafish genomes f1 conditional random fields chunking"]
    assert out["verdict"]["sufficient"] is False and out["verdict"]["missing_terms"] == ["zebrafish", "genomes"]
    assert not m["decompose"].calls and not m["verify"].calls
    assert "crf" in out["candidates"]


@pytest.mark.parametrize("rounds", [1, 3])
def test_the_loop_never_runs_past_max_rounds(scripted, rounds):
    install(scripted)
    out = ask(UNCOVERED, max_rounds=rounds, **LOOP)
    # a third round has no new term to search (its subquery was searched in round 2): it ends
    assert out["rounds"] == rounds and len(out["subqueries"]) == min(rounds, 2)


def test_the_listing_verdict_still_ends_after_round_one(scripted):
    install(scripted)
    out = ask(UNCOVERED, preset="local-fast", max_rounds=2, fact_answer="write")
    assert out["rounds"] == 1 and "missing_terms" not in out["verdict"]
