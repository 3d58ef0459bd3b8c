"""BM25 over segments (tools/retrieval/bm25_segments.py) against the reference implementation,
rank_bm25.BM25Okapi (a reference implementation): however the documents are cut into segments, saved and
memory-mapped, merged back by a compaction, the scores are rank_bm25's and the rankings are its
scores sorted by the documented rule (score descending, then row; only documents that hold a
query term)."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from tests.conftest import CITESEER
from tools.retrieval import bm25_maxscore, bm25_segments
from tools.retrieval.bm25_segments import Postings, SegmentedBM25, Stats
from tools.retrieval.text import tokenize

rank_bm25 = pytest.importorskip("rank_bm25")

pytestmark = pytest.mark.unit

K1, B, EPS = 1.5, 0.75, 0.25

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


def reference_top_k(theirs, docs, query, k) -> list[tuple[int, float]]:
    """rank_bm25's scores ranked exhaustively: documents holding a query term, by score
    descending, then by row."""
    scores = theirs.get_scores(query)
    cand = np.flatnonzero([not set(d).isdisjoint(query) for d in docs])
    order = cand[np.lexsort((cand, -scores[cand]))][:k]
    return [(int(i), float(scores[i])) for i in order]


def assert_same_ranking(got, want) -> None:
    assert [r for r, _ in got] == [r for r, _ in want]
    assert np.allclose([s for _, s in got], [s for _, s in want], rtol=1e-9, atol=1e-12)


def segmented(parts, tmp_path=None) -> SegmentedBM25:
    """BM25 over `parts` (lists of token lists), one segment each; saved and loaded memory-mapped
    when `tmp_path` is given, as an index does."""
    postings = [Postings.build(p) for p in parts]
    stats = Stats.empty()
    for p in postings:
        stats = stats.add(p)
    if tmp_path is not None:
        for i, p in enumerate(postings):
            (tmp_path / f"s{i}").mkdir()
            p.save(tmp_path / f"s{i}", "bm25")
        meta = stats.save(tmp_path, "bm25")
        json.loads(json.dumps(meta))  # what the manifest keeps is plain JSON
        stats = Stats.load(tmp_path, "bm25", meta)
        postings = [Postings.load(tmp_path / f"s{i}", "bm25") for i in range(len(parts))]
        assert isinstance(postings[0].rows, np.memmap)
    return SegmentedBM25(stats, postings, K1, B, EPS)


@pytest.mark.parametrize("cuts", [[6], [1, 5], [2, 2, 2], [4, 0, 2], [1, 1, 1, 1, 1, 1]])
def test_any_cut_of_the_hand_corpus_equals_rank_bm25(cuts, tmp_path):
    parts, at = [], 0
    for n in cuts:
        parts.append(HAND[at : at + n])
        at += n
    ours = segmented(parts, tmp_path)
    theirs = rank_bm25.BM25Okapi(HAND, k1=K1, b=B, epsilon=EPS)
    assert len(ours) == len(HAND) and ours.avgdl == theirs.avgdl
    for query in HAND_QUERIES:
        assert_same(ours.scores(query), theirs.get_scores(query))
        for prune in (False, True):
            assert_same_ranking(ours.top_k(query, 4, prune=prune), reference_top_k(theirs, HAND, query, 4))
    assert ours.idf("neural") == pytest.approx(theirs.idf["neural"], rel=1e-12)  # the epsilon floor
    assert ours.idf("unknownterm") == 0.0


@pytest.fixture(scope="module")
def citeseer_docs() -> tuple[list[list[str]], list[list[str]]]:
    with open(CITESEER, encoding="utf-8") as f:
        records = [json.loads(line) for line in f][:2400]
    docs = [tokenize(f"{r.get('title') or ''}\n{r.get('abstract') or ''}") for r in records[:2000]]
    queries = [q for r in records[2000:] if (q := tokenize(r.get("title") or ""))][:40]
    return docs, queries


def test_segments_of_a_real_corpus_rank_as_one_index(citeseer_docs, tmp_path):
    docs, queries = citeseer_docs
    theirs = rank_bm25.BM25Okapi(docs)
    ours = segmented([docs[:1500], docs[1500:1501], docs[1501:]], tmp_path)
    assert ours.vocab_size == len(theirs.idf) and ours.avgdl == theirs.avgdl
    for query in queries:
        assert_same(ours.scores(query), theirs.get_scores(query))
        assert_same_ranking(ours.top_k(query, 20), reference_top_k(theirs, docs, query, 20))


def test_a_compaction_gives_the_same_postings_and_scores(citeseer_docs, tmp_path):
    docs, queries = citeseer_docs
    parts = [Postings.build(docs[a:b]) for a, b in ((0, 700), (700, 1300), (1300, 2000))]
    merged = Postings.concat(parts)
    fresh = Postings.build(docs)
    for name in ("terms", "indptr", "rows", "tf", "doc_len"):
        assert np.array_equal(getattr(merged, name), getattr(fresh, name)), name
    stats = Stats.empty()
    for p in parts:
        stats = stats.add(p)
    one, three = SegmentedBM25(stats, [merged], K1, B, EPS), SegmentedBM25(stats, parts, K1, B, EPS)
    for query in queries[:10]:
        assert np.array_equal(one.scores(query), three.scores(query))


def test_statistics_grow_by_union(citeseer_docs):
    docs, _ = citeseer_docs
    a, b = Postings.build(docs[:1000]), Postings.build(docs[1000:])
    grown = Stats.empty().add(a).add(b)
    whole = Postings.build(docs)
    assert np.array_equal(grown.terms, whole.terms) and np.array_equal(grown.df, whole.df)
    assert grown.n_docs == 2000 and grown.total_len == int(whole.doc_len.sum())


def test_empty_segments_and_queries():
    ours = segmented([[], [["only"]], []])
    assert len(ours) == 1 and ours.top_k(["only"], 5) == [(0, pytest.approx(ours.scores(["only"])[0]))]
    assert ours.top_k([], 5) == [] and ours.top_k(["only"], 0) == []
    assert segmented([[]]).scores(["x"]).shape == (0,)


def test_a_hash_collision_within_a_segment_stops_the_build_naming_both(monkeypatch):
    monkeypatch.setattr(bm25_segments, "term_hash", lambda t: 7)
    with pytest.raises(ValueError, match="collision between 'neural' and 'network'"):
        Postings.build([["neural", "network"]])


def test_segments_that_do_not_match_the_statistics_are_refused():
    p = Postings.build(HAND)
    with pytest.raises(ValueError, match="segments hold 6 documents, the statistics 0"):
        SegmentedBM25(Stats.empty(), [p], K1, B, EPS)


def test_long_queries_with_repeated_terms_score_as_rank_bm25(citeseer_docs, tmp_path):
    # a Relate seed's title and abstract as the query: many terms, several repeated (rank_bm25
    # adds a repeated term once per repeat; the segments add it once with its weight times the count)
    docs, _ = citeseer_docs
    ours = segmented([docs[:1200], docs[1200:]], tmp_path)
    theirs = rank_bm25.BM25Okapi(docs)
    for seed in docs[::97][:12]:
        assert len(set(seed)) < len(seed)  # the case under test: repeats
        assert_same(ours.scores(seed), theirs.get_scores(seed))
        assert_same_ranking(ours.top_k(seed, 30), reference_top_k(theirs, docs, seed, 30))


def test_top_k_orders_by_score_then_row():
    # docs 1, 3 and 5 are identical, so they tie exactly; doc 0 is the best match
    docs = [["graph", "graph"], ["graph", "x"], ["y"], ["graph", "x"], ["z"], ["graph", "x"]]
    ours = segmented([docs[:2], docs[2:]])
    got = ours.top_k(["graph"], 10)
    assert [i for i, _ in got] == [0, 1, 3, 5]
    assert got[1][1] == got[2][1] == got[3][1] < got[0][1]
    # the cut-off falls inside the tie: the lower rows win
    assert [i for i, _ in ours.top_k(["graph"], 2)] == [0, 1]
    assert [i for i, _ in ours.top_k(["graph"], 3)] == [0, 1, 3]


def test_top_k_matches_the_exhaustive_ranking_on_a_random_corpus():
    rng = np.random.default_rng(7)
    vocab = [f"t{i}" for i in range(40)]
    docs = [list(rng.choice(vocab, size=int(rng.integers(0, 12)))) for _ in range(300)]
    ours = segmented([docs[:120], docs[120:121], docs[121:]])
    theirs = rank_bm25.BM25Okapi(docs, k1=K1, b=B, epsilon=EPS)
    for _ in range(30):
        query = list(rng.choice(vocab + ["unknown"], size=int(rng.integers(1, 5))))
        for k in (1, 5, 17, 1000):
            want = reference_top_k(theirs, docs, query, k)
            assert_same_ranking(ours.top_k(query, k, prune=False), want)
            assert ours.top_k(query, k, prune=True) == ours.top_k(query, k, prune=False)


def test_a_document_holding_a_term_is_kept_at_score_zero():
    # N=2, n=1: idf = log(1.5) - log(1.5) = 0, so the matching doc scores exactly 0
    assert segmented([[["alpha"], ["beta"]]]).top_k(["alpha"], 5) == [(0, 0.0)]


def test_a_string_instead_of_a_token_list_is_refused():
    with pytest.raises(TypeError, match="expects token lists"):
        Postings.build([["ok"], "not tokenised"])  # type: ignore[list-item]


# ---------------------------------------------------------------------- pruning (MaxScore)


def pruned_and_exhaustive_agree(ours: SegmentedBM25, query: list[str], k: int) -> bool:
    """Whether pruning returns the exhaustive top k to the bit (rows, order, float scores), and
    whether it actually pruned (a pruning that always gave up would pass vacuously)."""
    want = ours.top_k(query, k, prune=False)
    assert ours.top_k(query, k, prune=True) == want, (query, k)
    return bm25_maxscore.MaxScore(ours, ours._terms(query), k).run() is not None


def seed_queries(docs: list[list[str]], rng: np.random.Generator, n: int) -> list[list[str]]:
    """Relate-style queries: the first part of a document's text (up to the whole of it), and
    short ones of a few words drawn anywhere in the corpus."""
    out = []
    for _ in range(n):
        doc = docs[int(rng.integers(len(docs)))] or ["empty"]
        out.append(doc[: int(rng.integers(1, len(doc) + 1))])
        other = docs[int(rng.integers(len(docs)))] or ["empty"]
        out.append([other[int(i)] for i in rng.integers(0, len(other), size=int(rng.integers(2, 7)))])
    return out


def test_pruned_top_k_is_the_exhaustive_one_to_the_bit(citeseer_docs, tmp_path):
    docs, titles = citeseer_docs
    ours = segmented([docs[:900], docs[900:901], docs[901:1500], docs[1500:]], tmp_path)
    assert all(s.max_tf is not None for s in ours.segments)  # saved and memory-mapped with the index
    rng = np.random.default_rng(11)
    pruned = total = 0
    for query in seed_queries(docs, rng, 25) + titles[:20]:
        for k in (1, 10, 101, 5000):  # 5000: more than any query matches
            pruned += pruned_and_exhaustive_agree(ours, query, k)
            total += 1
    assert pruned > total // 2  # most of these queries skip terms


def test_pruning_breaks_ties_by_row_as_the_exhaustive_scorer(citeseer_docs):
    # every document twice (rows i and i + 600): every score ties, and k cuts through the ties
    docs, _ = citeseer_docs
    twice = docs[:600] + docs[:600]
    ours = segmented([twice[:450], twice[450:]])
    rng = np.random.default_rng(5)
    pruned = 0
    for query in seed_queries(docs[:600], rng, 25):
        for k in (1, 7, 50, 101):
            pruned += pruned_and_exhaustive_agree(ours, query, k)
            got = ours.top_k(query, k)
            scores = [s for _, s in got]
            assert scores == sorted(scores, reverse=True)
            for (r1, s1), (r2, s2) in itertools.pairwise(got):
                assert s1 > s2 or r1 < r2
    assert pruned > 0


def test_segments_without_recorded_bounds_prune_exactly(citeseer_docs, tmp_path):
    # a segment written before the bounds were kept: k1 + 1 bounds every weight, still exact
    docs, _ = citeseer_docs
    ours = segmented([docs[:1000], docs[1000:]], tmp_path)
    for seg in ours.segments:
        seg.max_tf = seg.min_len = None
    rng = np.random.default_rng(3)
    for query in seed_queries(docs, rng, 15):
        for k in (10, 101):
            pruned_and_exhaustive_agree(ours, query, k)


def test_segment_bounds_are_each_terms_largest_tf_and_shortest_document(citeseer_docs, monkeypatch):
    docs, _ = citeseer_docs
    monkeypatch.setattr(bm25_segments, "_BOUND_BLOCK", 97)  # many blocks, terms across their edges
    p = Postings.build(docs[:400])
    max_tf, min_len = p.bounds()
    for j in range(len(p.terms)):
        lo, hi = p.indptr[j], p.indptr[j + 1]
        assert max_tf[j] == p.tf[lo:hi].max() and min_len[j] == p.doc_len[p.rows[lo:hi]].min()
    merged = Postings.concat([Postings.build(docs[:150]), Postings.build(docs[150:400])])
    assert merged.max_tf is None  # a compaction computes them again when it saves
    assert np.array_equal(merged.bounds()[0], max_tf) and np.array_equal(merged.bounds()[1], min_len)


def test_kept_saturations_change_no_bit(citeseer_docs, monkeypatch):
    # the cache of long postings' saturations, on every term and small enough to evict: the same
    # scores and top k as computing each time, query after query
    docs, titles = citeseer_docs
    parts = [docs[:1100], docs[1100:]]
    queries = seed_queries(docs, np.random.default_rng(2), 10) + titles[:10]
    monkeypatch.setattr(bm25_segments, "_SATURATION_CACHE_FROM", 10**9)
    plain = segmented(parts)
    want = [(plain.scores(q), plain.top_k(q, 50, prune=False)) for q in queries]
    assert plain._cache_bytes == 0  # computed every time
    monkeypatch.setattr(bm25_segments, "_SATURATION_CACHE_FROM", 1)
    monkeypatch.setattr(bm25_segments, "_SATURATION_CACHE_BYTES", 200_000)
    monkeypatch.setattr(bm25_segments, "_DENSE_FROM", 20)  # terms in 1/20 of the documents, as a value each
    kept = segmented(parts)
    for query, (scores, top) in zip(queries, want, strict=True):
        assert np.array_equal(kept.scores(query), scores)
        for prune in (False, True):
            assert kept.top_k(query, 50, prune=prune) == top
    assert 0 < kept._cache_bytes <= 200_000
    assert any(dense for _, _, dense in kept._cache) and not all(dense for _, _, dense in kept._cache)


def test_two_threads_missing_one_key_count_its_bytes_once():
    # both threads miss the saturation cache for the same key, both make the array; the cache keeps
    # one copy and counts its bytes once (it counted them twice, so the LRU bound shrank over time)
    import threading

    ours = segmented([HAND])
    both_missed = threading.Barrier(2)

    def make() -> np.ndarray:
        both_missed.wait(timeout=10)
        return np.zeros(1000)

    got: list[np.ndarray] = []
    threads = [threading.Thread(target=lambda: got.append(ours._kept((0, 1, True), make))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got[0] is got[1]
    assert ours._cache_bytes == sum(bm25_segments._nbytes(v) for v in ours._cache.values()) == 8000
