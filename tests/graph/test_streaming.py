"""The answer's words while the model writes them: a structured call streamed through the real
ChatOpenAI client from the tests' own OpenAI-compatible server (tests/openai_stub.py), and a run
of the graph whose progress events carry the draft before the checked answer."""

from __future__ import annotations

import itertools

import pytest

from tests.openai_stub import OpenAIStub, literature_reply

pytestmark = pytest.mark.graph

QUESTION = "What F1 do CRFs reach on chunking?"


def stub_model(stub: OpenAIStub):
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(model="stub-model", base_url=stub.base_url, api_key="sk-test", max_retries=0, timeout=10)


@pytest.mark.parametrize("method", ["json_schema", "function_calling"])
def test_a_streamed_call_sends_the_reply_so_far_and_returns_what_an_unstreamed_one_does(method):
    from agent.llm import structured_call
    from agent.llm.schemas import synthesis_model

    Synthesis = synthesis_model(["S1"], 2)
    prompt = "S1 Conditional random fields reach 95.7 F1 on chunking. The JSON has claims."
    with OpenAIStub(literature_reply, stream_piece=7) as stub:
        seen: list[str] = []
        streamed = structured_call(stub_model(stub), Synthesis, "system", prompt, on_text=seen.append, method=method)
        plain = structured_call(stub_model(stub), Synthesis, "system", prompt, method=method)
        asked = [r["body"].get("stream") for r in stub.requests]
    assert [bool(a) for a in asked] == [True, False]  # only the call given on_text streams
    assert streamed.ok and streamed.value == plain.value
    assert streamed.value.claims[0].text == "Conditional random fields reach 95.7 F1 on chunking."
    pieces = [s for s in seen if s]
    assert len(pieces) > 5 and pieces[-1] == streamed.raw
    assert all(b.startswith(a) for a, b in itertools.pairwise(pieces))  # it grows
    # a streamed call still counts its tokens (the client leaves streamed usage off for other hosts)
    assert streamed.input_tokens == plain.input_tokens > 0
    assert streamed.output_tokens == plain.output_tokens > 0


@pytest.fixture
def endpoint(use_endpoint):
    """The streaming stub, which litloop asks (traces in tmp_path)."""
    with OpenAIStub(literature_reply, stream_piece=6) as stub:
        use_endpoint(stub.base_url, MAX_RETRIES="0")
        yield stub


@pytest.mark.parametrize("writing", ["write", "choose"])
def test_a_run_shows_the_answer_words_before_the_checked_answer(endpoint, tmp_path, writing):
    from agent.api import ask
    from agent.tracing.store import load_trace

    events: list[dict] = []
    result = ask(QUESTION, on_event=events.append, stream_drafts=True, fact_answer=writing, answer_shape="fact")
    nodes = [e["node"] for e in events]
    drafts = [e["text"] for e in events if e["node"] == "draft"]
    assert drafts and "synthesize" in nodes
    assert max(i for i, n in enumerate(nodes) if n == "draft") < nodes.index("synthesize")
    assert any(d.startswith("Conditional random") and len(d) < 40 for d in drafts)  # words before the whole claim
    assert drafts[-1].startswith("Conditional random fields reach 95.7")
    assert result["answer"]["text"].startswith("Conditional random fields reach 95.7")
    streamed = [r for r in endpoint.requests if r["body"].get("stream")]
    assert streamed and {r["role"] for r in streamed} <= {"synthesize", "copy"}
    # the streamed call is traced where it ran, with its tokens
    runs = load_trace(result["trace_id"], tmp_path / "traces")
    by_id = {r["id"]: r for r in runs}
    written = [r for r in runs if r["run_type"] == "llm" and "Conditional random fields reach" in str(r["outputs"])]
    assert written and all(_under(r, "synthesize", by_id) for r in written)
    assert result["usage"]["output_tokens"] > 0

    # off (the default): nothing streams, no draft
    endpoint.requests.clear()
    events.clear()
    ask(QUESTION, on_event=events.append, fact_answer=writing, answer_shape="fact")
    assert not [e for e in events if e["node"] == "draft"]
    assert not [r for r in endpoint.requests if r["body"].get("stream")]


def _under(run: dict, name: str, by_id: dict) -> bool:
    while run is not None:
        if run.get("name") == name:
            return True
        run = by_id.get(run.get("parent_run_id"))
    return False


def test_an_endpoint_that_refuses_streaming_answers_unstreamed_and_is_not_asked_again():
    from agent.llm import structured_call
    from agent.llm.schemas import synthesis_model

    Synthesis = synthesis_model(["S1"], 2)
    prompt = "S1 Conditional random fields reach 95.7 F1 on chunking."
    with OpenAIStub(literature_reply, refuse_stream=True) as stub:
        seen: list[str] = []
        first = structured_call(stub_model(stub), Synthesis, "system", prompt, on_text=seen.append)
        second = structured_call(stub_model(stub), Synthesis, "system", prompt, on_text=seen.append)
        asked = [bool(r["body"].get("stream")) for r in stub.requests]
    assert first.ok and second.ok and first.value == second.value
    assert first.calls == 1  # the refused request is not an attempt of the answer
    assert asked == [True, False, False]
    assert not [s for s in seen if s]


@pytest.mark.parametrize("terminal", [True, False])
def test_the_terminal_chat_shows_the_draft_in_a_terminal_only(endpoint, tmp_path, terminal):
    from rich.console import Console

    from agent.chat.session import ChatStore
    from agent.chat.terminal import TerminalChat

    console = Console(force_terminal=terminal, record=True, width=120, color_system=None)
    chat = TerminalChat(ChatStore(tmp_path / "chats.sqlite"), console, read_line=lambda _: "/quit")
    turn = chat.ask(QUESTION)
    assert turn is not None and "95.7" in turn.answer["text"]
    printed = console.export_text()
    streamed = [r for r in endpoint.requests if r["body"].get("stream")]
    if terminal:
        # the words while written, then the checked answer after them
        assert "writing: Conditional random" in printed and streamed
        assert printed.rindex("writing:") < printed.rindex("Conditional random fields reach 95.7")
    else:  # piped: nothing streams, nothing but the steps and the answer
        assert "writing:" not in printed and not streamed


def test_litloop_ask_on_a_terminal_shows_the_draft_on_stderr(endpoint, monkeypatch):
    from typer.testing import CliRunner

    from agent.cli.common import err
    from agent.cli.main import app

    monkeypatch.setattr(err, "_force_terminal", True)  # stderr is an interactive terminal
    monkeypatch.setattr(err, "is_interactive", True)
    monkeypatch.setattr(err, "record", True)
    r = CliRunner().invoke(app, ["ask", QUESTION])
    assert r.exit_code == 0, r.output
    printed = err.export_text()
    assert "writing: Conditional random" in printed  # the words while written, on stderr
    assert "Conditional random fields reach 95.7" in r.stdout  # the checked answer on stdout
    assert [q for q in endpoint.requests if q["body"].get("stream")]
