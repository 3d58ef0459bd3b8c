from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from agent.cli.batch import run_batch
from agent.cli.main import app

from .conftest import cite_first_chunk, claims_answer

pytestmark = pytest.mark.graph

ANSWER = claims_answer(("CRFs reach 95.7 F1.", "95.7"), choice="B")
SMALL = dict(read_papers=2, read_concurrency=1, subqueries_per_round=1)


def _inputs(tmp_path, n=3, name="in.jsonl"):
    rows = [
        {
            "query_id": f"q{i}",
            "benchmark": "LitTraceQA",
            "question": f"What F1 do CRFs reach? ({i})",
            "answer_types": ["freeform", "multiple_choice"],
            "multiple_choice_options": [{"label": "A", "text": "90"}, {"label": "B", "text": "95.7"}],
        }
        for i in range(n)
    ]
    p = tmp_path / name
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def _ask_small(question, **kw):
    from agent.api import ask

    return ask(question, **{**kw, "preset": "paper"}, **SMALL)


def test_batch_writes_one_line_per_input_and_resumes(scripted, tmp_path):
    scripted(
        decompose=({"subqueries": ["crf F1"]},),
        verify=({"evidence_papers": ["crf"], "sufficient": True, "missing": ""},),
        read=(cite_first_chunk,),
        synthesize=(ANSWER,),
    )
    inp, out = _inputs(tmp_path), tmp_path / "sub.jsonl"
    # a first run answered q0; then a crash tore the line of q1
    summary = run_batch(_inputs(tmp_path, 1, "first.jsonl"), out, ask_fn=_ask_small)
    assert summary == {"written": 1, "partial": 0, "skipped": 0, "failed": 0}
    with out.open("a") as fh:
        fh.write('{"query_id": "q1", "gold_pap')  # torn line
    calls = []

    def flaky(question, **kw):
        calls.append(kw["query_id"])
        if kw["query_id"] == "q2":
            raise RuntimeError("model endpoint down")
        return _ask_small(question, **kw)

    summary = run_batch(inp, out, ask_fn=flaky)
    assert calls == ["q1", "q2"]
    assert summary == {"written": 1, "partial": 0, "skipped": 1, "failed": 1}
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["query_id"] for r in lines] == ["q0", "q1", "q2"]
    assert lines[0]["answer"]["multiple_choice"] == {"gold": "B"}
    assert lines[2] == {
        "query_id": "q2",
        "gold_papers": [],
        "evidence": [],
        "answer": {"freeform": {"text": ""}, "multiple_choice": {"gold": ""}},
    }
    runs = [json.loads(line) for line in out.with_name("sub.jsonl.runs.jsonl").read_text().splitlines()]
    assert runs[-1]["ok"] is False and "model endpoint down" in runs[-1]["error"]


def test_batch_retries_a_failed_question_and_keeps_input_order(scripted, tmp_path):
    scripted(
        decompose=({"subqueries": ["crf F1"]},),
        verify=({"evidence_papers": ["crf"], "sufficient": True, "missing": ""},),
        read=(cite_first_chunk,),
        synthesize=(ANSWER,),
    )
    inp, out = _inputs(tmp_path), tmp_path / "sub.jsonl"
    calls = []

    def down_for(failing):
        def ask_fn(question, **kw):
            calls.append(kw["query_id"])
            if kw["query_id"] in failing:
                raise RuntimeError("model endpoint down")
            return _ask_small(question, **kw)

        return ask_fn

    assert run_batch(inp, out, ask_fn=down_for({"q1"})) == {"written": 2, "partial": 0, "skipped": 0, "failed": 1}
    placeholder = json.loads(out.read_text().splitlines()[1])
    assert placeholder["query_id"] == "q1" and placeholder["gold_papers"] == []
    # the failure is recorded, not counted as done: the next run retries q1 (and only q1)
    calls.clear()
    assert run_batch(inp, out, ask_fn=down_for(set())) == {"written": 1, "partial": 0, "skipped": 2, "failed": 0}
    assert calls == ["q1"]
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["query_id"] for r in lines] == ["q0", "q1", "q2"]  # one line each, input order
    assert lines[1]["answer"]["multiple_choice"] == {"gold": "B"}
    runs = [json.loads(line) for line in out.with_name("sub.jsonl.runs.jsonl").read_text().splitlines()]
    assert [(r["query_id"], r["ok"]) for r in runs] == [("q0", True), ("q1", False), ("q2", True), ("q1", True)]
    calls.clear()
    assert run_batch(inp, out, ask_fn=down_for(set()))["skipped"] == 3 and calls == []


def test_bad_batch_input_names_line_and_field(tmp_path):
    p = tmp_path / "in.jsonl"
    p.write_text('{"query_id": "a", "question": "x"}\n{"query_id": "b"}\n')
    r = CliRunner().invoke(app, ["run", "--input", str(p), "--out", str(tmp_path / "o.jsonl")])
    assert r.exit_code == 1 and "in.jsonl:2: field 'question' must be a non-empty string" in r.output


@pytest.mark.parametrize("node", ["system", "decompose", "verify", "read_paper", "synthesize", "repair"])
def test_prompt_render_calls_no_model(scripted, node):
    scripted()  # no scripts: any model call would fail the test
    r = CliRunner().invoke(
        app,
        ["prompt", "render", "--question", "What F1 do CRFs reach on chunking?", "--node", node, "--preset", "paper"],
    )
    assert r.exit_code == 0, r.output
    if node == "verify":
        assert "CHUNK " in r.stdout and "=== human ===" in r.stdout
    if node in ("read_paper", "synthesize"):  # numbered sentences under their locator
        assert "\nS1 " in r.stdout and "=== human ===" in r.stdout
    if node == "decompose":
        assert "at most 4 short search queries" in r.stdout
