"""MaxScore pruning for `SegmentedBM25.top_k` (tools/retrieval/bm25_segments.py).

Exact dynamic pruning (MaxScore, Turtle and Flood 1995), vectorised: each query term
has an upper bound on what it can add to a document's score; the terms whose bounds together
stay below a threshold that k real documents already reach (the "non-essential" terms) cannot
bring a document into the top k on their own, so only documents holding an essential term are
candidates, and the non-essential terms are looked up for the candidates still able to reach the
threshold, by bisection in their row-ascending postings instead of being walked. The survivors
are scored again term by term in query order, the sum the exhaustive scorer forms, so the top k
and its scores are bit-identical to scoring every posting (`top_k(..., prune=False)`, which the
tests compare it with), ties included. The bound needs each term's largest frequency and
shortest document within a segment (BM25's term weight grows with the one and shrinks with the
other); a segment written before those were kept is bounded by k1 + 1, still exact but pruning
less. Negative term weights (the idf floor in a tiny corpus) turn pruning off.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

import numpy as np


class _Segment(Protocol):
    """What the bound reads of one segment's postings (`bm25_segments.Postings`)."""

    max_tf: np.ndarray | None
    min_len: np.ndarray | None


class SegmentedBM25(Protocol):
    """What the pruning reads of the index it prunes (`bm25_segments.SegmentedBM25`). Described
    here rather than imported, so that the index imports the pruning and never the reverse."""

    _k1: float
    _b: float
    _rows: list[np.ndarray]
    _tf: list[np.ndarray]
    offsets: np.ndarray

    @property
    def avgdl(self) -> float: ...
    @property
    def segments(self) -> Sequence[_Segment]: ...
    @property
    def _norms(self) -> list[np.ndarray]: ...
    def __len__(self) -> int: ...
    def _ranges_of(self, hashes: Sequence[int]) -> list[list[tuple[int, int, int, int]]]: ...
    def _weights(self, weight: float, tf: np.ndarray, norm: np.ndarray) -> np.ndarray: ...
    def _term_weights(self, weight: float, s: int, lo: int, hi: int, j: int) -> np.ndarray: ...


# Relative slack on every comparison against a threshold: the bounds and partial sums are
# formed in another order than the exact score, so they may differ from it by a few ulps; the
# slack only ever keeps a candidate, never drops one.
_SLACK = 1e-9
# The first threshold is taken once the walked postings reach this many per wanted document,
# and again each time they have grown this many times (a checkpoint costs one vectorised
# look-up of k documents in the terms not walked yet).
_PROBE_PER_K = 4
_CHECK_GROWTH = 4
# A bisection per candidate costs about this many postings walked (NumPy, sorted keys): a lazy
# term is walked instead when the candidates still in reach are that dense in its postings.
_LOOKUP_COST = 8
# When `top_k` prunes by default: queries of at most this many terms whose postings number at
# least this many in all; None, as now, never. Scoring every posting was quicker for every kind of
# query at every size measured (docs/benchmarks.md, "Scale"): at 250K chunks, and at the
# published 2.5M chunks, alone on two cores (warm chunk BM25 top-200 p50 15.6 ms against 17.5
# pruned; Relate's seed texts 13.2 against 53.9). The pruning's bookkeeping (a few NumPy calls per
# term and checkpoint) outweighs the postings it skips, and long queries (seed texts, about 90
# terms) find nearly every paper within reach of the threshold, since every paper holds the
# common words. `python -m bench.scale` reports both ways (bm25_pruned, bm25_exhaustive) for a
# corpus or machine where it may pay; `top_k(prune=True)` forces it.
PRUNE_MAX_TERMS = 12
PRUNE_FROM_POSTINGS: int | None = None


def bound(bm25: SegmentedBM25, weight: float, ranges: list[tuple[int, int, int, int]]) -> float:
    """An upper bound on a term's weight in any document: its weight at the segment's largest
    frequency in the segment's shortest document holding it (k1 + 1 where not recorded)."""
    k1, b, avgdl = bm25._k1, bm25._b, bm25.avgdl
    best = 0.0
    for s, _, _, j in ranges:
        seg = bm25.segments[s]
        if seg.max_tf is None or seg.min_len is None or avgdl <= 0:
            best = max(best, k1 + 1)
            continue
        tf, dl = float(seg.max_tf[j]), float(seg.min_len[j])
        best = max(best, tf * (k1 + 1) / (k1 * (1 - b + b * dl / avgdl) + tf))
    return weight * best * (1 + _SLACK)


class MaxScore:
    """One pruned top-k query over a `SegmentedBM25` (the module docstring). `run` returns
    candidates (global rows, ascending) with their exact scores: a superset of the top k holding
    every document tied at the k-th score; or None where pruning cannot help (then score
    exhaustively).

    The terms are walked into a dense accumulator highest bound first; at checkpoints (each time
    the walked postings have grown `_CHECK_GROWTH` times) the k documents with the best partial
    scores get their other terms looked up, and the k-th of those sums is a score k documents
    reach: the threshold. The walk stops when the bounds of the terms not yet walked sum below
    it; those lazy terms are then looked up, highest bound first, for the documents whose partial
    score plus the lazy bounds left can still reach it."""

    def __init__(self, bm25: SegmentedBM25, terms: list[tuple[int, float]], k: int):
        self.bm25 = bm25
        self.k = k
        self.weights = np.array([w for _, w in terms])
        self.ranges = bm25._ranges_of([h for h, _ in terms])
        self.df = np.array([sum(hi - lo for _, lo, hi, _ in r) for r in self.ranges], dtype=np.int64)
        self.ub = np.zeros(0)

    def run(self) -> tuple[np.ndarray, np.ndarray] | None:
        if len(self.weights) < 2 or self.weights.min() < 0:
            return None  # bounds assume weights >= 0; one term has nothing to skip
        bm25, k = self.bm25, self.k
        self.ub = np.array([bound(bm25, float(w), r) for w, r in zip(self.weights, self.ranges, strict=True)])
        order = np.argsort(-self.ub, kind="stable")
        acc = np.zeros(len(bm25))
        touched = np.zeros(len(bm25), dtype=bool)
        walked: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # term -> its (global rows, weights)
        theta, rest = -math.inf, float(self.ub.sum())
        n_walked, check = 0, _PROBE_PER_K * k
        for i, t in enumerate(order.tolist()):
            if rest * (1 + _SLACK) < theta:
                break
            at, w = self._walk(t)
            acc[at] += w
            touched[at] = True
            walked[t] = (at, w)
            rest -= float(self.ub[t])
            n_walked += len(at)
            if n_walked >= check and i + 1 < len(order):
                theta = max(theta, self._reached(acc, touched, order[i + 1 :]))
                check = n_walked * _CHECK_GROWTH
        lazy = [t for t in order.tolist() if t not in walked]
        if not lazy:
            return self._all_walked(walked)
        cand = np.flatnonzero(touched)
        partial = acc[cand]
        looked: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # lazy term -> (docs, its weights in them)
        rest = float(self.ub[lazy].sum())
        dense = np.zeros(len(bm25))
        for t in lazy:
            keep = (partial + rest) * (1 + _SLACK) >= theta
            cand, partial = cand[keep], partial[keep]
            if len(cand) * _LOOKUP_COST < self.df[t]:
                w = self._lookup(t, cand)
            else:  # candidates as many as postings: walking them is cheaper than bisecting for each
                at, wt = self._walk(t)
                dense[at] = wt
                w = dense[cand]
                dense[at] = 0.0
            looked[t] = (cand, w)
            partial = partial + w
            rest -= float(self.ub[t])
        cand = cand[partial * (1 + _SLACK) >= theta]
        return cand, self._exact(cand, walked, looked)

    def _walk(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        """Term `t`'s postings as global rows (ascending) and its weights in them."""
        bm25 = self.bm25
        ats, ws = [], []
        for s, lo, hi, j in self.ranges[t]:
            rows = bm25._rows[s][lo:hi]
            ats.append(rows + int(bm25.offsets[s]))
            ws.append(bm25._term_weights(float(self.weights[t]), s, lo, hi, j))
        if len(ats) == 1:
            return ats[0], ws[0]
        return np.concatenate(ats), np.concatenate(ws)

    def _reached(self, acc: np.ndarray, touched: np.ndarray, rest: np.ndarray) -> float:
        """A score k documents reach: the k-th best, over the k best partial scores, of the
        partial score plus the weights of the terms `rest` (a lower bound of the exact score, so
        by the slack of its summation order)."""
        cand = np.flatnonzero(touched)
        if len(cand) < self.k:
            return -math.inf
        top = np.sort(cand[np.argpartition(-acc[cand], self.k - 1)[: self.k]])
        reached = acc[top]
        for t in rest.tolist():
            reached = reached + self._lookup(t, top)
        return float(reached.min()) * (1 - _SLACK)

    def _lookup(self, t: int, cand: np.ndarray) -> np.ndarray:
        """Term `t`'s weight in each of `cand` (global rows, ascending; 0 where absent), found by
        bisection in its row-ascending postings."""
        bm25 = self.bm25
        out = np.zeros(len(cand))
        cuts = np.searchsorted(cand, bm25.offsets)
        for s, lo, hi, _ in self.ranges[t]:
            a, b = int(cuts[s]), int(cuts[s + 1])
            if a == b:
                continue
            rows = bm25._rows[s][lo:hi]
            local = (cand[a:b] - int(bm25.offsets[s])).astype(rows.dtype)
            pos = np.searchsorted(rows, local)
            pos[pos == len(rows)] = 0
            hit = np.flatnonzero(rows[pos] == local)
            if len(hit):
                tf = bm25._tf[s][lo:hi][pos[hit]]
                out[a + hit] = bm25._weights(float(self.weights[t]), tf, bm25._norms[s][local[hit]])
        return out

    def _all_walked(self, walked: dict[int, tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
        """Every term was walked: the exhaustive sums, added in query order from what the walk kept."""
        scores = np.zeros(len(self.bm25))
        touched = np.zeros(len(self.bm25), dtype=bool)
        for t in range(len(self.weights)):
            at, w = walked[t]
            scores[at] += w
            touched[at] = True
        cand = np.flatnonzero(touched)
        return cand, scores[cand]

    def _exact(
        self,
        cand: np.ndarray,
        walked: dict[int, tuple[np.ndarray, np.ndarray]],
        looked: dict[int, tuple[np.ndarray, np.ndarray]],
    ) -> np.ndarray:
        """The exact scores of `cand` (ascending): every term's weight added in query order, as
        the exhaustive scorer adds them (adding 0.0 where a term is absent changes no bit of a sum
        of non-negative weights), taken from what the walk and the look-ups found."""
        scores = np.zeros(len(cand))
        for t in range(len(self.weights)):
            docs, w = walked[t] if t in walked else looked[t]
            if not len(docs):
                continue
            pos = np.searchsorted(docs, cand)
            pos[pos == len(docs)] = 0
            scores += np.where(docs[pos] == cand, w[pos], 0.0)
        return scores
