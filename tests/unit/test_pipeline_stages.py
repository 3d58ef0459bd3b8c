"""The scores `litloop retrieve` shows for each stage come from the retrieval result itself."""

from __future__ import annotations

import pytest

from tools.retrieval.pipeline import RetrievalRun
from tools.settings import ToolSettings

pytestmark = pytest.mark.unit


def _hit(pid: str, chunk: str, score: float) -> dict:
    return {"paper_id": pid, "chunk_id": chunk, "score": score}


def _run() -> RetrievalRun:
    pool = {"p1#0": _hit("p1", "p1#0", 0.9), "p1#1": _hit("p1", "p1#1", 0.4), "p2#0": _hit("p2", "p2#0", 0.7)}
    return RetrievalRun(
        question="q",
        subqueries=["q"],
        pool=pool,
        a=["p1", "p2"],
        seeds=["p1"],
        b=["p3", "p2"],
        b_why={"p3": ["coupling p1"]},
        fused=["p2", "p1", "p3"],
        subquery_results=[],
    )


def test_each_stage_has_its_ranking():
    run = _run()
    assert run.ranking("a") == ["p1", "p2"]
    assert run.ranking("b") == ["p3", "p2"]
    assert run.ranking("fused") == ["p2", "p1", "p3"]


def test_stage_scores_follow_the_method():
    settings = ToolSettings()
    run = _run()
    assert run.stage_scores("a", settings) == {"p1": 0.9, "p2": 0.7}  # the best pooled chunk
    k = settings.relate.rrf_k
    assert run.stage_scores("b", settings) == pytest.approx({"p3": 1 / (k + 1), "p2": 1 / (k + 2)})
    k = settings.relate.ab_rrf_k
    fused = run.stage_scores("fused", settings)
    assert fused["p2"] == pytest.approx(1 / (k + 2) + 1 / (k + 2))  # second in A and in B
    assert fused["p1"] == pytest.approx(1 / (k + 1))
    assert fused["p3"] == pytest.approx(1 / (k + 1))


def test_without_b_the_fusion_is_a_alone():
    run = _run()
    run.b = []
    k = ToolSettings().relate.ab_rrf_k
    assert run.stage_scores("fused", ToolSettings()) == pytest.approx({"p1": 1 / (k + 1), "p2": 1 / (k + 2)})
