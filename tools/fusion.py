"""The method's ranking arithmetic, as pure functions named after the method's steps.

SEE: DESIGN.md sections 3 and 4. Rankings are lists of ids, best first; scores are dicts.
Ties are always broken by id so every ranking is deterministic.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from typing import TypeVar

from tools.base import Passage

K = TypeVar("K", bound=Hashable)


def rrf_scores(
    rankings: Sequence[Sequence[K]], k: int = 60, weights: Sequence[float] | None = None
) -> dict[K, float]:
    """Reciprocal rank fusion: sum over rankings of w / (k + rank), ranks starting at 1.

    SEE: DESIGN.md section 3 step 2 (k = 60 for index fusion) and section 4 (k = 10 for A/B).
    """
    weights = weights or [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError("one weight per ranking")
    scores: dict[K, float] = {}
    for ranking, w in zip(rankings, weights, strict=True):
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + w / (k + rank)
    return scores


def order_by_score(scores: dict[K, float]) -> list[K]:
    """Ids by descending score, ties by id."""
    return [item for item, _ in sorted(scores.items(), key=lambda kv: (-kv[1], str(kv[0])))]


def rrf(rankings: Sequence[Sequence[K]], k: int = 60, weights: Sequence[float] | None = None) -> list[K]:
    return order_by_score(rrf_scores(rankings, k, weights))


def papers_by_best_chunk(passages: Iterable[Passage]) -> tuple[list[str], dict[str, Passage]]:
    """Turn a chunk ranking into a paper ranking: each paper ranks by its best chunk.

    Returns the paper ids in order and each paper's best passage (its evidence).
    """
    best: dict[str, Passage] = {}
    for p in passages:
        cur = best.get(p.paper_id)
        if cur is None or p.score > cur.score or (p.score == cur.score and p.chunk_id < cur.chunk_id):
            best[p.paper_id] = p
    order = sorted(best, key=lambda pid: (-best[pid].score, pid))
    return order, best


def round_robin(lists: Sequence[Sequence[K]]) -> list[K]:
    """Merge lists by rank: every list's first unseen item, then every list's second, ...

    SEE: DESIGN.md section 4 (neighbour lists merged across seeds, per source).
    """
    out: list[K] = []
    seen: set[K] = set()
    depth = max((len(lst) for lst in lists), default=0)
    for i in range(depth):
        for lst in lists:
            if i < len(lst) and lst[i] not in seen:
                seen.add(lst[i])
                out.append(lst[i])
    return out


def rerank_score(r_ret: int, r_rr: int, k: int = 60, w_ret: float = 0.6, w_rr: float = 0.4) -> float:
    """s = w_ret/(k + r_ret) + w_rr/(k + r_rr): the reranker moves chunks without overruling
    retrieval. SEE: DESIGN.md section 3 step 4 (paper: k 60, weights 0.6/0.4)."""
    return w_ret / (k + r_ret) + w_rr / (k + r_rr)


def rerank_with_pinning(
    retrieval: Sequence[K],
    reranked: Sequence[K],
    *,
    k: int = 60,
    w_ret: float = 0.6,
    w_rr: float = 0.4,
    pin_top: int = 20,
) -> list[tuple[K, float]]:
    """Order `retrieval` by the rerank score, the top `pin_top` retrieval items pinned above all
    others (ordered among themselves by the same score). `reranked` is the reranker's order of
    the same items; returns (item, score) best first."""
    r_ret = {c: i for i, c in enumerate(retrieval, start=1)}
    r_rr = {c: i for i, c in enumerate(reranked, start=1)}
    if set(r_ret) != set(r_rr):
        raise ValueError("the reranker must order exactly the retrieved items")
    s = {c: rerank_score(r_ret[c], r_rr[c], k, w_ret, w_rr) for c in retrieval}
    pinned = set(list(retrieval)[:pin_top])
    return sorted(((c, s[c]) for c in retrieval), key=lambda cs: (cs[0] not in pinned, -cs[1], r_ret[cs[0]]))


def merge_pool(pool: dict[str, Passage], new: Iterable[Passage]) -> dict[str, Passage]:
    """The evidence pool's reducer: a chunk seen again keeps its maximum score (how many
    subqueries found it does not matter). SEE: DESIGN.md section 3 step 5. Returns a new dict."""
    out = dict(pool)
    for p in new:
        cur = out.get(p.chunk_id)
        if cur is None or p.score > cur.score:
            out[p.chunk_id] = p
    return out


def seeds_first(seeds: Sequence[K], ranking: Sequence[K], size: int) -> list[K]:
    """Seeds (in their order), then the ranking without them, cut to `size` in all."""
    seen = set()
    out: list[K] = []
    for item in list(seeds) + list(ranking):
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out[:size]
