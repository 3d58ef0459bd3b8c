"""Free-form answer metrics (SQuAD-style exact match and token F1) and the runner's arithmetic,
on hand-worked examples."""

from __future__ import annotations

import pytest

from evals.answers import (
    answer_tokens,
    exact_match,
    majority_baseline,
    mean_or_none,
    percentile,
    token_f1,
)

pytestmark = pytest.mark.unit


def test_tokens_fold_case_punctuation_and_articles():
    assert answer_tokens("The CRF reaches 95.7 F1, an HMM 1,234.") == ["crf", "reaches", "95.7", "f1", "hmm", "1,234"]
    assert answer_tokens("state-of-the-art") == ["state", "of", "art"]
    assert answer_tokens("Don&#x27;t") == ["don", "t"]
    assert answer_tokens("") == [] and answer_tokens(None) == []


def test_exact_match():
    assert exact_match("14.70", "14.70")
    assert exact_match("The answer: 14.70.", "answer 14.70")  # article and punctuation dropped
    assert not exact_match("14.7", "14.70")  # numbers are compared as written
    assert not exact_match("yes", "no")
    assert exact_match("", None)


def test_token_f1_hand_worked():
    # pred tokens: cat sat (2); gold: cat sat down (3); common 2 -> P 1, R 2/3, F1 0.8
    assert token_f1("the cat sat", "a cat sat down") == pytest.approx(0.8)
    # pred: crfs beat hmms on chunking (5); gold: crfs reach 95.7 f1 on chunking (6); common:
    # crfs, on, chunking = 3 -> P 3/5, R 3/6, F1 = 2*0.6*0.5/1.1 = 6/11
    assert token_f1("CRFs beat HMMs on chunking", "CRFs reach 95.7 F1 on chunking") == pytest.approx(6 / 11)
    # multiset: "yes yes" vs "yes": common 1 -> P 1/2, R 1, F1 2/3
    assert token_f1("yes yes", "yes") == pytest.approx(2 / 3)
    assert token_f1("", "something") == 0.0
    assert token_f1("", "") == 1.0
    assert token_f1("apples", "oranges") == 0.0


def test_percentile_matches_numpy_linear():
    values = [3.0, 1.0, 4.0, 1.5, 9.0]
    # sorted 1, 1.5, 3, 4, 9; p50 = 3; p95 at position 3.8 -> 4 + 0.8 * 5 = 8
    assert percentile(values, 50) == 3.0
    assert percentile(values, 95) == pytest.approx(8.0)
    assert percentile([2.0], 95) == 2.0
    assert percentile([], 50) is None
    with pytest.raises(ValueError):
        percentile(values, 101)


def test_majority_baseline_and_mean():
    assert majority_baseline(["A", "B", "A", "C", ""]) == {"label": "A", "accuracy": 0.5, "questions": 4}
    assert majority_baseline(["B", "A"])["label"] == "A"  # ties: the first label
    assert majority_baseline([]) is None
    assert mean_or_none([1, None, True, 0]) == pytest.approx(2 / 3)
    assert mean_or_none([None]) is None
