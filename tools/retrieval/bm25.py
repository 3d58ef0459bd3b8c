"""The two array helpers of litloop's BM25 (`tools.retrieval.bm25_segments`, whose scores equal
`rank_bm25.BM25Okapi`, the reference implementation, and whose docstring records its decisions):

- `_encode`: token lists as a CSR matrix of term counts, the vocabulary extended in
  first-occurrence order;
- `_best_k`: the k best of some scores, a tie at the cut-off going to the lower row.

The whole-corpus index that used to live here was replaced by the segmented one, which every
index uses; `tests/unit/test_bm25_segments.py` checks the segmented scorer against
rank_bm25 directly.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import scipy.sparse as sp

# Documents are encoded in batches so the peak memory of one batch's raw token ids stays
# bounded (2M chunks x ~150 tokens would otherwise be ~300M ids at once).
_ENCODE_BATCH_DOCS = 50_000

_INDEX = np.int32  # column and row indices: 2M docs and a few million terms fit in int32
_COUNT = np.int32  # term frequencies within one short chunk


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
        part = sp.csr_matrix((np.ones(len(ids), dtype=_COUNT), ids, indptr), shape=(len(lengths), len(vocab)))
        part.sum_duplicates()  # turns repeated token ids into counts, sorted by column
        parts.append(part)
        batch.clear()
        lengths.clear()

    for doc in docs:
        if isinstance(doc, str):
            raise TypeError("BM25 expects token lists, got a str (tokenise it first)")
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
