"""Real Chroma on disk, the real bundled embedder, real CiteSeer records and a real ACL PDF."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent.settings import get_settings
from tests.conftest import CITESEER
from tools.index import BuildFailed, IndexProblem, build_index, index_info, open_index
from tools.index.search import search

from .conftest import CRF_ID

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]


def test_build_reopen_and_counts(built_index):
    idx = open_index(built_index, get_settings())
    try:
        m = idx.manifest.to_dict()  # the JSON object on disk
        assert m["counts"]["papers"] == len(idx.papers) == len(idx.paper_ids)
        assert m["counts"]["chunks"] == len(idx.chunks) == len(idx.chunk_bm25)
        assert len(idx.paper_bm25) == len(idx.papers)
        assert idx.paper_embeddings.shape == (len(idx.papers), m["paper_embedder"]["dim"])
        assert idx.dense.count() == m["counts"]["dense_windows"]
        assert {c.chunk_id for c in idx.chunks} == idx.dense.chunk_ids()
        # every paper has exactly one title_abstract chunk, and it comes first
        for rows in idx.chunks_of.values():
            kinds = [idx.chunks[r].kind for r in rows]
            assert kinds[0] == "title_abstract" and kinds.count("title_abstract") == 1
        assert m["counts"]["citation_edges"] == idx.graph.num_edges > 0
        assert m["embedder"]["dim"] == 384
        assert m["embedder"]["backend"] == get_settings().embedder.backend  # the manifest records the backend
    finally:
        idx.close()


def test_words_that_lost_a_ligature_are_indexed_whole_and_counted(built_index):
    # the CRF paper's CiteSeer abstract reads "We present conditional random elds, a framework"
    idx = open_index(built_index, get_settings())
    try:
        chunk = idx.chunks[idx.chunks_of[CRF_ID][0]]
        assert "We present conditional random fields, a framework" in chunk.text
        assert "random elds" not in chunk.text
        repaired = idx.manifest.counts["ligatures_repaired"]
        assert repaired["papers"] >= 1 and repaired["words"] >= repaired["papers"]
    finally:
        idx.close()
    info = index_info(built_index, get_settings())
    assert info["counts"]["ligatures_repaired"] == repaired


def test_crf_paper_first_for_every_retriever(built_index):
    idx = open_index(built_index, get_settings())
    try:
        for retriever in ("bm25", "paper-bm25", "dense", "hybrid"):
            hits = search(idx, "conditional random fields sequence labeling", retriever, k=5)
            assert hits[0].paper_id == CRF_ID, retriever
            assert hits[0].chunk.paper_id == CRF_ID
    finally:
        idx.close()


def test_pdf_hit_carries_page_and_section(built_index):
    idx = open_index(built_index, get_settings())
    try:
        hits = search(idx, "literature graph semantic scholar entity linking", "hybrid", k=3)
        assert hits[0].paper_id == "N18-3011"
        pdf_chunks = [idx.chunks[r] for r in idx.chunks_of["N18-3011"]]
        assert {c.kind for c in pdf_chunks} >= {"title_abstract", "text"}
        body = [c for c in pdf_chunks if c.kind == "text"]
        assert all(c.locator.page and 1 <= c.locator.page <= 8 for c in body)
        assert any(c.locator.section for c in body)
        best = search(idx, "entity linking candidate generation", "bm25", k=10)
        pdf_hit = next(h for h in best if h.paper_id == "N18-3011")
        assert pdf_hit.chunk.locator.page is not None and pdf_hit.chunk.locator.section
    finally:
        idx.close()


def test_incremental_add_embeds_only_new_chunks(built_index, small_corpus, tmp_path):
    root = tmp_path / "idx"
    shutil.copytree(built_index, root)
    before = index_info(root, get_settings())
    extra = tmp_path / "extra.jsonl"
    lines = CITESEER.read_text().splitlines()[1000:1010]
    extra.write_text("\n".join(lines) + "\n")
    report = build_index([extra, small_corpus / "citeseer.jsonl"], root, get_settings())
    assert report.papers_added == 10 and report.chunks_added == 10
    # only the 10 new title-abstract chunks were embedded; re-given papers were skipped, and are
    # not problems (the PDF is the one indexed paper not given again)
    assert 10 <= report.windows_embedded <= 20
    assert report.already_indexed == before["counts"]["papers"] - 1 and report.problems == []
    after = index_info(root, get_settings())
    assert after["counts"]["papers"] == before["counts"]["papers"] + 10
    assert after["counts"]["dense_windows"] == before["counts"]["dense_windows"] + report.windows_embedded
    assert after["created"] == before["created"]
    idx = open_index(root, get_settings())
    try:
        new_id = json.loads(lines[0])["paper_id"]
        title = idx.papers[new_id].title
        assert search(idx, title, "dense", k=3)[0].paper_id == new_id
        assert search(idx, title, "bm25", k=3)[0].paper_id == new_id
        assert len(list(root.glob("v-*"))) == 1  # the old version was removed after the swap
    finally:
        idx.close()


def test_strict_build_writes_nothing_on_bad_input(tmp_path, small_corpus):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"paper_id": "x", "title": "X", "abstract": "x"}\n{oops\n')
    with pytest.raises(BuildFailed) as exc:
        build_index([bad], tmp_path / "idx", get_settings(), strict=True)
    assert any("bad.jsonl:2" in p for p in exc.value.problems)
    assert not (tmp_path / "idx").exists()  # no empty folder holding a .lock either


def test_manifest_mismatch_is_a_clear_error(built_index, tmp_path, monkeypatch):
    monkeypatch.setenv("LITLOOP_EMBEDDER__MODEL", "/some/other-model")
    with pytest.raises(IndexProblem, match="built with embedder 'bundled:all-MiniLM-L6-v2'"):
        open_index(built_index, get_settings())
    monkeypatch.delenv("LITLOOP_EMBEDDER__MODEL")
    root = tmp_path / "old"
    shutil.copytree(built_index, root)
    version = root / (root / "CURRENT").read_text().strip()
    m = json.loads((version / "manifest.json").read_text())
    m["format_version"] = 0
    (version / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(IndexProblem, match="format 0 but this litloop reads format 2.*--rebuild"):
        open_index(root, get_settings())
    with pytest.raises(IndexProblem, match="not a litloop index"):
        open_index(tmp_path, get_settings())


KILLED_BUILD = """
import sys, time
from pathlib import Path
import tools.index as index
import tools.index.build as build
real = build._embed_windows
def slow(*args, **kwargs):
    out = real(*args, **kwargs)
    Path(sys.argv[3]).write_text("embedding")
    time.sleep(120)
    return out
build._embed_windows = slow
from agent.settings import get_settings
index.build_index([Path(sys.argv[1])], Path(sys.argv[2]), get_settings())
"""


@pytest.mark.slow  # a build killed mid-way in a subprocess, then rebuilt: about 30 s on 2 cores
def test_killed_build_leaves_old_index_usable(built_index, tmp_path):
    root = tmp_path / "idx"
    shutil.copytree(built_index, root)
    before = index_info(root, get_settings())
    extra = tmp_path / "extra.jsonl"
    extra.write_text("\n".join(CITESEER.read_text().splitlines()[2000:2100]) + "\n")
    marker = tmp_path / "marker"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-c", KILLED_BUILD, str(extra), str(root), str(marker)], env=env)
    try:
        deadline = time.monotonic() + 300
        while not marker.exists():
            assert proc.poll() is None, "the build ended before it was killed"
            assert time.monotonic() < deadline
            time.sleep(0.5)
        assert list(root.glob(".building-*")), "the build should be writing a staging folder"
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    idx = open_index(root, get_settings())
    try:
        assert idx.manifest.counts == before["counts"]
        assert search(idx, "conditional random fields sequence labeling", "hybrid", k=1)[0].paper_id == CRF_ID
    finally:
        idx.close()
    # the next build clears the interrupted staging folder
    build_index([extra], root, get_settings())
    assert not list(root.glob(".building-*"))
    assert index_info(root, get_settings())["counts"]["papers"] == before["counts"]["papers"] + 100


def test_a_built_in_corpus_cut_by_older_parsers_is_rebuilt(tmp_path):
    """A registered corpus records which ingestion cut its papers; one cut by an older version
    (here: the manifest says 1) is rebuilt on its next use, so demo users get the new chunks,
    and `index info` says so for an index of one's own."""
    from tests.conftest import PAPERS
    from tools.ingest import INGEST_VERSION
    from tools.registry import Corpus

    rows = [{"paper_id": p, "title": t, "abstract": a, "references": r} for p, t, a, r in PAPERS]
    (tmp_path / "papers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    corpus = Corpus(
        "regress", "test corpus", inputs=lambda s: [tmp_path / "papers.jsonl"], location=lambda s: tmp_path / "idx"
    )
    settings = get_settings()
    root = corpus.ensure(settings)
    first = (root / "CURRENT").read_text().strip()
    manifest_path = root / first / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    assert manifest["ingest_version"] == INGEST_VERSION
    assert corpus.ensure(settings) == root and (root / "CURRENT").read_text().strip() == first  # current: kept
    manifest["ingest_version"] = 1
    manifest_path.write_text(json.dumps(manifest))
    info = index_info(root, settings)
    assert info["ingest_version"] == 1 and info["ingest_current"] is False
    corpus.ensure(settings)
    second = (root / "CURRENT").read_text().strip()
    assert (
        second != first
        and json.loads((root / second / "manifest.json").read_text())["ingest_version"] == INGEST_VERSION
    )
