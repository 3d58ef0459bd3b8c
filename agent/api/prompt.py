"""The exact messages a node would send, without calling any model (`litloop prompt render`).

The evidence in verify, read_paper and synthesize prompts comes from LLM-free retrieval of the
question itself (what the first round would find if the decomposition returned the question).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, cast

from pydantic import BaseModel

from agent import prompts
from agent.api import make_run_context
from agent.llm.schemas import Verification, decomposition_model, reading_model
from agent.state import Reading, State
from tools.retrieval.sentences import sentence_ids

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

    from agent.context import Context

NODES = ("system", "decompose", "verify", "read_paper", "synthesize", "repair")


def _state_after_retrieval(question: str, ctx) -> tuple[State, Any]:
    from agent.runtime.resources import index_for
    from tools.retrieval.pipeline import run_retrieval

    idx = index_for(ctx)
    run = run_retrieval(idx, question, idx.settings)
    state = State(
        question=question, subqueries=[question], pool=run.pool, candidates=run.fused, answer_types=["freeform"]
    )
    return state, idx


def render_prompt(
    question: str, node: str, preset: str | None = None, index: str | None = None, corpora: list[str] | None = None
) -> str:
    from agent.llm import build_messages
    from agent.settings import default_settings

    if node not in NODES:
        raise ValueError(f"unknown node {node!r}; choose one of {', '.join(NODES)}")
    ctx = make_run_context(preset, index=index, corpora=corpora or None)
    runtime = cast("Runtime[Context]", SimpleNamespace(context=ctx))  # what the steps read of a runtime: its context
    method = default_settings().llm.structured_output
    schema: type[BaseModel]
    if node == "system":
        return prompts.render("system")
    if node == "repair":
        return prompts.render("repair", error="{error}", schema="{schema}")
    if node == "decompose":
        from agent.nodes.decompose import decompose_prompt

        schema, user = (
            decomposition_model(ctx.subqueries_per_round),
            decompose_prompt({"question": question}, ctx.subqueries_per_round),
        )
    else:
        state, idx = _state_after_retrieval(question, ctx)
        if node == "verify":
            from agent.methods.rra.verify import verify_prompt

            schema, user = Verification, verify_prompt(state, runtime)
        elif node == "read_paper":
            from agent.methods.rra.read import read_prompt, sentences_to_read

            shown = sentences_to_read(state, runtime, state["candidates"][0])
            schema = reading_model(sentence_ids(len(shown)), ctx.read_evidence_sentences)
            user = read_prompt(state, runtime, state["candidates"][0], shown)
        else:
            from agent.answer.selection import evidence_sentences
            from agent.nodes.synthesize import synthesis_schema, synthesize_prompt

            readings: list[Reading] = [
                {"paper_id": pid, "relevant": True, "evidence_chunk_ids": [idx.title_abstract(pid).chunk_id]}
                for pid in state["candidates"][:3]
            ]
            state = State(**{**state, "readings": readings})
            shown = evidence_sentences(state, idx, ctx)
            schema, user = synthesis_schema(state, ctx, shown), synthesize_prompt(state, runtime, shown)
    messages = build_messages(schema, prompts.render("system"), user, method=method)
    return (
        "\n\n".join(f"=== {m.type} ===\n{m.content}" for m in messages)
        + f"\n\n=== output schema ===\n{schema.__name__}"
    )
