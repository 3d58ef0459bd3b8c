"""`litloop index build --ray`: parsing, chunking and embedding on a local Ray instance give the
index a local build gives (papers, chunks, BM25 and dense results, the problems reported), for a
first build and for an add; the real embedder, real CiteSeer records and a real ACL PDF."""

from __future__ import annotations

import json
import shutil
import socket
import time

import numpy as np
import pytest
from typer.testing import CliRunner

from agent.cli.main import app
from agent.settings import get_settings
from tests.conftest import CITESEER, DEMO_PDFS
from tools.index import build_index, open_index

from .conftest import CRF_ID

pytestmark = pytest.mark.integration

runner = CliRunner()
PAPERS = 260  # CiteSeer records in the corpus, beside one PDF
QUERIES = [
    "conditional random fields sequence labeling",
    "literature graph semantic scholar entity linking",
    "citation recommendation",
    "agents planning reinforcement learning",
]


@pytest.fixture(scope="module")
def ray_up():
    """One local Ray instance (2 CPUs) for the module: `ray_loader` uses a Ray already running."""
    pytest.importorskip("ray.data", reason="Ray is not installed: pip install -e '.[ray]'")
    from tools.index.ray_build import ray_session

    with ray_session(None, num_cpus=2) as ray:
        yield ray


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """260 CiteSeer records (the CRF paper and papers it cites among them) with a duplicate and a
    malformed line, one ACL PDF with its sidecar: more windows than one embedding call of a
    local build takes (256), so the Ray build must slice them alike; and 5 more records for an add."""
    folder = tmp_path_factory.mktemp("ray-corpus")
    records = [json.loads(line) for line in CITESEER.open()]
    by_id = {r["paper_id"]: r for r in records}
    keep = [by_id[CRF_ID]] + [by_id[r] for r in by_id[CRF_ID]["references"] if r in by_id]
    keep += [r for r in records[:PAPERS] if r not in keep][: PAPERS - len(keep)]
    lines = [json.dumps(r) for r in keep] + [json.dumps(keep[3]), "{not json"]
    (folder / "citeseer.jsonl").write_text("\n".join(lines) + "\n")
    for name in ("N18-3011.pdf", "N18-3011.meta.json"):
        shutil.copy(DEMO_PDFS / name, folder / name)
    extra = tmp_path_factory.mktemp("ray-extra") / "more.jsonl"
    kept = {r["paper_id"] for r in keep}
    more = [r for r in records[100:] if r["paper_id"] not in kept][:5]
    extra.write_text("".join(json.dumps(r) + "\n" for r in more))
    return folder, extra


def _build(inputs, root, on_ray: bool, rebuild: bool = False):
    from tools.index.ray_build import ray_loader

    settings = get_settings()
    loader = ray_loader(settings) if on_ray else None
    return build_index(inputs, root, settings, rebuild=rebuild, loader=loader)


@pytest.fixture(scope="module")
def pair(ray_up, corpus, tmp_path_factory):
    """The same input built locally and on Ray: (local root, Ray root, their reports)."""
    base = tmp_path_factory.mktemp("ray-pair")
    local = _build([corpus[0]], base / "local", on_ray=False)
    ray = _build([corpus[0]], base / "ray", on_ray=True)
    return base / "local", base / "ray", local, ray


def _same_index(a_root, b_root):
    settings = get_settings()
    a, b = open_index(a_root, settings), open_index(b_root, settings)
    try:
        assert a.papers == b.papers
        assert [c.to_dict() for c in a.chunks] == [c.to_dict() for c in b.chunks]
        assert a.manifest.counts == b.manifest.counts
        assert a.manifest.corpus_fingerprint == b.manifest.corpus_fingerprint
        assert sorted(a.graph.graph.edges) == sorted(b.graph.graph.edges)
        assert np.allclose(a.paper_embeddings, b.paper_embeddings, atol=1e-5)
        for q in QUERIES:
            assert [(p.chunk_id, p.score) for p in a.bm25_chunks(q, 10)] == [
                (p.chunk_id, p.score) for p in b.bm25_chunks(q, 10)
            ], q
            assert a.bm25_papers(q, 10) == b.bm25_papers(q, 10), q
            da, db = a.dense_chunks(q, 10), b.dense_chunks(q, 10)
            assert [p.chunk_id for p in da] == [p.chunk_id for p in db], q
            assert np.allclose([p.score for p in da], [p.score for p in db], atol=1e-5), q
    finally:
        a.close()
        b.close()


def test_ray_build_equals_local_build(pair):
    local_root, ray_root, local, ray = pair
    _same_index(local_root, ray_root)
    # the same problems, worded alike and in the same order: the duplicate, then the bad line
    assert ray.problems == local.problems and len(local.problems) == 2
    assert "duplicate paper_id" in ray.problems[0] and "not valid JSON" in ray.problems[1]
    assert ray.papers_added == local.papers_added == PAPERS + 1
    # every window's vector came from Ray: none embedded by the build itself
    assert ray.windows_embedded == 0 and ray.windows_imported == local.windows_embedded > 256
    assert ray.vectors_ignored == 0


def test_ray_add_equals_local_add(pair, corpus, tmp_path):
    local_root, ray_root, _, _ = pair
    shutil.copytree(local_root, tmp_path / "local")
    shutil.copytree(ray_root, tmp_path / "ray")
    inputs = [corpus[0], corpus[1]]
    local = _build(inputs, tmp_path / "local", on_ray=False)
    ray = _build(inputs, tmp_path / "ray", on_ray=True)
    assert ray.already_indexed == local.already_indexed == PAPERS + 2  # the papers and the duplicate line
    assert ray.papers_added == local.papers_added == 5
    assert ray.windows_imported == local.windows_embedded >= 5 and ray.windows_embedded == 0
    assert ray.problems == local.problems
    _same_index(tmp_path / "local", tmp_path / "ray")


def test_cli_ray_flag(ray_up, corpus, tmp_path):
    root = tmp_path / "idx"
    r = runner.invoke(app, ["index", "build", str(corpus[1]), "--index", str(root), "--ray", "--json"])
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    assert report["papers_added"] == 5 and report["windows_imported"] >= 5 and report["windows_embedded"] == 0
    r = runner.invoke(app, ["index", "build", str(corpus[1]), "--index", str(root), "--ray"])
    assert r.exit_code == 0, r.output
    assert "5 papers of the input were already in the index" in r.stdout


def test_cli_ray_refuses_embeddings_file(corpus, tmp_path):
    r = runner.invoke(
        app,
        [
            "index",
            "build",
            str(corpus[1]),
            "--index",
            str(tmp_path / "idx"),
            "--ray",
            "--embeddings",
            str(tmp_path / "v.npz"),
        ],
    )
    assert r.exit_code == 1
    assert "--embeddings and --ray" in r.output
    assert not (tmp_path / "idx").exists()


def test_cli_unreachable_cluster_fails_fast(corpus, tmp_path):
    pytest.importorskip("ray.data", reason="Ray is not installed: pip install -e '.[ray]'")
    with socket.socket() as s:  # a loopback port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t = time.monotonic()
    r = runner.invoke(
        app, ["index", "build", str(corpus[1]), "--index", str(tmp_path / "idx"), "--ray-address", f"127.0.0.1:{port}"]
    )
    assert r.exit_code == 1
    assert f"nothing answers at Ray address '127.0.0.1:{port}'" in r.output and "ray start --head" in r.output
    assert time.monotonic() - t < 30  # Ray alone would wait minutes for the head node
    assert not (tmp_path / "idx").exists()
