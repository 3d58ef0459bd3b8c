"""The web chat headless (streamlit.testing.v1.AppTest), with the scripted model on the real
small index: asking shows the step timeline and a cited answer; threads and follow-ups."""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path

import pytest

from .conftest import SATISFIED, UI_TOKEN, cite_first_chunk, claims_answer

pytestmark = pytest.mark.graph

APP = Path(__file__).resolve().parents[2] / "agent" / "chat" / "app.py"
NOT_SATISFIED = {"evidence_papers": ["crf"], "sufficient": False, "missing": "the HMM baseline"}
ANSWER = claims_answer(("CRFs reach 95.7 F1 on chunking.", "95.7"))


def app():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    return at


def one_cited_answer(chat_env):
    """Every question one round, the first chunk read, one cited claim (CRFs reach 95.7 F1)."""
    return chat_env(
        decompose=({"subqueries": ["crf chunking"]},),
        verify=(SATISFIED,),
        read=(cite_first_chunk,),
        synthesize=(ANSWER,),
    )


def ask(at, question):
    at.chat_input[0].set_value(question).run()
    assert not at.exception, at.exception
    return at


def test_asking_shows_steps_and_a_cited_answer(chat_env):
    n = iter(range(100))
    chat_env(
        decompose=(lambda _m: {"subqueries": [f"crf chunking {next(n)}", f"hmm tagging {next(n)}"]},),
        verify=[NOT_SATISFIED, SATISFIED],
        read=(cite_first_chunk,),
        synthesize=[ANSWER],
    )
    at = app()
    assert not at.error, [e.value for e in at.error]
    ask(at, "What F1 do CRFs reach on chunking?")
    steps = [s.label for s in at.status]
    assert steps[0].startswith("Round 1/3") and "not yet sufficient" in steps[0] and "HMM baseline" in steps[0]
    assert steps[1].startswith("Round 2/3") and "sufficient" in steps[1]
    assert any(s.startswith("Read ") and "relevant" in s for s in steps) and "Answer written" in steps
    texts = [m.value for m in at.markdown]
    # the marker opens its quote in place: a focusable span after the claim, its quote inside
    assert any("CRFs reach 95.7 F1 on chunking <span class='litloop-cite' tabindex='0'" in t for t in texts)
    # the cited paper's card: its title, byline, where the quote sits, the quote, its passage
    (card,) = [t for t in texts if t.startswith("[1] **")]
    assert "Conditional random fields for sequence labeling" in card
    captions = [c.value for c in at.caption]
    assert any("ACL 2005" in c and "`crf`" in c for c in captions)
    assert any(t.startswith("**[1]** Where:") and "§ Abstract" in t for t in texts)
    assert any("litloop-quote" in t and "95.7 F1 on chunking" in t for t in texts)
    (passage,) = [e for e in at.expander if e.label.startswith("The passage of [1]")]
    assert "crf#c0" in passage.label
    inside = [m.value for m in passage.markdown]
    # the chunk with its quoted sentence highlighted, paper text escaped
    assert any("<mark>" in t and "95.7 F1 on chunking" in t.split("<mark>")[1].split("</mark>")[0] for t in inside)
    assert any("2 rounds" in c and "LLM calls" in c and "tokens" in c and "trace" in c for c in captions)
    trace = [e for e in at.expander if e.label.startswith("Trace ")]
    assert trace and "synthesize" in trace[0].code[0].value and "retrieve [retriever]" in trace[0].code[0].value


def test_follow_up_uses_the_conversation_and_threads_persist(chat_env):
    m = chat_env(
        decompose=({"subqueries": ["sequence labelling models"]},),
        verify=(SATISFIED,),
        read=(cite_first_chunk,),
        synthesize=(ANSWER,),
    )
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
    assert sum(1 for e in at2.expander if e.label.startswith("The passage of [1]")) == 2


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


# ----------------------------------------------------------------------------- access


def test_the_chat_refuses_a_session_without_the_token(chat_env, monkeypatch):
    from streamlit.testing.v1 import AppTest

    def opened(token):
        at = AppTest.from_file(str(APP), default_timeout=120)
        if token is None:
            at.query_params.pop("token")
        else:
            at.query_params["token"] = token
        at.run()
        assert not at.exception, at.exception
        return at

    for token in (None, "", "not-the-token-0123456789"):
        at = opened(token)
        assert any("needs the URL that `litloop ui` printed" in e.value for e in at.error)
        assert not at.chat_input and not at.sidebar.text_input and not at.button  # nothing else runs

    at = opened(UI_TOKEN)
    assert at.chat_input and not at.error
    at.query_params.pop("token")  # kept in the session once given: the app's own reruns need no URL
    at.run()
    assert at.chat_input and not at.error

    monkeypatch.delenv("LITLOOP_UI_TOKEN")  # not started by `litloop ui`: no token can be right
    at = opened(UI_TOKEN)
    assert any("started without an access token" in e.value for e in at.error) and not at.chat_input


class KeyRecorder:
    """An endpoint on 127.0.0.1 that records the Authorization header of every call and refuses
    it (401), so the run fails fast after the model was asked."""

    def __init__(self) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        seen = self.authorizations = []

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                seen.append(self.headers.get("Authorization"))
                body = json.dumps({"error": {"message": "bad key", "type": "invalid_request_error"}}).encode()
                self.send_response(401)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> KeyRecorder:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_base_url_typed_in_the_sidebar_never_gets_the_configured_key(graph_index, monkeypatch, tmp_path):
    from agent.runtime import resources
    from agent.settings import default_settings

    configured = "http://127.0.0.1:9/v1"
    for var, value in (
        ("LITLOOP_INDEX", str(graph_index)),
        ("LITLOOP_DATA_DIR", str(tmp_path / "data")),
        ("LITLOOP_LLM__BASE_URL", configured),
        ("LITLOOP_LLM__MODEL", "m"),
        ("LITLOOP_LLM__API_KEY", "sk-configured-secret"),
        ("LITLOOP_LLM__MAX_RETRIES", "0"),
        ("OPENAI_API_KEY", "sk-openai-env-secret"),
    ):
        monkeypatch.setenv(var, value)
    default_settings.cache_clear()
    try:
        with KeyRecorder() as typed:
            at = app()
            assert "api_key" not in _keys(at)  # the configured endpoint: no key box
            at.sidebar.text_input(key="base_url").set_value(typed.url).run()
            assert "api_key" in _keys(at), "a typed endpoint asks for its own key"
            assert any("(no key)" in c.value for c in at.sidebar.caption)
            ask(at, "What F1 do CRFs reach?")
            assert typed.authorizations and set(typed.authorizations) == {"Bearer not-needed"}

            typed.authorizations.clear()
            at.sidebar.text_input(key="api_key").set_value("sk-typed-here").run()
            ask(at, "What F1 do CRFs reach?")
            assert typed.authorizations and set(typed.authorizations) == {"Bearer sk-typed-here"}

            # back on the configured endpoint: its own key again, and no key box
            at.sidebar.text_input(key="base_url").set_value(configured).run()
            assert os.environ["LITLOOP_LLM__API_KEY"] == "sk-configured-secret"
            assert default_settings().llm.api_key.get_secret_value() == "sk-configured-secret"
            assert "api_key" not in _keys(at)
            assert any("(the configured key)" in c.value for c in at.sidebar.caption)
    finally:
        default_settings.cache_clear()
        resources.reset()


def _keys(at) -> set[str]:
    return {t.key for t in at.sidebar.text_input}


def test_dropped_claims_are_behind_a_toggle(chat_env):
    with_bad = claims_answer(("CRFs reach 95.7 F1 on chunking.", "95.7"), ("CRFs reach 99.9 F1.", "95.7"))
    chat_env(
        decompose=({"subqueries": ["crf chunking F1"]},),
        verify=(SATISFIED,),
        read=(cite_first_chunk,),
        synthesize=(with_bad,),
    )
    at = ask(app(), "What F1 do CRFs reach on chunking?")
    assert not any("99.9" in m.value for m in at.markdown)  # hidden until asked for
    toggle = next(t for t in at.toggle if t.label.startswith("Show 1 dropped claim"))
    toggle.set_value(True).run()
    shown = [m.value for m in at.markdown]
    assert any("99.9" in t and "is not in the cited sentences" in t for t in shown)


# ----------------------------------------------------------------------------- following citations

BUILD_ON = "Which papers build on Construction of the literature graph in Semantic Scholar?"


def _never(messages):
    raise AssertionError("a question about a cited work is answered from its citing sentences")


def _button(at, suffix: str):
    (b,) = [b for b in at.button if b.key and b.key.endswith(suffix)]
    return b


def _rows(at) -> list[str]:
    """The rows of the open panel (`**n. title**`)."""
    return [m.value for m in at.markdown if re.match(r"\*\*\d+\. ", m.value)]


def _panel(at) -> list[str]:
    return [m.value for m in at.markdown]


def test_a_citation_opens_its_citers_and_references_and_goes_back(cites_chat_env):
    """On two real PDFs: the answer's [1] is SPECTER's sentence citing Ammar et al. 2018
    (N18-3011). Its *References* list N18-3011 with that sentence, the citation marked; from
    there *Cited by* shows N18-3011's citing sentence (SPECTER, page 5), *References* of SPECTER
    leads back, *Back* and *Close* retrace."""
    cites_chat_env(decompose=(_never,), verify=(_never,), read=(_never,), synthesize=(_never,))
    at = app()
    at.sidebar.selectbox(key="preset").set_value("local-fast").run()
    ask(at, BUILD_ON)
    # nobody in the index cites SPECTER; it has 57 references
    cited_by = _button(at, ":1-1-cites")
    assert cited_by.label == "Cited by (0)" and cited_by.disabled
    refs = _button(at, ":1-1-refs")
    assert refs.label == "References (57)" and not refs.disabled
    refs.click().run()
    assert not at.exception, at.exception
    shown = _panel(at)
    assert any(t.startswith("**References of:** SPECTER") for t in shown)
    assert any(
        "**2. Construction of the literature graph in semantic scholar**" in t and "N18-3011" in t for t in shown
    )
    assert any("*uses* (corpus) · p. 5, § 4 Experiments › Training Data" in t for t in shown)
    # a page of rows at a time, then the next page, then all of them in the card
    (where,) = [c.value for c in at.caption if c.value.startswith("Page 1 of ")]
    total = int(where.rsplit(" of ", 1)[1])
    assert total > 5 and where == f"Page 1 of {-(-total // 5)} · rows 1–5 of {total}"
    assert len(_rows(at)) == 5
    first_page = _rows(at)
    _button(at, ":1-1-next-1").click().run()
    assert any(c.value.startswith("Page 2 of ") for c in at.caption)
    assert len(_rows(at)) == 5 and not set(_rows(at)) & set(first_page)
    _button(at, ":1-1-all-1").click().run()
    assert len(_rows(at)) == total and any(c.value == f"All {total} rows" for c in at.caption)
    _button(at, ":1-1-pages-1").click().run()
    assert len(_rows(at)) == 5 and any(c.value.startswith("Page 2 of ") for c in at.caption)
    _button(at, ":1-1-prev-1").click().run()
    assert _rows(at) == first_page
    marked = [t for t in shown if "Semantic Scholar corpus" in t and "<mark>" in t]
    assert marked and "Ammar et al., 2018" in marked[0].split("<mark>")[1].split("</mark>")[0]
    # row 2 (N18-3011): who cites it
    _button(at, ":1-1-1-2-cites").click().run()
    shown = _panel(at)
    assert any(t.startswith("**Cited by:** Construction of the Literature Graph in Semantic Scholar") for t in shown)
    assert any("**1. SPECTER: Document-level Representation Learning" in t for t in shown)
    assert any("p. 5, § 4 Experiments › Training Data · `2020.acl-main.207#c36`" in t for t in shown)
    # and back: the citing paper's references, then Back twice
    _button(at, ":1-1-2-1-refs").click().run()
    assert any(t.startswith("**References of:** SPECTER") for t in _panel(at))
    _button(at, ":1-1-back-3").click().run()
    assert any(t.startswith("**Cited by:** Construction of the Literature Graph") for t in _panel(at))
    _button(at, ":1-1-back-2").click().run()
    assert any(t.startswith("**References of:** SPECTER") for t in _panel(at))
    _button(at, ":1-1-close-1").click().run()
    assert not any(t.startswith(("**References of:**", "**Cited by:**")) for t in _panel(at))
    # an index that is not there: the links say so, the answer stays
    at.sidebar.text_input(key="index").set_value("/nonexistent/litloop-index").run()
    assert any("Citations of this paper are not available" in c.value for c in at.caption)


def test_a_chat_that_asks_a_server_says_where_the_citations_are():
    from streamlit.testing.v1 import AppTest

    def page():
        from agent.chat.cites_web import show_links

        show_links({"n": 1, "paper_id": "N18-3011"}, key="k", server="http://127.0.0.1:2024")

    at = AppTest.from_function(page).run()
    assert not at.exception, at.exception
    (caption,) = at.caption
    assert "asks a server" in caption.value and "litloop cites N18-3011" in caption.value
    assert not at.button


def test_a_reload_reopens_the_conversation_the_address_names(chat_env):
    one_cited_answer(chat_env)
    at = ask(app(), "What F1 do CRFs reach on chunking?")
    thread = at.query_params["thread"]
    assert thread == at.session_state["thread"]
    # a reload is a new session on the same address: the conversation is open again
    from streamlit.testing.v1 import AppTest

    again = AppTest.from_file(str(APP), default_timeout=120)
    again.query_params["thread"] = thread
    again.run()
    assert not again.exception, again.exception
    assert [c for c in again.chat_message if c.name == "user"]
    assert any("CRFs reach 95.7 F1 on chunking <span class='litloop-cite'" in m.value for m in again.markdown)
    # an address naming no conversation of this store opens none
    stranger = AppTest.from_file(str(APP), default_timeout=120)
    stranger.query_params["thread"] = "not-a-thread"
    stranger.run()
    assert not [c for c in stranger.chat_message if c.name == "user"]


@pytest.mark.parametrize(
    ("question", "says"), [("   ", "Type a question first"), ("why " * 600, "at most 2,000 characters")]
)
def test_a_blank_or_overlong_question_is_refused_before_it_runs(chat_env, question, says):
    m = chat_env(decompose=[], verify=[], read=[], synthesize=[])
    at = ask(app(), question)
    assert any(says in w.value for w in at.warning), [w.value for w in at.warning]
    assert not [c for c in at.chat_message if c.name == "user"]  # nothing asked, no conversation made
    assert not [b for b in at.button if b.key and b.key.startswith("thread-")]
    assert m["decompose"].calls == []


def test_the_first_page_describes_the_collection_and_offers_its_example_questions(chat_env):
    one_cited_answer(chat_env)
    at = app()
    about = " ".join(m.value for m in at.markdown)
    assert "papers** in this collection" in about and "with their full text" in about
    examples = [b for b in at.button if b.key and b.key.startswith("example-")]
    assert 1 <= len(examples) <= 3
    question = examples[0].label
    examples[0].click().run()
    assert not at.exception, at.exception
    users = [c for c in at.chat_message if c.name == "user"]
    assert len(users) == 1 and users[0].markdown[0].value == question  # the example was asked
    # an open conversation shows its turns, not the first page
    assert not [b for b in at.button if b.key and b.key.startswith("example-")]


def test_before_the_demo_index_is_built_the_first_page_describes_the_demo_and_offers_its_questions(
    chat_env, monkeypatch
):
    """A first run: no index named and the demo index not built yet (a fresh data folder). The
    page describes the demo collection without building it and offers one question of each shape."""
    from agent.settings import default_settings
    from tools.corpora.demo import EXAMPLE_QUESTIONS

    chat_env(decompose=[], verify=[], read=[], synthesize=[])
    monkeypatch.delenv("LITLOOP_INDEX")
    default_settings.cache_clear()
    at = app()
    about = " ".join(m.value for m in at.markdown)
    assert "**The demo collection**: 3,186 CiteSeer" in about and "built with the first question" in about
    examples = [b.label for b in at.button if b.key and b.key.startswith("example-")]
    assert examples == list(EXAMPLE_QUESTIONS)
    assert not (default_settings().demo_index / "CURRENT").exists()  # described, not built
