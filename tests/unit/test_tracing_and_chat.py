"""Pure parts of tracing and the chats: summarising, redaction, tree building, trace lookup,
follow-up rewriting, the step timeline, the chat store, the `ui` command line."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC

import pytest

from agent.chat.render import byline, cited_papers, totals_line
from agent.chat.session import FOLLOW_UP_HEADER, ChatStore, Turn, contextualise
from agent.chat.trace_view import tree_rows
from agent.records.progress import Timeline
from agent.settings import DEFAULT_REDACT_PATTERNS, TracingSettings
from agent.tracing.redact import REDACTED, Summariser
from agent.tracing.steps import trace_step
from agent.tracing.store import TraceNotFound, find_trace, list_traces, summary_of
from agent.tracing.tracer import RunTreeTracer

pytestmark = pytest.mark.unit


def chunk(i, paper="p1", score=1.0):
    return {
        "chunk_id": f"{paper}#c{i}",
        "paper_id": paper,
        "kind": "text",
        "text": "word " * 300,
        "score": score,
        "locator": {"page": 2},
    }


# ----------------------------------------------------------------------------- summarising


def test_chunk_lists_and_pool_are_summarised():
    s = Summariser(max_chars=100)
    chunks = [chunk(i, paper=f"p{i % 3}", score=i) for i in range(50)]
    out = s({"chunks": chunks, "pool": {c["chunk_id"]: c for c in chunks}, "few": chunks[:2]})
    assert out["chunks"] == {
        "_summary": "chunks",
        "count": 50,
        "papers": 3,
        "chunk_ids": [c["chunk_id"] for c in chunks[:10]],
    }
    assert out["pool"]["_summary"] == "pool" and out["pool"]["count"] == 50 and out["pool"]["papers"] == 3
    assert out["pool"]["top"][0]["chunk_id"] == "p1#c49"  # best score first
    assert len(out["few"]) == 2 and out["few"][0]["text"].endswith("[cut: 1499 chars]")
    assert "word word" not in json.dumps(out["chunks"])


def test_strings_are_cut_and_long_lists_shortened():
    s = Summariser(max_chars=10)
    assert s("x" * 25) == "xxxxxxxxxx… [cut: 25 chars]"
    assert Summariser(max_chars=0)("x" * 25) == "x" * 25
    out = s(list(range(100)))
    assert out[:3] == [0, 1, 2] and out[-1] == {"_more": 70}


def test_redaction_by_pattern_value_and_key_name():
    s = Summariser(max_chars=0, patterns=DEFAULT_REDACT_PATTERNS, secrets=["plain-secret-value"])
    text = (
        "key sk-proj-abcdefghijklmnopqrstuv1234 and lsv2_pt_0123456789abcdef0123 and Bearer abc.def-ghijk "
        "and api_key=hunter22 and plain-secret-value and hf_abcdefghijklmnopqrstuvwx"
    )
    red = s(text)
    for leak in ("sk-proj-abcdef", "lsv2_pt_0123", "abc.def-ghijk", "hunter22", "plain-secret-value", "hf_abcdefgh"):
        assert leak not in red
    assert red.startswith("key " + REDACTED)
    assert s({"api_key": "short", "Authorization": "x-y-z", "keep": "conditional random fields"}) == {
        "api_key": REDACTED,
        "Authorization": REDACTED,
        "keep": "conditional random fields",
    }
    # paper text with ordinary words is left alone
    assert (
        s("The secret of CRFs is the global normaliser; tokens per second: 115")
        == "The secret of CRFs is the global normaliser; tokens per second: 115"
    )


def test_bad_redact_pattern_is_ignored_not_fatal():
    s = Summariser(patterns=["(unclosed", r"foo\d+"])
    assert s("foo123 bar") == f"{REDACTED} bar"


def test_messages_become_role_and_content():
    from langchain_core.messages import HumanMessage, SystemMessage

    out = Summariser(max_chars=20)([SystemMessage("You are litloop."), HumanMessage("q " * 40)])
    assert out[0] == {"role": "system", "content": "You are litloop."}
    assert out[1]["role"] == "human" and out[1]["content"].endswith("[cut: 80 chars]")


# ----------------------------------------------------------------------------- tracer on a tiny chain


def test_trace_step_runs_and_inherited_metadata(tmp_path):
    from langchain_core.runnables import RunnableLambda

    from agent.tracing.store import load_trace
    from tests.fakes import ScriptedChatModel

    model = ScriptedChatModel(responses=["ok", RuntimeError("boom")])
    tracer = RunTreeTracer(tmp_path, TracingSettings())

    def step(q):
        with trace_step("retrieve", run_type="retriever", inputs=q, metadata={"subquery": q}) as s:
            model.invoke(q)
            s.outputs = [chunk(1)]
        with trace_step("read p1", inputs={"paper_id": "p1"}, metadata={"paper_id": "p1"}):
            model.invoke("again")
        return "done"

    with pytest.raises(RuntimeError, match="boom"):
        RunnableLambda(step).invoke("crf F1", config={"callbacks": [tracer], "run_name": "question"})
    records = load_trace(tracer.trace_id, tmp_path)
    names = [r["name"] for d, r in tree_rows(records)]
    assert names == ["question", "retrieve", "ScriptedChatModel", "read p1", "ScriptedChatModel"]
    retrieve = next(r for r in records if r["name"] == "retrieve")
    assert retrieve["run_type"] == "retriever" and retrieve["inputs"] == {"query": "crf F1"}
    llm = [r for r in records if r["run_type"] == "llm"]
    assert llm[0]["metadata"]["subquery"] == "crf F1" and llm[0]["parent_run_id"] == retrieve["id"]
    assert llm[1]["metadata"]["paper_id"] == "p1" and "boom" in llm[1]["error"]
    read = next(r for r in records if r["name"] == "read p1")
    assert "boom" in read["error"] and retrieve["error"] is None
    assert summary_of(records, tracer.trace_id)["status"] == "error"


def test_trace_step_outside_a_run_is_harmless():
    with trace_step("retrieve", run_type="retriever", inputs="q") as s:
        s.outputs = []


def test_cost_estimate_uses_prices_and_snapshot_names(tmp_path):
    from datetime import datetime
    from uuid import uuid4

    from langchain_core.tracers.schemas import Run

    tracer = RunTreeTracer(tmp_path, TracingSettings())
    run = Run(
        id=uuid4(),
        name="ChatOpenAI",
        run_type="llm",
        start_time=datetime.now(UTC),
        inputs={},
        extra={"metadata": {"ls_model_name": "gpt-4o-mini-2024-07-18"}},
    )
    assert tracer._cost(run, {"input_tokens": 1_000_000, "output_tokens": 1_000_000}) == pytest.approx(0.75)
    run.extra = {"metadata": {"ls_model_name": "my-own-model"}}
    assert tracer._cost(run, {"input_tokens": 10, "output_tokens": 10}) is None
    run.extra = {"metadata": {"ls_model_name": "qwen", "litloop_backend": "local"}}
    assert tracer._cost(run, {"input_tokens": 10, "output_tokens": 10}) == 0.0


# ----------------------------------------------------------------------------- reading traces


def rec(id_, parent, order, name, run_type="chain", **extra):
    return {
        "id": id_,
        "trace_id": "t",
        "parent_run_id": parent,
        "dotted_order": order,
        "name": name,
        "run_type": run_type,
        "start_time": "2025-01-01T00:00:00+00:00",
        "end_time": "2025-01-01T00:00:01+00:00",
        "inputs": {"question": "q?"},
        "outputs": {},
        "error": None,
        "tags": [],
        "metadata": {},
        **extra,
    }


def test_tree_rows_hide_plumbing_and_reparent():
    records = [
        rec("a", None, "1", "litloop"),
        rec("b", "a", "1.1", "verify"),
        rec("c", "b", "1.1.1", "RunnableSequence"),
        rec("d", "c", "1.1.1.1", "ChatOpenAI", "llm"),
    ]
    assert [(d, r["name"]) for d, r in tree_rows(records)] == [(0, "litloop"), (1, "verify"), (2, "ChatOpenAI")]
    assert [d for d, _ in tree_rows(records, everything=True)] == [0, 1, 2, 3]


def test_summary_statuses():
    root = rec("a", None, "1", "litloop", metadata={"token_usage": {"total_tokens": 7}})
    node = rec("b", "a", "1.1", "read_paper")
    assert summary_of([root, node], "a")["status"] == "ok"
    assert summary_of([root, {**node, "metadata": {"node_errors": [{"node": "read"}]}}], "a")["status"] == "partial"
    assert summary_of([{**root, "error": "boom"}, node], "a")["status"] == "error"
    assert summary_of([node], "a")["status"] == "incomplete"
    llm = rec(
        "c",
        "b",
        "1.1.1",
        "ChatOpenAI",
        "llm",
        metadata={"token_usage": {"input_tokens": 3, "output_tokens": 2, "total_tokens": 5}},
    )
    stopped = summary_of([node, llm], "a")  # the root never ended: question and tokens from what did
    assert stopped["question"] == "q?" and stopped["total_tokens"] == 5 and stopped["llm_calls"] == 1
    assert summary_of([root], "a")["total_tokens"] == 7 and summary_of([root], "a")["duration_s"] == 1.0


def test_find_trace_by_start_end_and_last(tmp_path):
    import os

    for n, name in enumerate(["01a2-aaaa-1111", "01a2-aaaa-2222", "01a3-bbbb-3333"]):
        (tmp_path / f"{name}.jsonl").write_text(json.dumps(rec(name, None, "1", "litloop")) + "\n")
        os.utime(tmp_path / f"{name}.jsonl", (1000 + n, 1000 + n))
    assert find_trace(tmp_path, "2222").stem == "01a2-aaaa-2222"
    assert find_trace(tmp_path, "01a3").stem == "01a3-bbbb-3333"
    assert find_trace(tmp_path, "last").stem == "01a3-bbbb-3333"
    with pytest.raises(TraceNotFound, match="matches 2"):
        find_trace(tmp_path, "01a2")
    with pytest.raises(TraceNotFound, match="no trace"):
        find_trace(tmp_path, "zzz")
    assert [t["trace_id"] for t in list_traces(tmp_path, limit=2)] == ["01a3-bbbb-3333", "01a2-aaaa-2222"]
    with pytest.raises(TraceNotFound, match="no traces"):
        find_trace(tmp_path / "empty", "last")


# ----------------------------------------------------------------------------- follow-ups


def turn(n, question, text, citations=(), error=None):
    return Turn(
        thread_id="t",
        n=n,
        question=question,
        asked=question,
        graph_thread=f"t:{n}",
        error=error,
        answer={"text": text, "citations": list(citations)} if text else {},
    )


def test_first_question_is_asked_as_typed():
    assert contextualise("What F1 do CRFs reach?", []) == "What F1 do CRFs reach?"


def test_follow_up_carries_the_last_answered_turns():
    cites = [
        {"paper_id": "crf", "title": "Conditional random fields"},
        {"paper_id": "crf", "title": "Conditional random fields"},
        {"paper_id": "lstm", "title": "BiLSTM-CRF"},
    ]
    history = [
        turn(1, "oldest question", "old answer [1]."),
        turn(2, "failed one", None, error="boom"),
        turn(3, "Which taggers beat HMMs?", "CRFs [1] and BiLSTM-CRFs [2, 3] do.", cites),
        turn(4, "And on NER?", "BiLSTM-CRF reaches 90.9 F1 [1].", cites[2:]),
    ]
    asked = contextualise("and which of them use a CRF?", history)
    head, context = asked.split("\n\n", 1)
    assert head == "and which of them use a CRF?"
    assert context.startswith(FOLLOW_UP_HEADER)
    assert "oldest question" not in asked and "failed one" not in asked  # two answered turns, newest last
    assert context.index("Q: Which taggers beat HMMs?") < context.index("Q: And on NER?")
    assert "A: CRFs and BiLSTM-CRFs do." in context  # citation markers removed
    assert "Papers cited: Conditional random fields (crf); BiLSTM-CRF (lstm)" in context


@pytest.mark.parametrize(
    "question",
    [
        "and which of them use a CRF?",
        "What about on NER?",
        "Which of those papers report F1?",
        "How does the second one train its model?",
        "What dataset does it use?",
        "Do they release their code?",
        "Can you quote the sentence you mentioned?",
        "Same for SciBERT?",
        "Why?",
    ],
)
def test_a_question_that_refers_back_is_asked_with_the_conversation(question):
    history = [turn(1, "Which papers use CRFs?", "CRFs [1] are used by two papers.", [{"paper_id": "crf"}])]
    asked = contextualise(question, history)
    assert asked.startswith(question) and FOLLOW_UP_HEADER in asked and "Q: Which papers use CRFs?" in asked


@pytest.mark.parametrize(
    "question",
    [
        "Which papers use conditional random fields for information extraction?",
        "What F1 does S2ORC report for titles?",
        "Is it true that dropout is switched off at test time?",
        "Give me an overview of the literature on wrapper induction.",
        "How does SPECTER use citations to learn document representations?",
    ],
)
def test_a_question_that_stands_alone_is_asked_alone(question):
    # asked after another in the same conversation, it gets no earlier paper
    history = [turn(1, "How does SPECTER train?", "With a triplet loss [1].", [{"paper_id": "specter"}])]
    assert contextualise(question, history) == question


def test_follow_up_context_is_bounded():
    long = turn(1, "q" * 1000, "a" * 5000, [{"paper_id": f"p{i}", "title": "t" * 300} for i in range(20)])
    asked = contextualise("next?", [long])
    assert len(asked) < 300 + 400 + 5 * 110 + 200
    assert asked.count("(p") == 5


# ----------------------------------------------------------------------------- timeline and labels


def test_timeline_folds_events_into_stages():
    t = Timeline()
    t.add({"node": "decompose", "round": 1, "max_rounds": 3, "subqueries": ["a", "b"]})
    t.add({"node": "search", "papers_found": 12})
    t.add({"node": "rerank", "pooled_chunks": 40})
    t.add({"node": "verify", "sufficient": False, "evidence_papers": ["p1"], "missing": "the HMM baseline"})
    t.add({"node": "decompose", "round": 2, "max_rounds": 3, "subqueries": []})
    t.add({"node": "expand_neighbors", "seeds": ["p1"], "candidates": 9})
    t.add({"node": "read_paper", "papers_read": 9, "relevant": ["p1", "p2"]})
    t.add({"node": "synthesize", "answer": {"citations": [{}, {}]}})
    titles = [s.title for s in t.stages]
    assert titles == [
        "Round 1/3: not yet sufficient, missing: the HMM baseline",
        "Round 2/3: searching…",
        "Read 9 papers, 2 relevant",
        "Answer written",
    ]
    assert t.stages[0].lines == [
        "Subqueries: a; b",
        "Papers found: 12",
        "Evidence pool: 40 chunks",
        "Verdict: not yet sufficient (evidence papers: p1)",
        "Missing: the HMM baseline",
    ]
    assert all(s.done for s in t.stages)
    assert t.stages[3].lines == ["2 citations"]


def test_timeline_says_when_no_llm_gave_the_verdict():
    t = Timeline()
    t.add({"node": "decompose", "round": 1, "max_rounds": 1, "subqueries": ["q"]})
    t.add({"node": "verify", "sufficient": True, "evidence_papers": ["p1", "p2"], "missing": "", "llm": False})
    assert t.stages[0].title == "Round 1/1: top papers taken as evidence"
    assert t.stages[0].lines[-1] == "No LLM verdict (this preset): the top papers are the evidence (p1; p2)"


def test_cards_group_citations_by_paper_and_name_their_authors_and_totals():
    c = {
        "n": 2,
        "title": "CRFs",
        "paper_id": "crf",
        "authors": ["J. Lafferty", "A. McCallum", "F. Pereira", "X. Else"],
        "venue": "ACL",
        "year": 2005,
    }
    assert byline(c) == "J. Lafferty, A. McCallum, F. Pereira et al. · ACL 2005"
    assert byline({**c, "authors": [], "venue": None}) == "2005"
    cited = [{**c, "n": 3}, {"n": 1, "paper_id": "lstm"}, c]
    assert [[x["n"] for x in g] for g in cited_papers(cited)] == [[1], [2, 3]]  # in the order first cited
    line = totals_line(
        {"rounds": 2, "llm_calls": 9, "input_tokens": 1234, "output_tokens": 56, "seconds": 3.04, "preset": "local"},
        "01a2-aaaa-bbbbccccdddd",
    )
    assert line == "2 rounds · 9 LLM calls · 1,234 + 56 tokens · 3.0 s · preset local · trace bbbbccccdddd"


# ----------------------------------------------------------------------------- store and command line


def test_chat_store_threads_and_turns(tmp_path):
    store = ChatStore(tmp_path / "chats.sqlite")
    a = store.new_thread()
    store.add_turn(
        Turn(
            thread_id=a,
            n=1,
            question="What F1 do CRFs reach?",
            asked="x",
            graph_thread=f"{a}:1",
            events=[{"node": "search", "papers_found": 3}],
            totals={"rounds": 1},
        )
    )
    b = store.new_thread()
    store.add_turn(Turn(thread_id=b, n=1, question="q" * 100, asked="x", graph_thread=f"{b}:1", error="boom"))
    threads = store.threads()
    assert [t["thread_id"] for t in threads] == [b, a]
    assert threads[1]["title"] == "What F1 do CRFs reach?" and threads[1]["turns"] == 1
    assert len(threads[0]["title"]) == 60
    assert store.thread(a[:5])["thread_id"] == a
    [t] = store.turns(a, with_answers=False)
    assert t.events == [{"node": "search", "papers_found": 3}] and t.totals == {"rounds": 1}
    store.close()
    again = ChatStore(tmp_path / "chats.sqlite")  # a restart
    assert len(again.threads()) == 2
    again.delete_thread(b)
    assert [t["thread_id"] for t in again.threads()] == [a]
    again.close()


def test_ui_command_is_loopback_without_usage_stats():
    from agent.cli.chat import streamlit_command

    cmd = streamlit_command(8600, "127.0.0.1")
    assert cmd[1:4] == ["-m", "streamlit", "run"] and cmd[4].endswith("agent/chat/app.py")
    flags = dict(zip(cmd[5::2], cmd[6::2]))
    assert flags["--server.address"] == "127.0.0.1" and flags["--server.port"] == "8600"
    assert flags["--browser.gatherUsageStats"] == "false" and flags["--server.headless"] == "true"


def test_help_does_not_import_streamlit_torch_or_chromadb():
    code = (
        "import sys\nfrom agent.cli.main import app\nfrom typer.testing import CliRunner\n"
        "for args in (['--help'], ['ui', '--help'], ['chat', '--help'], ['trace', 'list', '--help']):\n"
        "    r = CliRunner().invoke(app, args)\n    assert r.exit_code == 0, r.output\n"
        "print(','.join(m for m in ('torch', 'chromadb', 'streamlit', 'langgraph.checkpoint.sqlite') if m in sys.modules))"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == ""


def test_langsmith_only_by_the_users_choice(monkeypatch):
    from agent.tracing.tracer import langsmith_status

    for var in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2", "LANGSMITH_API_KEY", "LANGCHAIN_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    assert langsmith_status() == "off"
    monkeypatch.setenv("LANGSMITH_TRACING", "true")
    assert langsmith_status() == "no key"
    monkeypatch.setenv("LANGSMITH_API_KEY", "lsv2_pt_x")
    assert langsmith_status() == "on"


def test_trace_show_prints_a_run_stopped_before_its_root_ended(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from agent.cli.main import app
    from agent.settings import default_settings

    monkeypatch.setenv("LITLOOP_TRACING__DIR", str(tmp_path))
    default_settings.cache_clear()
    error = "TimeoutError('x')Traceback (most recent call last):\n  File x"
    records = [rec("b", "a", "1.1", "decompose"), rec("c", "a", "1.2", "verify", error=error)]
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    try:
        r = CliRunner().invoke(app, ["trace", "show", "last"])
        listed = CliRunner().invoke(app, ["trace", "list", "--json"])
    finally:
        default_settings.cache_clear()
    assert r.exit_code == 0, r.output
    assert "incomplete" in r.stdout and "decompose" in r.stdout and "verify" in r.stdout
    assert "✗ TimeoutError('x')" in r.stdout and "Traceback" not in r.stdout
    assert json.loads(listed.stdout)[0]["status"] == "incomplete"


@pytest.mark.parametrize("stop_with", ["SIGTERM", "SIGINT"])
def test_terminating_litloop_ui_stops_its_server(tmp_path, stop_with):
    """SIGTERM, and Ctrl-C's SIGINT even where litloop started with SIGINT ignored (a
    background job of a script: Python then leaves it ignored unless litloop handles it)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    pid_file = tmp_path / "child.pid"
    server = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(120)"
    wrapper = (
        "import sys; from agent.cli.chat import serve_until_stopped; "
        f"sys.exit(serve_until_stopped([sys.executable, '-c', {server!r}], dict(__import__('os').environ)))"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", wrapper], preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)
    )
    deadline = time.time() + 60
    while not pid_file.exists() or not pid_file.read_text():
        assert time.time() < deadline, "the server did not start"
        time.sleep(0.1)
    child = int(pid_file.read_text())
    parent.send_signal(getattr(signal, stop_with))
    assert parent.wait(timeout=30) == 0
    for _ in range(100):  # the child is gone (reaped by its parent), not left serving
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        os.kill(child, signal.SIGKILL)
        raise AssertionError("the server outlived litloop ui")


def test_highlighted_chunk_escapes_paper_text_and_marks_the_quote():
    from agent.chat.render import dropped_lines, highlighted_chunk

    text = "Intro <b>bold</b>. CRFs reach 95.7 F1. Tail & end."
    start = text.index("CRFs")
    c = {
        "chunk_text": text,
        "quote": "CRFs reach 95.7 F1.",
        "sentences": [{"start": start, "end": start + len("CRFs reach 95.7 F1."), "text": "CRFs reach 95.7 F1."}],
    }
    assert highlighted_chunk(c) == "Intro &lt;b&gt;bold&lt;/b&gt;. <mark>CRFs reach 95.7 F1.</mark> Tail &amp; end."
    assert highlighted_chunk({"quote": "<q>"}) == "&lt;q&gt;"  # no chunk text: the escaped quote
    assert dropped_lines(
        {"rejected_claims": [{"text": "X is 9.", "reason": "the number '9' is not in the cited sentences"}]}
    ) == ["\u201cX is 9.\u201d (the number '9' is not in the cited sentences)"]


def test_steps_name_papers_by_their_titles():
    t = Timeline()
    t.add({"node": "decompose", "round": 1, "max_rounds": 1, "subqueries": ["q"]})
    titles = {"14331": "Wrapper Induction: Efficiency and Expressiveness", "p2": "A" * 80}
    ids = ["14331", "p2", "p3", "p4", "p5", "p6", "p7"]
    t.add({"node": "verify", "sufficient": True, "evidence_papers": ids, "titles": titles, "llm": False})
    line = t.stages[0].lines[-1]
    assert "“Wrapper Induction: Efficiency and Expressiveness”" in line and "14331" not in line
    assert "A" * 61 not in line and "…" in line  # a long title is cut
    assert "p3" in line and "and 2 more" in line and "p6" not in line  # no title: the id; at most five
    t.add({"node": "read_paper", "papers_read": 3, "relevant": ["14331"], "titles": titles})
    assert t.stages[-1].lines[-1] == "Papers read: 3; relevant: “Wrapper Induction: Efficiency and Expressiveness”"


def test_the_web_chat_drops_the_thread_context_warning_only(caplog):
    import logging
    import threading

    pytest.importorskip("streamlit")
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    from agent.chat.steps_web import quiet_thread_warnings

    quiet_thread_warnings()
    logger = logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context")
    logger.propagate, was = True, logger.propagate
    try:
        with caplog.at_level(logging.WARNING, logger=logger.name):
            worker = threading.Thread(target=get_script_run_ctx)  # a thread with no context, as the index build's
            worker.start()
            worker.join()
            logger.warning("something else")
        messages = [r.getMessage() for r in caplog.records]
        assert "something else" in messages and not any("ScriptRunContext" in m for m in messages)
    finally:
        logger.propagate = was


def test_a_marker_opens_its_quote_and_paper_text_stays_text():
    from agent.chat.render import with_open_markers

    cites = [
        {"n": 1, "quote": "CRFs reach <b>95.7</b> F1.", "title": "CRFs & HMMs", "locator": {"page": 3}},
    ]
    out = with_open_markers("CRFs reach 95.7 F1 [1]. <script>x</script> [2]", cites)
    assert "tabindex='0' title='open the quote'>[1]<span class='litloop-cite-body'>" in out
    assert "“CRFs reach &lt;b&gt;95.7&lt;/b&gt; F1.”" in out
    assert "<b>CRFs &amp; HMMs</b>" in out and "p. 3" in out
    assert "<script>" not in out and "&lt;script&gt;" in out  # the answer's own text is escaped
    assert out.endswith("[2]")  # a marker with no citation stays a marker


def test_a_build_stage_reads_as_a_sentence_with_the_time_left():
    from agent.records.progress import about, build_line

    line = build_line(
        {"stage": "embedding chunks", "done": 1200, "total": 4800, "unit": "window", "seconds": 40.2, "left_s": 121}
    )
    assert line == (
        "Building the demo index (first run only): embedding chunks, 1,200 of 4,800 windows · 40 s so far, "
        "about 2 min left"
    )
    assert build_line({"stage": "reading", "done": 1, "total": None, "unit": "file", "seconds": 0.2}).endswith(
        "reading, 1 file · 1 s so far"
    )
    assert [about(s) for s in (0.2, 59, 61, 3900)] == ["1 s", "59 s", "1 min", "1 h 5 min"]


def test_the_command_lines_progress_names_papers_by_their_titles():
    from agent.cli.common import err
    from agent.cli.render import progress_printer

    titles = {"crf": "Conditional random fields for sequence labeling", "lstm": ""}
    with err.capture() as got:
        progress_printer({"node": "verify", "sufficient": True, "evidence_papers": ["crf", "lstm"], "titles": titles})
        progress_printer({"node": "read_paper", "papers_read": 7, "relevant": ["crf"], "titles": titles})
        progress_printer({"node": "expand_neighbors", "candidates": 3, "seeds": ["crf"], "titles": titles})
    lines = got.get().splitlines()
    assert lines[0].endswith("evidence papers: “Conditional random fields for sequence labeling”; lstm")
    assert lines[1] == "  papers read: 7, relevant: “Conditional random fields for sequence labeling”"
    assert lines[2].endswith("from seeds “Conditional random fields for sequence labeling”")
