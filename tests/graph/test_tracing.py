"""The run-tree tracer on whole-graph runs: the scripted model on the real small index."""

from __future__ import annotations

import json

import pytest

from agent.api import ask
from agent.chat.trace_view import tree_rows, tree_text
from agent.tracing.store import list_traces, load_trace, summary_of

from .conftest import (
    ANSWER,
    NOT_SATISFIED,
    SATISFIED,
    SMALL,
    cite_first_chunk,
    numbered,
)

pytestmark = pytest.mark.graph

FIELDS = {
    "id",
    "trace_id",
    "parent_run_id",
    "dotted_order",
    "name",
    "run_type",
    "start_time",
    "end_time",
    "inputs",
    "outputs",
    "error",
    "tags",
    "metadata",
}


@pytest.fixture
def traces(tmp_path, monkeypatch):
    d = tmp_path / "traces"
    monkeypatch.setenv("LITLOOP_TRACING__DIR", str(d))
    monkeypatch.delenv("LANGSMITH_TRACING", raising=False)
    monkeypatch.delenv("LANGCHAIN_TRACING_V2", raising=False)
    return d


def assert_consistent_tree(records):
    ids = {r["id"] for r in records}
    assert len(ids) == len(records), "one record per run"
    roots = [r for r in records if r["parent_run_id"] is None]
    assert len(roots) == 1, "one root per question"
    root = roots[0]
    for r in records:
        assert set(r) == FIELDS
        assert r["trace_id"] == root["id"]
        assert r["run_type"] in {"chain", "llm", "tool", "retriever"}
        if r["parent_run_id"] is not None:
            assert r["parent_run_id"] in ids, f"{r['name']}: parent missing"
            parent = next(p for p in records if p["id"] == r["parent_run_id"])
            assert r["dotted_order"].startswith(parent["dotted_order"] + ".")
            assert parent["start_time"] <= r["start_time"]
    orders = [r["dotted_order"] for r in records]
    assert orders == sorted(orders)  # load_trace sorts; parents sort before their children
    return root


def test_run_tree_is_consistent(scripted, traces):
    m = scripted(
        decompose=numbered("crf query"),
        verify=[NOT_SATISFIED, SATISFIED],
        read=(cite_first_chunk,),
        synthesize=[ANSWER],
    )
    out = ask("What F1 do CRFs reach on chunking?", thread_id="thread-1", **SMALL)
    assert out["trace_id"] and (traces / f"{out['trace_id']}.jsonl").exists()
    records = load_trace(out["trace_id"], traces)
    root = assert_consistent_tree(records)
    assert root["name"] == "litloop" and root["inputs"]["question"] == "What F1 do CRFs reach on chunking?"
    by_name = {}
    for r in records:
        by_name.setdefault(r["name"], []).append(r)
    # nodes carry their round; the retriever runs their subquery
    assert [r["metadata"]["round"] for r in by_name["decompose"]] == [1, 2]
    assert {r["metadata"]["round"] for r in by_name["synthesize"]} == {2}
    retrieves = by_name["retrieve"]
    assert len(retrieves) == 4 and all(r["run_type"] == "retriever" for r in retrieves)
    assert [r["metadata"]["subquery"] for r in retrieves] == [r["inputs"]["query"] for r in retrieves]
    assert {r["metadata"]["round"] for r in retrieves} == {1, 2}
    # every LLM call is an llm run with model and token usage; the root sums them
    llm_runs = [r for r in records if r["run_type"] == "llm"]
    calls = sum(len(x.calls) for x in m.values())
    assert len(llm_runs) == calls == 2 + 2 + 3 + 1 + 1  # + the support judge of the answer's one claim
    assert all(r["metadata"]["token_usage"]["input_tokens"] > 0 for r in llm_runs)
    assert all(r["metadata"]["model"] for r in llm_runs)
    total = sum(r["metadata"]["token_usage"]["total_tokens"] for r in llm_runs)
    assert root["metadata"]["token_usage"]["total_tokens"] == total
    assert root["metadata"]["token_usage"]["llm_calls"] == calls
    assert out["usage"]["input_tokens"] + out["usage"]["output_tokens"] == total
    assert {r["metadata"].get("thread_id") for r in records} == {"thread-1"}
    # read runs per paper, with the LLM call under them
    reads = [r for r in records if r["name"].startswith("read ") and r["run_type"] == "chain"]
    assert len(reads) == 3 and all(r["metadata"]["paper_id"] == r["name"][5:] for r in reads)
    read_llm = [r for r in llm_runs if r["metadata"].get("paper_id")]
    assert {r["metadata"]["paper_id"] for r in read_llm} == {r["metadata"]["paper_id"] for r in reads}


def test_large_inputs_are_summarised_not_dumped(scripted, traces):
    scripted(decompose=numbered("crf"), verify=[SATISFIED], read=(cite_first_chunk,), synthesize=[ANSWER])
    out = ask("What F1 do CRFs reach on chunking?", **SMALL)
    records = load_trace(out["trace_id"], traces)
    search = next(r for r in records if r["name"] == "search")
    retrieved = search["outputs"]["retrieved"]
    assert retrieved and all(
        r["hits"]["_summary"] == "chunks" and "text" not in json.dumps(r["hits"]) for r in retrieved
    )
    verify = next(r for r in records if r["name"] == "verify")
    assert verify["inputs"]["pool"]["_summary"] == "pool" and verify["inputs"]["pool"]["count"] > 0
    retriever = next(r for r in records if r["name"] == "retrieve")
    assert retriever["outputs"]["documents"]["_summary"] == "chunks"
    # nothing in the file holds a whole chunk list
    text = (traces / f"{out['trace_id']}.jsonl").read_text()
    assert text.count("Simmer tomatoes") <= 3


def test_errors_recorded_on_the_failing_node(scripted, traces):
    # a read call that fails at the transport (after the client's retries) is recorded on its
    # LLM run and the node's recorded errors; a synthesis that raises fails the node and the root
    def read(messages):
        if "PAPER crf:" not in messages[-1].text:
            raise TimeoutError("read timed out")
        return cite_first_chunk(messages)

    scripted(
        decompose=numbered("crf"), verify=[SATISFIED], read=(read,), synthesize=[RuntimeError("synthesis exploded")]
    )
    with pytest.raises(RuntimeError, match="synthesis exploded"):
        ask("What F1 do CRFs reach on chunking?", **SMALL)
    [summary] = list_traces(traces)
    assert summary["status"] == "error"
    records = load_trace(summary["trace_id"], traces)
    root = assert_consistent_tree(records)
    assert "synthesis exploded" in root["error"]
    synth = next(r for r in records if r["name"] == "synthesize" and r["parent_run_id"] == root["id"])
    assert "synthesis exploded" in synth["error"]
    synth_llm = [r for r in records if r["run_type"] == "llm" and r["dotted_order"].startswith(synth["dotted_order"])]
    assert synth_llm and all("synthesis exploded" in r["error"] for r in synth_llm)
    read_node = next(r for r in records if r["name"] == "read_paper")
    assert read_node["error"] is None  # the node carried on
    assert {e["node"] for e in read_node["metadata"]["node_errors"]} == {"read"}
    read_llm = [
        r for r in records if r["run_type"] == "llm" and r["dotted_order"].startswith(read_node["dotted_order"])
    ]
    failed = {r["metadata"]["paper_id"] for r in read_llm if r["error"] and "read timed out" in r["error"]}
    assert failed == {r["metadata"]["paper_id"] for r in read_llm} - {"crf"} and len(failed) == 2
    assert all(r["error"] is None for r in read_llm if r["metadata"]["paper_id"] == "crf")
    for name in ("decompose", "search", "verify"):
        assert all(r["error"] is None for r in records if r["name"] == name)
    text = tree_text(records)
    assert "! " in text and "synthesis exploded" in text
    # a model call is shown as one, not by its client's class name
    assert "model call [llm]" in text and "Chat" not in text.replace("chat", "")


def test_one_root_per_question_and_list(scripted, traces):
    scripted(decompose=numbered("crf"), verify=(SATISFIED,), read=(cite_first_chunk,), synthesize=(ANSWER,))
    a = ask("What F1 do CRFs reach on chunking?", **SMALL)
    b = ask("Which tagger reaches 96.1 accuracy?", **SMALL)
    assert a["trace_id"] != b["trace_id"]
    listed = list_traces(traces)
    assert {t["trace_id"] for t in listed} == {a["trace_id"], b["trace_id"]}
    for t in listed:
        assert t["status"] == "ok" and t["total_tokens"] > 0 and t["duration_s"] > 0 and t["question"]
        assert_consistent_tree(load_trace(t["trace_id"], traces))
    assert load_trace(a["trace_id"][-12:], traces)[0]["trace_id"] == a["trace_id"]  # end of the id
    assert load_trace("last", traces)[0]["trace_id"] in (a["trace_id"], b["trace_id"])


def test_api_keys_are_redacted(scripted, traces, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "my-very-secret-value-123")

    def leaky(messages):  # a reply that echoes secrets (an extra key: traced, not used)
        return {**ANSWER(messages), "note": "using sk-abcdefghijklmnopqrstuvwxyz123456 and my-very-secret-value-123"}

    scripted(decompose=numbered("crf"), verify=[SATISFIED], read=(cite_first_chunk,), synthesize=[leaky])
    out = ask("What F1 do CRFs reach? api_key=hunter2hunter2", **SMALL)
    text = (traces / f"{out['trace_id']}.jsonl").read_text()
    assert "sk-abcdefghijklmnopqrstuvwxyz123456" not in text
    assert "my-very-secret-value-123" not in text and "hunter2hunter2" not in text
    assert "[REDACTED]" in text


def test_tracing_off(scripted, traces, monkeypatch):
    monkeypatch.setenv("LITLOOP_TRACING__ENABLED", "false")
    from agent.settings import default_settings

    default_settings.cache_clear()
    scripted(decompose=numbered("crf"), verify=[SATISFIED], read=(cite_first_chunk,), synthesize=[ANSWER])
    out = ask("What F1 do CRFs reach?", **SMALL)
    assert out["trace_id"] is None and not traces.exists()


def test_traced_run_opens_no_network_socket(scripted, traces, connections):
    """With LANGSMITH_TRACING unset nothing tries the network: only loopback or local sockets
    (`connections` and the suite's socket audit: tests/conftest.py)."""
    scripted(decompose=numbered("crf"), verify=[SATISFIED], read=(cite_first_chunk,), synthesize=[ANSWER])
    out = ask("What F1 do CRFs reach?", **SMALL)
    assert (traces / f"{out['trace_id']}.jsonl").exists()
    assert connections.remote() == []


def test_tree_rows_hide_plumbing(scripted, traces):
    scripted(decompose=numbered("crf"), verify=[SATISFIED], read=(cite_first_chunk,), synthesize=[ANSWER])
    out = ask("What F1 do CRFs reach?", **SMALL)
    records = load_trace(out["trace_id"], traces)
    rows = tree_rows(records)
    names = [(d, r["name"]) for d, r in rows]
    assert names[0] == (0, "litloop")
    assert (1, "decompose") in names and (1, "synthesize") in names
    depth_of_llm = {d for d, r in rows if r["run_type"] == "llm" and r["metadata"].get("langgraph_node") == "decompose"}
    assert depth_of_llm == {2}  # directly under its node once the plumbing is hidden
    assert len(tree_rows(records, everything=True)) == len(records)
    assert summary_of(records, out["trace_id"])["status"] == "ok"


def test_openai_compatible_endpoint_traced_with_model_usage_cost_and_no_remote_socket(
    graph_index, traces, connections, monkeypatch
):
    """The real ChatOpenAI path against the tests' own stub server on loopback."""
    from agent.settings import default_settings
    from tests.openai_stub import OpenAIStub

    with OpenAIStub(model="stub-model") as stub:
        monkeypatch.setenv("LITLOOP_INDEX", str(graph_index))
        monkeypatch.setenv("LITLOOP_LLM__BASE_URL", stub.base_url)
        monkeypatch.setenv("LITLOOP_LLM__MODEL", "stub-model")
        monkeypatch.setenv("LITLOOP_LLM__API_KEY", "sk-test-abcdefghijklmnop1234")
        monkeypatch.setenv("LITLOOP_TRACING__PRICES", '{"stub-model": [1.0, 2.0]}')
        default_settings.cache_clear()
        try:
            out = ask("What F1 do CRFs reach on chunking?", **SMALL)
        finally:
            default_settings.cache_clear()
    assert out["answer"]["citations"]
    records = load_trace(out["trace_id"], traces)
    assert_consistent_tree(records)
    llm_runs = [r for r in records if r["run_type"] == "llm"]
    assert len(llm_runs) == len(stub.requests) and all(r["name"] == "ChatOpenAI" for r in llm_runs)
    for r in llm_runs:
        usage = r["metadata"]["token_usage"]
        assert r["metadata"]["model"] == "stub-model" and usage["input_tokens"] > 0
        assert r["metadata"]["cost_estimate_usd"] == pytest.approx(
            (usage["input_tokens"] * 1.0 + usage["output_tokens"] * 2.0) / 1e6
        )
        assert r["outputs"]["text"].startswith("{") or r["outputs"]["text"] in ("yes", "A", "B")  # one-token probes
    root = records[0]
    assert root["metadata"]["cost_estimate_usd"] == pytest.approx(
        sum(r["metadata"]["cost_estimate_usd"] for r in llm_runs)
    )
    assert "sk-test-abcdefghijklmnop1234" not in (traces / f"{out['trace_id']}.jsonl").read_text()
    assert connections and connections.remote() == []  # the stub was called over loopback, nothing else
