"""evals/attribution.py on a hand-made run folder: accuracy per decision rule, the two-fold
abstention margin, reader precision, explained answers."""

from __future__ import annotations

import json
import math

import pytest

from evals.attribution import choices, report

pytestmark = pytest.mark.unit

OPTS = {"A": "yes", "B": "no", "C": "maybe"}


def lp(**p):
    return {k: math.log(v) for k, v in p.items()}


def q(i, gold):
    return {
        "query_id": f"q{i}",
        "gold_papers": [{"paper_id": f"p{i}"}],
        "answer": {"multiple_choice": {"options": OPTS, "gold": gold}},
    }


def row(i, model, with_ev, prior, readings, claims=("x",)):
    return {
        "query_id": f"q{i}",
        "seconds": 10.0 + i,
        "usage": {"llm_calls": 5},
        "model_choice": model,
        "choice": model,
        "choice_scores": {"with_evidence": with_ev, "prior": prior, "abstain": "C"},
        "readings": readings,
        "claims": list(claims),
        "rejected_claims": [],
        "fallback": "" if claims else "extractive",
    }


def test_rules_and_reader_precision(tmp_path):
    prior = lp(A=0.8, B=0.1, C=0.1)
    good = [
        {"paper_id": "p0", "relevant": True, "model_relevant": True},
        {
            "paper_id": "other",
            "relevant": False,
            "model_relevant": True,
            "note": "marked relevant but selected no sentence",
        },
    ]
    rows = [
        row(0, "A", lp(A=0.6, B=0.3, C=0.1), prior, good),  # calibrated -> B
        row(1, "A", lp(A=0.9, B=0.05, C=0.05), prior, [{"paper_id": "p1", "relevant": True, "model_relevant": True}]),
        row(
            2,
            "A",
            lp(A=0.7, B=0.2, C=0.1),
            prior,
            [{"paper_id": "x", "relevant": True, "model_relevant": True}],
            claims=(),
        ),
    ]
    bench = [q(0, "B"), q(1, "A"), q(2, "A")]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "bench.jsonl").write_text("".join(json.dumps(b) + "\n" for b in bench))
    assert choices(rows[0]) == {"model": "A", "scored": "A", "calibrated": "B", "calibrated+margin": "B"}
    out = report(tmp_path, tmp_path / "bench.jsonl")
    assert out["accuracy"] == {
        "model": pytest.approx(2 / 3, abs=1e-3),
        "scored": pytest.approx(2 / 3, abs=1e-3),
        "calibrated": pytest.approx(2 / 3, abs=1e-3),
    }
    assert out["always_A"] == pytest.approx(2 / 3, abs=1e-3)
    # accepted: p0, p1 (gold), x (not): 2/3; the model itself said 4 relevant, 2 gold
    assert out["reader"]["accepted"]["precision"] == pytest.approx(2 / 3, abs=1e-3)
    assert out["reader"]["model_said"]["precision"] == 0.5
    assert out["explained"] == pytest.approx(2 / 3, abs=1e-3) and out["extractive"] == pytest.approx(1 / 3, abs=1e-3)
    assert out["seconds_median"] == 11.0 and out["llm_calls_mean"] == 5


def test_relevance_threshold_two_fold():
    from evals.attribution import gold_of, relevance_threshold

    gold = gold_of([q(i, "A") for i in range(4)])
    rows = []
    for i in range(4):  # the gold paper gets P(true) 0.9, the other paper 0.6
        rows.append(
            {
                "query_id": f"q{i}",
                "readings": [
                    {"paper_id": f"p{i}", "relevant": True, "relevant_p": 0.9},
                    {"paper_id": "other", "relevant": True, "relevant_p": 0.6},
                ],
            }
        )
    out = relevance_threshold(rows, gold)
    assert out["at_0"] == {"precision": 0.5, "recall": 1.0}
    assert all(0.6 < t <= 0.9 for t in out["thresholds"]) and out["precision"] == 1.0 and out["recall"] == 1.0
    assert relevance_threshold([{"query_id": "q0", "readings": [{"paper_id": "p0", "relevant": True}]}], gold) is None
