"""`litloop score` on hand-made files: the table, the JSON contract, and errors that name the
line and the field."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from agent.cli.main import app

pytestmark = pytest.mark.unit

runner = CliRunner()

GOLD = [
    {
        "query_id": "q1",
        "question": "Which option?",
        "task_family": "hidden_source_single_paper",
        "answer_types": ["multiple_choice"],
        "gold_papers": [{"paper_id": "p1"}],
        "evidence": [{"paper_id": "p1", "source_type": "table", "locator": {"page": 3, "table_id": "Table 2"}}],
        "answer": {"multiple_choice": {"options": {"A": "x", "B": "y"}, "gold": "B"}},
    },
    {
        "query_id": "q2",
        "question": "Which papers?",
        "task_family": "multi_paper",
        "answer_types": ["freeform"],
        "gold_papers": [{"paper_id": "p2"}, {"paper_id": "p3"}],
        "evidence": [{"paper_id": "p2", "source_type": "text_span", "locator": {"page": 1}}],
        "answer": {"freeform": {"text": "p2 and p3"}},
    },
]
SUBMISSION = [
    {
        "query_id": "q1",
        "gold_papers": [{"paper_id": "p1"}],
        "evidence": [{"paper_id": "p1", "source_type": "table", "locator": {"page": 3, "table_id": "table 2"}}],
        "answer": {"multiple_choice": {"gold": "B"}},
    },
    {
        "query_id": "q2",
        "gold_papers": [{"paper_id": "p2"}, {"paper_id": "p9"}],
        "evidence": [],
        "answer": {"freeform": {"text": "P2 and P3"}},
    },
]
CANDIDATES = [
    {"query_id": "q1", "candidate_papers": [{"paper_id": "p5"}, {"paper_id": "p1"}]},
    {"query_id": "q2", "candidate_papers": [{"paper_id": "p3", "rank": 1}, {"paper_id": "p2", "rank": 2}]},
]


def write(path, records):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


@pytest.fixture
def files(tmp_path):
    return (
        write(tmp_path / "gold.jsonl", GOLD),
        write(tmp_path / "sub.jsonl", SUBMISSION),
        write(tmp_path / "cand.jsonl", CANDIDATES),
    )


def test_score_json_contract_and_values(files):
    gold, sub, cand = files
    r = runner.invoke(
        app, ["score", "--gold", str(gold), "--submission", str(sub), "--candidates", str(cand), "--json"]
    )
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert set(doc) == {"metrics", "details", "settings"}
    m = doc["metrics"]
    # q1: P=R=F1=1; q2: P 1/2, R 1/2, F1 1/2
    assert m["paper_precision_macro"] == pytest.approx(0.75)
    assert m["paper_f1_macro"] == pytest.approx(0.75)
    # evidence: q1 matches (table id folded), q2 gives none -> 0
    assert m["evidence_f1_macro"] == pytest.approx(0.5)
    assert m["multiple_choice_accuracy"] == 1.0 and m["freeform_exact_match"] == 1.0
    assert m["table_row_f1_macro"] is None
    # candidate recall: q1 gold p1 at rank 2; q2 both in top 2
    assert m["candidate_recall@1"] == pytest.approx((0 + 0.5) / 2)
    assert m["candidate_recall@5"] == 1.0
    assert doc["settings"]["strict"] is False
    assert doc["details"]["counts"]["missing_prediction_count"] == 0


def test_score_table_output(files):
    gold, sub, _ = files
    r = runner.invoke(app, ["score", "--gold", str(gold), "--submission", str(sub)])
    assert r.exit_code == 0, r.output
    assert "paper_f1_macro" in r.stdout and "0.7500" in r.stdout
    assert "table_row_f1_macro" in r.stdout and "n/a" in r.stdout
    assert "candidate_recall@1" not in r.stdout


def test_errors_name_line_and_field(tmp_path, files):
    gold, _, _ = files
    bad = write(
        tmp_path / "bad.jsonl",
        [
            SUBMISSION[0],
            {"query_id": "q2", "gold_papers": "p2", "answer": {}},
            {
                "query_id": "q3",
                "gold_papers": [],
                "evidence": [{"paper_id": "p", "source_type": "table", "locator": {"page": "7"}}],
                "answer": {"multiple_choice": {"gold": "b"}},
            },
        ],
    )
    r = runner.invoke(app, ["score", "--gold", str(gold), "--submission", str(bad)])
    assert r.exit_code == 1
    assert "bad.jsonl line 2: field 'gold_papers': expected an array" in r.output
    assert "bad.jsonl line 3: field 'evidence[0].locator.page': expected a page number (a whole number)" in r.output
    assert "line 3: field 'answer.multiple_choice.gold': expected one capital letter" in r.output


def test_invalid_json_and_duplicate_and_missing_file(tmp_path, files):
    gold, _, _ = files
    broken = write(tmp_path / "broken.jsonl", [SUBMISSION[0], "{not json"])
    r = runner.invoke(app, ["score", "--gold", str(gold), "--submission", str(broken)])
    assert r.exit_code == 1 and "broken.jsonl line 2: invalid JSON" in r.output
    dup = write(tmp_path / "dup.jsonl", [SUBMISSION[0], SUBMISSION[0]])
    r = runner.invoke(app, ["score", "--gold", str(gold), "--submission", str(dup)])
    assert r.exit_code == 1 and "dup.jsonl line 2: duplicate query_id 'q1' (first on line 1)" in r.output
    r = runner.invoke(app, ["score", "--gold", str(gold), "--submission", str(tmp_path / "none.jsonl")])
    assert r.exit_code == 1 and "none.jsonl: no such file" in r.output


def test_bad_candidates_and_gold_name_line_and_field(tmp_path, files):
    gold, sub, _ = files
    cand = write(tmp_path / "cand.jsonl", [{"query_id": "q1", "candidate_papers": [{"paper_id": "p1", "rank": 0}]}])
    r = runner.invoke(app, ["score", "--gold", str(gold), "--submission", str(sub), "--candidates", str(cand)])
    assert (
        r.exit_code == 1
        and "cand.jsonl line 1: field 'candidate_papers[0].rank': expected a rank (a whole number of at least 1)"
        in r.output
    )
    inputs = write(tmp_path / "inputs.jsonl", [{"query_id": "q1", "question": "Which?", "answer_types": ["freeform"]}])
    r = runner.invoke(app, ["score", "--gold", str(inputs), "--submission", str(sub)])
    assert r.exit_code == 1 and "inputs.jsonl line 1: field 'gold_papers' is missing" in r.output


def test_strict_refuses_gold_style_locators(tmp_path, files):
    gold, _, _ = files
    sub = write(
        tmp_path / "sub.jsonl",
        [
            {
                **SUBMISSION[0],
                "evidence": [
                    {
                        "paper_id": "p1",
                        "source_type": "table",
                        "locator": {"page": 3, "table_id": "Table 2", "row": "x"},
                    }
                ],
            }
        ],
    )
    assert runner.invoke(app, ["score", "--gold", str(gold), "--submission", str(sub)]).exit_code == 0
    r = runner.invoke(app, ["score", "--gold", str(gold), "--submission", str(sub), "--strict"])
    assert r.exit_code == 1 and "field 'evidence[0].locator.row'" in r.output


def test_retrieval_benchmark_gold_has_no_evidence_metrics(tmp_path):
    gold = write(
        tmp_path / "citerec.jsonl",
        [
            {
                "query_id": "cr_1",
                "question": "Which earlier papers should it cite?",
                "task_family": "multi_paper",
                "gold_papers": [{"paper_id": "a"}, {"paper_id": "b"}],
            }
        ],
    )
    sub = write(tmp_path / "sub.jsonl", [{"query_id": "cr_1", "gold_papers": [{"paper_id": "a"}], "answer": {}}])
    r = runner.invoke(app, ["score", "--gold", str(gold), "--submission", str(sub), "--json"])
    assert r.exit_code == 0, r.output
    m = json.loads(r.stdout)["metrics"]
    assert m["paper_recall_macro"] == 0.5 and m["paper_precision_macro"] == 1.0
    assert m["evidence_f1_macro"] is None  # no gold evidence: not 1.0 (vacuous), not 0.0
    assert m["overall_score"] == pytest.approx(m["paper_f1_macro"])  # no answer metric applies either


def test_official_vector_through_the_cli(littraceqa):
    # needs the shared LitTraceQA files (CC BY-NC, never shipped): see
    # test_metrics.test_perturbed_submission_reproduces_official_vector for why
    lt = littraceqa
    r = runner.invoke(
        app,
        [
            "score",
            "--gold",
            str(lt / "validation_a.jsonl"),
            "--submission",
            str(lt / "perturbed_submission_a.jsonl"),
            "--candidates",
            str(lt / "lit3r_candidates_validation_a.jsonl"),
            "--json",
        ],
    )
    assert r.exit_code == 0, r.output
    m = json.loads(r.stdout)["metrics"]
    official = json.loads((lt / "perturbed_submission_a.official_metrics.json").read_text())["metrics"]
    for name, value in official.items():
        assert m[name] == pytest.approx(value, abs=5e-5), name
    assert [round(m[f"candidate_recall@{k}"], 4) for k in (1, 5, 10, 20, 50)] == [
        0.7718,
        0.8859,
        0.9385,
        0.9673,
        0.9911,
    ]
