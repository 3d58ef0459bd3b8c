"""A reader and a build at once, both real: the reader opens the index, a build in a subprocess
switches CURRENT and cleans up, and the reader's dense search still finds its hits (it never
sees an empty store in a deleted folder)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent.settings import get_settings
from tests.conftest import build_papers_index
from tools.index import IndexProblem, gc_index, open_index
from tools.index.search import search
from tools.retrieval.dense import DenseIndex, DenseStoreMissing

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
QUERY = "conditional random fields for sequence labeling"

BUILD = """
import sys
from pathlib import Path
from agent.settings import get_settings
from tools.index import build_index
build_index([Path(sys.argv[1])], Path(sys.argv[2]), get_settings())
"""


def _build_in_subprocess(extra: Path, root: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", BUILD, str(extra), str(root)], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]


def _live(root: Path) -> str:
    return (root / "CURRENT").read_text().strip()


@pytest.fixture
def papers_index(tmp_path) -> Path:
    root = build_papers_index(tmp_path)
    extra = tmp_path / "extra.jsonl"
    extra.write_text(
        json.dumps(
            {
                "paper_id": "viterbi",
                "title": "Viterbi decoding of sequences",
                "abstract": "Dynamic programming finds the best label sequence.",
            }
        )
        + "\n"
    )
    return root


def test_a_reader_keeps_its_version_through_a_build_switch_and_cleanup(papers_index, tmp_path):
    root, settings = papers_index, get_settings()
    reader = open_index(root, settings)  # lazily: Chroma is not opened yet
    opened = reader.version_dir
    try:
        _build_in_subprocess(tmp_path / "extra.jsonl", root)
        assert _live(root) != opened.name, "the build should have switched CURRENT"
        assert opened.is_dir(), "the build must not remove a version a reader holds"

        hits = reader.dense_chunks(QUERY, 3)
        assert hits and hits[0].paper_id == "crf"
        assert search(reader, QUERY, "hybrid", k=1)[0].paper_id == "crf"
        assert "viterbi" not in reader.papers  # the reader sees its own version, whole
    finally:
        reader.close()

    # once the reader lets go, opening removes nothing; `index gc` (or the next build) does
    fresh = open_index(root, settings)
    try:
        assert opened.is_dir(), "opening an index must not remove anything"
        assert gc_index(root, settings)["versions_removed"] == [opened.name]
        assert not opened.exists()
        assert [p.name for p in root.glob("v-*")] == [_live(root)]
        assert "viterbi" in fresh.papers
        assert fresh.dense_chunks("Viterbi dynamic programming label sequence", 1)[0].paper_id == "viterbi"
    finally:
        fresh.close()


def test_a_build_with_no_reader_removes_the_old_version(papers_index, tmp_path):
    old = _live(papers_index)
    _build_in_subprocess(tmp_path / "extra.jsonl", papers_index)
    assert not (papers_index / old).exists()
    assert [p.name for p in papers_index.glob("v-*")] == [_live(papers_index)]


def test_a_dense_store_removed_under_a_reader_is_an_error_never_zero_hits(papers_index):
    # what no lease can prevent (someone deletes the folder by hand) is still never a silent 0
    reader = open_index(papers_index, get_settings())
    try:
        store = reader.segment_dirs[0] / "chroma"
        shutil.rmtree(store)
        with pytest.raises(IndexProblem, match=r"chroma: no dense store here.*--rebuild"):
            reader.dense_chunks(QUERY, 3)
        assert not store.exists(), "a reader must never create a store"
    finally:
        reader.close()


def test_a_store_without_the_collection_is_an_error(tmp_path):
    made = DenseIndex(tmp_path / "chroma", create=True)
    made._client.delete_collection("chunks")
    made.close()
    with pytest.raises(DenseStoreMissing, match="holds no 'chunks' collection"):
        DenseIndex(tmp_path / "chroma")
