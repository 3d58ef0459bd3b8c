"""A dead or broken model endpoint is a failure, never an answer: `litloop ask`, `run` and `eval`
against the tests' own OpenAI-compatible server on 127.0.0.1 (tests/openai_stub.py) answering
with each fault, through the real ChatOpenAI client, on the real small index.

Every run is bounded: a 0.5 s request timeout, one client retry, and after three failed calls in
a row the run sends no more (agent.llm.ENDPOINT_FAILURES_TO_STOP): at most 6 requests a fault.
"""

from __future__ import annotations

import json
import time

import pytest
from typer.testing import CliRunner

from agent.answer.assemble import NO_EVIDENCE
from agent.tracing.store import load_trace
from tests.openai_stub import OpenAIStub, refused_url

pytestmark = pytest.mark.graph

QUESTION = "What F1 do CRFs reach on chunking?"
NOT_SENT = "not sent: the endpoint failed the run's last 3 calls"


@pytest.fixture
def endpoint(use_endpoint):
    """`use(base_url)` points litloop at an endpoint with small timeouts; traces in tmp_path."""
    return lambda base_url: use_endpoint(base_url, TIMEOUT_S="0.5", MAX_RETRIES="1")


def ask_cli(*args: str):
    from agent.cli.main import app

    return CliRunner().invoke(app, ["ask", QUESTION, *args])


def failed_json(r) -> dict:
    """The --json record of a failed answer: exit 1, status failed, nothing posing as an answer."""
    assert r.exit_code == 1, r.output
    record = json.loads(r.stdout)
    assert record["status"] == "failed" and record["errors"]
    assert record["answer"]["freeform"]["text"] == "" and record["gold_papers"] == [] and record["evidence"] == []
    assert record["query_id"].startswith("q_") and record["trace_id"]
    assert NO_EVIDENCE not in r.output
    assert "error: No answer" in r.stderr and record["trace_id"][-12:] in r.stderr
    return record


def assert_trace_kept(record: dict, tmp_path) -> None:
    """The run's trace is written and holds the retrieval that ran and the failed calls."""
    runs = load_trace(record["trace_id"], tmp_path / "traces")
    names = {r["name"] for r in runs}
    assert {"decompose", "search", "rerank", "read_paper", "synthesize"} <= names
    assert any(r["run_type"] == "llm" and r["error"] for r in runs)


# fault -> (what the error says, most requests the stub may see)
TRANSPORT = {
    "429": ("Error code: 429 - Rate limit reached", 6),
    "hang": ("Request timed out", 6),
    "reset": ("OpenAIConnectionError: Connection error.", 6),
    "html": ("the endpoint's reply is not a chat completion (a text or HTML page, not JSON)", 3),
    "invalid_json": ("the endpoint's reply is not valid JSON (Expecting value at line 1 column 34)", 3),
}


@pytest.mark.parametrize("fault", list(TRANSPORT))
def test_a_broken_endpoint_is_a_failed_answer(endpoint, tmp_path, fault):
    message, most = TRANSPORT[fault]
    with OpenAIStub(faults={"*": fault}, hang_s=5) as stub:
        endpoint(stub.base_url)
        started = time.monotonic()
        r = ask_cli("--json")
        seconds = time.monotonic() - started
    record = failed_json(r)
    kinds = {(e["node"], e["kind"]) for e in record["errors"]}
    endpoint_kind = "reply" if fault in ("html", "invalid_json") else "call"
    assert ("decompose", endpoint_kind) in kinds and ("verify", endpoint_kind) in kinds
    assert ("read", "not_sent") in kinds  # the readings were never sent, and are not "not relevant"
    assert all(message in e["error"] for e in record["errors"] if e["kind"] != "not_sent")
    assert message in r.stderr and NOT_SENT in r.stderr
    assert "Traceback" not in r.output and "AttributeError" not in r.output
    assert 0 < len(stub.requests) <= most and seconds < 60
    assert_trace_kept(record, tmp_path)


def test_429_is_retried_after_the_retry_after_delay(endpoint):
    with OpenAIStub(faults={"*": "429"}, retry_after="1") as stub:
        endpoint(stub.base_url)
        failed_json(ask_cli("--json"))
    first, retry = stub.requests[:2]
    assert first["role"] == retry["role"] == "decompose" and retry["at"] - first["at"] >= 0.9


def test_refused_connection_names_the_cause(endpoint, tmp_path):
    endpoint(refused_url())
    record = failed_json(ask_cli("--json"))
    assert (
        "OpenAIConnectionError: Connection error. (ConnectionRefusedError: [Errno 111] Connection refused)"
        in record["errors"][0]["error"]
    )
    assert_trace_kept(record, tmp_path)


def test_prose_instead_of_json_fails_every_step_after_one_repair(endpoint):
    with OpenAIStub(faults={"*": "prose"}) as stub:
        endpoint(stub.base_url)
        record = failed_json(ask_cli("--json"))
    assert {e["kind"] for e in record["errors"]} == {"invalid_json"}
    assert "Sure! Conditional random fields" in record["errors"][0]["raw"]
    # output problems are the model's, not the endpoint's: every paper is tried, each with one repair
    reads = [q for q in stub.requests if q["role"] == "read"]
    assert reads and len(reads) % 2 == 0 and "synthesize" not in {q["role"] for q in stub.requests}


def test_a_refused_request_stops_the_run_with_its_error(endpoint, tmp_path):
    """An error the client does not retry (a wrong key) ends the run at once, still with a trace."""
    with OpenAIStub(faults={"*": "401"}) as stub:
        endpoint(stub.base_url)
        record = failed_json(ask_cli("--json"))
    assert len(stub.requests) == 1
    assert record["errors"][-1]["node"] == "decompose" and "401 - Incorrect API key" in record["errors"][-1]["error"]
    assert load_trace(record["trace_id"], tmp_path / "traces")


def test_plain_output_of_a_failed_answer_is_only_the_error(endpoint):
    endpoint(refused_url())
    r = ask_cli()
    assert r.exit_code == 1 and r.stdout.strip() == ""
    assert "error: No answer: every paper read failed (6 of 6); decompose: OpenAIConnectionError" in r.stderr
    assert "failed call in read (6 calls): " + NOT_SENT in r.stderr


def test_one_failed_step_is_a_partial_answer(endpoint):
    with OpenAIStub(faults={"verify": "hang"}) as stub:
        endpoint(stub.base_url)
        r = ask_cli("--json")
    assert r.exit_code == 0, r.output
    record = json.loads(r.stdout)
    assert record["status"] == "partial" and [(e["node"], e["kind"]) for e in record["errors"]] == [("verify", "call")]
    assert "95.7 F1" in record["answer"]["freeform"]["text"] and record["evidence"]
    assert "warning: Partial answer: 1 LLM call of the run failed" in r.stderr and "Request timed out" in r.stderr
    assert {q["role"] for q in stub.requests} >= {"read", "synthesize"}


def test_run_counts_failed_answers_and_retries_them(endpoint, tmp_path):
    from agent.cli.main import app

    inp, out = tmp_path / "in.jsonl", tmp_path / "sub.jsonl"
    inp.write_text("".join(json.dumps({"query_id": f"q{i}", "question": f"{QUESTION} ({i})"}) + "\n" for i in range(2)))
    endpoint(refused_url())
    r = CliRunner().invoke(app, ["run", "--input", str(inp), "--out", str(out), "--preset", "local-fast"])
    assert r.exit_code == 1 and "0 answered, 0 already done, 2 failed" in r.stderr
    assert "2 question(s) got no answer" in r.stderr
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [x["query_id"] for x in lines] == ["q0", "q1"] and all(x["answer"]["freeform"]["text"] == "" for x in lines)
    runs = [json.loads(x) for x in out.with_name("sub.jsonl.runs.jsonl").read_text().splitlines()]
    assert all(
        x["ok"] is False and x["status"] == "failed" and x["error"].startswith("no answer: ") and x["trace_id"]
        for x in runs
    )
    with OpenAIStub() as stub:  # the endpoint is back: the rerun answers both
        endpoint(stub.base_url)
        r = CliRunner().invoke(app, ["run", "--input", str(inp), "--out", str(out), "--preset", "local-fast"])
    assert r.exit_code == 0, r.output
    assert "2 answered, 0 already done, 0 failed" in r.stderr
    assert all("95.7" in json.loads(x)["answer"]["freeform"]["text"] for x in out.read_text().splitlines())


def test_eval_records_a_failed_answer_as_a_failure(endpoint, graph_index, tmp_path):
    from agent.cli.main import app

    bench = tmp_path / "bench.jsonl"
    bench.write_text(
        json.dumps(
            {
                "query_id": "q1",
                "question": QUESTION,
                "task_family": "multi_paper",
                "answer_types": ["freeform"],
                "gold_papers": [{"paper_id": "crf"}],
                "answer": {"freeform": {"text": "CRFs reach 95.7 F1."}},
            }
        )
        + "\n"
    )
    endpoint(refused_url())
    out = tmp_path / "run"
    r = CliRunner().invoke(
        app,
        ["eval", "--benchmark", str(bench), "--index", str(graph_index), "--preset", "local-fast", "--out", str(out)],
    )
    assert r.exit_code == 1 and "0/1 answered (0 partial, 1 failed)" in r.stderr
    failure = json.loads((out / "failures.jsonl").read_text().splitlines()[0])
    # local-fast answers a fact with one copy call and no reader: that call is what failed
    assert failure["query_id"] == "q1" and "AnswerFailed: no answer: the synthesis failed" in failure["error"]
    assert not (out / "submission.jsonl").read_text().strip()


@pytest.mark.parametrize("logprobs", [True, False])
def test_multiple_choice_over_an_openai_endpoint_with_and_without_logprobs(endpoint, logprobs):
    """The real ChatOpenAI path: with logprobs the option scores decide (the stub favours B,
    the synthesis chose A); an endpoint that refuses logprobs (a 400) keeps the synthesis's
    choice, and the answer is not marked partial for it."""
    from agent.api import ask

    with OpenAIStub(logprobs=logprobs) as stub:
        endpoint(stub.base_url)
        out = ask(
            QUESTION,
            answer_types=["multiple_choice"],
            options={"A": "CRF", "B": "HMM"},
            preset="paper",
            read_papers=3,
            read_concurrency=1,
            choice_scoring="calibrated",
        )
    ans = out["answer"]
    assert out["status"] == "ok" and ans["model_choice"] == "A" and ans["claims"]
    if logprobs:
        assert ans["choice"] == "B" and ans["choice_scores"]["probabilities"]["B"] > 0.5
        scoring = [r for r in stub.requests if r["role"] == "choose" and "Options:" in str(r["body"]["messages"])]
        assert len(scoring) == 2  # with and without the evidence
    else:
        assert ans["choice"] == "A" and "logprobs is not supported" in ans["choice_scores"]["unavailable"]
