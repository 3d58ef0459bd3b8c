"""The web chat headless (streamlit.testing.v1.AppTest), with the scripted model on the real
small index: asking shows the step timeline and a cited answer; threads and follow-ups."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import SATISFIED, cite_first_chunk

pytestmark = pytest.mark.graph

APP = Path(__file__).resolve().parents[2] / "agent" / "chat" / "app.py"
NOT_SATISFIED = {"evidence_papers": ["crf"], "sufficient": False, "missing": "the HMM baseline"}
ANSWER = {"facts": [{"value": "95.7", "unit": "F1", "paper_id": "crf", "chunk_id": "crf#c0"}],
          "reasoning": "", "answer": "CRFs reach 95.7 F1 on chunking [crf#c0].", "choice": "", "table_rows": []}


@pytest.fixture
def chat_env(scripted, monkeypatch, tmp_path):
    """An endpoint is named (the scripted factory answers instead), data in a fresh folder."""
    pytest.importorskip("streamlit")
    monkeypatch.setenv("LITLOOP_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("LITLOOP_LLM__BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("LITLOOP_LLM__MODEL", "scripted")
    from agent.settings import default_settings

    default_settings.cache_clear()
    return scripted


def app():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    return at


def ask(at, question):
    at.chat_input[0].set_value(question).run()
    assert not at.exception, at.exception
    return at


def test_asking_shows_steps_and_a_cited_answer(chat_env):
    n = iter(range(100))
    chat_env(decompose=(lambda _m: {"subqueries": [f"crf chunking {next(n)}", f"hmm tagging {next(n)}"]},),
             verify=[NOT_SATISFIED, SATISFIED], read=(cite_first_chunk,), synthesize=[ANSWER])
    at = app()
    assert not at.error, [e.value for e in at.error]
    ask(at, "What F1 do CRFs reach on chunking?")
    steps = [s.label for s in at.status]
    assert steps[0].startswith("Round 1/3") and "not yet sufficient" in steps[0] and "HMM baseline" in steps[0]
    assert steps[1].startswith("Round 2/3") and "sufficient" in steps[1]
    assert any(s.startswith("Read ") and "relevant" in s for s in steps) and "Answer written" in steps
    texts = [m.value for m in at.markdown]
    assert any("CRFs reach 95.7 F1 on chunking [1]." in t for t in texts)
    evidence = [e for e in at.expander if e.label.startswith("[1] ")]
    assert len(evidence) == 1
    label = evidence[0].label
    assert "Conditional random fields for sequence labeling" in label and "ACL 2005" in label
    assert "§ Abstract" in label  # where the chunk sits
    inside = [m.value for m in evidence[0].markdown]
    assert any("95.7 F1 on chunking" in t and t.startswith(">") for t in inside)  # the quoted chunk
    assert any("crf#c0" in t for t in inside)
    captions = [c.value for c in at.caption]
    assert any("2 rounds" in c and "LLM calls" in c and "tokens" in c and "trace" in c for c in captions)
    trace = [e for e in at.expander if e.label.startswith("Trace ")]
    assert trace and "synthesize" in trace[0].code[0].value and "retrieve [retriever]" in trace[0].code[0].value


def test_follow_up_uses_the_conversation_and_threads_persist(chat_env):
    m = chat_env(decompose=({"subqueries": ["sequence labelling models"]},), verify=(SATISFIED,),
                 read=(cite_first_chunk,), synthesize=(ANSWER,))
    at = app()
    ask(at, "Which papers compare sequence labelling models?")
    ask(at, "and which of them use a CRF?")
    follow_up = m["decompose"].calls[-1].user
    assert "and which of them use a CRF?" in follow_up
    assert "Q: Which papers compare sequence labelling models?" in follow_up
    assert "Conditional random fields for sequence labeling (crf)" in follow_up
    assert "[1]" not in follow_up.split("Earlier in this conversation")[1]  # markers stripped
    assert any("follow-up" in c.value for c in at.caption)
    # a fresh session (a restart) lists the conversation and reopens both turns from SQLite
    at2 = app()
    buttons = [b for b in at2.button if b.key and b.key.startswith("thread-")]
    assert len(buttons) == 1 and buttons[0].label.startswith("Which papers compare")
    buttons[0].click().run()
    users = [c for c in at2.chat_message if c.name == "user"]
    assert len(users) == 2
    assert sum(1 for e in at2.expander if e.label.startswith("[1] ")) == 2


def test_missing_index_is_a_clear_message(chat_env, tmp_path):
    at = app()
    at.sidebar.text_input(key="index").set_value(str(tmp_path / "nowhere")).run()
    assert any("No litloop index at" in e.value for e in at.error)
    ask(at, "What F1 do CRFs reach?")
    assert not [c for c in at.chat_message if c.name == "assistant"]


def test_failed_run_shows_the_error_and_keeps_the_turn(chat_env):
    chat_env(decompose=[RuntimeError("endpoint exploded")], verify=[], read=[], synthesize=[])
    at = app()
    ask(at, "What F1 do CRFs reach?")
    assert any("endpoint exploded" in e.value for e in at.error)
    assert any(e.label.startswith("Trace ") for e in at.expander)
