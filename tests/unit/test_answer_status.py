"""The rules behind an answer's status, the endpoint health of a run, and the words the CLI and
the chats use for failed calls (pure functions and the scripted model; no graph, no network)."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from agent.answer.status import answer_status, failed_answer, failure_reason
from agent.chat.render import error_lines, status_line
from agent.llm import (
    ENDPOINT_FAILURES_TO_STOP,
    describe_error,
    endpoint_watch,
    structured_call,
)
from agent.records.progress import Timeline
from tests.fakes import ScriptedChatModel

pytestmark = pytest.mark.unit


class Verdict(BaseModel):
    relevant: bool


OK = {"relevant": True}
READ_OK, READ_FAILED = {"paper_id": "a", "relevant": True}, {"paper_id": "b", "relevant": False, "failed": True}
TIMEOUT = {"node": "read", "error": "TimeoutError: read timed out", "kind": "call"}


@pytest.mark.parametrize(
    ("readings", "errors", "status"),
    [
        ([READ_OK], [], "ok"),
        ([], [], "ok"),  # nothing was found to read: "no evidence" is a finding
        ([READ_OK, READ_FAILED], [TIMEOUT], "partial"),
        ([READ_FAILED, READ_FAILED], [TIMEOUT, TIMEOUT], "failed"),  # none judged: "no evidence" would be a guess
        ([READ_OK], [{"node": "verify", "error": "x", "kind": "invalid_json"}], "partial"),
    ],
)
def test_answer_status(readings, errors, status):
    assert answer_status(readings, errors) == status


def test_failure_reason_names_the_endpoint_failure_before_the_calls_not_sent():
    errors = [
        {"node": "decompose", "error": "OpenAIConnectionError: Connection error.", "kind": "call"},
        {"node": "read", "error": "not sent: ...", "kind": "not_sent"},
    ]
    assert (
        failure_reason([READ_FAILED], errors)
        == "every paper read failed (1 of 1); decompose: OpenAIConnectionError: Connection error."
    )
    assert (
        failure_reason([READ_FAILED], [TIMEOUT])
        == "every paper read failed (1 of 1); read: TimeoutError: read timed out"
    )


def test_a_failed_answer_is_empty_and_says_why():
    answer = failed_answer("the synthesis failed: boom")
    assert answer["status"] == "failed" and answer["text"] == "" and answer["insufficient_evidence"] is False
    assert answer["citations"] == [] and answer["failure"] == "the synthesis failed: boom"


def test_error_lines_group_by_step_and_message():
    errors = [TIMEOUT, TIMEOUT, {"node": "verify", "error": "invalid JSON", "kind": "invalid_json"}, TIMEOUT]
    assert error_lines(errors) == ["read (3 calls): TimeoutError: read timed out", "verify: invalid JSON"]
    many = [{"node": f"n{i}", "error": "e"} for i in range(9)]
    assert error_lines(many, limit=3)[-1] == "… and 6 more"


def test_status_lines():
    assert status_line("ok", {}, []) is None
    assert (
        status_line("failed", {"failure": "every paper read failed (2 of 2)"}, [])
        == "No answer: every paper read failed (2 of 2)"
    )
    assert status_line("partial", {}, [TIMEOUT]).startswith("Partial answer: 1 LLM call of the run failed")


def test_timeline_marks_a_failed_answer():
    t = Timeline()
    stage = t.add({"node": "synthesize", "answer": failed_answer("the run stopped in decompose: 401")})
    assert (
        stage.title == "No answer: the run failed"
        and stage.failed
        and stage.lines == ["the run stopped in decompose: 401"]
    )
    assert (
        t.add({"node": "synthesize", "answer": {"status": "partial", "citations": [1]}}).title
        == "Answer written (partial)"
    )


def test_describe_error_adds_the_root_cause_once():
    try:
        try:
            raise ConnectionRefusedError(111, "Connection refused")
        except OSError as inner:
            raise RuntimeError("Connection error.") from inner
    except RuntimeError as exc:
        assert (
            describe_error(exc)
            == "RuntimeError: Connection error. (ConnectionRefusedError: [Errno 111] Connection refused)"
        )
    assert describe_error(ValueError("plain")) == "ValueError: plain"


def test_a_run_stops_sending_after_failures_in_a_row():
    down = TimeoutError("endpoint down")
    model = ScriptedChatModel(responses=[down] * ENDPOINT_FAILURES_TO_STOP)
    with endpoint_watch() as health:
        results = [structured_call(model, Verdict, "s", "u") for _ in range(ENDPOINT_FAILURES_TO_STOP + 2)]
    assert len(model.calls) == ENDPOINT_FAILURES_TO_STOP and health.down
    assert [r.error_kind for r in results] == ["call"] * ENDPOINT_FAILURES_TO_STOP + ["not_sent"] * 2
    assert results[-1].calls == 1 and results[-1].attempts[0].seconds == 0.0


def test_any_reply_starts_the_count_again():
    down = TimeoutError("unlucky")
    replies = [down, down, "not json", "still not json", down, down, OK]
    model = ScriptedChatModel(responses=replies)
    with endpoint_watch() as health:
        kinds = [structured_call(model, Verdict, "s", "u").error_kind for _ in range(4)]
    assert kinds == ["call", "call", "invalid_json", "call"] and not health.down
    assert len(model.calls) == 5  # two failures, a reply and its repair, one failure


def test_without_a_watch_every_call_is_sent():
    model = ScriptedChatModel(responses=[TimeoutError("down")] * 5)
    assert all(structured_call(model, Verdict, "s", "u").error_kind == "call" for _ in range(5))
    assert len(model.calls) == 5


def test_a_bug_of_ours_is_not_taken_for_a_bad_reply():
    """AttributeError / JSONDecodeError count as the endpoint's bad reply only when raised inside
    the client libraries; the same errors from anywhere else propagate."""

    def bug(_messages):
        raise AttributeError("'str' object has no attribute 'choices'")

    with pytest.raises(AttributeError):
        structured_call(ScriptedChatModel(responses=[bug]), Verdict, "s", "u")

    def bad_json(_messages):
        json.loads("{")

    with pytest.raises(json.JSONDecodeError):
        structured_call(ScriptedChatModel(responses=[bad_json]), Verdict, "s", "u")
