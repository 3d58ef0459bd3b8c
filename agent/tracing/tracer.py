"""The tracer: `RunTreeTracer` writes one LangSmith-style record per finished run.

It is a LangChain `BaseTracer`: LangChain and LangGraph call it for the graph, every node, every
LLM call and every retriever or tool step, and it appends one JSON record per run, when the run
ends, to `<traces dir>/<trace_id>.jsonl`. The fields are LangSmith's (`RECORD_FIELDS`); metadata
adds `round`, `subquery`, `model`, `token_usage` (an LLM call's own, or the sum over a run's
subtree), `cost_estimate_usd` and `thread_id`; a node that recorded failures in the state
without raising carries them as `node_errors`. What is written is summarised and redacted
(`agent.tracing.redact`).
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from uuid import UUID

from langchain_core.tracers.base import BaseTracer

from agent.tracing.redact import Summariser, known_secrets

if TYPE_CHECKING:
    from langchain_core.tracers.schemas import Run

    from agent.settings import Settings, TracingSettings

log = logging.getLogger(__name__)

RECORD_FIELDS = (
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
)
# Metadata LangGraph and LangChain add to every run that a reader never needs.
_NOISY_METADATA = (
    "langgraph_triggers",
    "langgraph_path",
    "langgraph_checkpoint_ns",
    "checkpoint_ns",
    "litloop_structured_output",
    "ls_integration",
    "__pregel_task_id",
)


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
                return {
                    "input_tokens": int(usage.get("input_tokens") or 0),
                    "output_tokens": int(usage.get("output_tokens") or 0),
                }
    tu = (outputs.get("llm_output") or {}).get("token_usage") or {}
    if tu:
        return {
            "input_tokens": int(tu.get("prompt_tokens") or 0),
            "output_tokens": int(tu.get("completion_tokens") or 0),
        }
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
    finish = (gen.get("generation_info") or {}).get("finish_reason") or (kw.get("response_metadata") or {}).get(
        "finish_reason"
    )
    if finish:
        out["finish_reason"] = finish
    return out


def _model_of(run: Run) -> str | None:
    meta = (run.extra or {}).get("metadata") or {}
    params = (run.extra or {}).get("invocation_params") or {}
    return (
        meta.get("ls_model_name") or params.get("model") or params.get("model_name") or params.get("_type") or run.name
    )


class RunTreeTracer(BaseTracer):
    """Appends one record per finished run to `<directory>/<trace_id>.jsonl` (see module doc).

    One instance may serve several questions (each graph invocation is its own trace);
    `trace_ids` lists the roots seen, `trace_id` the latest.
    """

    name: str = "litloop_run_tree"

    def __init__(
        self,
        directory: Path | str,
        settings: TracingSettings | None = None,
        *,
        thread_id: str | None = None,
        secrets: Sequence[str] = (),
    ) -> None:
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
        except Exception:
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
            meta["token_usage"] = {
                "input_tokens": int(own.get("input_tokens", 0)),
                "output_tokens": int(own.get("output_tokens", 0)),
                "total_tokens": int(own.get("input_tokens", 0) + own.get("output_tokens", 0)),
                "llm_calls": int(own.get("llm_calls", 0)),
            }
        if "cost" in own:
            meta["cost_estimate_usd"] = round(own["cost"], 6)
        outputs = run.outputs
        if self._is_node(run) and isinstance(outputs, Mapping) and outputs.get("errors"):
            meta["node_errors"] = s(outputs["errors"])
        if run.parent_run_id is None and isinstance(outputs, Mapping) and "round" in outputs:
            meta["round"] = outputs["round"]
        if kind == "llm":
            inputs = (
                {"messages": s(_flatten_messages(run.inputs))} if "messages" in (run.inputs or {}) else s(run.inputs)
            )
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
