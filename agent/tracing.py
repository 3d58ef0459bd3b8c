"""LangSmith-style run trees of every agent run, written locally. SEE: DESIGN.md section 8.

`RunTreeTracer` is a LangChain `BaseTracer`: LangChain and LangGraph call it for the graph, every
node, every LLM call and every retriever or tool step, and it appends one JSON record per run, when
the run ends, to `<traces dir>/<trace_id>.jsonl`. The fields are LangSmith's: `id`, `trace_id`,
`parent_run_id`, `dotted_order`, `name`, `run_type` (`chain`, `llm`, `tool`, `retriever`),
`start_time`, `end_time`, `inputs`, `outputs`, `error`, `tags`, `metadata`. Metadata adds `round`,
`subquery`, `model`, `token_usage` (an LLM call's own, or the sum over a run's subtree),
`cost_estimate_usd` and `thread_id`; a node that recorded failures in the state without raising
carries them as `node_errors`.

What is written is summarised and redacted (`summarise`): chunk lists, the evidence pool and the
per-subquery retrieval results become counts, paper counts and the top ids; strings are cut at
`tracing.max_field_chars`; API keys are masked by pattern and by value. Nothing here opens a
socket: sending runs to LangSmith is LangChain's own tracer, active only when the user sets
`LANGSMITH_TRACING=true` (and a key).

Reading: `list_traces`, `load_trace`, `tree_rows` serve `litloop trace`, the chats and tests.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from uuid import UUID

from langchain_core.tracers.base import BaseTracer

if TYPE_CHECKING:
    from langchain_core.tracers.schemas import Run

    from agent.settings import Settings, TracingSettings

log = logging.getLogger(__name__)

RECORD_FIELDS = ("id", "trace_id", "parent_run_id", "dotted_order", "name", "run_type", "start_time",
                 "end_time", "inputs", "outputs", "error", "tags", "metadata")
REDACTED = "[REDACTED]"
# Dict keys whose values are secrets whatever they look like.
_SECRET_KEY = re.compile(r"(?i)(api[_-]?key|access[_-]?token|secret|password|authorization|credential)")
# Environment variables whose values are masked verbatim wherever they appear.
SECRET_ENV = ("OPENAI_API_KEY", "AZURE_OPENAI_API_KEY", "LANGSMITH_API_KEY", "LANGCHAIN_API_KEY",
              "LITLOOP_LLM__API_KEY", "LITLOOP_RERANK__API_KEY", "HF_TOKEN", "ANTHROPIC_API_KEY")
# Metadata LangGraph and LangChain add to every run that a reader never needs.
_NOISY_METADATA = ("langgraph_triggers", "langgraph_path", "langgraph_checkpoint_ns", "checkpoint_ns",
                   "litloop_structured_output", "ls_integration", "__pregel_task_id")
_LIST_ITEMS = 30  # longer lists keep their first items and a count
_TOP = 10  # ids kept in a summary of chunks or of the pool
_DEPTH = 8


# ---------------------------------------------------------------------------------------------
# Summarising and redacting


@dataclass
class Summariser:
    """Turns anything LangChain hands a tracer into small, JSON-ready, secret-free data."""

    max_chars: int = 4000
    patterns: Sequence[str] = ()
    secrets: Sequence[str] = ()
    _compiled: list[re.Pattern] = field(default_factory=list, init=False, repr=False)

    def __post_init__(self) -> None:
        self._compiled = []
        for p in self.patterns:
            try:
                self._compiled.append(re.compile(p))
            except re.error as exc:
                log.warning("ignoring tracing redact pattern %r: %s", p, exc)
        # longest first, so a key that contains another is masked whole
        self.secrets = sorted({s for s in self.secrets if s and len(s) >= 6}, key=len, reverse=True)

    def text(self, s: str, limit: int | None = None) -> str:
        s = self.redact(s)
        limit = self.max_chars if limit is None else limit
        if limit and len(s) > limit:
            return f"{s[:limit]}… [cut: {len(s)} chars]"
        return s

    def redact(self, s: str) -> str:
        for secret in self.secrets:
            s = s.replace(secret, REDACTED)
        for pattern in self._compiled:
            s = pattern.sub(REDACTED, s)
        return s

    def __call__(self, value: Any, depth: int = 0) -> Any:
        if value is None or isinstance(value, (bool, int, float)):
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, (UUID, Path)):
            return str(value)
        if isinstance(value, datetime):
            return value.isoformat()
        if depth >= _DEPTH:
            return self.text(repr(value), 200)
        if isinstance(value, Mapping):
            return self._mapping(value, depth)
        if isinstance(value, (list, tuple, set, frozenset)):
            return self._sequence(list(value), depth)
        return self._object(value, depth)

    def _mapping(self, value: Mapping, depth: int) -> Any:
        if is_chunk(value):
            return self.chunk(value)
        if value and all(is_chunk(v) for v in value.values()):
            return self.pool(list(value.values()))
        out: dict[str, Any] = {}
        for k, v in value.items():
            key = str(k)
            if _SECRET_KEY.search(key) and isinstance(v, str) and v:
                out[key] = REDACTED
            elif key == "retrieved" and isinstance(v, list):
                out[key] = [self.retrieval(r) for r in v[:_LIST_ITEMS]]
            else:
                out[key] = self(v, depth + 1)
        return out

    def _sequence(self, items: list, depth: int) -> Any:
        items = [_document_dict(x) for x in items]
        if len(items) > 3 and all(is_chunk(x) for x in items):
            return self.chunks(items)
        if items and _is_message(items[0]):
            return [self.message(m) for m in items[:_LIST_ITEMS]]
        out = [self(x, depth + 1) for x in items[:_LIST_ITEMS]]
        if len(items) > _LIST_ITEMS:
            out.append({"_more": len(items) - _LIST_ITEMS})
        return out

    def _object(self, value: Any, depth: int) -> Any:
        if _is_message(value):
            return self.message(value)
        if type(value).__name__ == "Document":
            return self({"page_content": value.page_content, "metadata": value.metadata}, depth)
        if hasattr(value, "model_dump"):
            try:
                return self(value.model_dump(mode="json"), depth + 1)
            except Exception:  # noqa: BLE001 - a tracer must never break the run
                pass
        if hasattr(value, "to_dict"):
            try:
                return self(value.to_dict(), depth + 1)
            except Exception:  # noqa: BLE001
                pass
        return self.text(repr(value), 500)

    # -- the shapes litloop passes around ----------------------------------------------------

    def chunk(self, c: Mapping) -> dict[str, Any]:
        keep = {k: self(c[k], _DEPTH - 2) for k in ("chunk_id", "paper_id", "kind", "score", "locator", "source")
                if k in c}
        keep["text"] = self.text(" ".join(str(c.get("text", "")).split()), min(self.max_chars or 400, 400))
        return keep

    def chunks(self, items: list[Mapping]) -> dict[str, Any]:
        papers = list(dict.fromkeys(str(c.get("paper_id")) for c in items))
        return {"_summary": "chunks", "count": len(items), "papers": len(papers),
                "chunk_ids": [str(c.get("chunk_id")) for c in items[:_TOP]]}

    def pool(self, items: list[Mapping]) -> dict[str, Any]:
        best = sorted(items, key=lambda c: (-float(c.get("score") or 0), str(c.get("chunk_id"))))[:_TOP]
        return {"_summary": "pool", "count": len(items),
                "papers": len({str(c.get("paper_id")) for c in items}),
                "top": [{"chunk_id": c.get("chunk_id"), "paper_id": c.get("paper_id"),
                         "score": round(float(c.get("score") or 0), 6)} for c in best]}

    def retrieval(self, r: Any) -> Any:
        if not isinstance(r, Mapping):
            return self(r, 1)
        return {"subquery": self.text(str(r.get("subquery", ""))),
                "prf_query": self.text(str(r.get("prf_query") or ""), 300) or None,
                "papers": len(r.get("papers", [])), "top_papers": [str(p) for p in r.get("papers", [])[:_TOP]],
                "hits": self.chunks(list(r.get("hits", [])))}

    def message(self, m: Any) -> dict[str, Any]:
        """A chat message as {role, content} (LangChain objects or their `dumpd` form)."""
        if isinstance(m, Mapping) and m.get("lc") and isinstance(m.get("kwargs"), Mapping):
            kw = m["kwargs"]
            role = kw.get("type") or str((m.get("id") or ["?"])[-1]).replace("Message", "").lower()
            content, tool_calls = kw.get("content", ""), kw.get("tool_calls")
        elif isinstance(m, Mapping):
            role, content, tool_calls = m.get("type") or m.get("role"), m.get("content", ""), m.get("tool_calls")
        else:
            role, content, tool_calls = getattr(m, "type", "?"), getattr(m, "content", ""), getattr(m, "tool_calls", None)
        out: dict[str, Any] = {"role": role, "content": self(content, _DEPTH - 2)}
        if tool_calls:
            out["tool_calls"] = self(tool_calls, _DEPTH - 3)
        return out


def _document_dict(x: Any) -> Any:
    """A LangChain Document as a chunk-shaped dict (retriever outputs)."""
    if type(x).__name__ == "Document" and hasattr(x, "page_content"):
        return {**(x.metadata or {}), "text": x.page_content, "chunk_id": (x.metadata or {}).get("chunk_id", x.id)}
    return x


def is_chunk(x: Any) -> bool:
    """A chunk dict (with its text) or a hit (chunk id, paper id, score)."""
    return isinstance(x, Mapping) and "chunk_id" in x and ("text" in x or ("paper_id" in x and "score" in x))


def _is_message(x: Any) -> bool:
    if isinstance(x, Mapping):
        return bool(x.get("lc")) and "Message" in str((x.get("id") or [""])[-1])
    return hasattr(x, "content") and hasattr(x, "type") and type(x).__name__.endswith("Message")


def known_secrets(settings: Settings | None = None) -> list[str]:
    """Key values this process knows about, masked verbatim in traces."""
    values = [os.environ.get(v, "") for v in SECRET_ENV]
    if settings is not None:
        for secret in (settings.llm.api_key, getattr(settings.rerank, "api_key", None)):
            if secret is not None:
                values.append(secret.get_secret_value() if hasattr(secret, "get_secret_value") else str(secret))
    return [v for v in values if v]


# ---------------------------------------------------------------------------------------------
# The tracer


def _run_type(run: Run) -> str:
    if run.run_type in ("llm", "chat_model"):
        return "llm"
    return run.run_type if run.run_type in ("tool", "retriever") else "chain"


def usage_of_llm_run(run: Run) -> dict[str, int]:
    """Token usage an LLM run reported: the message's usage_metadata, else llm_output.token_usage."""
    outputs = run.outputs or {}
    for batch in outputs.get("generations") or []:
        for gen in batch or []:
            msg = gen.get("message") if isinstance(gen, Mapping) else None
            usage = None
            if isinstance(msg, Mapping):
                usage = msg.get("usage_metadata") or (msg.get("kwargs") or {}).get("usage_metadata")
            elif msg is not None:
                usage = getattr(msg, "usage_metadata", None)
            if usage:
                return {"input_tokens": int(usage.get("input_tokens") or 0),
                        "output_tokens": int(usage.get("output_tokens") or 0)}
    tu = (outputs.get("llm_output") or {}).get("token_usage") or {}
    if tu:
        return {"input_tokens": int(tu.get("prompt_tokens") or 0), "output_tokens": int(tu.get("completion_tokens") or 0)}
    return {"input_tokens": 0, "output_tokens": 0}


def _llm_output(run: Run, summarise: Summariser) -> dict[str, Any]:
    outputs = run.outputs or {}
    gens = [g for batch in outputs.get("generations") or [] for g in batch or []]
    if not gens:
        return summarise(outputs)
    gen = gens[0] if isinstance(gens[0], Mapping) else {}
    msg = gen.get("message") or {}
    kw = msg.get("kwargs", msg) if isinstance(msg, Mapping) else {}
    out: dict[str, Any] = {"text": summarise.text(str(gen.get("text") or kw.get("content") or ""))}
    if kw.get("tool_calls"):
        out["tool_calls"] = summarise(kw["tool_calls"])
    finish = (gen.get("generation_info") or {}).get("finish_reason") or (kw.get("response_metadata") or {}).get("finish_reason")
    if finish:
        out["finish_reason"] = finish
    return out


def _model_of(run: Run) -> str | None:
    meta = (run.extra or {}).get("metadata") or {}
    params = (run.extra or {}).get("invocation_params") or {}
    return meta.get("ls_model_name") or params.get("model") or params.get("model_name") or params.get("_type") or run.name


class RunTreeTracer(BaseTracer):
    """Appends one record per finished run to `<directory>/<trace_id>.jsonl` (see module doc).

    One instance may serve several questions (each graph invocation is its own trace);
    `trace_ids` lists the roots seen, `trace_id` the latest.
    """

    name: str = "litloop_run_tree"

    def __init__(self, directory: Path | str, settings: TracingSettings | None = None, *,
                 thread_id: str | None = None, secrets: Sequence[str] = ()) -> None:
        super().__init__(_schema_format="original+chat")
        if settings is None:
            from agent.settings import TracingSettings

            settings = TracingSettings()
        self.directory = Path(directory)
        self.settings = settings
        self.thread_id = thread_id
        self.summarise = Summariser(settings.max_field_chars, settings.redact_patterns, secrets)
        self.trace_ids: list[str] = []
        self._lock = threading.Lock()
        self._parent: dict[UUID, UUID | None] = {}
        self._derived: dict[UUID, dict[str, Any]] = {}  # round/subquery, inherited by children
        self._usage: dict[UUID, dict[str, float]] = {}
        self._roots: set[UUID] = set()

    @property
    def trace_id(self) -> str | None:
        return self.trace_ids[-1] if self.trace_ids else None

    def path_for(self, trace_id: str) -> Path:
        return self.directory / f"{trace_id}.jsonl"

    # -- BaseTracer hooks ----------------------------------------------------------------------

    def _persist_run(self, run: Run) -> None:  # records are written per run in _on_run_update
        pass

    def _on_run_create(self, run: Run) -> None:
        with self._lock:
            self._parent[run.id] = run.parent_run_id
            if run.parent_run_id is None:
                self._roots.add(run.id)
                self.trace_ids.append(str(run.id))
            inherited = dict(self._derived.get(run.parent_run_id, {})) if run.parent_run_id else {}
            if self._is_node(run) and isinstance(run.inputs, Mapping):
                rounds = int(run.inputs.get("round") or 0)
                inherited["round"] = rounds + 1 if run.name == "decompose" else rounds
            meta = (run.extra or {}).get("metadata") or {}
            if meta.get("subquery"):
                inherited["subquery"] = meta["subquery"]
            self._derived[run.id] = inherited

    def _on_run_update(self, run: Run) -> None:
        try:
            record = self._record(run)
            line = json.dumps(record, ensure_ascii=False, default=str)
        except Exception:  # noqa: BLE001 - a tracer must never break the run it observes
            log.exception("could not build the trace record of run %s (%s)", run.id, run.name)
            return
        with self._lock:
            self.directory.mkdir(parents=True, exist_ok=True)
            with self.path_for(str(run.trace_id)).open("a", encoding="utf-8") as f:
                f.write(line + "\n")
            if run.parent_run_id is None:  # the question is done: forget its bookkeeping
                self._forget(run.trace_id)

    # -- records -------------------------------------------------------------------------------

    def _is_node(self, run: Run) -> bool:
        meta = (run.extra or {}).get("metadata") or {}
        return run.parent_run_id in self._roots and meta.get("langgraph_node") == run.name

    def _record(self, run: Run) -> dict[str, Any]:
        s = self.summarise
        kind = _run_type(run)
        raw_meta = dict((run.extra or {}).get("metadata") or {})
        meta = {k: v for k, v in raw_meta.items() if k not in _NOISY_METADATA}
        with self._lock:
            meta.update(self._derived.get(run.id, {}))
            own = self._usage.get(run.id, {})
            if kind == "llm":
                own = self._add_llm_usage(run)
        if kind == "llm":
            meta["model"] = _model_of(run)
        thread = raw_meta.get("thread_id") or self.thread_id
        if thread:
            meta["thread_id"] = thread
        if own.get("input_tokens") or own.get("output_tokens"):
            meta["token_usage"] = {"input_tokens": int(own.get("input_tokens", 0)),
                                   "output_tokens": int(own.get("output_tokens", 0)),
                                   "total_tokens": int(own.get("input_tokens", 0) + own.get("output_tokens", 0)),
                                   "llm_calls": int(own.get("llm_calls", 0))}
        if "cost" in own:
            meta["cost_estimate_usd"] = round(own["cost"], 6)
        outputs = run.outputs
        if self._is_node(run) and isinstance(outputs, Mapping) and outputs.get("errors"):
            meta["node_errors"] = s(outputs["errors"])
        if run.parent_run_id is None and isinstance(outputs, Mapping) and "round" in outputs:
            meta["round"] = outputs["round"]
        if kind == "llm":
            inputs = {"messages": s(_flatten_messages(run.inputs))} if "messages" in (run.inputs or {}) else s(run.inputs)
            out = _llm_output(run, s) if outputs else None
        else:
            inputs, out = s(run.inputs), s(outputs) if outputs is not None else None
        return {
            "id": str(run.id),
            "trace_id": str(run.trace_id),
            "parent_run_id": str(run.parent_run_id) if run.parent_run_id else None,
            "dotted_order": run.dotted_order,
            "name": run.name,
            "run_type": kind,
            "start_time": run.start_time.isoformat() if run.start_time else None,
            "end_time": run.end_time.isoformat() if run.end_time else None,
            "inputs": inputs,
            "outputs": out,
            "error": s.text(run.error) if run.error else None,
            "tags": list(run.tags or []),
            "metadata": s(meta),
        }

    def _add_llm_usage(self, run: Run) -> dict[str, float]:
        """This LLM call's usage and cost, added to every ancestor's running total (lock held)."""
        usage: dict[str, float] = {**usage_of_llm_run(run), "llm_calls": 1}
        cost = self._cost(run, usage)
        if cost is not None:
            usage["cost"] = cost
        node: UUID | None = run.id
        while node is not None:
            total = self._usage.setdefault(node, {})
            for k, v in usage.items():
                total[k] = total.get(k, 0) + v
            node = self._parent.get(node)
        return usage

    def _cost(self, run: Run, usage: dict[str, float]) -> float | None:
        meta = (run.extra or {}).get("metadata") or {}
        if meta.get("litloop_backend") == "local":
            return 0.0
        model = _model_of(run)
        prices = self.settings.prices.get(model or "")
        if prices is None and model:  # dated snapshots: gpt-4o-mini-2024-07-18 -> gpt-4o-mini
            prefixes = [k for k in self.settings.prices if model.startswith(k + "-")]
            prices = self.settings.prices[max(prefixes, key=len)] if prefixes else None
        if not prices or len(prices) < 2:
            return None
        return (usage["input_tokens"] * prices[0] + usage["output_tokens"] * prices[1]) / 1e6

    def _forget(self, trace_id: Any) -> None:
        ids = [r for r, _ in self.order_map.items() if str(self.order_map[r][0]) == str(trace_id)]
        for r in ids:
            self._parent.pop(r, None)
            self._derived.pop(r, None)
            self._usage.pop(r, None)
            self._roots.discard(r)


def _flatten_messages(inputs: Mapping) -> list:
    msgs = inputs.get("messages") or []
    if msgs and isinstance(msgs[0], list):  # one batch per prompt; litloop sends one
        return [m for batch in msgs for m in batch]
    return list(msgs)


def make_tracer(settings: Settings | None = None, *, thread_id: str | None = None) -> RunTreeTracer | None:
    """The tracer for one run, or None when tracing is off (LITLOOP_TRACING__ENABLED=false)."""
    if settings is None:
        from agent.settings import default_settings

        settings = default_settings()
    if not settings.tracing.enabled:
        return None
    return RunTreeTracer(settings.traces_dir, settings.tracing, thread_id=thread_id, secrets=known_secrets(settings))


def attach_tracer(config: dict[str, Any]) -> tuple[dict[str, Any], RunTreeTracer | None]:
    """The run config with a run-tree tracer in its callbacks, and that tracer: the caller's own
    when the config already has one (a chat that needs the trace id even when the run fails),
    else a new one, or none when tracing is off."""
    callbacks = config.get("callbacks")
    handlers = callbacks if isinstance(callbacks, list) else getattr(callbacks, "handlers", None) or []
    existing = next((h for h in handlers if isinstance(h, RunTreeTracer)), None)
    if existing is not None:
        return config, existing
    tracer = make_tracer(thread_id=(config.get("configurable") or {}).get("thread_id"))
    return (with_tracer(config, tracer), tracer) if tracer is not None else (config, None)


def with_tracer(config: dict[str, Any], tracer: Any) -> dict[str, Any]:
    """`config` with `tracer` added to its callbacks (a list or a callback manager)."""
    callbacks = config.get("callbacks")
    if callbacks is None:
        callbacks = [tracer]
    elif isinstance(callbacks, list):
        callbacks = [*callbacks, tracer]
    else:  # a BaseCallbackManager
        callbacks = callbacks.copy()
        callbacks.add_handler(tracer, inherit=True)
    return {**config, "callbacks": callbacks}


def langsmith_status() -> Literal["off", "on", "no key"]:
    """Whether LangChain will also send runs to LangSmith (its own env switch, never ours)."""
    flag = (os.environ.get("LANGSMITH_TRACING") or os.environ.get("LANGCHAIN_TRACING_V2") or "").lower()
    if flag not in ("true", "1", "yes"):
        return "off"
    return "on" if (os.environ.get("LANGSMITH_API_KEY") or os.environ.get("LANGCHAIN_API_KEY")) else "no key"


# ---------------------------------------------------------------------------------------------
# Steps inside a node


@dataclass
class Step:
    """A child run opened by `trace_step`; set `outputs` before the block ends."""

    outputs: Any = None


@contextmanager
def trace_step(name: str, *, run_type: Literal["chain", "retriever", "tool"] = "chain",
               inputs: Any = None, metadata: dict[str, Any] | None = None) -> Iterator[Step]:
    """Open a child run of the current run (a node): retrieval per subquery, reading per paper.

    Goes through LangChain's callbacks, so the local tracer and (when the user enabled it)
    LangSmith both see it; LLM calls made inside the block become its children. `metadata`
    (e.g. the subquery) is inherited by those children. A no-op outside a traced run.
    """
    from langchain_core.runnables.config import (
        ensure_config,
        get_callback_manager_for_config,
        patch_config,
        var_child_runnable_config,
    )

    config = ensure_config()
    manager = get_callback_manager_for_config(config)
    if metadata:
        manager.add_metadata(metadata, inherit=True)
    if run_type == "retriever":
        run = manager.on_retriever_start(None, str(inputs), name=name)
    elif run_type == "tool":
        run = manager.on_tool_start(None, str(inputs), name=name)
    else:
        run = manager.on_chain_start(None, inputs if isinstance(inputs, dict) else {"input": inputs}, name=name)
    child = patch_config(config, callbacks=run.get_child())
    if metadata:
        child["metadata"] = {**child.get("metadata", {}), **metadata}
    token = var_child_runnable_config.set(child)
    step = Step()
    try:
        yield step
    except BaseException as exc:
        if run_type == "retriever":
            run.on_retriever_error(exc)
        elif run_type == "tool":
            run.on_tool_error(exc)
        else:
            run.on_chain_error(exc)
        raise
    else:
        if run_type == "retriever":
            run.on_retriever_end(_documents(step.outputs))
        elif run_type == "tool":
            run.on_tool_end(step.outputs)
        else:
            run.on_chain_end(step.outputs if isinstance(step.outputs, dict) else {"output": step.outputs})
    finally:
        var_child_runnable_config.reset(token)


def _documents(outputs: Any) -> list:
    from langchain_core.documents import Document

    out = []
    for item in outputs or []:
        if isinstance(item, Document):
            out.append(item)
        elif isinstance(item, Mapping):
            meta = {k: v for k, v in item.items() if k != "text" and isinstance(v, (str, int, float, bool))}
            out.append(Document(page_content=str(item.get("text", "")), metadata=meta))
    return out


# ---------------------------------------------------------------------------------------------
# Reading traces


class TraceNotFound(LookupError):
    pass


def traces_dir(settings: Settings | None = None) -> Path:
    if settings is None:
        from agent.settings import default_settings

        settings = default_settings()
    return settings.traces_dir


def read_records(path: Path) -> list[dict[str, Any]]:
    """The records of one trace file, in dotted order (parents before children, by start)."""
    records = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            log.warning("%s line %d: not a JSON record (a run cut short?)", path, n)
    return sorted(records, key=lambda r: r.get("dotted_order") or "")


def trace_files(directory: Path) -> list[Path]:
    """Trace files, most recent first."""
    if not directory.is_dir():
        return []
    files = [(p.stat().st_mtime, p) for p in directory.glob("*.jsonl")]
    return [p for _, p in sorted(files, key=lambda x: (-x[0], x[1].name))]


def find_trace(directory: Path, trace_id: str) -> Path:
    """A trace file by id, a unique start or end of the id, or `last`."""
    files = trace_files(directory)
    if trace_id in ("last", "latest"):
        if not files:
            raise TraceNotFound(f"no traces in {directory} yet: ask a question first")
        return files[0]
    exact = directory / f"{trace_id}.jsonl"
    if exact.exists():
        return exact
    # run ids are UUIDv7 (time first), so questions asked close together share a prefix:
    # the end of the id is the distinctive part
    matches = [p for p in files if p.stem.startswith(trace_id) or p.stem.endswith(trace_id)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise TraceNotFound(f"no trace {trace_id!r} in {directory} (see `litloop trace list`)")
    raise TraceNotFound(f"{trace_id!r} matches {len(matches)} traces; give more of the id")


def load_trace(trace_id: str, directory: Path | None = None) -> list[dict[str, Any]]:
    return read_records(find_trace(directory or traces_dir(), trace_id))


def _seconds(rec: dict[str, Any]) -> float | None:
    try:
        return (datetime.fromisoformat(rec["end_time"]) - datetime.fromisoformat(rec["start_time"])).total_seconds()
    except (KeyError, TypeError, ValueError):
        return None


def summary_of(records: list[dict[str, Any]], trace_id: str) -> dict[str, Any]:
    """One line of `trace list`: question, time, status, tokens, duration."""
    root = next((r for r in records if not r.get("parent_run_id")), None)
    meta = (root or {}).get("metadata") or {}
    usage = meta.get("token_usage") or {}
    if root is None:  # stopped mid-run: add up the LLM calls that did finish
        llm = [(r.get("metadata") or {}).get("token_usage") or {} for r in records if r.get("run_type") == "llm"]
        usage = {k: sum(u.get(k, 0) for u in llm) for k in ("input_tokens", "output_tokens", "total_tokens")}
        usage["llm_calls"] = len(llm)
    if root is None:
        status = "incomplete"
    elif root.get("error"):
        status = "error"
    elif any(r.get("error") or (r.get("metadata") or {}).get("node_errors") for r in records):
        status = "partial"
    else:
        status = "ok"
    # without a root (the process stopped mid-run) the nodes' inputs, the state, still hold it
    question = next((r["inputs"]["question"] for r in ([root] if root else []) + records
                     if isinstance(r.get("inputs"), dict) and r["inputs"].get("question")), None)
    start = (root or (records[0] if records else {})).get("start_time")
    return {"trace_id": trace_id, "question": question, "start_time": start, "status": status,
            "input_tokens": usage.get("input_tokens", 0), "output_tokens": usage.get("output_tokens", 0),
            "total_tokens": usage.get("total_tokens", 0), "llm_calls": usage.get("llm_calls", 0),
            "cost_estimate_usd": meta.get("cost_estimate_usd"),
            "duration_s": _seconds(root) if root else None, "runs": len(records),
            "thread_id": meta.get("thread_id"), "preset": meta.get("preset")}


def list_traces(directory: Path | None = None, limit: int = 20) -> list[dict[str, Any]]:
    directory = directory or traces_dir()
    out = []
    for path in trace_files(directory)[:limit]:
        try:
            out.append(summary_of(read_records(path), path.stem))
        except OSError as exc:
            log.warning("cannot read %s: %s", path, exc)
    return out


# Runs LangChain creates around a structured call (sequence, map, assign, lambda, fallbacks):
# plumbing a reader skips unless asked for everything; their children move up a level.
_PLUMBING = re.compile(r"^(Runnable\w*|ChannelWrite.*|ChannelRead.*|_\w+|<lambda>|itemgetter.*|route_\w+|"
                       r"\w*OutputParser|\w*ToolsParser)")


def tree_rows(records: list[dict[str, Any]], everything: bool = False) -> list[tuple[int, dict[str, Any]]]:
    """(depth, record) in tree order; without `everything`, LangChain's plumbing runs are hidden."""
    by_id = {r["id"]: r for r in records}

    def shown(r: dict[str, Any]) -> bool:
        return everything or r.get("run_type") != "chain" or not r.get("parent_run_id") or not _PLUMBING.match(r.get("name") or "")

    rows = []
    for r in records:  # dotted order: parents first
        if not shown(r):
            continue
        depth, parent = 0, r.get("parent_run_id")
        while parent in by_id:
            if shown(by_id[parent]):
                depth += 1
            parent = by_id[parent].get("parent_run_id")
        rows.append((depth, r))
    return rows


def describe_run(r: dict[str, Any]) -> dict[str, Any]:
    """What a viewer prints for one run: label, seconds, tokens, cost, error lines."""
    meta = r.get("metadata") or {}
    bits = []
    if meta.get("round") and r.get("run_type") == "chain" and meta.get("langgraph_node") == r.get("name"):
        bits.append(f"round {meta['round']}")
    if r.get("run_type") == "retriever" and meta.get("subquery"):
        bits.append(repr(meta["subquery"])[:80])
    if meta.get("paper_id") and r.get("run_type") == "chain" and str(meta["paper_id"]) not in str(r.get("name")):
        bits.append(str(meta["paper_id"]))
    if r.get("run_type") == "llm" and meta.get("model"):
        bits.append(str(meta["model"]))
    usage = meta.get("token_usage") or {}
    errors = []
    if r.get("error"):
        # LangChain stores repr(exception) followed by the traceback: keep the repr
        first = str(r["error"]).split("Traceback (most recent call last)")[0].strip()
        errors.append((first.splitlines() or [""])[0][:300])
    for e in meta.get("node_errors") or []:
        if isinstance(e, Mapping):
            kind = f" ({e['kind']})" if e.get("kind") else ""
            errors.append(f"{e.get('node')}{kind}: {str(e.get('error') or '')[:200]}")
    return {"name": r.get("name"), "run_type": r.get("run_type"), "detail": " · ".join(bits),
            "seconds": _seconds(r), "tokens": usage.get("total_tokens", 0),
            "input_tokens": usage.get("input_tokens", 0), "output_tokens": usage.get("output_tokens", 0),
            "cost": meta.get("cost_estimate_usd"), "errors": errors}


def tree_text(records: list[dict[str, Any]], everything: bool = False) -> str:
    """The run tree as plain indented text (the web chat's trace view, logs)."""
    lines = []
    for depth, r in tree_rows(records, everything):
        d = describe_run(r)
        parts = [f"{'  ' * depth}{d['name']} [{d['run_type']}]"]
        if d["detail"]:
            parts.append(d["detail"])
        if d["seconds"] is not None:
            parts.append(f"{d['seconds']:.2f} s")
        if d["tokens"]:
            parts.append(f"{d['input_tokens']}+{d['output_tokens']} tok")
        if d["cost"]:
            parts.append(f"${d['cost']:.4f}")
        line = "  ".join(parts)
        for e in d["errors"]:
            line += f"\n{'  ' * (depth + 1)}! {e}"
        lines.append(line)
    return "\n".join(lines)

