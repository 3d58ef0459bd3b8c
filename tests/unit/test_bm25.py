"""BM25Index against the reference implementation, rank_bm25.BM25Okapi (STYLE habit 11)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import CITESEER
from tools.bm25 import BM25Index
from tools.text import tokenize

rank_bm25 = pytest.importorskip("rank_bm25")

pytestmark = pytest.mark.unit

# "neural" is in 4 of 6 docs, so its raw idf is negative and the epsilon floor applies;
# doc 4 is empty, doc 5 repeats a term.
HAND = [
    ["neural", "network", "training"],
    ["neural", "graph", "network", "graph"],
    ["bayesian", "inference", "neural"],
    ["neural", "retrieval", "ranking", "retrieval", "retrieval"],
    [],
    ["graph", "graph", "graph", "ranking"],
]
HAND_QUERIES = [
    ["neural"],
    ["graph"],
    ["neural", "graph"],
    ["graph", "graph"],  # a repeat counts twice
    ["retrieval", "unknownterm", "ranking"],
    ["unknownterm"],
    [],
    ["neural", "neural", "bayesian", "graph", "retrieval", "network"],
]


def assert_same(ours: np.ndarray, theirs: np.ndarray) -> None:
    assert ours.dtype == np.float64
    assert ours.shape == theirs.shape
    assert np.allclose(ours, theirs, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"k1": 1.2, "b": 0.75, "epsilon": 0.25},
        {"k1": 0.9, "b": 0.4, "epsilon": 0.5},
        {"k1": 2.0, "b": 0.95, "epsilon": 0.0},
    ],
)
def test_hand_corpus_equals_rank_bm25(params: dict[str, float]) -> None:
    ours = BM25Index.fit(HAND, **params)
    theirs = rank_bm25.BM25Okapi(HAND, **params)
    for query in HAND_QUERIES:
        assert_same(ours.scores(query), theirs.get_scores(query))


def test_empty_doc_with_b_one_scores_zero_where_rank_bm25_gives_nan() -> None:
    # The one deliberate difference: with b=1 an empty doc's denominator is 0 + k1 * 0, and
    # rank_bm25 computes 0/0 = NaN for it on every query term; a NaN would poison ranking.
    ours = BM25Index.fit(HAND, k1=2.0, b=1.0)
    theirs = rank_bm25.BM25Okapi(HAND, k1=2.0, b=1.0)
    for query in HAND_QUERIES[:-2]:
        with np.errstate(invalid="ignore"):
            ref = theirs.get_scores(query)
        assert np.isnan(ref[4]) and ours.scores(query)[4] == 0.0
        assert_same(ours.scores(query), np.nan_to_num(ref, nan=0.0))


def test_negative_idf_is_floored_to_epsilon_times_mean_idf() -> None:
    ours = BM25Index.fit(HAND)
    theirs = rank_bm25.BM25Okapi(HAND)
    # raw idf of "neural": log(6 - 4 + 0.5) - log(4 + 0.5) < 0
    assert np.log(2.5) - np.log(4.5) < 0
    assert ours.idf("neural") == pytest.approx(0.25 * theirs.average_idf, rel=1e-12)
    for term, idf in theirs.idf.items():
        assert ours.idf(term) == pytest.approx(idf, rel=1e-12)
    assert ours.idf("unknownterm") == 0.0


def test_repeated_query_term_counts_twice() -> None:
    ix = BM25Index.fit(HAND)
    assert np.allclose(ix.scores(["graph", "graph"]), 2 * ix.scores(["graph"]), rtol=1e-12)


def test_unknown_terms_and_empty_doc_score_zero() -> None:
    ix = BM25Index.fit(HAND)
    assert not ix.scores(["unknownterm"]).any()
    assert not ix.scores([]).any()
    assert ix.scores(["neural", "graph"])[4] == 0.0
    assert np.array_equal(ix.scores(["graph", "unknownterm"]), ix.scores(["graph"]))


def test_properties_and_len() -> None:
    ix = BM25Index.fit(iter(HAND), k1=1.2, b=0.6)  # a one-pass iterable is enough
    assert len(ix) == 6
    assert ix.vocab_size == len({t for d in HAND for t in d})
    assert (ix.k1, ix.b, ix.epsilon) == (1.2, 0.6, 0.25)
    assert ix.avgdl == pytest.approx(sum(map(len, HAND)) / 6)


def test_a_string_doc_is_rejected() -> None:
    with pytest.raises(TypeError, match="token lists"):
        BM25Index.fit([["ok"], "not tokenised"])  # type: ignore[list-item]


# -- a real corpus -------------------------------------------------------------------------


def _record_text(record: dict) -> str:
    return f"{record.get('title') or ''} {record.get('abstract') or ''}"


@pytest.fixture(scope="module")
def citeseer() -> tuple[list[list[str]], list[list[str]]]:
    """2,000 docs (title + abstract) and 50 queries from titles of later records of the bundled
    CiteSeer corpus."""
    with open(CITESEER, encoding="utf-8") as f:
        records = [json.loads(line) for line in f]
    docs = [tokenize(_record_text(r)) for r in records[:2000]]
    titles = [tokenize(r.get("title") or "") for r in records[2000:]]
    queries = [t for t in titles if t][:50]
    assert len(docs) == 2000 and len(queries) == 50
    return docs, queries


def test_real_corpus_equals_rank_bm25(citeseer: tuple[list[list[str]], list[list[str]]]) -> None:
    docs, queries = citeseer
    ours = BM25Index.fit(docs)
    theirs = rank_bm25.BM25Okapi(docs)
    assert ours.vocab_size == len(theirs.idf)
    assert ours.avgdl == theirs.avgdl
    for query in queries:
        assert_same(ours.scores(query), theirs.get_scores(query))


def test_real_corpus_top_k_is_reference_ranking(
    citeseer: tuple[list[list[str]], list[list[str]]],
) -> None:
    docs, queries = citeseer
    ours = BM25Index.fit(docs)
    theirs = rank_bm25.BM25Okapi(docs)
    doc_sets = [set(d) for d in docs]
    for query in queries:
        ref = theirs.get_scores(query)
        contains = np.array([not s.isdisjoint(query) for s in doc_sets])
        cand = np.flatnonzero(contains)
        order = cand[np.lexsort((cand, -ref[cand]))][:10]
        got = ours.top_k(query, 10)
        assert [i for i, _ in got] == order.tolist()
        assert np.allclose([s for _, s in got], ref[order], rtol=1e-9, atol=1e-12)


def test_add_on_real_corpus_equals_fresh_fit(
    citeseer: tuple[list[list[str]], list[list[str]]],
) -> None:
    docs, queries = citeseer
    grown = BM25Index.fit(docs[:1200]).add(docs[1200:1700]).add(docs[1700:])
    fresh = BM25Index.fit(docs)
    for query in queries[:10]:
        assert np.array_equal(grown.scores(query), fresh.scores(query))


# -- add, save/load ------------------------------------------------------------------------


def test_add_equals_fresh_fit_and_leaves_the_old_index_alone() -> None:
    old = BM25Index.fit(HAND[:3], k1=1.3, b=0.7, epsilon=0.3)
    before = {tuple(q): old.scores(q) for q in HAND_QUERIES}
    grown = old.add(HAND[3:] + [["brand", "new", "terms", "graph"]])
    fresh = BM25Index.fit(HAND + [["brand", "new", "terms", "graph"]], k1=1.3, b=0.7, epsilon=0.3)
    assert len(grown) == len(fresh) == 7
    assert grown.vocab_size == fresh.vocab_size
    assert (grown.k1, grown.b, grown.epsilon) == (1.3, 0.7, 0.3)
    for query in HAND_QUERIES + [["brand", "graph"]]:
        assert np.allclose(grown.scores(query), fresh.scores(query), rtol=1e-12, atol=0)
    assert len(old) == 3
    for query in HAND_QUERIES:
        assert np.array_equal(old.scores(query), before[tuple(query)])


def test_add_nothing_and_add_to_empty() -> None:
    ix = BM25Index.fit(HAND)
    assert np.array_equal(ix.add([]).scores(["graph"]), ix.scores(["graph"]))
    from_empty = BM25Index.fit([]).add(HAND)
    assert np.array_equal(from_empty.scores(["neural", "graph"]), ix.scores(["neural", "graph"]))


def test_save_load_round_trip(tmp_path: Path) -> None:
    ix = BM25Index.fit(HAND, k1=1.1, b=0.65, epsilon=0.2).add([["über", "graph", "ﬁ"]])
    ix.save(tmp_path, "chunks")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chunks.meta.json", "chunks.tf.npz"]
    back = BM25Index.load(tmp_path, "chunks")
    assert len(back) == len(ix) and back.vocab_size == ix.vocab_size
    assert (back.k1, back.b, back.epsilon) == (ix.k1, ix.b, ix.epsilon)
    for query in HAND_QUERIES + [["über", "ﬁ", "graph"]]:
        assert np.array_equal(back.scores(query), ix.scores(query))
        assert back.top_k(query, 3) == ix.top_k(query, 3)


def test_load_rejects_another_format(tmp_path: Path) -> None:
    BM25Index.fit(HAND).save(tmp_path, "x")
    meta_path = tmp_path / "x.meta.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    meta["version"] = 999
    meta_path.write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(ValueError, match="not a litloop-bm25"):
        BM25Index.load(tmp_path, "x")


# -- top_k ---------------------------------------------------------------------------------


def test_top_k_orders_by_score_then_doc_index() -> None:
    # docs 1, 3 and 5 are identical, so they tie exactly; doc 0 is the best match.
    docs = [["graph", "graph"], ["graph", "x"], ["y"], ["graph", "x"], ["z"], ["graph", "x"]]
    ix = BM25Index.fit(docs)
    got = ix.top_k(["graph"], 10)
    assert [i for i, _ in got] == [0, 1, 3, 5]
    assert got[1][1] == got[2][1] == got[3][1] < got[0][1]
    # the cut-off falls inside the tie: the lower doc indices win
    assert [i for i, _ in ix.top_k(["graph"], 2)] == [0, 1]
    assert [i for i, _ in ix.top_k(["graph"], 3)] == [0, 1, 3]
    assert ix.top_k(["graph"], 0) == []


def test_top_k_matches_full_sort_on_random_corpus() -> None:
    rng = np.random.default_rng(7)
    vocab = [f"t{i}" for i in range(40)]
    docs = [list(rng.choice(vocab, size=int(rng.integers(0, 12)))) for _ in range(300)]
    ix = BM25Index.fit(docs)
    for _ in range(30):
        query = list(rng.choice(vocab + ["unknown"], size=int(rng.integers(1, 5))))
        scores = ix.scores(query)
        cand = np.flatnonzero([any(t in d for t in query) for d in docs])
        for k in (1, 5, 17, 1000):
            expected = cand[np.lexsort((cand, -scores[cand]))][:k]
            got = ix.top_k(query, k)
            assert [i for i, _ in got] == expected.tolist()
            assert [s for _, s in got] == scores[expected].tolist()


def test_top_k_without_a_known_term_is_empty() -> None:
    ix = BM25Index.fit(HAND)
    assert ix.top_k(["unknownterm", "another"], 5) == []
    assert ix.top_k([], 5) == []


def test_top_k_keeps_docs_that_contain_a_term_even_at_score_zero() -> None:
    # N=2, n=1: idf = log(1.5) - log(1.5) = 0, so the matching doc scores exactly 0
    ix = BM25Index.fit([["alpha"], ["beta"]])
    assert ix.top_k(["alpha"], 5) == [(0, 0.0)]
