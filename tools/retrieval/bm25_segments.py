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

Files of a segment (prefix `chunk_bm25` or `paper_bm25`): `.terms.npy` (uint64, sorted),
`.indptr.npy` (int64, one more than the terms), `.rows.npy` (int32 document rows within the
segment, ascending per term), `.tf.npy` (int32), `.doc_len.npy` (int32 tokens per document).
Files of a version's statistics: `.terms.npy` and `.df.npy` (int64), plus `n_docs`, `total_len`
and `avg_idf` in the manifest.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from tools.retrieval.bm25 import _best_k, _encode

_PARTS = ("terms", "indptr", "rows", "tf", "doc_len")


def term_hash(term: str) -> int:
    return int.from_bytes(hashlib.blake2b(term.encode("utf-8"), digest_size=8).digest(), "little")


def term_hashes(terms: Iterable[str]) -> np.ndarray:
    return np.fromiter((term_hash(t) for t in terms), dtype=np.uint64)


def _load(path: Path, mmap: bool) -> np.ndarray:
    return np.load(path, mmap_mode="r" if mmap else None, allow_pickle=False)


@dataclass
class Postings:
    """One segment's term frequencies, term-major, terms sorted by hash."""

    terms: np.ndarray
    indptr: np.ndarray
    rows: np.ndarray
    tf: np.ndarray
    doc_len: np.ndarray

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

    def save(self, directory: Path, name: str) -> None:
        for part in _PARTS:
            np.save(Path(directory) / f"{name}.{part}.npy", getattr(self, part), allow_pickle=False)

    @classmethod
    def load(cls, directory: Path, name: str, mmap: bool = True) -> Postings:
        return cls(*(_load(Path(directory) / f"{name}.{part}.npy", mmap) for part in _PARTS))

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
        out = []
        for h, n in counts.items():
            idf = self._idf(h)
            if idf is not None:
                out.append((h, idf * n))
        return out

    def _postings(self, h: int) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """(segment, rows, tf) of a term in every segment that has it."""
        out = []
        key = np.uint64(h)
        for s, seg in enumerate(self.segments):
            j = int(np.searchsorted(seg.terms, key))
            if j < len(seg.terms) and seg.terms[j] == key:
                lo, hi = int(seg.indptr[j]), int(seg.indptr[j + 1])
                out.append((s, np.asarray(seg.rows[lo:hi]), np.asarray(seg.tf[lo:hi])))
        return out

    def _accumulate(self, terms: list[tuple[int, float]], touched: np.ndarray | None = None) -> np.ndarray:
        """Dense scores, adding term weights in query order as rank_bm25 does; marks the rows of
        every posting in `touched` when given."""
        scores = np.zeros(len(self))
        k1 = self._k1
        norms = self._norms
        for h, idf in terms:
            for s, rows, tf in self._postings(h):
                freq = tf.astype(np.float64)
                denom = norms[s][rows]
                denom += freq
                freq *= k1 + 1
                freq /= denom
                w = np.full(len(rows), idf)
                w *= freq
                at = rows + int(self.offsets[s])
                scores[at] += w  # rows within one term's postings are unique, so fancy `+=` is safe
                if touched is not None:
                    touched[at] = True
        return scores

    def scores(self, query_tokens: list[str]) -> np.ndarray:
        """BM25 score of every document (float64), in global rows."""
        return self._accumulate(self._terms(query_tokens))

    def top_k(self, query_tokens: list[str], k: int) -> list[tuple[int, float]]:
        """The k best (row, score), score descending then row ascending; only documents holding a
        query term are candidates."""
        terms = self._terms(query_tokens)
        if k <= 0 or not terms:
            return []
        touched = np.zeros(len(self), dtype=bool)
        scores = self._accumulate(terms, touched)
        cand = np.flatnonzero(touched)
        cand_scores = scores[cand]
        if len(cand) > k:
            cand, cand_scores = _best_k(cand, cand_scores, k)
        order = np.lexsort((cand, -cand_scores))
        return [(int(cand[i]), float(cand_scores[i])) for i in order]
