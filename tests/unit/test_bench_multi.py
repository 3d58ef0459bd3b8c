"""The multi-paper benchmark's scoring (bench/multi.py): pure functions, no index."""

from __future__ import annotations

from bench.multi import load_items, numbers_outside, score_papers, summarise


def test_recall_counts_at_most_ten_gold_papers_and_precision_the_cited_ones():
    gold = [f"g{i}" for i in range(12)]
    s = score_papers(gold, [*gold[:5], "x", "x"])
    assert s["recall"] == 5 / 10 and s["precision"] == 5 / 6 and s["cited"] == 6
    assert score_papers(["a", "b"], [])["precision"] == 0.0  # citing nothing is not precise
    assert score_papers(["a", "b"], ["b"]) | {} == {"recall": 0.5, "precision": 1.0, "cited": 1, "gold": 2, "hits": 1}


def test_a_number_outside_the_cited_sentences_is_counted():
    claims = [
        {"text": "It reaches 95.7 F1 on 2 sets.", "sentences": ["95.7 F1 on chunking"], "titles": ["2 sets"]},
        {"text": "It reaches 96.1 accuracy.", "sentences": ["An HMM tagger with 96.0 accuracy."]},
    ]
    assert numbers_outside(claims) == 1


def test_the_splits_are_held_apart_and_the_summary_averages_per_question():
    dev, test = load_items(split="dev"), load_items(split="test")
    assert len(dev) == len(test) == 8 and not {i["id"] for i in dev} & {i["id"] for i in test}
    rows = [
        {"recall": 1.0, "precision": 0.5, "cited": 2, "seconds": 3.0},
        {"recall": 0.0, "precision": 0.0, "cited": 0},
    ]
    out = summarise(rows)
    assert out["recall"] == 0.5 and out["precision"] == 0.25 and out["seconds_median"] == 3.0
