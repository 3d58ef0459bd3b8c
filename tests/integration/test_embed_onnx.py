"""The ONNX backends of the chunk embedder with the real bundled model: exported offline from
the local files into the data folder, vectors that agree with torch's (cosine, neighbour order),
and the cache reused by a later load."""

from __future__ import annotations

import numpy as np
import pytest

from tools.models import embed, embed_onnx
from tools.models.embed import get_embedder
from tools.settings import BUNDLED_EMBEDDER

pytestmark = pytest.mark.integration

DOCS = [
    "Conditional random fields are trained for sequence labelling of named entities.",
    "Bread dough rises because yeast ferments sugars into carbon dioxide.",
    "We index a million documents with an inverted file and answer Boolean queries.",
    "Reinforcement learning agents learn a policy from delayed rewards in a grid world.",
    "A relational database optimiser chooses join orders by estimated cost.",
    "Collaborative filtering recommends items from the ratings of similar users.",
    "Support vector machines find the maximum-margin hyperplane between two classes.",
    "The citation graph of a paper collection reveals communities of related work.",
]
QUERIES = [
    "named entity recognition with CRFs",
    "how does yeast make bread rise",
    "query evaluation over inverted indexes",
    "reward-driven policy learning",
    "cost-based join ordering in SQL engines",
    "recommender systems from user ratings",
]


@pytest.fixture(scope="module")
def backends(tmp_path_factory, monkeypatch_module):
    # HF_HUB_OFFLINE is set by tools.models.embed.offline(); make sure nothing could be fetched anyway
    monkeypatch_module.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch_module.setenv("TRANSFORMERS_OFFLINE", "1")
    data = tmp_path_factory.mktemp("onnx-data")
    monkeypatch_module.setattr(embed, "_loaded", {})
    return data, {b: get_embedder(BUNDLED_EMBEDDER, "cpu", 4, b, data) for b in ("torch", "onnx", "onnx-int8")}


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


def test_exported_once_into_the_data_folder(backends):
    data, models = backends
    folders = list((data / "embedders").iterdir())
    assert [f.name for f in folders if not f.name.startswith(".")] == [models["onnx-int8"].folder.name]
    names = {p.name for p in folders[0].iterdir()}
    assert {"model.onnx", "model_int8.onnx", "tokenizer.json", "meta.json"} <= names
    assert not [n for n in names if n.startswith(".")]  # no half-written file left
    # int8 weights: the quantised file is about a quarter of the fp32 one
    assert (folders[0] / "model_int8.onnx").stat().st_size < 0.4 * (folders[0] / "model.onnx").stat().st_size


@pytest.mark.parametrize("backend, floor", [("onnx", 0.9999), ("onnx-int8", 0.95)])
def test_unit_vectors_close_to_torch(backends, backend, floor):
    _, models = backends
    texts = DOCS + QUERIES + ["", "x" * 3000]  # an empty text and one past the 256-token cut
    ref = models["torch"].encode(texts)
    got = models[backend].encode(texts)
    assert got.shape == ref.shape == (len(texts), 384) and got.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-4)
    cos = (got * ref).sum(axis=1)
    assert cos.min() >= floor, (backend, cos.round(4).tolist())
    assert models[backend].dim == models["torch"].dim == 384
    assert models[backend].max_tokens == models["torch"].max_tokens == 256


def test_int8_nearest_neighbours_agree_with_torch(backends):
    _, models = backends
    order = {}
    for b in ("torch", "onnx-int8"):
        m = models[b]
        scores = m.encode(QUERIES) @ m.encode(DOCS).T
        order[b] = np.argsort(-scores, axis=1)
    # every query's best document is the one written for it, under both backends
    assert order["torch"][:, 0].tolist() == list(range(len(QUERIES)))
    assert order["onnx-int8"][:, 0].tolist() == order["torch"][:, 0].tolist()
    assert (order["onnx-int8"][:, :3] == order["torch"][:, :3]).mean() >= 0.8


@pytest.mark.parametrize("backend", ["onnx", "onnx-int8"])
def test_a_text_s_vector_does_not_depend_on_the_texts_around_it(backends, backend):
    # an index add embeds other windows together than a rebuild does: the same vectors either way
    m = backends[1][backend]
    alone = np.vstack([m.encode([t]) for t in DOCS[:3]])
    np.testing.assert_array_equal(alone, m.encode(DOCS[:3]))
    np.testing.assert_array_equal(alone[::-1], m.encode(DOCS[:3][::-1]))


def test_a_later_load_reuses_the_export(backends, monkeypatch):
    data, models = backends

    def no_export(*_a, **_k):
        raise AssertionError("exported again")

    monkeypatch.setattr(embed_onnx, "_export", no_export)
    monkeypatch.setattr(embed_onnx, "_quantize", no_export)
    again = embed_onnx.OnnxEmbedder(
        BUNDLED_EMBEDDER,
        embed.resolve_model_path(BUNDLED_EMBEDDER),
        "onnx-int8",
        data,
        batch_size=4,
        load_model=embed._load_sentence_transformer,
    )
    np.testing.assert_allclose(again.encode(DOCS[:2]), models["onnx-int8"].encode(DOCS[:2]), atol=1e-6)


def test_a_missing_int8_file_is_quantised_from_the_cached_export(backends, tmp_path):
    import shutil

    _, models = backends
    folder = models["onnx"].folder
    copy = tmp_path / "embedders" / folder.name
    shutil.copytree(folder, copy)
    (copy / "model_int8.onnx").unlink()
    assert (
        embed_onnx.ensure_exported(
            embed.resolve_model_path(BUNDLED_EMBEDDER), "onnx-int8", tmp_path, embed._load_sentence_transformer
        )
        == copy
    )
    assert (copy / "model_int8.onnx").exists()
