"""The command line against a real index: JSON contract, human output, errors."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from agent.cli import app

from .conftest import CRF_ID

pytestmark = pytest.mark.integration

runner = CliRunner()


def test_search_json_contract(built_index):
    r = runner.invoke(app, ["search", "conditional random fields sequence labeling", "--index", str(built_index),
                            "--k", "3", "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["query"] == "conditional random fields sequence labeling" and data["retriever"] == "hybrid"
    assert len(data["hits"]) == 3
    hit = data["hits"][0]
    assert hit["paper_id"] == CRF_ID
    assert set(hit) == {"paper_id", "title", "score", "chunk"}
    assert set(hit["chunk"]) == {"chunk_id", "kind", "text", "locator"}


def test_search_human_output_shows_locator(built_index):
    r = runner.invoke(app, ["search", "literature graph semantic scholar", "--index", str(built_index), "-k", "2"])
    assert r.exit_code == 0, r.output
    assert "Construction of the Literature Graph in Semantic Scholar" in r.stdout
    assert "p. " in r.stdout


def test_index_info_json(built_index):
    r = runner.invoke(app, ["index", "info", "--index", str(built_index), "--json"])
    assert r.exit_code == 0, r.output
    info = json.loads(r.stdout)
    assert info["counts"]["papers"] > 200
    assert set(info["counts"]["chunks_by_kind"]) == {"title_abstract", "text", "equation", "figure", "table"}
    assert info["embedder"]["name"] == "bundled:all-MiniLM-L6-v2" and info["compatible_with_settings"]


def test_bad_retriever_and_missing_index_are_clear_errors(built_index, tmp_path):
    r = runner.invoke(app, ["search", "x", "--index", str(built_index), "--retriever", "magic"])
    assert r.exit_code == 2 and "--retriever must be one of" in r.output
    r = runner.invoke(app, ["search", "x", "--index", str(tmp_path / "none")])
    assert r.exit_code == 1 and "no index here" in r.output
    r = runner.invoke(app, ["index", "build", str(tmp_path), "--index", str(tmp_path / "new")])
    assert r.exit_code == 1 and "no supported files in this folder" in r.output
