"""Benchmark loading: LitTraceQA-shaped records to ask() arguments, and clear errors."""

from __future__ import annotations

import json

import pytest

from evals.datasets import (
    BENCHMARKS,
    gold_records,
    has_gold_evidence,
    load_questions,
    resolve_benchmark,
)

pytestmark = pytest.mark.unit

PUBMEDQA = {
    "query_id": "pqa_1",
    "question": "Is CRP useful?",
    "task_family": "hidden_source_single_paper",
    "answer_types": ["multiple_choice"],
    "gold_papers": [{"paper_id": "pmid1"}],
    "answer": {
        "multiple_choice": {"options": {"A": "yes", "B": "no", "C": "maybe"}, "gold": "C"},
        "freeform": {"text": "Unelevated values exclude it."},
    },
}
TABLE_Q = {
    "query_id": "q_9",
    "question": "Which papers?",
    "task_family": "multi_paper",
    "answer_types": ["table"],
    "gold_papers": [{"paper_id": "a"}],
    "evidence": [],
    "answer": {
        "table": {
            "schema": [{"name": "Paper Title", "type": "string", "is_row_key": True}],
            "rows": [{"Paper Title": "X"}],
        }
    },
}
INPUT_Q = {
    "query_id": "ltqa_1",
    "benchmark": "LitTraceQA",
    "question": "Which one?",
    "answer_types": ["multiple_choice"],
    "multiple_choice_options": [{"label": "A", "text": "one"}, {"label": "B", "text": "two"}],
}
CITEREC = {
    "query_id": "cr_1",
    "question": "Which earlier papers should it cite?",
    "task_family": "multi_paper",
    "gold_papers": [{"paper_id": "x"}, {"paper_id": "y"}],
}


def write(tmp_path, records, name="q.jsonl"):
    path = tmp_path / name
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


def test_shapes_map_to_ask_arguments(tmp_path):
    qs = load_questions(write(tmp_path, [PUBMEDQA, TABLE_Q, INPUT_Q, CITEREC]))
    pqa, table, inp, cr = qs
    # the gold conclusion is free-form text the agent's prose is graded against: freeform is asked too
    assert pqa.ask_arguments() == {
        "query_id": "pqa_1",
        "answer_types": ["multiple_choice", "freeform"],
        "options": {"A": "yes", "B": "no", "C": "maybe"},
        "table_schema": None,
    }
    assert (
        pqa.gold_choice == "C" and pqa.reference_answer() == "Unelevated values exclude it. (Correct option: C: maybe)"
    )
    assert table.ask_arguments()["table_schema"] == [{"name": "Paper Title", "type": "string", "is_row_key": True}]
    assert table.ask_arguments()["answer_types"] == ["table"] and table.reference_answer() is None
    assert inp.options == {"A": "one", "B": "two"} and not inp.has_gold
    assert cr.ask_arguments()["answer_types"] == ["freeform"] and cr.options is None
    assert [r["query_id"] for r in gold_records(qs)] == ["pqa_1", "q_9", "cr_1"]
    assert has_gold_evidence(qs)  # q_9 carries an evidence field
    assert not has_gold_evidence([pqa, cr])


def test_limit_keeps_file_order(tmp_path):
    qs = load_questions(write(tmp_path, [PUBMEDQA, TABLE_Q, CITEREC]), limit=2)
    assert [q.query_id for q in qs] == ["pqa_1", "q_9"]


def test_errors_name_line_and_field(tmp_path):
    path = write(
        tmp_path,
        [
            PUBMEDQA,
            {"query_id": "x", "question": ""},
            {"query_id": "y", "question": "q", "answer_types": ["essay"]},
            {"query_id": "pqa_1", "question": "again"},
            {**CITEREC, "query_id": "z", "gold_papers": [{"id": "x"}]},
        ],
    )
    with pytest.raises(ValueError) as err:
        load_questions(path)
    text = str(err.value)
    assert "q.jsonl line 2: field 'question' must be a non-empty string" in text
    assert (
        "q.jsonl line 3: field 'answer_types[0]' must be one of freeform, multiple_choice, table, got 'essay'" in text
    )
    assert "q.jsonl line 4: duplicate query_id 'pqa_1' (first on line 1)" in text
    assert "q.jsonl line 5: field 'gold_papers[0].paper_id' is missing" in text


def test_invalid_json_and_missing_file(tmp_path):
    with pytest.raises(ValueError, match=r"q.jsonl line 2: invalid JSON"):
        load_questions(write(tmp_path, [PUBMEDQA, "{oops"]))
    with pytest.raises(FileNotFoundError, match="no such file"):
        resolve_benchmark(tmp_path / "none.jsonl")


def test_named_benchmarks_resolve_under_shared_data(shared_data):
    counts = {"citerec-dev": 129, "pubmedqa-dev": 500, "littraceqa-validation-a": 28}
    for name, n in counts.items():
        path = resolve_benchmark(name)
        assert path == shared_data / BENCHMARKS[name].questions
        qs = load_questions(path)
        assert len(qs) == n and all(q.has_gold for q in qs)
    pqa = load_questions(resolve_benchmark("pubmedqa-dev"), limit=1)[0]
    assert pqa.options == {"A": "yes", "B": "no", "C": "maybe"} and pqa.gold_freeform
    val = load_questions(resolve_benchmark("littraceqa-validation-a"))
    assert sum(q.table_schema is not None for q in val) == 7
    assert sum(q.options is not None for q in val) == 18
    assert not has_gold_evidence(load_questions(resolve_benchmark("citerec-dev")))
