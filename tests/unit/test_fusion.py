from __future__ import annotations

import pytest

from tools.base import Passage
from tools.fusion import papers_by_best_chunk, round_robin, rrf, rrf_scores

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
        s = rrf_scores([["top"] + [f"x{i}" for i in range(r - 2)] + ["both"] if r > 1 else ["both"],
                        [f"y{i}" for i in range(r - 1)] + ["both"]], k=10)
        if r == 1:
            continue
        assert (s["both"] > s["top"]) == (2 / (10 + r) > 1 / 11)
    assert rrf_scores([["a"], ["b"]], k=60, weights=[2.0, 1.0])["a"] == pytest.approx(2 / 61)


def test_papers_by_best_chunk():
    ps = [Passage("p1", "p1#c2", "", 0.5, "bm25"), Passage("p2", "p2#c0", "", 0.9, "bm25"),
          Passage("p1", "p1#c1", "", 0.7, "bm25")]
    order, best = papers_by_best_chunk(ps)
    assert order == ["p2", "p1"]
    assert best["p1"].chunk_id == "p1#c1"


def test_round_robin_hand_worked():
    assert round_robin([["a", "b", "c"], ["b", "d"], ["e"]]) == ["a", "b", "e", "d", "c"]
    assert round_robin([]) == []
