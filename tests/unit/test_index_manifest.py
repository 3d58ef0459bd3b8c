"""The manifest model (tools/index/manifest.py): a manifest an older litloop wrote loads, what
this one writes keeps the old keys (an older litloop reads it), keys it does not know survive,
and a format-1 manifest loads for `index upgrade`."""

from __future__ import annotations

import json

import pytest

from tools.index import (
    FORMAT_VERSION,
    IndexFormatOld,
    IndexProblem,
    Manifest,
    read_manifest,
)
from tools.index.manifest import EmbedderRecord, write_manifest

pytestmark = pytest.mark.unit

# what litloop wrote before the manifest was a model (no embedder backend)
OLD = {
    "format_version": 2,
    "created": "2026-01-01T00:00:00+00:00",
    "updated": "2026-01-02T00:00:00+00:00",
    "embedder": {"name": "bundled:all-MiniLM-L6-v2", "dim": 384, "window_chars": 1000},
    "paper_embedder": {"name": "bundled:all-MiniLM-L6-v2", "dim": 384},
    "tokenizer": "t1",
    "bm25": {"k1": 1.5, "b": 0.75, "epsilon": 0.25, "chunk_bm25": {"n": 3}},
    "corpus_fingerprint": "abc",
    "ingest_version": 3,
    "counts": {"papers": 2, "chunks": 3, "dense_windows": 3},
    "sources": ["a.jsonl"],
    "segments": [{"name": "s-1", "papers": 2, "chunks": 3, "windows": 3, "dense": {"kind": "embedded"}}],
}


def test_an_old_manifest_loads_and_is_written_back_with_the_same_keys(tmp_path):
    m = Manifest.model_validate(OLD)
    assert (m.embedder.name, m.embedder.dim, m.embedder.window_chars, m.embedder.backend) == (
        "bundled:all-MiniLM-L6-v2",
        384,
        1000,
        None,
    )
    assert m.segments[0].name == "s-1" and m.segments[0].dense == {"kind": "embedded"}
    assert m.counts["papers"] == 2 and m.ingest_version == 3
    assert m.to_dict() == OLD
    write_manifest(tmp_path, m)
    assert json.loads((tmp_path / "manifest.json").read_text()) == OLD
    assert read_manifest(tmp_path) == m


def test_a_new_manifest_adds_the_backend_beside_the_old_keys_and_keeps_unknown_ones():
    m = Manifest.model_validate({**OLD, "later_field": {"x": 1}})
    new = m.model_copy(update={"embedder": EmbedderRecord(name="e", dim=4, window_chars=800, backend="torch")})
    d = new.to_dict()
    assert d["embedder"] == {"name": "e", "dim": 4, "window_chars": 800, "backend": "torch"}
    assert d["later_field"] == {"x": 1}
    assert set(d) == set(OLD) | {"later_field"}


def test_an_ingest_version_missing_from_an_old_manifest_is_1():
    assert Manifest.model_validate({k: v for k, v in OLD.items() if k != "ingest_version"}).ingest_version == 1


def test_a_format_1_manifest_loads_with_its_dense_store_and_other_formats_say_so(tmp_path):
    v1 = {k: v for k, v in OLD.items() if k != "segments"} | {"format_version": 1, "dense": {"kind": "embedded"}}
    m = Manifest.model_validate(v1)
    assert m.format_version == 1 and m.dense == {"kind": "embedded"} and m.segments == []
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "manifest.json").write_text(json.dumps({"format_version": 1}))
    with pytest.raises(IndexFormatOld, match="litloop index upgrade"):
        read_manifest(tmp_path / "v")
    (tmp_path / "v" / "manifest.json").write_text(json.dumps({"format_version": FORMAT_VERSION + 1}))
    with pytest.raises(IndexProblem, match="rebuild it"):
        read_manifest(tmp_path / "v")
    (tmp_path / "v" / "manifest.json").write_text("{not json")
    with pytest.raises(IndexProblem, match="unreadable manifest"):
        read_manifest(tmp_path / "v")
