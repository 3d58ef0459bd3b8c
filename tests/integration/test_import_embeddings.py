"""`index build --embeddings`: window vectors computed elsewhere, imported instead of embedded,
and `index export-windows`, which says which windows to compute (a real index, the real embedder)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from typer.testing import CliRunner

from agent.cli.main import app
from agent.settings import get_settings
from tests.conftest import PAPERS

pytestmark = pytest.mark.integration

runner = CliRunner()
QUERIES = ["conditional random fields for sequence labeling", "bread fermentation", "label bias in Markov models"]
# one paper long enough to be embedded as several windows (1,000-character windows by default)
LONG = (
    "long",
    "Feature induction for conditional random fields",
    " ".join(f"Sentence {n} says that induced features of linear-chain CRFs help NER." for n in range(60)),
    ["crf"],
)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("import-corpus")
    rows = [
        {"paper_id": p, "title": t, "abstract": a, "references": r, "venue": "ACL", "year": 2005}
        for p, t, a, r in [*PAPERS, LONG]
    ]
    (folder / "papers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder / "papers.jsonl"


@pytest.fixture(scope="module")
def first(corpus, tmp_path_factory):
    """An index built the usual way (every window embedded here)."""
    from tools.index import build_index

    root = tmp_path_factory.mktemp("first") / "idx"
    build_index([corpus], root, get_settings())
    return root


@pytest.fixture(scope="module")
def windows(first, tmp_path_factory):
    """The exported windows of `first` (through the CLI), with the real embedder's vectors."""
    from tools.models.embed import get_embedder

    out = tmp_path_factory.mktemp("export") / "windows.jsonl"
    r = runner.invoke(app, ["index", "export-windows", "--index", str(first), "--out", str(out)])
    assert r.exit_code == 0, r.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert f"Wrote {len(rows)} windows" in r.stdout
    e = get_settings().embedder
    vectors = get_embedder(e.model, "cpu", e.batch_size).encode([w["text"] for w in rows])
    return rows, vectors


def _save(path, ids, vectors, model=None):
    np.savez(
        path,
        ids=np.array(ids, dtype=str),
        vectors=np.asarray(vectors, dtype=np.float32),
        model=np.array(model or get_settings().embedder.model),
    )
    return path


def _dense_ids(root) -> list[list[str]]:
    from tools.index import open_index

    idx = open_index(root, get_settings())
    try:
        return [[p.chunk_id for p in idx.dense_chunks(q, 5)] for q in QUERIES]
    finally:
        idx.close()


def test_export_of_input_files_gives_the_windows_a_build_of_them_embeds(corpus, windows, tmp_path):
    out = tmp_path / "from-input.jsonl"
    r = runner.invoke(app, ["index", "export-windows", str(corpus), "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert [json.loads(line) for line in out.read_text().splitlines()] == windows[0]
    bad = tmp_path / "none.jsonl"
    bad.write_text("not json\n")
    r = runner.invoke(app, ["index", "export-windows", str(bad), "--out", str(tmp_path / "x.jsonl")])
    assert r.exit_code == 1 and "none.jsonl:1" in r.output and "nothing to embed" in r.output


def test_export_writes_every_window_a_build_embeds(first, windows):
    rows, _ = windows
    manifest = json.loads((first / (first / "CURRENT").read_text().strip() / "manifest.json").read_text())
    assert len(rows) == manifest["counts"]["dense_windows"]
    assert all(set(w) == {"id", "chunk_id", "text"} and w["id"].startswith(w["chunk_id"] + "@w") for w in rows)
    assert sum(w["chunk_id"] == "long#c0" for w in rows) > 1  # the long abstract: several windows


def test_imported_vectors_search_like_embedded_ones(corpus, first, windows, tmp_path):
    rows, vectors = windows
    per_chunk = {}
    for w in rows:
        per_chunk[w["chunk_id"]] = per_chunk.get(w["chunk_id"], 0) + 1
    # a one-window chunk may go by its chunk id; a split one needs its window ids
    ids = [w["chunk_id"] if per_chunk[w["chunk_id"]] == 1 else w["id"] for w in rows]
    assert any("@" not in i for i in ids) and any("@" in i for i in ids)
    npz = _save(tmp_path / "vectors.npz", ids, vectors * 3.0)  # not unit length: normalised on import
    second = tmp_path / "second"
    r = runner.invoke(app, ["index", "build", str(corpus), "--index", str(second), "--embeddings", str(npz), "--json"])
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    assert report["windows_imported"] == len(rows) and report["windows_embedded"] == 0
    assert report["vectors_ignored"] == 0 and report["totals"]["dense_windows"] == len(rows)
    assert _dense_ids(second) == _dense_ids(first)
    r = runner.invoke(
        app, ["index", "build", str(corpus), "--index", str(tmp_path / "third"), "--embeddings", str(npz)]
    )
    assert r.exit_code == 0, r.output
    assert f"{len(rows)} windows imported from" in r.stdout and "0 embedded here" in r.stdout


def test_partial_file_embeds_the_rest_and_ignores_unknown_ids(corpus, first, windows, tmp_path):
    from tools.index import build_index

    rows, vectors = windows
    half = len(rows) // 2
    ids = [w["id"] for w in rows[:half]] + ["nosuch#c0", "crf#c0@w7", "other#c1@w0"]
    extra = np.ones((3, vectors.shape[1]), dtype=np.float32)
    npz = _save(tmp_path / "part.npz", ids, np.vstack([vectors[:half], extra]))
    report = build_index([corpus], tmp_path / "second", get_settings(), embeddings=npz)
    assert (report.windows_imported, report.windows_embedded, report.vectors_ignored) == (half, len(rows) - half, 3)
    assert _dense_ids(tmp_path / "second") == _dense_ids(first)


def _copy(first, tmp_path):
    root = tmp_path / "idx"
    shutil.copytree(first, root)
    return root, (root / "CURRENT").read_text(), sorted(p.name for p in root.iterdir())


@pytest.mark.parametrize("what", ["model", "dim", "nan"])
def test_a_file_that_does_not_fit_fails_and_leaves_the_index_alone(corpus, first, windows, tmp_path, what):
    from tools.index import BuildFailed, build_index

    rows, vectors = windows
    root, current, listing = _copy(first, tmp_path)
    model = "sentence-transformers/all-mpnet-base-v2" if what == "model" else None
    vectors = vectors[:, :100] if what == "dim" else vectors.copy()
    if what == "nan":
        vectors[1, 3] = np.nan
    npz = _save(tmp_path / "bad.npz", [w["id"] for w in rows], vectors, model)
    with pytest.raises(BuildFailed) as caught:
        build_index([corpus], root, get_settings(), embeddings=npz, rebuild=True)
    message = str(caught.value)
    assert str(npz) in message and "nothing written" in message
    expected = get_settings().embedder.model
    if what == "model":
        assert "sentence-transformers/all-mpnet-base-v2" in message and f"embeds with {expected!r}" in message
        assert "LITLOOP_EMBEDDER__MODEL" in message and "(384-d)" in message
    elif what == "dim":
        assert "100-d vectors" in message and "gives 384-d" in message
    else:
        assert "not finite" in message and repr(rows[1]["id"]) in message
    assert (root / "CURRENT").read_text() == current
    assert sorted(p.name for p in root.iterdir()) == listing


def test_an_add_checks_the_index_dimension_and_the_cli_says_why(corpus, first, windows, tmp_path):
    rows, vectors = windows
    root, current, listing = _copy(first, tmp_path)
    manifest = root / current.strip() / "manifest.json"
    data = json.loads(manifest.read_text())
    data["embedder"]["dim"] = 512  # as if the index held another embedder's vectors
    manifest.write_text(json.dumps(data))
    npz = _save(tmp_path / "v.npz", [w["id"] for w in rows], vectors)
    r = runner.invoke(app, ["index", "build", str(corpus), "--index", str(root), "--embeddings", str(npz)])
    assert r.exit_code == 1
    message = " ".join(r.output.split())
    assert "384-d vectors but index" in message and "holds 512-d ones" in message
    assert (root / "CURRENT").read_text() == current
    assert sorted(p.name for p in root.iterdir()) == listing


def test_jsonl_vector_file_is_read_and_normalised(tmp_path):
    from tools.index import vector_file

    path = tmp_path / "v.jsonl"
    path.write_text(
        '{"model": "m", "dim": 2, "window_chars": 1000}\n'
        '{"id": "p#c0", "vector": [3, 4]}\n{"id": "p#c1@w0", "vector": [0, 2]}\n'
    )
    vf = vector_file.load(path)
    assert (vf.model, vf.dim, vf.window_chars, vf.ids) == ("m", 2, 1000, ["p#c0", "p#c1@w0"])
    assert np.allclose(vf.vectors, [[0.6, 0.8], [0.0, 1.0]])
    vector_file.check(vf, "m", 2, 1000)
    with pytest.raises(vector_file.VectorFileProblem, match="windows of 1000 characters"):
        vector_file.check(vf, "m", 2, 800)
    # a chunk id stands for its chunk only when the chunk is one window
    windows = [("p#c0@w0", "p#c0", "p", "a"), ("p#c1@w0", "p#c1", "p", "b"), ("p#c1@w1", "p#c1", "p", "c")]
    assert vf.match(windows) == ([0, 1], [0, 1])
    vf2 = vector_file.VectorFile(path, "m", ["p#c1"], np.ones((1, 2), dtype=np.float32))
    assert vf2.match(windows) == ([], [])
    path.write_text('{"id": "p#c0", "vector": [3, 4]}\n')
    with pytest.raises(vector_file.VectorFileProblem, match="first line must be"):
        vector_file.load(path)
