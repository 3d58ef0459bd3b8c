"""The pure parts of bench/scale.py: the synthetic corpus, its citation graph, percentiles, and
the synthetic vectors (bench/vectors.py)."""

from __future__ import annotations

import numpy as np
import pytest

from bench.scale import (
    PARAGRAPH_MAX,
    PARAGRAPH_MIN,
    HashEmbedder,
    in_degrees,
    latency_ms,
    load_vocabulary,
    make_queries,
    patch_embedder,
    preferential_references,
    synthetic_corpus,
    zipf_cdf,
)
from bench.vectors import Clustered


@pytest.fixture(scope="module")
def vocab() -> list[str]:
    return load_vocabulary(limit=3000)


def test_vocabulary_is_commonest_first(vocab):
    assert len(vocab) == 3000
    assert len(set(vocab)) == len(vocab)
    assert "the" in vocab[:5]


def test_zipf_cdf_ends_at_one_and_rises():
    cdf = zipf_cdf(100)
    assert cdf[-1] == pytest.approx(1.0)
    assert np.all(np.diff(cdf) > 0)
    assert cdf[0] > cdf[1] - cdf[0] > cdf[2] - cdf[1]  # rank 1 commonest


def test_same_seed_same_corpus_other_seed_other_corpus(vocab):
    a = synthetic_corpus(12, 4, seed=3, vocab=vocab)
    assert a == synthetic_corpus(12, 4, seed=3, vocab=vocab)
    assert a != synthetic_corpus(12, 4, seed=4, vocab=vocab)


def test_sizes_come_out_as_asked(vocab):
    recs = synthetic_corpus(30, 6, seed=0, vocab=vocab)
    assert len(recs) == 30
    assert len({r["paper_id"] for r in recs}) == 30
    for r in recs:
        assert r["title"] and r["abstract"]
        assert len(r["body_text"]) == 5  # plus the title-and-abstract chunk: 6 chunks
        for p in r["body_text"]:
            # one chunk per paragraph: at least the chunker's packing floor, under its cap
            assert PARAGRAPH_MIN <= len(p["text"]) <= PARAGRAPH_MAX + 30
    lengths = [len(p["text"]) for r in recs for p in r["body_text"]]
    assert 450 <= np.median(lengths) <= 700


def test_chunker_makes_about_m_chunks(vocab, tmp_path):
    from bench.scale import write_jsonl
    from tools.ingest.chunker import chunk_document
    from tools.ingest.loader import parse_file

    write_jsonl(tmp_path / "c.jsonl", synthetic_corpus(8, 7, seed=1, vocab=vocab))
    docs = list(parse_file(tmp_path / "c.jsonl"))
    assert len(docs) == 8
    counts = [len(chunk_document(d)) for d in docs]
    assert all(6 <= c <= 8 for c in counts), counts
    assert all(
        len(d.paper.bibliography) == len(r)
        for d, r in zip(docs, [x["bib_entries"] for x in synthetic_corpus(8, 7, seed=1, vocab=vocab)], strict=True)
    )


def test_references_point_back_to_corpus_papers(vocab):
    recs = synthetic_corpus(40, 2, seed=0, vocab=vocab)
    ids = [r["paper_id"] for r in recs]
    for i, r in enumerate(recs):
        links = [e["link"] for e in r["bib_entries"].values()]
        assert len(set(links)) == len(links)
        assert all(link in ids[:i] for link in links)


def test_in_degree_is_heavy_tailed():
    refs = preferential_references(2000, np.random.default_rng(0))
    deg = np.bincount([c for rs in refs for c in rs], minlength=2000)
    mean_out = np.mean([len(r) for r in refs])
    assert 9 < mean_out < 11
    assert deg.max() > 10 * max(1, np.median(deg))


def test_in_degrees_counts_links():
    recs = [
        {"paper_id": "a", "bib_entries": {}},
        {"paper_id": "b", "bib_entries": {"B0": {"link": "a"}}},
        {"paper_id": "c", "bib_entries": {"B0": {"link": "a"}, "B1": {"link": "b"}}},
    ]
    assert in_degrees(recs) == [2, 1, 0]


def test_queries_are_deterministic_and_skip_commonest_words(vocab):
    qs = make_queries(vocab, 20, seed=0)
    assert qs == make_queries(vocab, 20, seed=0)
    assert all(3 <= len(q.split()) <= 6 for q in qs)
    top = set(vocab[:100])
    assert not any(w in top for q in qs for w in q.split())


def test_latency_percentiles():
    out = latency_ms([0.001 * i for i in range(1, 101)])  # 1..100 ms
    assert out["p50_ms"] == pytest.approx(50.5)
    assert out["p95_ms"] == pytest.approx(95.05)


def test_hash_embedder_unit_deterministic():
    emb = HashEmbedder("x")
    a = emb.encode(["one text", "another"])
    assert a.shape == (2, 384) and a.dtype == np.float32
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(a, emb.encode(["one text", "another"]))
    assert not np.allclose(a[0], a[1])


def _pairwise(v: np.ndarray) -> tuple[float, float]:
    s = v @ v.T
    np.fill_diagonal(s, -1.0)
    return float(s[np.triu_indices(len(v), 1)].mean()), float(s.max(axis=1).mean())


def test_clustered_vectors_are_shaped_like_real_embeddings_not_random_ones():
    shaped = Clustered(seed=0)
    i = np.arange(45 * 90)
    v = shaped.windows(i // 90, (i % 90) / 90, i)
    assert v.shape == (4050, 384) and np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    mean_cos, nearest = _pairwise(v)
    # the demo index's real MiniLM vectors: 0.172 and 0.757 (bench/vectors.py); random: 0.0 and 0.18
    assert 0.12 < mean_cos < 0.23 and 0.7 < nearest < 0.85
    within = float((v[:90] @ v[:90].T).mean())
    across = float((v[:90] @ v[90:180].T).mean())
    assert within > across + 0.2  # a paper's windows lie together
    assert np.array_equal(shaped.window(3, 0.5, 7), Clustered(seed=0).window(3, 0.5, 7))  # rebuilt, not stored


def test_patched_build_gives_registered_windows_their_papers_vectors(monkeypatch):
    import tools.models.embed
    import tools.retrieval.dense

    monkeypatch.setattr(tools.models.embed, "get_embedder", tools.models.embed.get_embedder)
    monkeypatch.setattr(tools.retrieval.dense, "windows_for", tools.retrieval.dense.windows_for)
    emb = patch_embedder("clustered", papers=10, seed=0, chunks_per_paper=4)
    texts = {f"syn000000{p}": [f"paper {p} paragraph {j} " * 20 for j in range(4)] for p in (1, 2)}
    chunks = [(f"{pid}#{j}", pid, t) for pid, ts in texts.items() for j, t in enumerate(ts)]
    windows = tools.retrieval.dense.windows_for(chunks, 2000)
    assert tools.models.embed.get_embedder("any") is emb
    v = emb.encode([w.text for w in windows])
    first, second = v[:4], v[4:]
    assert float((first @ first.T).mean()) > float((first @ second.T).mean()) + 0.2
    q = emb.encode(["a question nobody registered"])
    assert q.shape == (1, 384) and abs(float(np.linalg.norm(q)) - 1.0) < 1e-5
