"""The selector benchmark's scoring: what counts as the gold sentence, and what the budget keeps."""

from __future__ import annotations

import pytest

from bench.selector import matches, score_item
from tools.retrieval.sentences import within_budget

pytestmark = pytest.mark.unit


def _s(text: str) -> dict:
    return {"chunk_id": "c", "start": 0, "end": len(text), "text": text}


def test_a_gold_row_matches_through_whitespace_and_case():
    assert matches(["| Title | 0.91 |"], "|  title |   0.91 |")
    assert matches(
        ["We train with a triplet margin loss over citation triples."], "we train with a triplet margin loss"
    )
    assert not matches(["| Title | 0.91 |"], "| Venue | 0.71 |")
    assert not matches(["| Title | 0.91 |"], "Title")  # too short to stand for the gold sentence


def test_the_budget_keeps_the_best_first_and_always_one():
    assert within_budget([2, 0, 1], [10, 10, 10], 22) == [2, 0]
    assert within_budget([1, 0], [500, 5], 100) == [1]  # a long best sentence is still taken
    assert within_budget([1, 0], [500, 5], 100) != [1, 0]


def test_score_item_ranks_and_shown():
    sentences = [_s("Boilerplate about the previous section."), _s("| title | 0.91 | 0.88 |"), _s("| venue | 0.7 |")]
    row = score_item(sentences, ["| title | 0.91 | 0.88 |"], [0.5, 0.4, 0.0], budget=80)
    assert row["rank"] == 2 and row["recall@1"] is False and row["recall@3"] is True and row["shown"] is True
    row = score_item(sentences, ["| title | 0.91 | 0.88 |"], [0.5, 0.4, 0.0], budget=30)
    assert row["shown"] is False  # only the boilerplate fits


def test_the_figures_variant_weighs_figures_up_for_a_quantity_question_only():
    from bench.selector import VARIANTS

    rank = VARIANTS["overlap+figures"](None)
    plain = VARIANTS["overlap"](None)
    sents = [{"text": "The corpus papers are described in detail."}, {"text": "The corpus has 81.1M papers."}]
    how_many = ["How many papers does the corpus hold?"]
    assert rank(sents, how_many)[1] == pytest.approx(1.5 * plain(sents, how_many)[1])
    assert rank(sents, how_many)[0] == plain(sents, how_many)[0]
    assert rank(sents, ["What does the corpus hold?"]) == plain(sents, ["What does the corpus hold?"])


def test_the_loop_mode_reads_the_factoid_sets_too(tmp_path):
    from bench.selector import load

    data = tmp_path / "q.jsonl"
    data.write_text(
        '{"id": "a", "question": "q", "paper_id": "p", "evidence": "We use a margin."}\n'
        '{"id": "b", "question": "q", "paper_id": "p", "gold": ["x"], "split": "test"}\n'
    )
    assert [(r["id"], r["gold"]) for r in load("dev", data)] == [("a", ["We use a margin."])]  # no split: every one
    assert [r["id"] for r in load("test", data)] == ["a", "b"]
