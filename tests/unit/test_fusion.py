from __future__ import annotations

import pytest

from tools.base import Hit, Passage
from tools.retrieval.fusion import by_paper, papers_by_best_chunk, round_robin, rrf, rrf_scores

pytestmark = pytest.mark.unit


def test_rrf_hand_worked():
    # a: 1/(60+1) + 1/(60+2); b: 1/(60+2) + 1/(60+1); c: 1/(60+3)
    s = rrf_scores([["a", "b", "c"], ["b", "a"]], k=60)
    assert s["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert s["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert s["c"] == pytest.approx(1 / 63)
    assert rrf([["a", "b", "c"], ["b", "a"]]) == ["a", "b", "c"]  # a/b tie broken by id


def test_rrf_weights_and_small_k():
    # k=10: a paper at rank r in both lists beats the top of one list alone iff 2/(10+r) > 1/11
    for r in range(1, 15):
        s = rrf_scores(
            [
                ["top"] + [f"x{i}" for i in range(r - 2)] + ["both"] if r > 1 else ["both"],
                [f"y{i}" for i in range(r - 1)] + ["both"],
            ],
            k=10,
        )
        if r == 1:
            continue
        assert (s["both"] > s["top"]) == (2 / (10 + r) > 1 / 11)
    assert rrf_scores([["a"], ["b"]], k=60, weights=[2.0, 1.0])["a"] == pytest.approx(2 / 61)


def test_papers_by_best_chunk():
    ps = [
        Passage("p1", "p1#c2", "", 0.5, "bm25"),
        Passage("p2", "p2#c0", "", 0.9, "bm25"),
        Passage("p1", "p1#c1", "", 0.7, "bm25"),
    ]
    assert papers_by_best_chunk(p.hit() for p in ps) == ["p2", "p1"]
    best = by_paper(p.hit() for p in ps)
    assert list(best) == ["p2", "p1"]
    assert [h["chunk_id"] for h in best["p1"]] == ["p1#c1", "p1#c2"]
    # ties: the smaller chunk id first within a paper, the smaller paper id first across papers
    tied = [
        Hit(chunk_id=c, paper_id=p, score=0.5, source="q") for p, c in (("b", "b#c2"), ("b", "b#c1"), ("a", "a#c9"))
    ]
    assert {pid: [h["chunk_id"] for h in hs] for pid, hs in by_paper(tied).items()} == {
        "a": ["a#c9"],
        "b": ["b#c1", "b#c2"],
    }
    assert list(by_paper(tied)) == ["a", "b"]


def test_round_robin_hand_worked():
    assert round_robin([["a", "b", "c"], ["b", "d"], ["e"]]) == ["a", "b", "e", "d", "c"]
    assert round_robin([]) == []


def test_rerank_score_hand_worked():
    from tools.retrieval.fusion import rerank_score

    assert rerank_score(1, 1) == pytest.approx(1 / 61)
    assert rerank_score(1, 3) == pytest.approx(0.6 / 61 + 0.4 / 63)


def test_rerank_with_pinning_hand_worked():
    from tools.retrieval.fusion import rerank_with_pinning

    retrieval = ["c1", "c2", "c3", "c4"]
    reranked = ["c4", "c3", "c2", "c1"]  # the reranker reverses the order
    # without pinning: c1 0.6/61+0.4/64, c2 0.6/62+0.4/63, c3 0.6/63+0.4/62, c4 0.6/64+0.4/61
    order = rerank_with_pinning(retrieval, reranked, pin_top=0)
    assert [c for c, _ in order] == ["c1", "c2", "c3", "c4"]
    assert order[0][1] == pytest.approx(0.6 / 61 + 0.4 / 64)
    # a reranker that strongly prefers c4 still cannot lift it over the pinned top 2
    order = rerank_with_pinning(retrieval, ["c4", "c2", "c1", "c3"], pin_top=2, w_ret=0.1, w_rr=0.9)
    assert [c for c, _ in order][:2] == ["c2", "c1"]  # pinned pair ordered by its own score
    assert [c for c, _ in order][2:] == ["c4", "c3"]
    with pytest.raises(ValueError):
        rerank_with_pinning(["a"], ["b"])


def test_merge_pool_keeps_maximum_and_does_not_mutate():
    from tools.retrieval.fusion import merge_pool

    pool = {"a": Passage("p", "a", "", 0.5, "q1").hit()}
    new = [
        Passage("p", "a", "", 0.3, "q2").hit(),
        Passage("p", "a", "", 0.7, "q3").hit(),
        Passage("p", "b", "", 0.1, "q2").hit(),
    ]
    merged = merge_pool(pool, new)
    assert merged["a"]["score"] == 0.7 and merged["a"]["source"] == "q3"
    assert merged["b"]["score"] == 0.1
    assert pool["a"]["score"] == 0.5 and "b" not in pool
    # as the state's reducer: a mapping on the right, None on either side, ties keep the first
    assert merge_pool(None, {"a": new[0]}) == {"a": new[0]}
    assert merge_pool(merged, None) == merged and merge_pool(merged, None) is not merged
    tie = Hit(chunk_id="a", paper_id="p", score=0.7, source="q4")
    assert merge_pool(merged, [tie])["a"]["source"] == "q3"


def test_seeds_first():
    from tools.retrieval.fusion import seeds_first

    assert seeds_first(["s2", "s1"], ["x", "s1", "y", "z"], 4) == ["s2", "s1", "x", "y"]
