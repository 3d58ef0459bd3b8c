"""Benchmark the segmented BM25 of every index (tools.retrieval.bm25_segments) against
rank_bm25.BM25Okapi on a synthetic chunk corpus.

    python -m bench.bm25 [--docs 200000] [--queries 50] [--vocab 50000] [--segments 4] [--seed 0]

The corpus is cut into `--segments` equal segments, as an index that grew by several adds holds
it (scores do not depend on the cut; tests/unit/test_bm25_segments.py checks that).

The corpus imitates tokenised chunks: a Zipf-distributed vocabulary and 80-250 tokens per doc,
with a fixed seed so runs compare. Both indexes get the same queries; the script checks that
our top 10 equals rank_bm25's for every query, and exits non-zero if not.
"""

from __future__ import annotations

import argparse
import gc
import resource
import sys
import time

import numpy as np

from tools.retrieval.bm25_segments import Postings, SegmentedBM25, Stats

ZIPF_EXPONENT = 1.07  # word frequencies in English text fall off roughly as 1/rank
# Queries skip the most frequent ranks: the tokenizer drops stopwords, so real queries rarely
# consist of terms found in most chunks.
QUERY_SKIP_TOP_RANKS = 50


def zipf_probabilities(n_terms: int, skip: int = 0) -> np.ndarray:
    ranks = np.arange(1, n_terms + 1, dtype=np.float64)
    p = ranks**-ZIPF_EXPONENT
    p[:skip] = 0.0
    return p / p.sum()


def synthetic_corpus(n_docs: int, n_terms: int, rng: np.random.Generator) -> list[list[str]]:
    terms = [f"w{i}" for i in range(n_terms)]
    lengths = rng.integers(80, 251, size=n_docs)
    ids = rng.choice(n_terms, size=int(lengths.sum()), p=zipf_probabilities(n_terms))
    bounds = np.concatenate([[0], np.cumsum(lengths)]).tolist()
    ids_list = ids.tolist()
    del ids
    get = terms.__getitem__
    return [list(map(get, ids_list[bounds[i] : bounds[i + 1]])) for i in range(n_docs)]


def synthetic_queries(n_queries: int, n_terms: int, rng: np.random.Generator) -> list[list[str]]:
    p = zipf_probabilities(n_terms, skip=QUERY_SKIP_TOP_RANKS)
    return [[f"w{i}" for i in rng.choice(n_terms, size=int(rng.integers(3, 9)), p=p)] for _ in range(n_queries)]


def reference_top(scores: np.ndarray, k: int) -> list[int]:
    """rank_bm25's ranking with our tie rule (score desc, doc index asc)."""
    cut = np.argpartition(-scores, k - 1)[:k]
    kth = scores[cut].min()
    pool = np.flatnonzero(scores >= kth)
    return pool[np.lexsort((pool, -scores[pool]))][:k].tolist()


def segmented(docs: list[list[str]], n_segments: int) -> SegmentedBM25:
    """BM25 over `docs` cut into `n_segments` segments, with rank_bm25's default parameters."""
    size = -(-len(docs) // max(1, n_segments))
    postings = [Postings.build(docs[a : a + size]) for a in range(0, len(docs), size)] or [Postings.build([])]
    stats = Stats.empty()
    for p in postings:
        stats = stats.add(p)
    return SegmentedBM25(stats, postings, k1=1.5, b=0.75, epsilon=0.25)


def peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2  # Linux: KiB


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=200_000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--vocab", type=int, default=50_000)
    parser.add_argument("--segments", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    import rank_bm25  # a dev dependency: only this script and the tests need it

    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    docs = synthetic_corpus(args.docs, args.vocab, rng)
    queries = synthetic_queries(args.queries, args.vocab, rng)
    n_tokens = sum(map(len, docs))
    print(
        f"corpus: {len(docs):,} docs, {n_tokens:,} tokens, vocab {args.vocab:,} (Zipf "
        f"s={ZIPF_EXPONENT}), {len(queries)} queries of 3-8 terms; built in "
        f"{time.perf_counter() - t0:.1f} s"
    )

    gc.collect()
    t0 = time.perf_counter()
    ours = segmented(docs, args.segments)
    fit_ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    theirs = rank_bm25.BM25Okapi(docs)
    fit_theirs = time.perf_counter() - t0
    del docs
    gc.collect()

    ref_scores, t_ref = [], 0.0
    for q in queries:
        t0 = time.perf_counter()
        ref_scores.append(theirs.get_scores(q))
        t_ref += time.perf_counter() - t0

    t_scores, t_top, max_rel, mismatches = 0.0, 0.0, 0.0, 0
    for q, ref in zip(queries, ref_scores):
        t0 = time.perf_counter()
        got = ours.scores(q)
        t_scores += time.perf_counter() - t0
        t0 = time.perf_counter()
        top = ours.top_k(q, 100)
        t_top += time.perf_counter() - t0
        max_rel = max(max_rel, float(np.max(np.abs(got - ref) / np.maximum(np.abs(ref), 1e-300))))
        if [i for i, _ in top[:10]] != reference_top(ref, 10):
            mismatches += 1

    n = len(queries)
    postings_mb = (
        sum(p.terms.nbytes + p.indptr.nbytes + p.rows.nbytes + p.tf.nbytes + p.doc_len.nbytes for p in ours.segments)
        / 1e6
    )
    n_postings = sum(len(p.rows) for p in ours.segments)
    rows = [
        ("build (s)", fit_theirs, fit_ours, ""),
        ("query, full scores (ms)", 1e3 * t_ref / n, 1e3 * t_scores / n, ""),
        ("query, top_k(100) (ms)", 1e3 * t_ref / n, 1e3 * t_top / n, "(rank_bm25: get_scores)"),
    ]
    print()
    print(f"{'':26}{'rank_bm25':>12}{'segmented':>12}{'speed-up':>10}")
    for label, ref_v, ours_v, note in rows:
        print(f"{label:26}{ref_v:12.3f}{ours_v:12.3f}{ref_v / ours_v:9.1f}x  {note}")
    print()
    print(
        f"segmented BM25: {len(ours.segments)} segments, {ours.vocab_size:,} terms, {n_postings:,} postings "
        f"in {postings_mb:.0f} MB"
    )
    print(f"peak RSS of this process (both indexes + corpus): {peak_rss_gb():.2f} GB")
    print(f"max relative score difference vs rank_bm25: {max_rel:.3g}")
    print(f"top-10 equal to rank_bm25's: {n - mismatches}/{n} queries")
    return 0 if mismatches == 0 and max_rel <= 1e-9 else 1


if __name__ == "__main__":
    sys.exit(main())
