"""The method's ranking arithmetic, as pure functions named after the method's steps.

SEE: docs/design.md sections 3 and 4. Rankings are lists of ids, best first; scores are dicts.
Ties are always broken by id so every ranking is deterministic.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from tools.base import Hit

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")


def rrf_scores(rankings: Sequence[Sequence[K]], k: int = 60, weights: Sequence[float] | None = None) -> dict[K, float]:
    """Reciprocal rank fusion: sum over rankings of w / (k + rank), ranks starting at 1.

    SEE: docs/design.md section 3 step 2 (k = 60 for index fusion) and section 4 (k = 10 for A/B).
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


def by_paper(hits: Iterable[Hit]) -> dict[str, list[Hit]]:
    """Each paper's hits, best first (ties by chunk id); papers in order of their best hit
    (ties by paper id). SEE: docs/design.md section 3: a paper ranks by its best chunk."""
    groups: dict[str, list[Hit]] = {}
    for h in hits:
        groups.setdefault(h["paper_id"], []).append(h)
    for lst in groups.values():
        lst.sort(key=lambda h: (-h["score"], h["chunk_id"]))
    return {pid: groups[pid] for pid in sorted(groups, key=lambda pid: (-groups[pid][0]["score"], pid))}


def paper_hits(pool: Mapping[str, Hit], paper_id: str) -> list[Hit]:
    """One paper's hits in the pool, best first (ties by chunk id)."""
    return by_paper(h for h in pool.values() if h["paper_id"] == paper_id).get(paper_id, [])


def papers_by_best_chunk(hits: Iterable[Hit]) -> list[str]:
    """A chunk ranking turned into a paper ranking: each paper ranks by its best chunk."""
    return list(by_paper(hits))


def round_robin(lists: Sequence[Sequence[K]]) -> list[K]:
    """Merge lists by rank: every list's first unseen item, then every list's second, ...

    SEE: docs/design.md section 4 (neighbour lists merged across seeds, per source).
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
    retrieval. SEE: docs/design.md section 3 step 4 (paper: k 60, weights 0.6/0.4)."""
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


def merge_pool(pool: Mapping[str, Hit] | None, new: Iterable[Hit] | Mapping[str, Hit] | None) -> dict[str, Hit]:
    """The evidence pool's reducer (the agent state's too): a chunk seen again keeps its maximum
    score (how many subqueries found it does not matter); a tie keeps the earlier entry.
    SEE: docs/design.md section 3 step 5. Returns a new dict; neither argument is changed."""
    out = dict(pool or {})
    for h in new.values() if isinstance(new, Mapping) else new or ():
        cur = out.get(h["chunk_id"])
        if cur is None or h["score"] > cur["score"]:
            out[h["chunk_id"]] = h
    return out


def rerank_order(scores: Sequence[float]) -> list[int]:
    """Indices by descending score; ties keep the earlier (better retrieved) index first.

    A NaN (a broken model output) sorts last instead of scrambling the order.
    """

    def key(i: int) -> tuple[float, int]:
        s = float(scores[i])
        return (math.inf if math.isnan(s) else -s, i)

    return sorted(range(len(scores)), key=key)


def reranks(reranker: Any) -> bool:
    """Whether `reranker` changes an order at all (None and the `none` backend do not)."""
    return reranker is not None and getattr(reranker, "name", "none") != "none"


def reranked(
    reranker: Any, query: str, items: Sequence[T], text: Callable[[T], str], budget: int | None = None
) -> list[T]:
    """`items` in the reranker's order for `query`: the first `budget` are scored (ties keep the
    given order, a NaN score sorts last), the rest follow in their order. No reranker (or
    `none`): the order given. SEE: docs/design.md section 3 step 4."""
    n = len(items) if budget is None else min(len(items), budget)
    if not reranks(reranker) or n == 0:
        return list(items)
    head = rerank_order(reranker.score(query, [text(i) for i in items[:n]]))
    return [items[i] for i in head] + list(items[n:])


def seeds_first(seeds: Sequence[K], ranking: Sequence[K], size: int) -> list[K]:
    """Seeds (in their order), then the ranking without them, cut to `size` in all."""
    seen = set()
    out: list[K] = []
    for item in list(seeds) + list(ranking):
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out[:size]
