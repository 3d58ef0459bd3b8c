"""Sparse Okapi BM25 whose scores equal `rank_bm25.BM25Okapi` (the reference implementation).

rank_bm25 walks a Python dict per document for every query term, which is far too slow for
millions of chunks. Here the per-(doc, term) BM25 weights are precomputed once into a CSC
matrix, so a query is the sum of a few column slices.

Equality with rank_bm25 is kept on purpose, quirks included (SEE: rank_bm25 0.2.2,
`BM25Okapi._calc_idf` and `get_scores`):
- idf = log(N - n + 0.5) - log(n + 0.5), which is negative for terms in more than half the docs;
  those negative idfs are replaced by `epsilon * average_idf`, the mean taken over every term;
- a query term repeated twice counts twice, and an unknown term adds nothing.
The arithmetic below repeats rank_bm25's operations in the same order, so in practice scores come
out equal bit for bit (the tests ask for 1e-9), and rankings with exact ties agree too.
One deliberate difference: with b=1 an empty doc scores 0 here, where rank_bm25 gives NaN (0/0).
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import scipy.sparse as sp

logger = logging.getLogger(__name__)

FORMAT_NAME = "litloop-bm25"
FORMAT_VERSION = 1

# Documents are encoded in batches so the peak memory of one batch's raw token ids stays
# bounded (2M chunks x ~150 tokens would otherwise be ~300M ids at once).
_ENCODE_BATCH_DOCS = 50_000

_INDEX = np.int32  # column and row indices: 2M docs and a few million terms fit in int32
_COUNT = np.int32  # term frequencies within one short chunk


class BM25Index:
    """Okapi BM25 over pre-tokenised documents; immutable once built."""

    def __init__(
        self,
        vocab: dict[str, int],
        tf: sp.csr_matrix,
        k1: float = 1.5,
        b: float = 0.75,
        epsilon: float = 0.25,
    ) -> None:
        """Build from a vocabulary (term -> column, in first-occurrence order) and a TF matrix.

        Column order matters: rank_bm25 sums idfs in first-occurrence order, and float sums
        depend on order, so `fit` assigns columns in that order.
        """
        if tf.shape[1] != len(vocab):
            raise ValueError(f"TF matrix has {tf.shape[1]} columns for {len(vocab)} terms")
        self._vocab = vocab
        self._tf = tf
        self._k1 = float(k1)
        self._b = float(b)
        self._epsilon = float(epsilon)
        self._doc_len = np.asarray(tf.sum(axis=1), dtype=np.int64).ravel()
        n_docs = tf.shape[0]
        # rank_bm25 divides the Python int total by the doc count; same here, same float.
        self._avgdl = int(self._doc_len.sum()) / n_docs if n_docs else 0.0
        self._idf = _okapi_idf(np.bincount(tf.indices, minlength=len(vocab)), n_docs, epsilon)
        self._weights = self._weight_matrix()

    # -- building -------------------------------------------------------------------------

    @classmethod
    def fit(
        cls,
        docs: Iterable[Sequence[str]],
        k1: float = 1.5,
        b: float = 0.75,
        epsilon: float = 0.25,
    ) -> BM25Index:
        """Index token lists; `docs` is consumed once, so a generator works."""
        vocab: dict[str, int] = {}
        tf = _encode(docs, vocab)
        logger.info("BM25 fit: %d docs, %d terms, %d postings", tf.shape[0], len(vocab), tf.nnz)
        return cls(vocab, tf, k1=k1, b=b, epsilon=epsilon)

    def add(self, docs: Iterable[Sequence[str]]) -> BM25Index:
        """A new index over the old docs followed by `docs`; this one is left unchanged.

        idf and avgdl are corpus-wide, so every weight is recomputed; only tokenising and
        counting of the old docs is saved.
        """
        vocab = dict(self._vocab)
        new = _encode(docs, vocab)
        old = self._tf
        n_old = old.shape[0]
        # int64 while stacking: the sum of two int32 offsets may not fit; scipy narrows it back.
        indptr = np.concatenate(
            [old.indptr.astype(np.int64), new.indptr[1:].astype(np.int64) + int(old.indptr[-1])]
        )
        tf = sp.csr_matrix(
            (
                np.concatenate([old.data, new.data]),
                np.concatenate([old.indices, new.indices]),
                indptr,
            ),
            shape=(n_old + new.shape[0], len(vocab)),
        )
        logger.info("BM25 add: %d + %d docs, %d terms", n_old, new.shape[0], len(vocab))
        return type(self)(vocab, tf, k1=self._k1, b=self._b, epsilon=self._epsilon)

    def _weight_matrix(self) -> sp.csc_matrix:
        """Per-(doc, term) BM25 weights, column-major so a query term is one slice."""
        tf = self._tf
        n_docs = tf.shape[0]
        k1, b = self._k1, self._b
        if n_docs and self._avgdl > 0:
            # Same operations, same order as rank_bm25's get_scores, hence the same floats.
            norm = k1 * (1 - b + b * self._doc_len.astype(np.float64) / self._avgdl)
        else:
            norm = np.zeros(n_docs)
        # idf * (tf * (k1 + 1) / (tf + norm)), in place: at 2M chunks each temporary of this
        # size is ~2 GB. IEEE + and * commute exactly, so operand order is free, grouping not.
        rows = np.repeat(np.arange(n_docs, dtype=_INDEX), np.diff(tf.indptr))
        denom = norm[rows]
        del rows
        freq = tf.data.astype(np.float64)
        denom += freq
        freq *= k1 + 1
        freq /= denom
        del denom
        data = self._idf[tf.indices]
        data *= freq
        del freq
        weights = sp.csr_matrix((data, tf.indices, tf.indptr), shape=tf.shape).tocsc()
        weights.sort_indices()
        return weights

    # -- querying -------------------------------------------------------------------------

    def _columns(self, query_tokens: Iterable[str]) -> list[int]:
        """Known query terms as columns, repeats kept (rank_bm25 counts a repeat twice)."""
        vocab = self._vocab
        return [vocab[t] for t in query_tokens if t in vocab]

    def _accumulate(self, columns: list[int]) -> np.ndarray:
        """Dense scores, adding term weights in query order as rank_bm25 does."""
        scores = np.zeros(len(self))
        w = self._weights
        for c in columns:
            lo, hi = w.indptr[c], w.indptr[c + 1]
            # Row indices within one CSC column are unique, so fancy `+=` is safe.
            scores[w.indices[lo:hi]] += w.data[lo:hi]
        return scores

    def scores(self, query_tokens: list[str]) -> np.ndarray:
        """BM25 score of every document (float64), equal to rank_bm25's `get_scores`."""
        return self._accumulate(self._columns(query_tokens))

    def top_k(self, query_tokens: list[str], k: int) -> list[tuple[int, float]]:
        """The k best (doc index, score), score descending then doc index ascending.

        Only docs containing a query term are candidates: the rest score exactly 0, and
        returning them would hand back arbitrary docs for an unrelated query.
        """
        columns = self._columns(query_tokens)
        if k <= 0 or not columns:
            return []
        scores = self._accumulate(columns)
        w = self._weights
        touched = np.zeros(len(self), dtype=bool)
        for c in set(columns):
            touched[w.indices[w.indptr[c] : w.indptr[c + 1]]] = True
        cand = np.flatnonzero(touched)  # ascending doc index
        cand_scores = scores[cand]
        if len(cand) > k:
            cand, cand_scores = _best_k(cand, cand_scores, k)
        order = np.lexsort((cand, -cand_scores))
        return [(int(cand[i]), float(cand_scores[i])) for i in order]

    # -- persistence ----------------------------------------------------------------------

    def save(self, directory: Path, name: str) -> None:
        """Write `{name}.tf.npz` and `{name}.meta.json`; no pickle, so loading runs no code.

        Weights are not stored: they are cheap to recompute and would double the file size.
        """
        directory = Path(directory)
        # Uncompressed: zlib over a GB of postings costs more time than the disk it saves.
        sp.save_npz(directory / f"{name}.tf.npz", self._tf, compressed=False)
        terms = [""] * len(self._vocab)
        for term, col in self._vocab.items():
            terms[col] = term
        meta = {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "k1": self._k1,
            "b": self._b,
            "epsilon": self._epsilon,
            "n_docs": len(self),
            "vocab": terms,
        }
        with open(directory / f"{name}.meta.json", "w", encoding="utf-8") as f:
            json.dump(meta, f, ensure_ascii=False)

    @classmethod
    def load(cls, directory: Path, name: str) -> BM25Index:
        """Read what `save` wrote and recompute the weights."""
        directory = Path(directory)
        with open(directory / f"{name}.meta.json", encoding="utf-8") as f:
            meta = json.load(f)
        if meta.get("format") != FORMAT_NAME or meta.get("version") != FORMAT_VERSION:
            raise ValueError(
                f"{directory / name}: not a {FORMAT_NAME} v{FORMAT_VERSION} index "
                f"(format={meta.get('format')!r}, version={meta.get('version')!r})"
            )
        tf = sp.load_npz(directory / f"{name}.tf.npz").tocsr()
        terms = meta["vocab"]
        if tf.shape != (meta["n_docs"], len(terms)):
            raise ValueError(
                f"{directory / name}: TF matrix {tf.shape} does not match "
                f"{meta['n_docs']} docs x {len(terms)} terms"
            )
        vocab = {t: i for i, t in enumerate(terms)}
        return cls(vocab, tf, k1=meta["k1"], b=meta["b"], epsilon=meta["epsilon"])

    # -- introspection --------------------------------------------------------------------

    def __len__(self) -> int:
        return self._tf.shape[0]

    def __repr__(self) -> str:
        return (
            f"BM25Index(docs={len(self)}, terms={self.vocab_size}, "
            f"k1={self._k1}, b={self._b}, epsilon={self._epsilon})"
        )

    @property
    def k1(self) -> float:
        return self._k1

    @property
    def b(self) -> float:
        return self._b

    @property
    def epsilon(self) -> float:
        return self._epsilon

    @property
    def vocab_size(self) -> int:
        return len(self._vocab)

    @property
    def avgdl(self) -> float:
        return self._avgdl

    def idf(self, term: str) -> float:
        """The idf actually used (after the epsilon floor); 0 for an unknown term."""
        col = self._vocab.get(term)
        return 0.0 if col is None else float(self._idf[col])


def _okapi_idf(df: np.ndarray, n_docs: int, epsilon: float) -> np.ndarray:
    """rank_bm25's idf per term, negative ones floored to epsilon * mean idf.

    math.log is used (not np.log, whose SIMD path may differ in the last bit), but only once
    per distinct document frequency, of which there are few.
    """
    if len(df) == 0:
        return np.zeros(0)
    uniq, inverse = np.unique(df, return_inverse=True)
    per_df = np.array([math.log(n_docs - n + 0.5) - math.log(n + 0.5) for n in uniq.tolist()])
    idf = per_df[inverse.ravel()]
    # rank_bm25 sums with a plain `+=` loop in first-occurrence order; cumsum is that same
    # sequential sum (np.sum and Python's sum() round differently).
    average_idf = float(np.cumsum(idf)[-1]) / len(idf)
    idf[idf < 0] = epsilon * average_idf
    return idf


def _best_k(docs: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k best by score; a tie at the cut-off goes to the lower doc index (`docs` ascends).

    argpartition alone would break that tie arbitrarily, so only the strictly better docs are
    taken from it, and the cut-off score's docs are filled in by index.
    """
    kth = scores[np.argpartition(-scores, k - 1)[k - 1]]
    better = np.flatnonzero(scores > kth)
    tied = np.flatnonzero(scores == kth)[: k - len(better)]
    keep = np.concatenate([better, tied])
    return docs[keep], scores[keep]


def _encode(docs: Iterable[Sequence[str]], vocab: dict[str, int]) -> sp.csr_matrix:
    """Count terms per doc, extending `vocab` in first-occurrence order."""
    parts: list[sp.csr_matrix] = []
    batch: list[int] = []
    lengths: list[int] = []
    setdefault = vocab.setdefault
    lookup = vocab.__getitem__

    def flush() -> None:
        indptr = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        ids = np.array(batch, dtype=_INDEX)
        part = sp.csr_matrix(
            (np.ones(len(ids), dtype=_COUNT), ids, indptr), shape=(len(lengths), len(vocab))
        )
        part.sum_duplicates()  # turns repeated token ids into counts, sorted by column
        parts.append(part)
        batch.clear()
        lengths.clear()

    for doc in docs:
        if isinstance(doc, str):
            raise TypeError("BM25Index expects token lists, got a str (tokenise it first)")
        # Fast path: a C-level map over known terms; most docs bring no new term.
        start = len(batch)
        try:
            batch.extend(map(lookup, doc))
        except KeyError:
            del batch[start:]  # extend kept the ids before the unknown term
            # setdefault evaluates len(vocab) first, so a new term gets the next free column.
            batch.extend([setdefault(t, len(vocab)) for t in doc])
        lengths.append(len(doc))
        if len(lengths) >= _ENCODE_BATCH_DOCS:
            flush()
    if lengths or not parts:
        flush()
    n_terms = len(vocab)
    indptr_parts = [np.zeros(1, dtype=np.int64)]
    offset = 0
    for part in parts:
        indptr_parts.append(part.indptr[1:].astype(np.int64) + offset)
        offset += part.nnz
    n_docs = sum(p.shape[0] for p in parts)
    indices = np.concatenate([p.indices.astype(_INDEX, copy=False) for p in parts])
    data = np.concatenate([p.data.astype(_COUNT, copy=False) for p in parts])
    indptr = np.concatenate(indptr_parts)
    if offset < np.iinfo(np.int32).max:
        indptr = indptr.astype(np.int32)
    return sp.csr_matrix((data, indices, indptr), shape=(n_docs, n_terms))
