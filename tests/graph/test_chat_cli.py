"""`litloop chat` and `litloop trace` with the scripted model on the real small index."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from agent.cli.main import app

from .conftest import SATISFIED, cite_first_chunk, claims_answer

pytestmark = pytest.mark.graph

runner = CliRunner()
ANSWER = claims_answer(("CRFs reach 95.7 F1 on chunking.", "95.7"))


@pytest.fixture
def chat_env(scripted, monkeypatch, tmp_path):
    monkeypatch.setenv("LITLOOP_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("LANGSMITH_TRACING", raising=False)
    from agent.settings import default_settings

    default_settings.cache_clear()
    return scripted


def test_terminal_chat_streams_steps_cites_and_keeps_history(chat_env):
    m = chat_env(
        decompose=({"subqueries": ["crf chunking F1"]},),
        verify=(SATISFIED,),
        read=(cite_first_chunk,),
        synthesize=(ANSWER,),
    )
    script = "What F1 do CRFs reach on chunking?\nand which of them use a CRF?\n/trace\n/history\n/threads\n/new\n/trace\n/quit\n"
    r = runner.invoke(app, ["chat", "--preset", "paper"], input=script)
    assert r.exit_code == 0, r.output
    o = r.output
    assert "Round 1/3" in o and "Subqueries: crf chunking F1" in o and "Papers found:" in o
    assert "Verdict: sufficient" in o and "Papers read:" in o
    assert "CRFs reach 95.7 F1 on chunking [1]." in o
    assert "[1] Conditional random fields for sequence labeling (crf; ACL 2005)" in o and "§ Abstract" in o
    assert "LLM calls" in o and "tokens" in o and "trace " in o
    # the follow-up carried the conversation
    assert "Q: What F1 do CRFs reach on chunking?" in m["decompose"].calls[1].user
    # /trace: the run tree of the last answer
    assert "litloop chain" in o and "decompose chain" in o and "retrieve retriever" in o
    assert o.count("you>") >= 8
    # /threads lists the conversation; after /new there is no answer to trace
    assert "2 question(s)" in o and "No answer in this conversation yet." in o


def test_chat_resumes_a_thread(chat_env):
    chat_env(
        decompose=({"subqueries": ["crf chunking F1"]},),
        verify=(SATISFIED,),
        read=(cite_first_chunk,),
        synthesize=(ANSWER,),
    )
    r = runner.invoke(app, ["chat", "--preset", "paper"], input="What F1 do CRFs reach?\n/quit\n")
    assert r.exit_code == 0, r.output
    from agent.chat.session import ChatStore

    store = ChatStore()
    [t] = store.threads()
    store.close()
    r = runner.invoke(app, ["chat", "--thread", t["thread_id"][:6]], input="/quit\n")
    assert r.exit_code == 0, r.output
    assert "What F1 do CRFs reach?" in r.output and "CRFs reach 95.7 F1 on chunking [1]." in r.output
    r = runner.invoke(app, ["chat", "--thread", "nope"], input="/quit\n")
    assert r.exit_code == 2 and "no conversation" in r.output


def test_trace_list_and_show(chat_env):
    chat_env(
        decompose=({"subqueries": ["crf chunking F1"]},),
        verify=(SATISFIED,),
        read=(cite_first_chunk,),
        synthesize=(RuntimeError("synthesis exploded"), ANSWER),
    )
    from agent.api import ask

    with pytest.raises(RuntimeError):
        ask("Which question fails?", preset="paper", read_papers=2)
    ok = ask("What F1 do CRFs reach on chunking?", preset="paper", read_papers=2)
    r = runner.invoke(app, ["trace", "list", "--json"])
    assert r.exit_code == 0, r.output
    items = json.loads(r.stdout)
    assert [i["status"] for i in items] == ["ok", "error"]
    assert items[0]["trace_id"] == ok["trace_id"] and items[0]["question"] == "What F1 do CRFs reach on chunking?"
    assert items[0]["total_tokens"] > 0 and items[0]["duration_s"] > 0
    r = runner.invoke(app, ["trace", "list"])
    assert r.exit_code == 0 and ok["trace_id"][-12:] in r.stdout and "error" in r.stdout
    r = runner.invoke(app, ["trace", "show", items[1]["trace_id"][-12:]])
    assert r.exit_code == 0, r.output
    assert "synthesis exploded" in r.stdout and "✗" in r.stdout and "synthesize" in r.stdout
    r = runner.invoke(app, ["trace", "show", ok["trace_id"], "--json"])
    records = json.loads(r.stdout)
    assert records[0]["parent_run_id"] is None and len({x["id"] for x in records}) == len(records)
    r = runner.invoke(app, ["trace", "show", "last", "--all"])
    assert r.exit_code == 0 and "RunnableSequence" in r.stdout
    r = runner.invoke(app, ["trace", "show", "zzzz"])
    assert r.exit_code == 1 and "no trace" in r.output


def test_ask_json_has_trace_id(chat_env):
    chat_env(
        decompose=({"subqueries": ["crf chunking F1"]},),
        verify=(SATISFIED,),
        read=(cite_first_chunk,),
        synthesize=(ANSWER,),
    )
    r = runner.invoke(app, ["ask", "What F1 do CRFs reach?", "--preset", "paper", "--json"])
    assert r.exit_code == 0, r.output
    record = json.loads(r.stdout)
    assert record["trace_id"]
    r = runner.invoke(app, ["trace", "show", record["trace_id"], "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)[0]["id"] == record["trace_id"]


def test_a_chat_turn_is_checkpointed_once_at_its_end(chat_env):
    # durability="exit" (LangGraph's public switch): one checkpoint per turn, not one per node
    chat_env(
        decompose=({"subqueries": ["crf chunking F1"]},) * 2,
        verify=(SATISFIED,) * 2,
        read=(cite_first_chunk,) * 2,
        synthesize=(ANSWER,) * 2,
    )
    from agent.api import ask
    from agent.chat.session import ChatStore, ask_turn

    store = ChatStore()
    try:
        thread = store.new_thread()
        turn = ask_turn(store, thread, "What F1 do CRFs reach on chunking?", preset="paper", read_papers=2)
        saved = list(store.checkpointer.list({"configurable": {"thread_id": turn.graph_thread}}))
        assert len(saved) == 1 and saved[0].checkpoint["channel_values"].get("answer")
        # the graph's default durability checkpoints every step
        ask(
            "What F1 do CRFs reach on chunking?",
            preset="paper",
            read_papers=2,
            graph=store.graph(),
            thread_id="every-step",
        )
        assert len(list(store.checkpointer.list({"configurable": {"thread_id": "every-step"}}))) > 5
    finally:
        store.close()


def test_terminal_chat_lists_dropped_claims(chat_env):
    with_bad = claims_answer(("CRFs reach 95.7 F1 on chunking.", "95.7"), ("CRFs reach 99.9 F1.", "95.7"))
    chat_env(
        decompose=({"subqueries": ["crf chunking F1"]},),
        verify=(SATISFIED,),
        read=(cite_first_chunk,),
        synthesize=(with_bad,),
    )
    r = runner.invoke(app, ["chat", "--preset", "paper"], input="What F1 do CRFs reach?\n/dropped\n/dropped 5\n/quit\n")
    assert r.exit_code == 0, r.output
    o = r.output
    assert "1 claim(s) dropped" in o and "/dropped shows them" in o
    assert "dropped \u201cCRFs reach 99.9 F1.\u201d (the number '99.9' is not in the cited sentences)" in o
    assert "/dropped N takes a question number from 1 to 1." in o


BUILD_ON = "Which papers build on Construction of the literature graph in Semantic Scholar?\n"


def _never(messages):
    raise AssertionError("a question about a cited work is answered from its citing sentences")


def test_terminal_chat_follows_a_citation_to_its_citing_sentences_and_back(cites_chat_env):
    """On two real PDFs: the answer's [1] is SPECTER's sentence citing Ammar et al. 2018
    (N18-3011); /refs 1 lists SPECTER's references, /cites #2 goes to N18-3011's citing
    sentences, /refs #1 back to SPECTER's references, /back twice retraces the way."""
    cites_chat_env(decompose=(_never,), verify=(_never,), read=(_never,), synthesize=(_never,))
    script = BUILD_ON + "/cites #1\n/refs 1\n/cites #2\n/refs #1\n/back\n/back\n/back\n/refs #4\n/cites 7\n/quit\n"
    r = runner.invoke(app, ["chat", "--preset", "local-fast"], input=script)
    assert r.exit_code == 0, r.output
    parts = r.output.split("you>")[1:]
    answer, no_listing, refs, cites, refs_again, back1, back2, back3, outside, no_citation = parts[:10]
    assert "[1] SPECTER" in answer and "2020.acl-main.207" in answer and "p. 5" in answer
    assert "no listing yet" in no_listing
    # /refs 1: the references of the paper citation [1] quotes, numbered, with their sentences
    assert refs.lstrip().startswith("SPECTER: Document-level Representation Learning")
    assert "57 references, 97 citing sentences" in refs
    assert "  2. Construction of the literature graph in semantic scholar (2018)  N18-3011" in refs
    # /cites #2: who cites that reference, each citing sentence with its page, section and intent
    assert cites.lstrip().startswith("Construction of the Literature Graph in Semantic Scholar  N18-3011")
    assert "cited by 1 paper, 1 sentence" in cites and "  1. SPECTER" in cites
    assert "uses (corpus) · p. 5, § 4 Experiments › Training Data · 2020.acl-main.207#c36" in cites
    assert "we use a subset of the Semantic Scholar corpus (Ammar et al., 2018)" in cites
    # /refs #1: back from the citing sentence to the citing paper's references
    assert "57 references, 97 citing sentences" in refs_again
    # /back retraces: N18-3011's citers, then SPECTER's references, then nothing before
    assert "cited by 1 paper, 1 sentence" in back1 and "57 references" in back2
    assert "No earlier listing." in back3
    # row 4 of SPECTER's references is SciBERT, a work outside the index
    assert "SciBERT" in outside and "a work outside the index" in outside
    assert "the last answer has citations [1] to [1], not [7]" in no_citation


def test_terminal_chat_cites_a_work_by_its_title_words(cites_chat_env):
    r = runner.invoke(app, ["chat"], input="/cites SciBERT\n/cites #1\n/cites no such work at all\n/quit\n")
    assert r.exit_code == 0, r.output
    scibert, specter, unknown = r.output.split("you>")[1:4]
    assert "SciBERT: A Pretrained Language Model for Scientific Text" in scibert
    assert "cited work outside the index" in scibert and "cited by 1 paper, 8 sentences" in scibert
    assert scibert.count("2020.acl-main.207#c") == 8
    # /cites #1: who cites the citing paper (nobody among the two PDFs)
    assert "SPECTER" in specter and "cited by 0 papers, 0 sentences" in specter
    assert "nothing in index" in unknown and "is a paper or a cited work named" in unknown


def test_an_overlong_question_is_refused_with_the_limit_named(chat_env):
    m = chat_env(decompose=[], verify=[], read=[], synthesize=[])
    r = runner.invoke(app, ["chat", "--preset", "paper"], input="why " * 600 + "\n/quit\n")
    assert r.exit_code == 0, r.output
    assert "at most 2,000 characters" in r.output and m["decompose"].calls == []
