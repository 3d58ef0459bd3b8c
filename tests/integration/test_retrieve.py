"""Retrieve and Relate on real indexes (real BM25, Chroma, embedder and citation graph)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from agent.cli.main import app
from agent.settings import get_settings
from tools.index import build_index, open_index
from tools.retrieval.pipeline import run_retrieval
from tools.retrieval.relate import ranking_b
from tools.retrieval.retrieve import retrieve_subquery

from .conftest import CRF_ID

pytestmark = pytest.mark.integration

COOKING = [
    (
        "seed",
        "Slow cooking tomato sauce for pasta",
        "We simmer tomato sauce for pasta with garlic, basil and olive oil.",
    ),
    ("f1", "Fresh pasta dough by hand", "Kneading fresh pasta dough with eggs and flour for tagliatelle and sauce."),
    ("f2", "Tomato sauce variations", "Tomato sauce with garlic, onions, basil and olive oil for pasta dishes."),
    ("f3", "Olive oil in Mediterranean cooking", "Olive oil, garlic and basil in slow cooked sauces and pasta."),
    ("f4", "Baking bread at home", "Sourdough bread baking with flour, water, salt and a slow rise."),
]
OTHER = [
    (
        "target",
        "Lattice simulations of quantum chromodynamics",
        "Monte Carlo lattice gauge theory computes hadron masses.",
    ),
    ("r1", "Numerical integration methods", "Quadrature rules and adaptive step sizes."),
    ("r2", "Random number generators", "Pseudo-random sequences for simulation."),
    ("r3", "Parallel computing clusters", "Message passing on distributed memory machines."),
    ("r4", "Group theory for physicists", "Lie groups and representations."),
]
REFS = {"seed": ["r1", "r2", "r3"], "target": ["r1", "r2", "r4"]}


@pytest.fixture(scope="module")
def coupling_index(tmp_path_factory):
    d = tmp_path_factory.mktemp("coupling")
    rows = [
        {"paper_id": pid, "title": t, "abstract": a, "references": REFS.get(pid, [])} for pid, t, a in COOKING + OTHER
    ]
    (d / "papers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    build_index([d / "papers.jsonl"], d / "idx", get_settings())
    idx = open_index(d / "idx", get_settings())
    yield idx
    idx.close()


def test_only_coupling_finds_the_target(coupling_index):
    cfg = get_settings().relate.model_copy(update={"neighbours_per_seed": 2})
    b, why = ranking_b(coupling_index, ["seed"], cfg)
    assert b[0] == "seed"
    assert "target" in b and "coupling:seed" in why["target"]
    assert why["target"] == ["coupling:seed"]  # neither embeddings nor BM25 list it
    without = cfg.model_copy(update={"sources": ["embedding", "bm25"]})
    b2, _ = ranking_b(coupling_index, ["seed"], without)
    assert "target" not in b2


def test_bm25_and_embedding_neighbours_find_the_similar_papers(coupling_index):
    cfg = get_settings().relate.model_copy(update={"neighbours_per_seed": 2, "sources": ["bm25"]})
    b, _ = ranking_b(coupling_index, ["seed"], cfg)
    assert set(b[1:]) <= {"f1", "f2", "f3"}
    cfg = cfg.model_copy(update={"sources": ["embedding"]})
    b, _ = ranking_b(coupling_index, ["seed"], cfg)
    assert set(b[1:]) <= {"f1", "f2", "f3"}


def test_subquery_pools_at_most_20_chunks_with_pinned_order(built_index):
    idx = open_index(built_index, get_settings())
    try:
        res = retrieve_subquery(idx, "conditional random fields sequence labeling", get_settings())
        assert len(res.pooled) == min(20, len(res.search.hits))
        # no reranker: the pool order is the retrieval order, scores 1/(60 + r)
        assert [h["chunk_id"] for h in res.pooled] == [h["chunk_id"] for h in res.search.hits[:20]]
        assert res.pooled[0]["score"] == pytest.approx(1 / 61)
        assert res.pooled[0]["paper_id"] == CRF_ID
        prf = res.search.prf_query
        assert prf and prf.startswith("conditional random fields sequence labeling ")
    finally:
        idx.close()


def test_llm_free_run_relate_adds_cited_papers(built_index):
    idx = open_index(built_index, get_settings())
    try:
        crf = idx.papers[CRF_ID]
        question = f"{crf.title} {crf.abstract}"
        run = run_retrieval(idx, question, get_settings())
        assert run.a[0] == CRF_ID and run.seeds[0] == CRF_ID
        assert run.fused[: len(run.seeds)] != [] and len(run.fused) <= 50
        refs = set(idx.graph.references(CRF_ID))
        assert refs, "the CRF paper cites papers in the small corpus"
        assert len(refs & set(run.fused)) >= len(refs & set(run.a[:50]))
    finally:
        idx.close()


def test_retrieve_cli_json(built_index):
    r = CliRunner().invoke(
        app,
        ["retrieve", "conditional random fields", "--index", str(built_index), "--stage", "a", "--k", "5", "--json"],
    )
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["stage"] == "a" and data["question"] == "conditional random fields"
    p = data["papers"][0]
    assert p["paper_id"] == CRF_ID and p["rank"] == 1 and p["chunks"]
    assert {"paper_id", "title", "score", "rank", "chunks"} <= set(p)
    r = CliRunner().invoke(app, ["retrieve", "x", "--index", str(built_index), "--seed", "nope"])
    assert r.exit_code == 2 and "unknown seed" in r.output
