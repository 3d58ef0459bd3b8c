"""The answer's status with the scripted model: a failed step is a failure, never an answer; a
failed reading is unknown, not "not relevant"; a run stops calling an endpoint that keeps failing;
the chats show what failed."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from agent.answer.assemble import NO_EVIDENCE
from agent.api import ask
from agent.llm import ENDPOINT_FAILURES_TO_STOP

from .conftest import ANSWER, SATISFIED, SMALL, cite_first_chunk

pytestmark = pytest.mark.graph

NOT_RELEVANT = {"sentences": [], "relevant": False}
CRF = {"subqueries": ["conditional random fields chunking F1"]}


def read_failing_unless(paper: str | None, otherwise=cite_first_chunk):
    """A reader whose call times out (after the client's retries) except for `paper`."""

    def read(messages):
        if paper is None or f"PAPER {paper}:" not in messages[-1].text:
            raise TimeoutError("read timed out")
        return otherwise(messages)

    return (read,)


def test_every_step_ok_is_ok(scripted):
    scripted(decompose=[CRF], verify=[SATISFIED], read=(cite_first_chunk,), synthesize=[ANSWER])
    out = ask("What F1 do CRFs reach?", **SMALL)
    assert out["status"] == out["answer"]["status"] == "ok" and out["errors"] == []


def test_every_reading_failed_is_no_answer(scripted):
    m = scripted(decompose=[CRF], verify=[SATISFIED], read=read_failing_unless(None), synthesize=[])
    out = ask("What F1 do CRFs reach?", **SMALL)
    assert out["status"] == "failed" and out["answer"]["text"] == "" and NO_EVIDENCE not in str(out["answer"])
    assert out["answer"]["failure"] == "every paper read failed (3 of 3); read: TimeoutError: read timed out"
    assert all(r["failed"] for r in out["readings"]) and len(out["readings"]) == 3
    assert m["synthesize"].calls == [] and out["submission"]["gold_papers"] == []


def test_some_readings_failed_and_one_relevant_is_partial(scripted):
    scripted(decompose=[CRF], verify=[SATISFIED], read=read_failing_unless("crf"), synthesize=[ANSWER])
    out = ask("What F1 do CRFs reach?", **SMALL)
    assert out["status"] == "partial" and "95.7 F1 [1]" in out["answer"]["text"]
    assert [e["node"] for e in out["errors"]] == ["read", "read"] and out["answer"]["citations"]


def test_no_evidence_with_failed_readings_says_what_was_not_read(scripted):
    scripted(
        decompose=[CRF],
        verify=[SATISFIED],
        read=read_failing_unless("crf", otherwise=lambda _m: NOT_RELEVANT),
        synthesize=[],
    )
    out = ask("What F1 do CRFs reach?", **SMALL)
    assert out["status"] == "partial" and out["answer"]["insufficient_evidence"] is True
    assert "could be read (2 of 3 readings failed" in out["answer"]["text"] and NO_EVIDENCE not in out["answer"]["text"]


def test_a_run_stops_calling_an_endpoint_that_keeps_failing(scripted):
    down = TimeoutError("endpoint down")
    m = scripted(decompose=(down,), verify=(down,), read=(cite_first_chunk,), synthesize=[])
    out = ask("What F1 do CRFs reach?", **SMALL)
    # decompose, verify, decompose of round 2: three failures in a row; nothing is sent after them
    assert len(m["decompose"].calls) + len(m["verify"].calls) == ENDPOINT_FAILURES_TO_STOP == 3
    assert m["read"].calls == [] and {e["kind"] for e in out["errors"] if e["node"] == "read"} == {"not_sent"}
    assert out["status"] == "failed" and "decompose: TimeoutError: endpoint down" in out["answer"]["failure"]
    # the retrieval still ran on the question itself
    assert out["subqueries"] and out["pool"] and len(out["readings"]) == 3


def test_a_reply_in_between_keeps_the_endpoint_in_use(scripted):
    """Failures count only in a row: a working endpoint with unlucky requests is still called."""
    down = TimeoutError("one unlucky request")
    m = scripted(decompose=[down, CRF], verify=[down, SATISFIED], read=read_failing_unless("crf"), synthesize=[ANSWER])
    out = ask("What F1 do CRFs reach?", **SMALL)
    # four failures in all, never three in a row: every paper is read
    assert [e["node"] for e in out["errors"]] == ["decompose", "verify", "read", "read"]
    assert len(m["read"].calls) == 3 and "not_sent" not in {e["kind"] for e in out["errors"]}
    assert out["status"] == "partial" and out["answer"]["citations"]


def test_terminal_chat_shows_a_failed_and_a_partial_answer(scripted, monkeypatch, tmp_path):
    from agent.cli.main import app
    from agent.settings import default_settings

    monkeypatch.setenv("LITLOOP_DATA_DIR", str(tmp_path / "data"))
    default_settings.cache_clear()
    scripted(decompose=(CRF,), verify=(SATISFIED,), read=read_failing_unless(None), synthesize=[])
    r = CliRunner().invoke(app, ["chat", "--preset", "paper"], input="What F1 do CRFs reach?\n/quit\n")
    assert r.exit_code == 0, r.output
    assert "No answer: every paper read failed" in r.output and "failed call in read" in r.output
    assert "(no answer)" not in r.output and NO_EVIDENCE not in r.output

    def read_failing_for_hmm(messages):  # one failure: never three in a row, whatever the threads' order
        if "PAPER hmm:" in messages[-1].text:
            raise TimeoutError("read timed out")
        return cite_first_chunk(messages)

    scripted(decompose=(CRF,), verify=(SATISFIED,), read=(read_failing_for_hmm,), synthesize=[ANSWER])
    r = CliRunner().invoke(app, ["chat", "--preset", "paper"], input="What F1 do CRFs reach?\n/quit\n")
    assert "Partial answer: " in r.output and "CRFs reach 95.7 F1 [1]." in r.output
    assert "TimeoutError: read timed out" in r.output


def test_web_chat_shows_a_failed_answer_as_an_error(chat_env):
    from streamlit.testing.v1 import AppTest

    from .test_chat_app import APP

    chat_env(decompose=(CRF,), verify=(SATISFIED,), read=read_failing_unless(None), synthesize=[])
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    at.chat_input[0].set_value("What F1 do CRFs reach?").run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error]
    assert any(
        "No answer: every paper read failed (6 of 6)" in e and "- read (" in e and "read timed out" in e for e in errors
    )
    assert not any(NO_EVIDENCE in m.value for m in at.markdown)
    assert [s.label for s in at.status][-1] == "No answer: the run failed"
