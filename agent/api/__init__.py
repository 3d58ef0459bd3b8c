"""The core as the interfaces see it: `ask()` runs one question through the graph (for the CLI,
the chats, the server and notebooks); `agent.api.papers` gives the records of papers and the
paper-text gate; `agent.api.prompt` renders the prompts a node would send."""

from __future__ import annotations

import hashlib
import logging
import re
import time
import uuid
from collections.abc import Callable
from typing import Any, Literal

from agent.context import Context, make_context
from agent.records.submission import submission_record

Event = dict[str, Any]


# Below this many threads for the embedded model, the automatic preset is `local-fast` (about
# 83 s per question on 2 cores against 159 s for `local`: docs/benchmarks.md).
LOCAL_FULL_MIN_THREADS = 8


def cpu_preset(threads: int) -> str:
    """The embedded model's preset for a CPU with this many threads."""
    return "local" if threads >= LOCAL_FULL_MIN_THREADS else "local-fast"


def default_preset() -> str:
    """`paper` with an endpoint; with the embedded CPU model (no endpoint configured) `local`
    on 8 or more threads, else `local-fast`."""
    import os

    from agent.llm import backend_of
    from agent.settings import default_settings

    llm = default_settings().llm
    if backend_of(llm) != "local":
        return "paper"
    return cpu_preset(llm.local_threads or os.cpu_count() or 1)


def build_graph(checkpointer=None, context_schema: type[Context] = Context):
    """The agent's graph compiled with `checkpointer` (the chats' and the server's stores), its
    served context schema `context_schema` (agent/serve/graph.py); see `agent.graph`."""
    from agent.graph import build_graph as compiled

    return compiled(checkpointer=checkpointer, context_schema=context_schema)


def theme_heading(n: int, theme: dict[str, Any]) -> str:
    """The line that opens theme `n` (from 1) of an overview answer, as the answer wrote it."""
    from agent.answer.overview import theme_heading as heading

    return heading(n, theme)


def make_run_context(preset: str | None = None, **overrides: Any) -> Context:
    """The run's context; corpus names are checked here, before any model or index is touched
    (an unknown name is a ValueError that lists the registered ones)."""
    corpora = overrides.get("corpora")
    if corpora:
        from tools.registry import get_corpus

        if overrides.get("index"):
            raise ValueError("give either an index or corpora, not both")
        for name in corpora:
            get_corpus(name)
    return make_context(preset or default_preset(), **overrides)


def paper_titles(ctx: Context, ids: Any) -> dict[str, str]:
    """The titles a progress event names its papers by (`agent.records.progress` shows them in
    place of the ids): each paper's title as an answer shows it; none where the index cannot say."""
    from agent.answer.titles import title_only
    from agent.runtime.resources import index_for

    out: dict[str, str] = {}
    try:
        idx = index_for(ctx)
        for pid in dict.fromkeys(ids or []):
            paper = idx.papers.get(pid)
            if paper is not None and paper.title:
                out[pid] = title_only(paper.title)
    except Exception:  # a progress line never fails a run: the ids stand
        logging.getLogger(__name__).debug("no titles for the progress line", exc_info=True)
        return out
    return out


def events_of(node: str, update: dict[str, Any], rounds: int, ctx: Context) -> list[Event]:
    """Progress events a user sees while the graph runs (chat UIs and `ask` on stderr); the
    papers they name come with their titles (`titles`)."""
    if node == "decompose":
        return [
            {
                "node": node,
                "round": rounds,
                "max_rounds": ctx.max_rounds,
                "subqueries": update.get("new_subqueries", []),
            }
        ]
    if node == "search":
        found = {p for r in update.get("retrieved", []) for p in r["papers"]}
        return [{"node": node, "papers_found": len(found)}]
    if node == "rerank":
        return [{"node": node, "pooled_chunks": len(update.get("pool", {}))}]
    if node == "verify" and update.get("verdict"):
        v = update["verdict"]
        return [
            {
                "node": node,
                "sufficient": v.get("sufficient"),
                "evidence_papers": v.get("evidence_papers", []),
                "titles": paper_titles(ctx, v.get("evidence_papers", [])),
                "missing": v.get("missing", ""),
                "llm": v.get("llm", True),
            }
        ]
    if node == "expand_neighbors":
        seeds = update.get("seeds", [])
        return [
            {
                "node": node,
                "seeds": seeds,
                "titles": paper_titles(ctx, seeds),
                "candidates": len(update.get("candidates", [])),
            }
        ]
    if node == "read_citations" and not update.get("readings"):
        return []  # nothing cites the work: the run searches as usual
    if node in ("read_paper", "read_citations"):  # the citing papers' sentences are a reading too
        readings = update.get("readings", [])
        relevant = [r["paper_id"] for r in readings if r.get("relevant")]
        return [
            {
                "node": "read_paper",
                "papers_read": len(readings),
                "relevant": relevant,
                "titles": paper_titles(ctx, relevant),
            }
        ]
    if node == "synthesize":
        return [{"node": node, "answer": update.get("answer", {})}]
    return []


def draft_event(chunk: Any) -> Event | None:
    """The progress event of a custom-stream chunk that carries the answer's words so far (a
    drafting call's, `agent.runtime.calls.draft_writer`), or None for any other chunk."""
    if not isinstance(chunk, dict) or "draft" not in chunk:
        return None
    return {"node": "draft", "text": chunk["draft"], "role": chunk.get("role")}


_TASK_NOTE = re.compile(r"During task with name '([^']+)'")


def aborted_state(state: dict[str, Any], exc: BaseException) -> dict[str, Any]:
    """The state of a run that an endpoint error stopped (a wrong key, an unknown model: errors
    that `structured_call` raises): what the run had so far, a failed answer, the error."""
    from agent.answer.status import failed_answer
    from agent.llm import describe_error

    notes = " ".join(getattr(exc, "__notes__", []))
    node = m.group(1) if (m := _TASK_NOTE.search(notes)) else "graph"
    error = {"node": node, "error": describe_error(exc), "kind": "call", "raw": ""}
    reason = f"the run stopped in {node}: {error['error']}"
    return {**state, "answer": failed_answer(reason), "errors": [*state.get("errors", []), error]}


def ask(
    question: str,
    *,
    preset: str | None = None,
    index: str | None = None,
    query_id: str | None = None,
    answer_types: list[str] | None = None,
    options: dict[str, str] | None = None,
    table_schema: list[dict[str, Any]] | None = None,
    on_event: Callable[[Event], None] | None = None,
    graph=None,
    thread_id: str | None = None,
    config: dict[str, Any] | None = None,
    durability: Literal["sync", "async", "exit"] | None = None,
    **context_overrides: Any,
) -> dict[str, Any]:
    """Answer `question`; returns the final state's answer, the submission record and the run's
    usage. `on_event` receives progress events as nodes finish, and with the context's
    `stream_drafts` the answer's words while the model writes them (`{"node": "draft", "text":
    words so far}`, unchecked: the final answer replaces them). `durability` is LangGraph's, for
    a graph with a checkpointer (None: its default, a checkpoint after every step)."""
    from agent.graph import graph as default_graph
    from agent.llm import endpoint_watch, is_endpoint_error

    if not question or not question.strip():
        raise ValueError("the question is empty")
    graph = graph or default_graph
    ctx = make_run_context(preset, index=index, **context_overrides)
    qid = query_id or "q_" + hashlib.sha1(question.encode()).hexdigest()[:12]
    inputs: dict[str, Any] = {"question": question, "query_id": qid, "answer_types": answer_types or ["freeform"]}
    if options:
        inputs["options"] = options
    if table_schema:
        inputs["table_schema"] = table_schema
    run_config: dict[str, Any] = dict(config or {})
    run_config.setdefault("configurable", {})["thread_id"] = thread_id or str(uuid.uuid4())
    run_config.setdefault("metadata", {}).update({"preset": ctx.preset, "query_id": qid})
    # a local run tree per question unless LITLOOP_TRACING__ENABLED=false
    from agent.tracing.tracer import attach_tracer

    run_config, tracer = attach_tracer(run_config)
    state: dict[str, Any] = dict(inputs)
    rounds = 0
    started = time.perf_counter()
    with endpoint_watch():
        try:
            modes = ["updates", "values", *(["custom"] if ctx.stream_drafts else [])]
            for mode, chunk in graph.stream(
                inputs, config=run_config, context=ctx, stream_mode=modes, durability=durability
            ):
                if mode == "values":
                    state = chunk
                    continue
                if mode == "custom":
                    if on_event and (draft := draft_event(chunk)) is not None:
                        on_event(draft)
                    continue
                for node, update in chunk.items():
                    rounds += node == "decompose"
                    if on_event and isinstance(update, dict):
                        for ev in events_of(node, update, rounds, ctx):
                            on_event(ev)
        except Exception as exc:
            if not is_endpoint_error(exc):
                raise
            state = aborted_state(state, exc)
            if on_event:
                on_event({"node": "synthesize", "answer": state["answer"]})
    return result_of(
        state,
        question=question,
        query_id=qid,
        preset=ctx.preset,
        answer_types=inputs["answer_types"],
        seconds=time.perf_counter() - started,
        thread_id=run_config["configurable"]["thread_id"],
        trace_id=tracer.trace_id if tracer is not None else None,
    )


def result_of(
    state: dict[str, Any],
    *,
    question: str,
    query_id: str,
    preset: str,
    answer_types: list[str] | None = None,
    seconds: float = 0.0,
    thread_id: str | None = None,
    trace_id: str | None = None,
) -> dict[str, Any]:
    """What a run returns, from its final state: `ask` returns it, and a served run's final
    values become the same record (`agent.records.models.ask_record` then serialises either)."""
    answer = state.get("answer") or {}
    errors = state.get("errors", [])
    return {
        "query_id": query_id,
        "question": question,
        "preset": preset,
        # ok | partial | failed (agent.answer.status.answer_status); `errors` says what failed
        "status": answer.get("status") or ("partial" if errors else "ok"),
        "answer": answer,
        "submission": submission_record(query_id, answer, answer_types or ["freeform"]),
        "subqueries": state.get("subqueries", []),
        "rounds": state.get("round", 0),
        "candidates": state.get("candidates", []),
        # what the method did: the evidence pool (hits), Relate's seeds, the fused A/B ranking
        "pool": state.get("pool", {}),
        "seeds": state.get("seeds", []),
        "ranking": state.get("ranking", []),
        "verdict": state.get("verdict", {}),
        "readings": state.get("readings", []),
        "errors": errors,
        "usage": {**state.get("usage", {}), "seconds_total": seconds},
        "thread_id": thread_id,
        "trace_id": trace_id,
    }
