"""Steps inside a node: `trace_step` opens a child run (retrieval per subquery, reading per
paper) through LangChain's callbacks, so the local tracer and LangSmith (when enabled) see it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal


@dataclass
class Step:
    """A child run opened by `trace_step`; set `outputs` before the block ends."""

    outputs: Any = None


@contextmanager
def trace_step(
    name: str,
    *,
    run_type: Literal["chain", "retriever", "tool"] = "chain",
    inputs: Any = None,
    metadata: dict[str, Any] | None = None,
) -> Iterator[Step]:
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
    run: Any  # a retriever, tool or chain run manager: each has its own end and error calls
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
