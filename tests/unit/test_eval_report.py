"""The judge (prompt, schema, scripted calls), report writing with its PNG plot, and the
comparison table, without an index."""

from __future__ import annotations

import json
import sys

import pytest

from agent import prompts
from agent.runtime.resources import use_model_factory
from evals.judge import Judgement, evidence_block, judge_answer, summarize
from evals.metrics import score_all
from evals.report import metrics_table, question_table, write_compare, write_report
from tests.fakes import ScriptedChatModel

pytestmark = pytest.mark.unit

PNG = b"\x89PNG\r\n\x1a\n"


def test_judge_templates_variables():
    assert prompts.variables("judge") == {"question", "reference", "answer", "evidence"}
    assert prompts.variables("judge_system") == set()
    text = prompts.render("judge", question="Q?", reference="R.", answer="A.", evidence="E")
    assert "2 = correct and relevant" in text and "-1 = no support" in text


def test_judgement_schema_holds_the_liverag_scales():
    schema = Judgement.model_json_schema()["properties"]
    assert schema["correctness"]["enum"] == [-1, 0, 1, 2]
    assert schema["faithfulness"]["enum"] == [-1, 0, 1]
    with pytest.raises(ValueError):
        Judgement(correctness=3, faithfulness=0)


def test_evidence_block_prefers_the_full_chunk_text():
    cites = [
        {"chunk_id": "p1#c0", "paper_id": "p1", "kind": "table", "quote": "short"},
        {"chunk_id": "p2#c3", "paper_id": "p2", "kind": "text", "quote": "quoted only"},
    ]
    block = evidence_block(cites, {"p1#c0": "the full   table text"}.get)
    assert "[1] p1#c0 (paper p1, table)\nthe full table text" in block
    assert "[2] p2#c3 (paper p2, text)\nquoted only" in block
    assert evidence_block([], None) == "(no evidence cited)"


def test_judge_with_the_scripted_model():
    model = ScriptedChatModel(responses=[{"reason": "Right value, cited.", "correctness": 2, "faithfulness": 1}])
    with use_model_factory(lambda role, settings, name: model if role == "judge" else None):
        verdict = judge_answer(
            "What F1?",
            "95.7",
            "CRFs reach 95.7 F1 [1].",
            [{"chunk_id": "crf#c0", "paper_id": "crf", "kind": "text", "quote": "95.7 F1"}],
        )
    assert verdict["ok"] and (verdict["correctness"], verdict["faithfulness"]) == (2, 1)
    assert verdict["llm_calls"] == 1 and verdict["input_tokens"] > 0
    call = model.calls[0]
    assert "Reference answer (from the benchmark): 95.7" in call.user and "impartial grader" in call.system


def test_empty_answer_is_an_abstention_without_a_call():
    with use_model_factory(lambda *a: pytest.fail("no model call expected")):
        verdict = judge_answer("Q?", "R", "   ")
    assert verdict["correctness"] == 0 and verdict["faithfulness"] is None and verdict["llm_calls"] == 0


def test_summarize_verdicts():
    s = summarize(
        [
            {"ok": True, "correctness": 2, "faithfulness": 1, "llm_calls": 1},
            {"ok": True, "correctness": -1, "faithfulness": 0, "llm_calls": 1},
            {"ok": False, "correctness": None, "faithfulness": None, "llm_calls": 2},
        ]
    )
    assert s["correctness_mean"] == 0.5 and s["faithfulness_mean"] == 0.5
    assert s["failed"] == 1 and s["llm_calls"] == 4
    assert s["correctness_counts"] == {"-1": 1, "0": 0, "1": 0, "2": 1}


GOLD = [
    {"query_id": "a", "task_family": "multi_paper", "gold_papers": [{"paper_id": "p1"}, {"paper_id": "p2"}]},
    {"query_id": "b", "task_family": "hidden_source_single_paper", "gold_papers": [{"paper_id": "p3"}]},
]
SUB = [
    {"query_id": "a", "gold_papers": [{"paper_id": "p1"}], "answer": {}},
    {"query_id": "b", "gold_papers": [{"paper_id": "p3"}], "answer": {}},
]
CANDS = [
    {"query_id": "a", "candidate_papers": [{"paper_id": "p9"}, {"paper_id": "p1"}, {"paper_id": "p2"}]},
    {"query_id": "b", "candidate_papers": [{"paper_id": "p3"}]},
]


def fake_doc(name="A+B", label="A + B", kind="retrieval", seconds=0.5):
    scored = score_all(GOLD, SUB, CANDS)
    run = {
        "name": name,
        "label": label,
        "kind": kind,
        "questions": 2,
        "answered": 2,
        "failed": 0,
        "latency_p50_s": seconds,
        "latency_p95_s": seconds * 2,
        "llm_calls": 0.0,
        "llm_calls_per_question": 0.0,
        "input_tokens": 0.0,
        "output_tokens": 0.0,
        "tokens_per_question": 0.0,
        "judge": None,
        "finished": "2026-01-01T00:00:00+00:00",
    }
    return {
        "metrics": scored["metrics"],
        "details": scored["details"],
        "run": run,
        "settings": {"eval": {"benchmark": "/data/dev.jsonl", "index": "/idx"}},
    }


def test_report_has_tables_and_a_png_plot(tmp_path):
    path = write_report(tmp_path, fake_doc())
    text = path.read_text()
    assert (tmp_path / "recall_at_k.png").read_bytes()[:8] == PNG
    assert "![candidate recall@k](recall_at_k.png)" in text
    assert "| candidate_recall@1 | 0.5000 | 1.0000 | 0.0000 |" in text
    assert "| a | multi_paper |" in text
    assert "latency per question: p50 0.50 s, p95 1.00 s" in text


def test_report_without_matplotlib_keeps_its_tables(tmp_path, monkeypatch, caplog):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # what a core install without [report] has
    path = write_report(tmp_path, fake_doc())
    text = path.read_text()
    assert not (tmp_path / "recall_at_k.png").exists()
    assert "recall_at_k.png" not in text
    assert "| candidate_recall@1 | 0.5000 | 1.0000 | 0.0000 |" in text
    assert "litloop[report]" in caplog.text


def test_question_table_leaves_out_columns_that_never_apply():
    table = question_table(score_all(GOLD, SUB)["details"]["per_question"])
    header = table.splitlines()[0]
    assert "paper F1" in header and "MC" not in header and "R@10" not in header


def test_metrics_table_drops_all_na_rows():
    table = metrics_table(fake_doc())
    assert "multiple_choice_accuracy" not in table and "paper_f1_macro" in table


def test_compare_table_and_plot(tmp_path):
    docs = {"bm25": fake_doc("bm25", "BM25 only", seconds=0.01), "A+B": fake_doc()}
    data = write_compare(tmp_path, docs, benchmark="/data/dev.jsonl", questions=2)
    assert [r["name"] for r in data["runs"]] == ["bm25", "A+B"]
    assert json.loads((tmp_path / "compare.json").read_text())["runs"][0]["label"] == "BM25 only"
    md = (tmp_path / "compare.md").read_text()
    assert "| bm25 | BM25 only | 0.5000 |" in md and "| 0.01 | 0.02 |" in md
    assert (tmp_path / "compare_recall_at_k.png").read_bytes()[:8] == PNG
