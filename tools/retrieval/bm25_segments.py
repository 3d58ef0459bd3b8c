"""Okapi BM25 over an index's segments, read from memory-mapped arrays and weighted at query time.

An index is a list of immutable segments (tools/index/): a build writes one, an add writes one
more, `litloop index compact` merges them. Each segment keeps its documents' raw term
frequencies as a term-major (CSC) posting list; the version keeps the corpus-wide statistics
(each term's document frequency, the document count and total length). A query weights the
postings of its terms with those statistics, so the scores are those of one BM25 index over all
segments' documents, whatever their number: equal to rank_bm25's BM25Okapi over the same
documents up to the order of one float sum (the mean idf, below 1e-12).

Why weights are not stored: idf and the mean document length are corpus-wide, so a stored weight
would change with every add and an add would rewrite every segment. Raw counts never change, and
weighting the postings of a few query terms costs milliseconds.

Terms are keyed by a 64-bit BLAKE2b hash of their UTF-8 text, sorted, so a segment's vocabulary is
one memory-mapped array searched by bisection: opening a segment reads no vocabulary at all, and
merging vocabularies (an add's statistics, a compaction) is a sorted-array union. Two terms of one
segment with the same hash stop the build with both named; across segments a collision (odds
about 1 in 10^6 at 5 million distinct terms) would merge two terms' statistics, the only
approximation here.

Top-k is exact: scoring every posting by default, or with MaxScore pruning, which gives the same
list to the bit (tools/retrieval/bm25_maxscore.py).

Files of a segment (prefix `chunk_bm25` or `paper_bm25`): `.terms.npy` (uint64, sorted),
`.indptr.npy` (int64, one more than the terms), `.rows.npy` (int32 document rows within the
segment, ascending per term), `.tf.npy` (int32), `.doc_len.npy` (int32 tokens per document),
`.max_tf.npy` and `.min_len.npy` (int32 per term: its largest frequency, the length of the
shortest document holding it; the pruning bounds, optional when reading).
Files of a version's statistics: `.terms.npy` and `.df.npy` (int64), plus `n_docs`, `total_len`
and `avg_idf` in the manifest.
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from tools.retrieval.bm25 import _best_k, _encode
from tools.retrieval.bm25_maxscore import PRUNE_FROM_POSTINGS, PRUNE_MAX_TERMS, MaxScore

_PARTS = ("terms", "indptr", "rows", "tf", "doc_len")
_BOUNDS = ("max_tf", "min_len")  # written by every save; a segment without them prunes less

# The saturations of terms with at least this many postings in a segment are kept (LRU) up to
# this many bytes per opened version: a Relate call's five seed texts share their common terms,
# whose postings are the longest, and so do successive queries.
_SATURATION_CACHE_FROM = 512
_SATURATION_CACHE_BYTES = 256 * 2**20
# A term held by at least 1/_DENSE_FROM of a segment's documents is kept as one value per document.
_DENSE_FROM = 2

# Bound-computation block (postings), so a save's temporary arrays stay small at millions of docs.
_BOUND_BLOCK = 8_000_000


def term_hash(term: str) -> int:
    return int.from_bytes(hashlib.blake2b(term.encode("utf-8"), digest_size=8).digest(), "little")


def term_hashes(terms: Iterable[str]) -> np.ndarray:
    return np.fromiter((term_hash(t) for t in terms), dtype=np.uint64)


def _load(path: Path, mmap: bool) -> np.ndarray:
    array: np.ndarray = np.load(path, mmap_mode="r" if mmap else None, allow_pickle=False)
    return array


@dataclass
class Postings:
    """One segment's term frequencies, term-major, terms sorted by hash."""

    terms: np.ndarray
    indptr: np.ndarray
    rows: np.ndarray
    tf: np.ndarray
    doc_len: np.ndarray
    max_tf: np.ndarray | None = None
    min_len: np.ndarray | None = None

    @classmethod
    def build(cls, docs: Iterable[Sequence[str]]) -> Postings:
        """Count the terms of token lists (consumed once, so a generator works)."""
        vocab: dict[str, int] = {}
        csr = _encode(docs, vocab)
        doc_len = np.asarray(csr.sum(axis=1), dtype=np.int64).ravel().astype(np.int32)
        hashes = term_hashes(vocab)
        order = np.argsort(hashes, kind="stable")
        sorted_hashes = hashes[order]
        same = np.flatnonzero(sorted_hashes[1:] == sorted_hashes[:-1])
        if len(same):
            terms = list(vocab)
            a, b = terms[order[same[0]]], terms[order[same[0] + 1]]
            raise ValueError(f"BM25 term hash collision between {a!r} and {b!r}; report this as a bug")
        csc = csr.tocsc()[:, order] if len(order) else csr.tocsc()
        csc.sort_indices()
        return cls(
            sorted_hashes, csc.indptr.astype(np.int64), csc.indices.astype(np.int32), csc.data.astype(np.int32), doc_len
        )

    @property
    def n_docs(self) -> int:
        return len(self.doc_len)

    @property
    def df(self) -> np.ndarray:
        return np.diff(self.indptr)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Per term, its largest frequency and the length of its shortest document: what bounds
        the term's BM25 weight in this segment (computed a block of terms at a time)."""
        if self.max_tf is not None and self.min_len is not None:
            return self.max_tf, self.min_len
        n = len(self.terms)
        max_tf = np.zeros(n, dtype=np.int32)
        min_len = np.zeros(n, dtype=np.int32)
        indptr = np.asarray(self.indptr)
        doc_len = np.asarray(self.doc_len)
        start = 0
        while start < n:
            # the terms whose postings end within the block (at least one term)
            stop = max(start + 1, int(np.searchsorted(indptr, indptr[start] + _BOUND_BLOCK, side="right")) - 1)
            stop = min(stop, n)
            lo, hi = int(indptr[start]), int(indptr[stop])
            starts = indptr[start:stop] - lo
            if hi > lo:  # every term has a posting; reduceat needs in-range starts
                max_tf[start:stop] = np.maximum.reduceat(np.asarray(self.tf[lo:hi]), starts)
                min_len[start:stop] = np.minimum.reduceat(doc_len[np.asarray(self.rows[lo:hi])], starts)
            start = stop
        self.max_tf, self.min_len = max_tf, min_len
        return max_tf, min_len

    def save(self, directory: Path, name: str) -> None:
        self.bounds()
        for part in _PARTS + _BOUNDS:
            np.save(Path(directory) / f"{name}.{part}.npy", getattr(self, part), allow_pickle=False)

    @classmethod
    def load(cls, directory: Path, name: str, mmap: bool = True) -> Postings:
        directory = Path(directory)
        parts = [_load(directory / f"{name}.{part}.npy", mmap) for part in _PARTS]
        paths = [directory / f"{name}.{part}.npy" for part in _BOUNDS]
        bounds = [_load(p, mmap) for p in paths] if all(p.exists() for p in paths) else [None, None]
        return cls(*parts, *bounds)

    @classmethod
    def concat(cls, parts: Sequence[Postings]) -> Postings:
        """One segment holding `parts`' documents in order (a compaction)."""
        terms = np.unique(np.concatenate([p.terms for p in parts])) if parts else np.zeros(0, np.uint64)
        counts = np.zeros(len(terms), dtype=np.int64)
        for p in parts:
            counts[np.searchsorted(terms, p.terms)] += p.df
        indptr = np.zeros(len(terms) + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        rows = np.empty(int(indptr[-1]), dtype=np.int32)
        tf = np.empty(int(indptr[-1]), dtype=np.int32)
        fill = indptr[:-1].copy()  # where each term's next postings go
        offset = 0
        for p in parts:
            at = np.searchsorted(terms, p.terms)
            n = p.df
            # the postings of term j of `p` go to fill[at[j]] .. + n[j]: one vectorised scatter
            dest = np.repeat(fill[at] - p.indptr[:-1], n) + np.arange(int(p.indptr[-1]))
            rows[dest] = np.asarray(p.rows) + offset
            tf[dest] = p.tf
            fill[at] += n
            offset += p.n_docs
        doc_len = np.concatenate([np.asarray(p.doc_len) for p in parts]) if parts else np.zeros(0, np.int32)
        return cls(terms, indptr, rows, tf, doc_len.astype(np.int32))


@dataclass
class Stats:
    """Corpus-wide BM25 statistics of a version: every term's document frequency, the document
    count, the total length and the mean idf (for rank_bm25's floor of negative idfs)."""

    terms: np.ndarray
    df: np.ndarray
    n_docs: int
    total_len: int
    avg_idf: float

    @classmethod
    def empty(cls) -> Stats:
        return cls(np.zeros(0, np.uint64), np.zeros(0, np.int64), 0, 0, 0.0)

    def add(self, p: Postings) -> Stats:
        """The statistics of this corpus and `p`'s documents; this one is left unchanged."""
        terms = np.union1d(self.terms, p.terms)
        df = np.zeros(len(terms), dtype=np.int64)
        df[np.searchsorted(terms, self.terms)] += self.df
        df[np.searchsorted(terms, p.terms)] += p.df
        n_docs = self.n_docs + p.n_docs
        return Stats(
            terms, df, n_docs, self.total_len + int(np.asarray(p.doc_len, dtype=np.int64).sum()), _avg_idf(df, n_docs)
        )

    def save(self, directory: Path, name: str) -> dict[str, Any]:
        """Write the arrays; return what the manifest keeps."""
        np.save(Path(directory) / f"{name}.terms.npy", self.terms, allow_pickle=False)
        np.save(Path(directory) / f"{name}.df.npy", self.df, allow_pickle=False)
        return {"n_docs": self.n_docs, "total_len": self.total_len, "avg_idf": self.avg_idf}

    @classmethod
    def load(cls, directory: Path, name: str, meta: dict[str, Any], mmap: bool = True) -> Stats:
        return cls(
            _load(Path(directory) / f"{name}.terms.npy", mmap),
            _load(Path(directory) / f"{name}.df.npy", mmap),
            int(meta["n_docs"]),
            int(meta["total_len"]),
            float(meta["avg_idf"]),
        )


def _idf_of(n: int, n_docs: int) -> float:
    return math.log(n_docs - n + 0.5) - math.log(n + 0.5)


def _avg_idf(df: np.ndarray, n_docs: int) -> float:
    """rank_bm25's mean idf over every term (before the floor), summed in rank_bm25's order."""
    if len(df) == 0:
        return 0.0
    uniq, inverse = np.unique(df, return_inverse=True)
    per_df = np.array([_idf_of(n, n_docs) for n in uniq.tolist()])
    return float(np.cumsum(per_df[inverse.ravel()])[-1]) / len(df)


class SegmentedBM25:
    """BM25 over several segments' postings with one version's statistics; document rows are
    global (a segment's rows follow the previous segments'). What retrieval uses: `top_k`,
    `scores`, `len`, `idf`, `avgdl`."""

    def __init__(self, stats: Stats, segments: Sequence[Postings], k1: float, b: float, epsilon: float):
        self.stats = stats
        self.segments = list(segments)
        self.offsets = np.cumsum([0] + [s.n_docs for s in self.segments])
        if int(self.offsets[-1]) != stats.n_docs:
            raise ValueError(f"the segments hold {int(self.offsets[-1])} documents, the statistics {stats.n_docs}")
        self._k1, self._b, self._epsilon = float(k1), float(b), float(epsilon)
        # plain views of the memory-mapped arrays: slicing a np.memmap costs a Python object each time
        self._rows = [np.asarray(s.rows) for s in self.segments]
        self._tf = [np.asarray(s.tf) for s in self.segments]
        self._cache: OrderedDict[tuple[int, int, bool], Any] = OrderedDict()
        self._cache_bytes = 0
        self._cache_lock = threading.Lock()

    def __len__(self) -> int:
        return self.stats.n_docs

    @property
    def avgdl(self) -> float:
        # rank_bm25 divides the Python int total by the doc count; same here, same float
        return self.stats.total_len / self.stats.n_docs if self.stats.n_docs else 0.0

    @property
    def vocab_size(self) -> int:
        return len(self.stats.terms)

    @cached_property
    def _norms(self) -> list[np.ndarray]:
        k1, b, avgdl = self._k1, self._b, self.avgdl
        if avgdl <= 0:
            return [np.zeros(s.n_docs) for s in self.segments]
        # the per-document length norms of Okapi BM25, computed once per opened version
        return [k1 * (1 - b + b * np.asarray(s.doc_len).astype(np.float64) / avgdl) for s in self.segments]

    def _idf(self, h: int) -> float | None:
        terms = self.stats.terms
        i = int(np.searchsorted(terms, np.uint64(h)))
        if i >= len(terms) or int(terms[i]) != h:
            return None
        idf = _idf_of(int(self.stats.df[i]), self.stats.n_docs)
        return self._epsilon * self.stats.avg_idf if idf < 0 else idf

    def idf(self, term: str) -> float:
        """The idf actually used (after the floor); 0 for an unknown term."""
        return self._idf(term_hash(term)) or 0.0

    def _terms(self, query_tokens: Iterable[str]) -> list[tuple[int, float]]:
        """Known query terms as (hash, idf x repeats), in first-seen order: rank_bm25 counts a
        repeated term once per repeat, and one pass over its postings with the weight times the
        count gives the same sum (to float rounding) for a fraction of the work on long queries
        such as a Relate seed's title and abstract."""
        counts: dict[int, int] = {}
        for t in query_tokens:
            h = term_hash(t)
            counts[h] = counts.get(h, 0) + 1
        if not counts or not len(self.stats.terms):
            return []
        # one bisection for all the query's terms; the idf itself in Python floats, as `_idf`
        at = _find(self.stats.terms, np.fromiter(counts, dtype=np.uint64, count=len(counts)))
        df = np.asarray(self.stats.df)[np.maximum(at, 0)].tolist()
        out = []
        for (h, n), i, d in zip(counts.items(), at.tolist(), df, strict=True):
            if i >= 0:
                idf = _idf_of(d, self.stats.n_docs)
                out.append((h, (self._epsilon * self.stats.avg_idf if idf < 0 else idf) * n))
        return out

    def _ranges(self, h: int) -> list[tuple[int, int, int, int]]:
        """(segment, first, end, term index) of a term's postings in every segment that has it."""
        return self._ranges_of([h])[0]

    def _ranges_of(self, hashes: Sequence[int]) -> list[list[tuple[int, int, int, int]]]:
        """`_ranges` of each of `hashes`, one bisection per segment for all of them."""
        out: list[list[tuple[int, int, int, int]]] = [[] for _ in hashes]
        keys = np.array(hashes, dtype=np.uint64)
        for s, seg in enumerate(self.segments):
            at = _find(seg.terms, keys)
            hit = np.flatnonzero(at >= 0)
            if not len(hit):
                continue
            j = at[hit]
            indptr = np.asarray(seg.indptr)
            for t, jj, lo, hi in zip(hit.tolist(), j.tolist(), indptr[j].tolist(), indptr[j + 1].tolist(), strict=True):
                out[t].append((s, lo, hi, jj))
        return out

    def _weights(self, weight: float, tf: np.ndarray, norm: np.ndarray) -> np.ndarray:
        """A term's BM25 weight in documents with frequencies `tf` and length norms `norm`: the one
        formula both scorers use, operation for operation, so their sums agree to the bit."""
        freq = tf.astype(np.float64)
        denom = norm + freq
        freq *= self._k1 + 1
        freq /= denom
        freq *= weight
        return freq

    def _kept(self, key: tuple[int, int, bool], make: Callable[[], Any]) -> Any:
        """`make()`, kept under `key` (LRU, `_SATURATION_CACHE_BYTES` in all)."""
        with self._cache_lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit
        got = make()
        with self._cache_lock:
            kept = self._cache.get(key)
            if kept is not None:  # another thread made it first: keep its copy, count it once
                self._cache.move_to_end(key)
                return kept
            self._cache[key] = got
            self._cache_bytes += _nbytes(got)
            while self._cache_bytes > _SATURATION_CACHE_BYTES and self._cache:
                self._cache_bytes -= _nbytes(self._cache.popitem(last=False)[1])
        return got

    def _saturation(self, s: int, lo: int, hi: int, j: int) -> np.ndarray:
        """`_weights(1.0, ...)` of term `j`'s postings `lo:hi` in segment `s`: the part of BM25
        that depends on the document, not the query. Kept for long postings (the common terms every
        long query repeats, as Relate's seed texts do)."""

        def make() -> np.ndarray:
            got = self._weights(1.0, self._tf[s][lo:hi], self._norms[s][self._rows[s][lo:hi]])
            got.flags.writeable = False
            return got

        return make() if hi - lo < _SATURATION_CACHE_FROM else self._kept((s, j, False), make)

    def _dense_saturation(self, s: int, lo: int, hi: int, j: int) -> tuple[np.ndarray, np.ndarray]:
        """The saturation of a term held by many of segment `s`'s documents as one value per
        document (0 where absent), and where it is present: adding the term is then two passes
        over the segment's scores instead of a gather and a scatter of its postings."""

        def make() -> tuple[np.ndarray, np.ndarray]:
            n = self.segments[s].n_docs
            dense, mask = np.zeros(n), np.zeros(n, dtype=bool)
            rows = self._rows[s][lo:hi]
            dense[rows] = self._saturation(s, lo, hi, j)
            mask[rows] = True
            dense.flags.writeable = mask.flags.writeable = False
            return dense, mask

        kept: tuple[np.ndarray, np.ndarray] = self._kept((s, j, True), make)
        return kept

    def _term_weights(self, weight: float, s: int, lo: int, hi: int, j: int) -> np.ndarray:
        """The term's weights in its postings `lo:hi` of segment `s`: the saturation times the
        weight, the last operation of `_weights` (so the same bits)."""
        return self._saturation(s, lo, hi, j) * weight

    def _accumulate(
        self,
        terms: list[tuple[int, float]],
        touched: np.ndarray | None = None,
        ranges_of: list[list[tuple[int, int, int, int]]] | None = None,
    ) -> np.ndarray:
        """Dense scores, adding term weights in query order as rank_bm25 does; marks the rows of
        every posting in `touched` when given. `ranges_of`: the terms' `_ranges`, when known."""
        scores = np.zeros(len(self))
        if ranges_of is None:
            ranges_of = self._ranges_of([h for h, _ in terms])
        for (_, idf), ranges in zip(terms, ranges_of, strict=True):
            for s, lo, hi, j in ranges:
                off, n = int(self.offsets[s]), self.segments[s].n_docs
                if hi - lo >= _SATURATION_CACHE_FROM and (hi - lo) * _DENSE_FROM >= n:
                    # x + 0.0 is x: adding the absent documents' zeros changes no bit
                    dense, mask = self._dense_saturation(s, lo, hi, j)
                    scores[off : off + n] += dense * idf
                    if touched is not None:
                        touched[off : off + n] |= mask
                    continue
                rows = self._rows[s][lo:hi]
                at = rows + off if off else rows
                scores[at] += self._term_weights(idf, s, lo, hi, j)  # a term's rows are unique: fancy += is safe
                if touched is not None:
                    touched[at] = True
        return scores

    def scores(self, query_tokens: list[str]) -> np.ndarray:
        """BM25 score of every document (float64), in global rows."""
        return self._accumulate(self._terms(query_tokens))

    def top_k(self, query_tokens: list[str], k: int, prune: bool | None = None) -> list[tuple[int, float]]:
        """The k best (row, score), score descending then row ascending; only documents holding a
        query term are candidates. Pruning (MaxScore, tools/retrieval/bm25_maxscore.py) gives the same list,
        to the bit, as scoring every posting (`prune=False`); by default (None) it runs for
        queries whose postings are long enough for skipping to pay (`PRUNE_FROM_POSTINGS`: at no
        size measured so far, so it does not run)."""
        terms = self._terms(query_tokens)
        if k <= 0 or not terms:
            return []
        found, ranges_of = None, None
        by_default = prune is None and PRUNE_FROM_POSTINGS is not None and len(terms) <= PRUNE_MAX_TERMS
        if prune or by_default:
            search = MaxScore(self, terms, k)
            ranges_of = search.ranges
            if prune or int(search.df.sum()) >= (PRUNE_FROM_POSTINGS or 0):
                found = search.run()
        if found is None:
            touched = np.zeros(len(self), dtype=bool)
            scores = self._accumulate(terms, touched, ranges_of)
            hit = np.flatnonzero(touched)
            found = (hit, scores[hit])
        cand, cand_scores = found
        if len(cand) > k:
            cand, cand_scores = _best_k(cand, cand_scores, k)
        order = np.lexsort((cand, -cand_scores))
        return [(int(cand[i]), float(cand_scores[i])) for i in order]


def _find(sorted_keys: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Where each of `keys` is in `sorted_keys`, -1 where it is not."""
    if not len(sorted_keys):
        return np.full(len(keys), -1, dtype=np.int64)
    at = np.searchsorted(sorted_keys, keys)
    at[at == len(sorted_keys)] = 0
    return np.where(np.asarray(sorted_keys[at]) == keys, at, -1)


def _nbytes(kept: Any) -> int:
    return sum(a.nbytes for a in kept) if isinstance(kept, tuple) else int(kept.nbytes)
