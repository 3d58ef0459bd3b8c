"""The agent and the LLM-free pipeline (what `litloop retrieve` and the benchmarks run) are the
same retrieval core: given the same subqueries and seeds they pool the same hits and fuse the same
A/B ranking, and the run's output exposes both, so an evaluation reads what the agent did."""

from __future__ import annotations

import pytest

from agent.api import ask
from agent.context import make_context
from agent.runtime.resources import index_for
from tools.retrieval.pipeline import run_retrieval

from .conftest import ANSWER, SATISFIED, cite_first_chunk

pytestmark = pytest.mark.graph

QUESTION = "What F1 do CRFs reach on chunking?"


def test_agent_pool_and_ranking_equal_the_pipeline(scripted):
    scripted(
        decompose=[{"subqueries": ["conditional random fields chunking", "sequence labeling F1"]}],
        verify=[SATISFIED],
        read=(cite_first_chunk,),
        synthesize=[ANSWER],
    )
    out = ask(QUESTION, preset="paper", max_rounds=1)
    assert out["subqueries"] == ["conditional random fields chunking", "sequence labeling F1"]
    assert out["pool"] and all(set(h) == {"chunk_id", "paper_id", "score", "source"} for h in out["pool"].values())
    idx = index_for(make_context("paper"))
    run = run_retrieval(
        idx, QUESTION, idx.settings, subqueries=out["subqueries"], seeds=out["verdict"]["evidence_papers"]
    )
    assert out["pool"] == run.pool
    assert out["seeds"] == run.seeds
    assert out["ranking"] == run.fused
    assert out["candidates"] == out["ranking"][: make_context("paper").read_papers]


def test_llm_free_steps_equal_the_pipeline_on_the_question(scripted):
    scripted(read=(cite_first_chunk,), synthesize=[ANSWER])
    out = ask(QUESTION, preset="local-fast", fact_answer="write")
    ctx = make_context("local-fast")
    idx = index_for(ctx)
    listed = out["verdict"]["evidence_papers"]
    run = run_retrieval(idx, QUESTION, idx.settings, seeds=listed)
    assert out["subqueries"] == [QUESTION] and out["pool"] == run.pool
    assert listed == run.a[: ctx.verify_papers]  # no LLM verdict: the papers listed to the verifier
    assert out["ranking"] == run.fused and out["candidates"] == run.fused[: ctx.read_papers]
