"""The index as segments (tools/index/): an add writes one new segment and leaves the old
ones' files alone; an index built in two steps answers as one built at once; `litloop index
compact` merges the segments without changing an answer; an index of the earlier format is
upgraded in place with its embeddings and answers as it did; a kill -9 at any stage of an add or
a compaction leaves the previous version usable, and the next build clears what it left."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from agent.cli.main import app
from agent.settings import get_settings
from tests.conftest import CITESEER
from tools.index import (
    SEGMENTS,
    IndexFormatOld,
    build_index,
    index_info,
    open_index,
    upgrade_index,
)
from tools.retrieval.text import tokenize

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
FORMAT1 = REPO / "tests" / "data" / "index-format1"
QUERIES = [
    "conditional random fields sequence labeling",
    "citation recommendation with graph",
    "neural network learning",
    "information retrieval ranking of documents",
]


# Equal answers need equal vectors for equal texts, whatever else a batch holds: the torch
# embedder gives that (to 1e-6); dynamically quantised int8 ONNX scales each batch by its own
# range, so its vectors move with the batching, which is not what these tests are about.
BACKEND = {"LITLOOP_EMBEDDER__BACKEND": "torch"}


@pytest.fixture(autouse=True)
def _torch_embedder(monkeypatch):
    for k, v in BACKEND.items():
        monkeypatch.setenv(k, v)


def _build(*args, **kwargs):
    with pytest.MonkeyPatch.context() as mp:  # for the module's fixtures, set up before the above
        for k, v in BACKEND.items():
            mp.setenv(k, v)
        return build_index(*args, **kwargs)


def _records(a: int, b: int, folder: Path, name: str) -> Path:
    path = folder / name
    path.write_text("".join(CITESEER.read_text().splitlines(keepends=True)[a:b]))
    return path


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("segment-corpus")
    return _records(0, 60, folder, "first.jsonl"), _records(60, 100, folder, "second.jsonl")


@pytest.fixture(scope="module")
def two_step(inputs, tmp_path_factory) -> Path:
    """The index of both inputs built in two steps, and what its first segment's folder held
    before the add: {"first": name, "files": ..., "report": the add's}."""
    root = tmp_path_factory.mktemp("two-step") / "idx"
    _build([inputs[0]], root, get_settings())
    [first] = index_info(root, get_settings())["segments"]
    files = _files(root / SEGMENTS / first["name"])
    report = _build([inputs[1]], root, get_settings())
    return root, {"first": first["name"], "files": files, "report": report}


@pytest.fixture(scope="module")
def at_once(inputs, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("at-once") / "idx"
    _build(list(inputs), root, get_settings())
    return root


def _answers(root: Path) -> dict:
    """What an index answers: its records, the three retrievers' rankings with scores, the graph."""
    idx = open_index(root, get_settings())
    try:
        out = {
            "papers": list(idx.papers.values()),
            "chunks": list(idx.chunks),
            "paper_emb": np.asarray(idx.paper_embeddings),
            "edges": idx.graph.num_edges,
            "queries": {},
        }
        for q in QUERIES:
            t = tokenize(q)
            out["queries"][q] = {
                "bm25": idx.chunk_bm25.top_k(t, 20),
                "paper_bm25": idx.paper_bm25.top_k(t, 10),
                "dense": [(p.chunk_id, p.score) for p in idx.dense_chunks(q, 10)],
                "scores": idx.chunk_bm25.scores(t),
            }
        return out
    finally:
        idx.close()


def _assert_same_answers(a: dict, b: dict) -> None:
    assert a["papers"] == b["papers"] and a["chunks"] == b["chunks"] and a["edges"] == b["edges"]
    assert np.allclose(a["paper_emb"], b["paper_emb"], atol=1e-6)
    for q in QUERIES:
        x, y = a["queries"][q], b["queries"][q]
        for name in ("bm25", "paper_bm25"):
            assert [r for r, _ in x[name]] == [r for r, _ in y[name]], (q, name)
            assert np.allclose([s for _, s in x[name]], [s for _, s in y[name]], rtol=1e-9), (q, name)
        assert np.allclose(x["scores"], y["scores"], rtol=1e-9, atol=1e-12)
        assert [c for c, _ in x["dense"]] == [c for c, _ in y["dense"]], q
        assert np.allclose([s for _, s in x["dense"]], [s for _, s in y["dense"]], atol=1e-5)


def _files(folder: Path) -> dict[str, tuple[int, int, int]]:
    return {
        str(p.relative_to(folder)): (p.stat().st_ino, p.stat().st_mtime_ns, p.stat().st_size)
        for p in folder.rglob("*")
        if p.is_file()
    }


def test_an_add_writes_a_segment_and_answers_as_one_build(two_step, at_once):
    root, before = two_step
    assert before["report"].papers_added == 40
    info = index_info(root, get_settings())
    assert info["segments"][0]["name"] == before["first"] and len(info["segments"]) == 2
    assert [s["papers"] for s in info["segments"]] == [60, 40]
    assert _files(root / SEGMENTS / before["first"]) == before["files"], "an add never rewrites an old segment"
    assert sorted(p.name for p in (root / SEGMENTS).iterdir()) == sorted(s["name"] for s in info["segments"])
    assert info["counts"] == index_info(at_once, get_settings())["counts"]
    shown = CliRunner().invoke(app, ["index", "info", "--index", str(root)])
    assert shown.exit_code == 0 and re.search(r"segments +2\b", shown.stdout), shown.output
    _assert_same_answers(_answers(root), _answers(at_once))


def test_compaction_merges_the_segments_without_changing_an_answer(two_step, at_once, tmp_path):
    root = tmp_path / "idx"
    shutil.copytree(two_step[0], root)
    before = _answers(root)
    names = [s["name"] for s in index_info(root, get_settings())["segments"]]
    assert len(names) == 2
    reader = open_index(root, get_settings())  # holds the two-segment version
    try:
        shown = CliRunner().invoke(app, ["index", "compact", "--index", str(root), "--json"])
        assert shown.exit_code == 0, shown.output
        assert json.loads(shown.stdout)["segments_after"] == 1
        [merged] = index_info(root, get_settings())["segments"]
        assert all((root / SEGMENTS / n).is_dir() for n in names), "a version a reader holds keeps its segments"
        assert reader.chunk_bm25.top_k(tokenize(QUERIES[0]), 5) == before["queries"][QUERIES[0]]["bm25"][:5]
    finally:
        reader.close()
    _assert_same_answers(_answers(root), before)
    _assert_same_answers(_answers(root), _answers(at_once))
    again = CliRunner().invoke(app, ["index", "compact", "--index", str(root)])
    assert again.exit_code == 0 and "Nothing to compact" in again.stdout
    # the next build or compaction finds the old segments free and removes them
    build_index([_records(100, 103, tmp_path, "three.jsonl")], root, get_settings())
    left = sorted(p.name for p in (root / SEGMENTS).iterdir())
    assert merged["name"] in left and not set(names) & set(left) and len(left) == 2


def test_a_format_1_index_is_upgraded_in_place_and_answers_as_before(tmp_path):
    with tarfile.open(FORMAT1 / "index.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    root = tmp_path / "v1idx"
    expected = json.loads((FORMAT1 / "expected.json").read_text())
    with pytest.raises(IndexFormatOld, match=rf"format 1 .*`litloop index upgrade --index {root}`"):
        open_index(root, get_settings())
    info = index_info(root, get_settings())
    assert info["format_version"] == 1 and "litloop index upgrade" in info["problem"]
    shown = CliRunner().invoke(app, ["index", "upgrade", "--index", str(root)])
    assert shown.exit_code == 0 and "Upgraded to format 2 (101 chunks)" in shown.stdout, shown.output
    assert not list(root.glob(".building-*")) and len(list(root.glob("v-*"))) == 1
    idx = open_index(root, get_settings())
    try:
        assert idx.manifest.counts == expected["manifest_counts"]
        assert len(idx.chunks) == expected["chunks"] and len(idx.papers) == expected["papers"]
        for q, want in expected["queries"].items():
            t = tokenize(q)
            got = [[idx.chunks[r].chunk_id, s] for r, s in idx.chunk_bm25.top_k(t, 8)]
            assert [c for c, _ in got] == [c for c, _ in want["bm25"]], q
            assert np.allclose([s for _, s in got], [s for _, s in want["bm25"]], rtol=1e-9)
            got = [[idx.paper_ids[r], s] for r, s in idx.paper_bm25.top_k(t, 8)]
            assert [p for p, _ in got] == [p for p, _ in want["paper_bm25"]], q
            assert np.allclose([s for _, s in got], [s for _, s in want["paper_bm25"]], rtol=1e-9)
            dense = idx.dense_chunks(q, 8)
            assert [p.chunk_id for p in dense] == [c for c, _ in want["dense"]], q
            assert np.allclose([p.score for p in dense], [s for _, s in want["dense"]], atol=1e-5)
    finally:
        idx.close()
    assert upgrade_index(root, get_settings())["upgraded"] is False
    build_index([_records(200, 203, tmp_path, "more.jsonl")], root, get_settings())  # and it grows as any
    assert index_info(root, get_settings())["counts"]["papers"] == expected["papers"] + 3


# A kill -9 at each stage of an add and of a compaction: the subprocess patches the stage's
# function to mark the moment and sleep, and the test kills it there.
KILLED = """
import sys, time
from pathlib import Path
import tools.index as index
import tools.index.build as build
import tools.index.segment as segment
import tools.index.versions as versions
stage, marker = sys.argv[3], Path(sys.argv[4])
def stop_at(name):  # patched where it is called
    module = {"_point_current": versions, "_embed_windows": build}.get(name, segment)
    real = getattr(module, name)
    def wrapped(*args, **kwargs):
        if name == "_point_current":  # the new version is complete, CURRENT still names the old
            marker.write_text(name); time.sleep(120)
        out = real(*args, **kwargs)
        marker.write_text(name); time.sleep(120)
        return out
    setattr(module, name, wrapped)
stop_at(stage)
from agent.settings import get_settings
if sys.argv[5] == "add":
    index.build_index([Path(sys.argv[1])], Path(sys.argv[2]), get_settings())
else:
    index.compact_index(Path(sys.argv[2]), get_settings())
"""


def _kill_at(stage: str, job: str, root: Path, extra: Path, tmp_path: Path) -> None:
    marker = tmp_path / f"marker-{stage}-{job}"
    env = {**os.environ, **BACKEND, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-c", KILLED, str(extra), str(root), stage, str(marker), job], env=env)
    try:
        deadline = time.monotonic() + 300
        while not marker.exists():
            assert proc.poll() is None, f"the {job} ended before it reached {stage}"
            assert time.monotonic() < deadline
            time.sleep(0.3)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.mark.slow  # five builds killed in a subprocess, each rebuilt
@pytest.mark.parametrize(
    ("job", "stage"),
    [
        ("add", "_embed_windows"),  # the new segment half-written
        ("add", "_finish_segment"),  # the new segment complete, no version names it
        ("add", "_point_current"),  # the new version complete, not switched to
        ("compact", "_finish_segment"),  # the merged segment complete
        ("compact", "_point_current"),
    ],
)
def test_a_kill_at_any_stage_leaves_the_previous_version_usable(job, stage, two_step, tmp_path):
    root = tmp_path / "idx"
    shutil.copytree(two_step[0], root)
    before = index_info(root, get_settings())
    assert len(before["segments"]) == 2
    extra = _records(300, 310, tmp_path, "extra.jsonl")
    q = tokenize(QUERIES[0])
    idx = open_index(root, get_settings())
    want = idx.chunk_bm25.top_k(q, 5), [p.chunk_id for p in idx.dense_chunks(QUERIES[0], 5)]
    idx.close()
    _kill_at(stage, job, root, extra, tmp_path)
    after = index_info(root, get_settings())
    assert (after["version"], after["counts"], after["segments"]) == (
        before["version"],
        before["counts"],
        before["segments"],
    )
    idx = open_index(root, get_settings())
    try:
        assert (idx.chunk_bm25.top_k(q, 5), [p.chunk_id for p in idx.dense_chunks(QUERIES[0], 5)]) == want
    finally:
        idx.close()
    # the next build clears what the killed one left, and works
    report = build_index([extra], root, get_settings())
    assert report.papers_added == 10
    named = {s["name"] for s in index_info(root, get_settings())["segments"]}
    assert {p.name for p in (root / SEGMENTS).iterdir()} == named
    assert not list(root.glob(".building-*")) and len(list(root.glob("v-*"))) == 1


def test_a_built_in_corpus_of_format_1_is_upgraded_not_rebuilt(tmp_path, monkeypatch):
    import tools.registry
    from tools.registry import Corpus

    with tarfile.open(FORMAT1 / "index.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    root = tmp_path / "v1idx"
    v1 = json.loads((root / (root / "CURRENT").read_text().strip() / "manifest.json").read_text())
    # the fixture's papers were cut by an older ingestion, which alone would make it a rebuild
    # (test_a_built_in_corpus_cut_by_older_parsers_is_rebuilt); here only the format is old
    monkeypatch.setattr(tools.registry, "INGEST_VERSION", v1.get("ingest_version", 1))
    corpus = Corpus(
        "old", "a corpus indexed by an earlier litloop", inputs=lambda s: [CITESEER], location=lambda s: root
    )
    assert corpus.ensure(get_settings()) == root
    now = json.loads((root / (root / "CURRENT").read_text().strip() / "manifest.json").read_text())
    assert now["format_version"] == 2 and now["counts"] == v1["counts"]
    assert now["created"] == v1["created"] and now["corpus_fingerprint"] == v1["corpus_fingerprint"], (
        "upgraded in place, not rebuilt from its sources (which would take the whole CiteSeer file)"
    )


def test_an_add_that_resolves_earlier_bibliographies_counts_as_one_build(tmp_path):
    # later papers indexed first: their bibliography entries name papers not yet indexed, so the
    # add of the earlier ones resolves them and changes those records; the add copies the paper
    # table and rewrites those rows only, and counts coupling from the papers that changed
    from bench.scale import load_vocabulary, synthetic_corpus, write_jsonl

    records = synthetic_corpus(30, 2, seed=1, vocab=load_vocabulary(limit=2000))
    write_jsonl(tmp_path / "later" / "later.jsonl", records[12:])
    write_jsonl(tmp_path / "earlier" / "earlier.jsonl", records[:12])
    two, once = tmp_path / "two", tmp_path / "once"
    _build([tmp_path / "later"], two, get_settings())
    report = _build([tmp_path / "earlier"], two, get_settings())
    _build([tmp_path / "later", tmp_path / "earlier"], once, get_settings())
    assert report.references_resolved > 0 and report.papers_added == 12
    counts = index_info(two, get_settings())["counts"]
    assert counts == index_info(once, get_settings())["counts"]
    assert counts["coupling_pairs"] > 0 and counts["citation_edges"] > 0
    a, b = open_index(two, get_settings()), open_index(once, get_settings())
    try:
        # the same records, but for the order of references (those resolved by the add come last)
        def records(idx):
            return {p.paper_id: p.with_references(sorted(p.references)) for p in idx.papers.values()}

        assert records(a) == records(b)
        assert a.graph == b.graph and a.graph.coupling_edge_count() == counts["coupling_pairs"]
        for pid in a.papers:
            assert list(a.chunks_of[pid]) and [c.chunk_id for c in a.paper_chunks(pid)] == [
                c.chunk_id for c in b.paper_chunks(pid)
            ]
    finally:
        a.close()
        b.close()
