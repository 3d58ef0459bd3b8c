"""The runner's pure parts: retrieval-only submissions, metrics that do not apply (the ledger's
tests are in test_ledger.py)."""

from __future__ import annotations

import pytest

from evals.answerers import make_answerer, no_llm_paper_count, retrieval_submission
from evals.answers import prediction_text
from evals.datasets import Question
from evals.run import not_applicable, slug

pytestmark = pytest.mark.unit


def test_retrieval_submission_names_one_or_five_papers():
    single = Question("s", "q", "hidden_source_single_paper", ())
    multi = Question("m", "q", "multi_paper", ())
    ranking = [f"p{i}" for i in range(10)]
    assert retrieval_submission(single, ranking) == {
        "query_id": "s",
        "gold_papers": [{"paper_id": "p0"}],
        "evidence": [],
        "answer": {},
    }
    assert len(retrieval_submission(multi, ranking)["gold_papers"]) == 5
    assert no_llm_paper_count(None) == 5


def test_not_applicable_recomputes_the_means():
    metrics = {
        "paper_f1_macro": 0.5,
        "evidence_f1_macro": 1.0,
        "multiple_choice_accuracy": 0.0,
        "table_row_f1_macro": None,
        "table_cell_accuracy_macro": None,
        "answer_score": 0.0,
        "overall_score": 0.5,
    }
    not_applicable(metrics, ["evidence_f1_macro"])
    assert metrics["evidence_f1_macro"] is None and metrics["overall_score"] == pytest.approx(0.25)
    not_applicable(metrics, ["multiple_choice_accuracy"])
    assert metrics["answer_score"] is None and metrics["overall_score"] == 0.5


def test_prediction_text_prefers_the_submission():
    sub = {"answer": {"freeform": {"text": "from the submission"}}}
    assert prediction_text(sub, {"answer_text": "prose"}) == "from the submission"
    assert prediction_text({"answer": {}}, {"answer_text": "prose"}) == "prose"
    assert prediction_text(None, None) == ""


def test_slug_and_unknown_names(tmp_path):
    assert slug("A+B:all5") == "A_B_all5" and slug("hybrid+prf") == "hybrid_prf"
    with pytest.raises(ValueError, match="unknown preset 'magic'"):
        make_answerer("magic", tmp_path)
    with pytest.raises(ValueError, match="--no-llm runs LLM-free retrieval; 'paper'"):
        make_answerer("paper", tmp_path, no_llm=True)
