"""`litloop eval` end to end on the small real index with the scripted model: the run folder,
resumability, LLM-free mode, the judge, failures and the comparison table."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from agent.cli.main import app
from evals.run import EvalRequest, run_eval

from .conftest import SATISFIED, cite_first_chunk, claims_answer

pytestmark = pytest.mark.graph

runner = CliRunner()

QUESTIONS = [
    {
        "query_id": "q_crf",
        "question": "What F1 do conditional random fields reach on chunking?",
        "task_family": "hidden_source_single_paper",
        "answer_types": ["multiple_choice"],
        "gold_papers": [{"paper_id": "crf"}],
        "answer": {
            "multiple_choice": {"options": {"A": "90.9", "B": "95.7"}, "gold": "B"},
            "freeform": {"text": "CRFs reach 95.7 F1 on chunking."},
        },
    },
    {
        "query_id": "q_tag",
        "question": "Which Markov and CRF models label sequences?",
        "task_family": "multi_paper",
        "answer_types": ["freeform"],
        "gold_papers": [{"paper_id": "crf"}, {"paper_id": "hmm"}, {"paper_id": "memm"}],
        "answer": {"freeform": {"text": "HMMs, MEMMs and CRFs."}},
    },
    {
        "query_id": "q_cook",
        "question": "How long should tomato sauce simmer?",
        "task_family": "hidden_source_single_paper",
        "answer_types": ["multiple_choice"],
        "gold_papers": [{"paper_id": "cook"}],
        "answer": {"multiple_choice": {"options": {"A": "two hours", "B": "ten minutes"}, "gold": "A"}},
    },
]
ANSWER = claims_answer(("CRFs reach 95.7 F1 on chunking.", "95.7"), choice="B")
VERDICT = {"reason": "Matches the reference and is grounded.", "correctness": 2, "faithfulness": 1}


def syntheses(models):
    """The synthesis calls (structured output), not the option-scoring calls of the same model."""
    return [c for c in models["synthesize"].calls if c.kwargs.get("scripted_method")]


def agent_scripts(scripted, **extra):
    return scripted(
        decompose=(lambda m: {"subqueries": ["conditional random fields chunking"]},),
        verify=(SATISFIED,),
        read=(cite_first_chunk,),
        synthesize=(ANSWER,),
        **extra,
    )


@pytest.fixture
def bench(tmp_path):
    path = tmp_path / "questions.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    return path


def lines(path):
    return path.read_text().splitlines()


def test_agent_run_writes_the_run_folder(scripted, graph_index, bench, tmp_path):
    m = agent_scripts(scripted)
    out = tmp_path / "run"
    # every question answered as a fact by the scripted synthesis ("Which Markov and CRF models
    # ..." would be read as a list of papers, which names them with no model call)
    r = runner.invoke(
        app,
        ["eval", "--benchmark", str(bench), "--index", str(graph_index), "--preset", "local", "--out", str(out)]
        + ["--set", "answer_shape=fact"],
    )
    assert r.exit_code == 0, r.output
    for name in (
        "submission.jsonl",
        "candidates.jsonl",
        "results.jsonl",
        "metrics.json",
        "report.md",
        "recall_at_k.png",
        "run.json",
    ):
        assert (out / name).exists(), name
    assert (out / "recall_at_k.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    subs = [json.loads(x) for x in lines(out / "submission.jsonl")]
    assert [s["query_id"] for s in subs] == ["q_crf", "q_tag", "q_cook"]
    first = subs[0]
    assert first["answer"]["multiple_choice"] == {"gold": "B"}
    assert first["answer"]["freeform"]["text"].startswith("CRFs reach 95.7 F1")  # asked: the gold has free text
    assert first["gold_papers"] == [{"paper_id": "crf"}] and first["evidence"][0]["paper_id"] == "crf"
    cands = [json.loads(x) for x in lines(out / "candidates.jsonl")]
    # the agent's fused ranking at length 50 (the corpus has 6 papers), not just the 3 it read
    assert len(cands[0]["candidate_papers"]) == 6 and cands[0]["candidate_papers"][0] == {"paper_id": "crf", "rank": 1}

    doc = json.loads((out / "metrics.json").read_text())
    assert set(doc) >= {"metrics", "details", "settings", "run"}
    metrics = doc["metrics"]
    assert metrics["multiple_choice_accuracy"] == 0.5  # B right for q_crf, wrong for q_cook
    assert metrics["evidence_f1_macro"] is None  # the benchmark has no gold evidence
    assert metrics["candidate_recall@50"] == 1.0
    assert metrics["freeform_exact_match_normalized"] == 0.0
    # q_crf: pred "crfs reach 95.7 f1 on chunking 1" (7 tokens) vs gold (6): 6 common -> F1 12/13;
    # q_tag: pred same 7 tokens vs "hmms memms and crfs" (4): "crfs" -> P 1/7, R 1/4 -> F1 2/11
    assert metrics["freeform_token_f1"] == pytest.approx((12 / 13 + 2 / 11) / 2)
    assert doc["details"]["baselines"]["multiple_choice_majority"] == {"label": "A", "accuracy": 0.5, "questions": 2}
    run = doc["run"]
    assert run["questions"] == run["answered"] == 3 and run["failed"] == 0
    assert run["llm_calls"] == sum(len(model.calls) for model in m.values())
    assert run["input_tokens"] > 0 and run["latency_p95_s"] >= run["latency_p50_s"] > 0
    assert doc["settings"]["eval"]["preset"] == "local" and doc["settings"]["litloop"]["context"]["read_papers"] == 2
    report = (out / "report.md").read_text()
    assert "![candidate recall@k](recall_at_k.png)" in report and "| q_cook |" in report
    assert "majority baseline (always A) 0.5000" in report


def test_resume_adds_one_line_and_leaves_the_first(scripted, graph_index, bench, tmp_path):
    m = agent_scripts(scripted)
    out = tmp_path / "run"
    args = ["eval", "--benchmark", str(bench), "--index", str(graph_index), "--preset", "local", "--out", str(out)]
    args += ["--set", "answer_shape=fact"]  # each question one synthesis call (see above)
    r = runner.invoke(app, [*args, "--limit", "1"])
    assert r.exit_code == 0, r.output
    first = lines(out / "submission.jsonl")
    assert len(first) == 1 and len(syntheses(m)) == 1
    r = runner.invoke(app, [*args, "--limit", "2"])
    assert r.exit_code == 0, r.output
    after = lines(out / "submission.jsonl")
    assert len(after) == 2 and after[0] == first[0]
    assert len(syntheses(m)) == 2  # only the new question was answered
    assert len(lines(out / "candidates.jsonl")) == len(lines(out / "results.jsonl")) == 2
    assert json.loads((out / "metrics.json").read_text())["run"]["questions"] == 2
    # a crash mid-write leaves a torn line: it is dropped and that question runs again
    with open(out / "submission.jsonl", "a") as f:
        f.write('{"query_id": "q_co')
    r = runner.invoke(app, [*args, "--limit", "3"])
    assert r.exit_code == 0, r.output
    final = lines(out / "submission.jsonl")
    assert [json.loads(x)["query_id"] for x in final] == ["q_crf", "q_tag", "q_cook"] and final[0] == first[0]


def test_resuming_another_kind_of_run_is_refused(scripted, graph_index, bench, tmp_path):
    agent_scripts(scripted)
    out = tmp_path / "run"
    base = ["eval", "--benchmark", str(bench), "--index", str(graph_index), "--out", str(out), "--limit", "1"]
    assert runner.invoke(app, [*base, "--preset", "local"]).exit_code == 0
    r = runner.invoke(app, [*base, "--no-llm"])
    assert r.exit_code == 1 and "holds another run" in r.output


def test_no_llm_mode(graph_index, bench, tmp_path):
    out = tmp_path / "nollm"
    r = runner.invoke(
        app, ["eval", "--benchmark", str(bench), "--index", str(graph_index), "--no-llm", "--out", str(out), "--json"]
    )
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    subs = {s["query_id"]: s for s in map(json.loads, lines(out / "submission.jsonl"))}
    assert len(subs["q_crf"]["gold_papers"]) == 1 and subs["q_crf"]["gold_papers"][0]["paper_id"] == "crf"
    assert len(subs["q_tag"]["gold_papers"]) == 5  # multi-paper: the top 5
    assert subs["q_crf"]["answer"] == {} and subs["q_crf"]["evidence"][0]["paper_id"] == "crf"
    assert subs["q_cook"]["gold_papers"] == [{"paper_id": "cook"}]
    cand = json.loads(lines(out / "candidates.jsonl")[0])
    assert [c["rank"] for c in cand["candidate_papers"]] == list(range(1, len(cand["candidate_papers"]) + 1))
    m = doc["metrics"]
    assert m["multiple_choice_accuracy"] is None and m["freeform_token_f1"] is None  # no answer attempted
    assert m["paper_recall_macro"] == pytest.approx((1 + 1 + 1) / 3)
    assert m["overall_score"] == pytest.approx(m["paper_f1_macro"])
    assert doc["run"]["llm_calls"] == 0 and doc["run"]["kind"] == "retrieval"
    assert doc["settings"]["eval"]["variant"] == "A+B"
    assert (out / "recall_at_k.png").exists() and "| q_tag |" in (out / "report.md").read_text()


def test_judge_grades_free_form_answers(scripted, graph_index, bench, tmp_path):
    m = agent_scripts(scripted, judge=[VERDICT, {**VERDICT, "correctness": -1, "faithfulness": 0}])
    out = tmp_path / "judged"
    doc = run_eval(EvalRequest(bench, graph_index, out, preset="local", judge=True))
    calls = m["judge"].calls
    assert len(calls) == 2  # q_cook has no reference text: not judged
    prompt = calls[0].user
    assert "Reference answer (from the benchmark): CRFs reach 95.7 F1 on chunking. (Correct option: B: 95.7)" in prompt
    assert "System answer: CRFs reach 95.7 F1 on chunking [1]." in prompt
    assert "95.7 F1 on chunking" in prompt.split("Evidence the system cited")[1]  # full chunk text of the citation
    assert "strict, impartial grader" in calls[0].system
    verdicts = [json.loads(x) for x in lines(out / "judgements.jsonl")]
    assert [(v["query_id"], v["correctness"], v["faithfulness"]) for v in verdicts] == [
        ("q_crf", 2, 1),
        ("q_tag", -1, 0),
    ]
    assert doc["metrics"]["judge_correctness_mean"] == 0.5 and doc["metrics"]["judge_faithfulness_mean"] == 0.5
    assert doc["run"]["judge"]["correctness_counts"] == {"-1": 1, "0": 0, "1": 0, "2": 1}
    report = (out / "report.md").read_text()
    assert "## Judge" in report and "Matches the reference and is grounded." in report
    # resumed: judged questions are not judged again
    run_eval(EvalRequest(bench, graph_index, out, preset="local", judge=True))
    assert len(m["judge"].calls) == 2


def test_invalid_judge_output_is_repaired_then_recorded(scripted, graph_index, bench, tmp_path):
    agent_scripts(
        scripted, judge=[{"correctness": 5, "faithfulness": 1}, {"correctness": 7, "faithfulness": 1}, VERDICT]
    )
    doc = run_eval(EvalRequest(bench, graph_index, tmp_path / "j", preset="local", judge=True, limit=2))
    verdicts = [json.loads(x) for x in lines(tmp_path / "j" / "judgements.jsonl")]
    assert verdicts[0]["ok"] is False and verdicts[0]["llm_calls"] == 2 and verdicts[0]["correctness"] is None
    assert verdicts[1]["ok"] is True and verdicts[1]["correctness"] == 2
    assert doc["run"]["judge"]["failed"] == 1 and doc["metrics"]["judge_correctness_mean"] == 2.0


def test_a_failing_question_is_recorded_and_retried(scripted, graph_index, bench, tmp_path):
    agent_scripts(scripted)
    scripted(decompose=[{"subqueries": ["crf"]}])  # one reply: the second question's decompose raises
    out = tmp_path / "fail"
    doc = run_eval(EvalRequest(bench, graph_index, out, preset="local", limit=2))
    assert [json.loads(x)["query_id"] for x in lines(out / "submission.jsonl")] == ["q_crf"]
    failure = json.loads(lines(out / "failures.jsonl")[0])
    assert failure["query_id"] == "q_tag" and "ScriptExhausted" in failure["error"]
    assert doc["run"]["failed"] == 1 and doc["details"]["counts"]["missing_predictions"] == ["q_tag"]
    agent_scripts(scripted)
    doc = run_eval(EvalRequest(bench, graph_index, out, preset="local", limit=2))
    assert doc["run"]["failed"] == 0 and doc["run"]["answered"] == 2


def test_compare_writes_one_ablation_table(scripted, graph_index, bench, tmp_path):
    agent_scripts(scripted)
    out = tmp_path / "cmp"
    r = runner.invoke(
        app,
        [
            "eval",
            "--benchmark",
            str(bench),
            "--index",
            str(graph_index),
            "--out",
            str(out),
            "--compare",
            "bm25,hybrid",
            "--compare",
            "A+B",
            "--compare",
            "local",
        ],
    )
    assert r.exit_code == 0, r.output
    data = json.loads((out / "compare.json").read_text())
    assert [row["name"] for row in data["runs"]] == ["bm25", "hybrid", "A+B", "local"]
    assert [row["label"] for row in data["runs"]] == [
        "BM25 only",
        "hybrid (RRF of the three)",
        "A + B",
        "agent, local model",
    ]
    assert data["runs"][0]["multiple_choice_accuracy"] is None and data["runs"][3]["multiple_choice_accuracy"] == 0.5
    table = (out / "compare.md").read_text()
    assert "| bm25 | BM25 only |" in table and "| local | agent, local model |" in table
    assert (out / "compare_recall_at_k.png").exists()
    for folder in ("bm25", "hybrid", "A_B", "local"):
        assert (out / folder / "metrics.json").exists() and (out / folder / "report.md").exists()
    r = runner.invoke(
        app,
        ["eval", "--benchmark", str(bench), "--index", str(graph_index), "--out", str(out), "--compare", "bm25,magic"],
    )
    assert r.exit_code == 1 and "unknown names ['magic']" in r.output


def test_set_passes_run_knobs_to_the_agent(scripted, graph_index, bench, tmp_path):
    m = agent_scripts(scripted)
    out = tmp_path / "run"
    r = runner.invoke(
        app,
        [
            "eval",
            "--benchmark",
            str(bench),
            "--index",
            str(graph_index),
            "--preset",
            "local",
            "--out",
            str(out),
            "--limit",
            "1",
            "--set",
            "synthesize_claims=2",
            "--set",
            "choice_scoring=model",
        ],
    )
    assert r.exit_code == 0, r.output
    schema = syntheses(m)[0].kwargs["scripted_schema"]
    assert schema["properties"]["claims"]["maxItems"] == 2
    assert json.loads((out / "run.json").read_text())["settings"] == {"synthesize_claims": 2, "choice_scoring": "model"}
    bad = runner.invoke(
        app,
        [
            "eval",
            "--benchmark",
            str(bench),
            "--index",
            str(graph_index),
            "--out",
            str(out),
            "--set",
            "synthesize_claims=many",
        ],
    )
    assert bad.exit_code == 2 and "field 'synthesize_claims': expected a whole number" in bad.output
    assert "'many'" in bad.output
    bad = runner.invoke(
        app,
        ["eval", "--benchmark", str(bench), "--index", str(graph_index), "--out", str(out), "--set", "max_rerank=abc"],
    )
    assert bad.exit_code == 2 and "field 'max_rerank': expected a whole number, got a string ('abc')" in bad.output
    bad = runner.invoke(
        app,
        [
            "eval",
            "--benchmark",
            str(bench),
            "--index",
            str(graph_index),
            "--out",
            str(out),
            "--set",
            "choice_scoring=calibratd",
        ],
    )
    assert bad.exit_code == 2 and "field 'choice_scoring'" in bad.output and "'calibratd'" in bad.output
    assert "'model', 'scored', 'calibrated'" in bad.output
    bad = runner.invoke(
        app,
        ["eval", "--benchmark", str(bench), "--index", str(graph_index), "--out", str(out), "--set", "no_such_knob=1"],
    )
    assert bad.exit_code == 2 and "KEY=VALUE" in bad.output
