"""Knowledge-aware diverse reranking (KADR), the pure parts. SEE: docs/design.md section 6.

The second method (Marikarp's SIGIR 2025 LiveRAG winner, Zhou 2025, arXiv 2506.20476), run as
the `kadr` preset of the same graph (agent/methods/kadr.py calls these from the existing nodes):

1. candidates: the sparse (chunk BM25) and dense rankings of the question, merged by
   alternating between them, keeping order, dropping duplicates (`interleave`);
2. rerank the candidates with the reranker, query = the question;
3. the LLM reads the top N_know = 5 one at a time and declares the knowledge elements the
   question needs and those the document holds (agent side);
4. the LLM summarises the declarations into two complementary knowledge statements (agent side);
5. the top N_rank are reranked twice more, query = question + each statement, and the two
   lists interleaved (`diverse_rerank`): N_rank unique chunks, facets alternating;
6. the answer is written from the top N_ans = 10 (`answer_chunks`).

Documents are chunks here (LiveRAG's documents are passages of web pages). With no reranker
(`none`), steps 2 and 5 keep the order they are given, so KADR reduces to the interleaved merge.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from tools.base import Hit, Passage
from tools.retrieval.fusion import reranked, round_robin

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")
H = TypeVar("H", bound=Mapping[str, Any])  # a pool entry: a Hit or a plain dict with its keys


def interleave_by(key: Callable[[T], K], *rankings: Sequence[T]) -> list[T]:
    """`tools.retrieval.fusion.round_robin` (alternate between the rankings, keep each one's order, drop
    items already taken) for records (passages, chunk dicts) identified by `key`; the first record
    seen for an id is kept."""
    first: dict[K, T] = {}
    for ranking in rankings:
        for item in ranking:
            first.setdefault(key(item), item)
    return [first[k] for k in round_robin([[key(i) for i in r] for r in rankings])]


def candidates(index: Any, query: str, k: int, depth: int | None = None) -> list[Passage]:
    """Step 1: the top `k` chunks by BM25 and by dense similarity, interleaved (sparse first),
    cut to `depth`."""
    merged = interleave_by(_chunk_id, index.bm25_chunks(query, k), index.dense_chunks(query, k))
    return merged[: depth or len(merged)]


def statement_query(question: str, statement: str) -> str:
    """Step 5's query: the question and one knowledge statement."""
    return f"{question}\n{statement}".strip()


def diverse_rerank(
    reranker: Any,
    question: str,
    statements: Sequence[str],
    ranked: Sequence[T],
    n_rank: int,
    text: Callable[[T], str],
    key: Callable[[T], K],
) -> tuple[list[list[T]], list[T]]:
    """Step 5: the top `n_rank` of `ranked` reranked once per statement, and the rerankings
    interleaved. Returns (one list per statement, the interleaved list of n_rank unique items)."""
    top = list(ranked[:n_rank])
    lists = [reranked(reranker, statement_query(question, s), top, text) for s in statements]
    return lists, interleave_by(key, *lists) if lists else top


def answer_chunks(pool: Iterable[H], n_ans: int) -> list[H]:
    """Step 6: the top `n_ans` chunks of the KADR ranking (pool entries, best score first)."""
    return sorted(pool, key=lambda c: (-c["score"], c["chunk_id"]))[:n_ans]


def papers_in_order(chunks: Iterable[Hit | dict[str, Any] | Passage]) -> list[str]:
    """Paper ids in the order their first chunk appears."""
    return list(dict.fromkeys(c.paper_id if isinstance(c, Passage) else c["paper_id"] for c in chunks))


def _chunk_id(p: Passage) -> str:
    return p.chunk_id
