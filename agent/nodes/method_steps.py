"""The five nodes whose step belongs to the method (agent/methods/): search, rerank, verify,
expand_neighbors, read_paper. Each node dispatches to `method_for(context.mode)`, so a method
is chosen per run by the context and no node branches on it.

For Retrieve-Relate-Read (agent/methods/rra/): search = hybrid retrieval with one PRF pass
(docs/design.md section 3 steps 2-3); rerank = the 0.6/0.4 score with the top 20 pinned, the top 20
pooled (steps 4-5); verify = which pooled papers hold evidence and what is missing (step 6);
expand_neighbors = Relate (section 4); read_paper = each candidate judged on its own (section 5).
"""

from __future__ import annotations

from collections.abc import Callable

from langgraph.runtime import Runtime

from agent.context import Context
from agent.methods import method_for
from agent.methods.base import STEPS
from agent.state import State

Node = Callable[[State, Runtime[Context]], dict]


def method_step(step: str) -> Node:
    """The node that runs `step` of the run's method."""
    if step not in STEPS:
        raise ValueError(f"{step!r} is not a method step; the steps are {', '.join(STEPS)}")

    def node(state: State, runtime: Runtime[Context]) -> dict:
        return getattr(method_for(runtime.context.mode), step)(state, runtime)

    node.__name__ = node.__qualname__ = step
    node.__doc__ = f"The `{step}` step of the context's method."
    return node


search = method_step("search")
rerank = method_step("rerank")
verify = method_step("verify")
expand_neighbors = method_step("expand_neighbors")
read_paper = method_step("read_paper")
