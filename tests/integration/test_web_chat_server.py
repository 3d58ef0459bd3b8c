"""`litloop ui --server URL`: the web chat (headless, streamlit.testing.v1.AppTest) as a client of
a real `litloop serve` subprocess with per-user keys and the scripted model (OpenAI stub): the
steps stream in, the cited answer shows, the conversation is the server's threads (listed again
by a new session, kept from another user), and a follow-up carries the conversation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import build_papers_index
from tests.openai_stub import OpenAIStub
from tests.served import server_env, start_server, stop

pytestmark = [pytest.mark.integration, pytest.mark.server]

APP = Path(__file__).resolve().parents[2] / "agent" / "chat" / "app.py"
TOKEN = "web-chat-server-token-0123456789"
QUESTION = "Which sequence labelling models use conditional random fields, and what F1 do they reach?"


@pytest.fixture(scope="module")
def team_server(tmp_path_factory):
    """A server with keys for alice and bob, on the small index: its URL."""
    folder = tmp_path_factory.mktemp("ui-server")
    index = build_papers_index(folder)
    keys = folder / "keys.json"
    keys.write_text(json.dumps({"key-alice": "alice", "key-bob": "bob"}))
    with OpenAIStub() as stub:
        env = server_env(folder / "data", stub, LITLOOP_SERVE__KEYS_FILE=str(keys))
        proc, url = start_server(index, env, folder / "server.log", "--jobs", "2")
        yield url
        stop(proc)


def open_chat(monkeypatch, url: str, key: str):
    from streamlit.testing.v1 import AppTest

    from agent.settings import default_settings

    monkeypatch.setenv("LITLOOP_UI_TOKEN", TOKEN)
    monkeypatch.setenv("LITLOOP_SERVE__URL", url)
    if key:
        monkeypatch.setenv("LITLOOP_SERVE__API_KEY", key)
    else:
        monkeypatch.delenv("LITLOOP_SERVE__API_KEY", raising=False)
    monkeypatch.delenv("LITLOOP_LLM__BASE_URL", raising=False)  # the server's model, not one here
    default_settings.cache_clear()
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.query_params["token"] = TOKEN
    at.run()
    assert not at.exception, at.exception
    return at


def ask(at, question: str):
    at.chat_input[0].set_value(question).run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    return at


def test_the_web_chat_asks_the_server_and_lists_its_threads(team_server, monkeypatch):
    from langgraph_sdk import get_sync_client

    at = open_chat(monkeypatch, team_server, "key-alice")
    assert any(team_server in c.value for c in at.sidebar.caption)  # says where questions run
    ask(at, QUESTION)
    steps = [s.label for s in at.status]
    assert steps[0].startswith("Round 1/") and any(s.startswith("Read ") for s in steps), steps
    assert "Answer written" in steps
    assert any("95.7" in m.value for m in at.markdown)
    assert any(m.value.startswith("[1] **Conditional random fields") for m in at.markdown)  # its card
    assert any(e.label.startswith("The passage of [1]") for e in at.expander)

    # the conversation is the server's thread, alice's, with the answer in its state
    alice = get_sync_client(url=team_server, headers={"Authorization": "Bearer key-alice"})
    threads = alice.threads.search(metadata={"source": "litloop-ui"})
    assert len(threads) == 1 and threads[0]["metadata"]["owner"] == "alice"
    assert "95.7" in threads[0]["values"]["answer"]["text"]
    chat = threads[0]["metadata"]["chat"]

    # a follow-up in the same conversation: a new server thread, turn 2, with the conversation so far
    ask(at, "And which of them use a CRF layer?")
    turns = sorted(alice.threads.search(metadata={"chat": chat}), key=lambda t: t["metadata"]["turn"])
    assert [t["metadata"]["turn"] for t in turns] == [1, 2]
    assert "Earlier in this conversation" in turns[1]["metadata"]["asked"]

    # a new session lists the conversation and replays it from the server
    again = open_chat(monkeypatch, team_server, "key-alice")
    button = [b for b in again.sidebar.button if b.label.startswith("Which sequence labelling")]
    assert len(button) == 1
    button[0].click().run()
    assert not again.exception, again.exception
    assert len([m for m in again.chat_message if m.name == "assistant"]) == 2
    assert any("95.7" in m.value for m in again.markdown)
    assert any(s.label.startswith("Round 1/") for s in again.status)

    # bob's chat lists none of alice's conversations
    bob = open_chat(monkeypatch, team_server, "key-bob")
    assert not [b for b in bob.sidebar.button if b.label.startswith("Which sequence labelling")]


def test_a_refused_key_is_said_in_the_chat(team_server, monkeypatch):
    at = open_chat(monkeypatch, team_server, "not-a-key")
    assert any("refused the key" in e.value and "LITLOOP_SERVE__API_KEY" in e.value for e in at.error)


def test_litloop_ui_refuses_a_server_that_does_not_answer(monkeypatch):
    from typer.testing import CliRunner

    from agent.cli.main import app
    from tests.openai_stub import refused_url

    nowhere = refused_url().removesuffix("/v1")
    result = CliRunner().invoke(app, ["ui", "--server", nowhere])
    assert result.exit_code != 0
    assert "no litloop server answers at" in result.output and "litloop serve" in result.output


def test_a_full_queue_is_said_in_the_chat_and_leaves_no_turn(tmp_path, monkeypatch):
    import threading

    from langgraph_sdk import get_sync_client

    from tests.openai_stub import literature_reply

    release = threading.Event()

    def reply(role, body, prompt):
        if "SLOW" in prompt:
            release.wait(60)
        return literature_reply(role, body, prompt)

    index = build_papers_index(tmp_path)
    with OpenAIStub(reply) as stub:
        env = server_env(tmp_path / "data", stub, LITLOOP_SERVE__MAX_QUEUE="1")
        proc, url = start_server(index, env, tmp_path / "server.log")
        try:
            client = get_sync_client(url=url)
            busy = client.threads.create()
            run = client.runs.create(busy["thread_id"], "litloop", input={"question": QUESTION + " SLOW"})
            at = open_chat(monkeypatch, url, "")
            at.chat_input[0].set_value(QUESTION).run()
            assert not at.exception, at.exception
            assert any("is busy" in e.value and "queue is full" in e.value for e in at.error), at.error
            assert client.threads.search(metadata={"source": "litloop-ui"}) == []  # no empty turn left
            release.set()
            client.runs.join(busy["thread_id"], run["run_id"])
            ask(at, QUESTION)  # the place is back: the chat's question runs
            assert any("95.7" in m.value for m in at.markdown)
        finally:
            release.set()
            stop(proc)


def test_a_server_run_streams_the_answer_words_to_the_chat(team_server):
    """The chat asks the server for the run's custom stream too: the answer's words arrive while
    the model writes them, before the answer, and are not kept with the turn."""
    from agent.chat.remote import RemoteChat, ask_remote_turn

    chat = RemoteChat(team_server, "key-alice")
    events: list[dict] = []
    turn = ask_remote_turn(chat, chat.new_thread(), QUESTION, on_event=events.append)
    nodes = [e["node"] for e in events]
    drafts = [e["text"] for e in events if e["node"] == "draft"]
    assert drafts and any(len(d) < 30 for d in drafts) and drafts[-1].startswith("Conditional random fields reach")
    assert max(i for i, n in enumerate(nodes) if n == "draft") < nodes.index("synthesize")
    assert not [e for e in turn.events if e["node"] == "draft"]
    assert "95.7" in turn.answer["text"]
