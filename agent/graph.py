"""The litloop state machine: wiring only (node bodies live in agent/nodes/).

decompose -> search -> rerank -> verify --(not sufficient, new subqueries, rounds left)--> decompose
                                        \\-> expand_neighbors -> read_paper -> synthesize -> END
A question about a cited work ("who cites X") starts at read_citations, which reads the citing
sentences and goes to synthesize; when nothing cites X it goes on to decompose.
SEE: docs/design.md section 7, docs/citations.md.
"""

from __future__ import annotations

from typing import Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from agent.context import Context
from agent.nodes.citations import read_citations
from agent.nodes.decompose import decompose
from agent.nodes.method_steps import (
    expand_neighbors,
    read_paper,
    rerank,
    search,
    verify,
)
from agent.nodes.synthesize import synthesize
from agent.reading.shape import citation_subject
from agent.state import InputState, OutputState, State


def route_question(state: State) -> Literal["read_citations", "decompose"]:
    """A question about a cited work reads the citation contexts first; any other is searched."""
    return "read_citations" if citation_subject(state["question"]) else "decompose"


def route_after_citations(state: State) -> Literal["synthesize", "decompose"]:
    """Answer from the citing sentences when some paper cites the work, else search as usual."""
    return "synthesize" if state.get("readings") else "decompose"


def route_after_verify(state: State, runtime: Runtime[Context]) -> Literal["decompose", "expand_neighbors"]:
    """Back to decompose unless the evidence suffices, the last round brought no new subquery,
    or max_rounds rounds have run (round counts the rounds started)."""
    if (state.get("verdict") or {}).get("sufficient"):
        return "expand_neighbors"
    if not state.get("new_subqueries"):
        return "expand_neighbors"
    if state.get("round", 0) >= runtime.context.max_rounds:
        return "expand_neighbors"
    return "decompose"


def build_graph(checkpointer=None, context_schema=Context):
    """The compiled graph; `context_schema` is what a run's context given as a dict becomes
    (a served run's: agent/serve/graph.py), Context itself by default."""
    g = StateGraph(State, context_schema=context_schema, input_schema=InputState, output_schema=OutputState)
    g.add_node("read_citations", read_citations)
    g.add_node("decompose", decompose)
    g.add_node("search", search)
    g.add_node("rerank", rerank)
    g.add_node("verify", verify)
    g.add_node("expand_neighbors", expand_neighbors)
    g.add_node("read_paper", read_paper)
    g.add_node("synthesize", synthesize)
    g.add_conditional_edges(START, route_question)
    g.add_conditional_edges("read_citations", route_after_citations)
    g.add_edge("decompose", "search")
    g.add_edge("search", "rerank")
    g.add_edge("rerank", "verify")
    g.add_conditional_edges("verify", route_after_verify)
    g.add_edge("expand_neighbors", "read_paper")
    g.add_edge("read_paper", "synthesize")
    g.add_edge("synthesize", END)
    return g.compile(checkpointer=checkpointer, name="litloop")


graph = build_graph()
