"""Knowledge-aware diverse reranking, the pure steps (docs/design.md section 6), hand-worked."""

from __future__ import annotations

import random

import pytest

from agent import prompts
from agent.context import Context, make_context
from tools.base import Passage
from tools.retrieval.fusion import reranked as rerank
from tools.retrieval.fusion import round_robin
from tools.retrieval.kadr import (
    answer_chunks,
    candidates,
    diverse_rerank,
    interleave_by,
    papers_in_order,
    statement_query,
)

N_KNOW, N_ANS = 5, 10  # SEE: docs/design.md section 6 (the paper's values)


def interleave(*rankings):
    return round_robin(rankings)


pytestmark = pytest.mark.unit


class OverlapReranker:
    """Scores a text by how many query words it contains: enough to make two queries disagree."""

    name = "overlap"

    def __init__(self):
        self.queries: list[str] = []

    def score(self, query, texts):
        self.queries.append(query)
        words = set(query.lower().split())
        return [float(len(words & set(t.lower().split()))) for t in texts]


def test_interleave_alternates_keeps_order_and_drops_duplicates():
    assert interleave(["a", "b", "c"], ["b", "d", "a", "e"]) == ["a", "b", "d", "c", "e"]
    assert interleave(["x"], []) == ["x"]
    assert interleave([], []) == []
    assert interleave(["a", "a", "b"], ["a"]) == ["a", "b"]  # duplicates within a list too


def test_interleave_properties_on_random_lists():
    rng = random.Random(7)
    for _ in range(200):
        a = rng.sample(range(30), rng.randint(0, 15))
        b = rng.sample(range(30), rng.randint(0, 15))
        out = interleave(a, b)
        assert len(out) == len(set(out)) and set(out) == set(a) | set(b)
        taken_a = [x for x in out if x in a and (x not in b or a.index(x) <= b.index(x))]
        assert taken_a == sorted(taken_a, key=a.index)  # a's items keep a's order
        assert out[:1] == a[:1] or not a  # the first list starts


def test_candidates_interleave_sparse_then_dense():
    def p(cid):
        return Passage(cid.split("#")[0], cid, cid, 1.0, "x")

    class Index:
        def bm25_chunks(self, q, k):
            return [p("a#c0"), p("b#c0"), p("c#c0")][:k]

        def dense_chunks(self, q, k):
            return [p("b#c0"), p("d#c0")][:k]

    got = candidates(Index(), "q", 3)
    assert [c.chunk_id for c in got] == ["a#c0", "b#c0", "d#c0", "c#c0"]
    assert [c.chunk_id for c in candidates(Index(), "q", 3, depth=2)] == ["a#c0", "b#c0"]


def test_rerank_orders_by_score_within_budget():
    r = OverlapReranker()
    items = ["cat dog", "dog", "cat dog fish", "fish"]
    assert rerank(r, "cat dog fish", items, str) == ["cat dog fish", "cat dog", "dog", "fish"]
    # only the first two are scored; the rest keep their order after them
    assert rerank(r, "dog", items, str, budget=2) == ["cat dog", "dog", "cat dog fish", "fish"]
    assert rerank(None, "dog", items, str) == items


def test_two_statements_give_two_rerankings_and_n_rank_unique_items():
    docs = [
        {"chunk_id": f"d{i}", "text": t}
        for i, t in enumerate(
            [
                "alpha titles count",
                "beta titles count",
                "alpha beta",
                "alpha wins",
                "beta wins",
                "unrelated",
                "alpha",
                "beta",
                "gamma",
                "delta",
            ]
        )
    ]
    r = OverlapReranker()
    statements = ["how many titles alpha won", "how many titles beta won"]
    lists, final = diverse_rerank(r, "who won more", statements, docs, 6, lambda d: d["text"], lambda d: d["chunk_id"])
    assert len(lists) == 2 and [statement_query("who won more", s) for s in statements] == r.queries
    first, second = ([d["chunk_id"] for d in lst] for lst in lists)
    assert first != second and set(first) == set(second) == {f"d{i}" for i in range(6)}
    ids = [d["chunk_id"] for d in final]
    assert len(ids) == 6 == len(set(ids))
    assert ids == interleave(first, second)
    assert ids[:2] == [first[0], second[0]]  # each facet's best document leads


def test_without_statements_the_first_ranking_stands():
    docs = [{"chunk_id": str(i), "text": "x"} for i in range(5)]
    lists, final = diverse_rerank(OverlapReranker(), "q", [], docs, 3, lambda d: d["text"], lambda d: d["chunk_id"])
    assert lists == [] and [d["chunk_id"] for d in final] == ["0", "1", "2"]


def test_interleave_by_keeps_the_first_record_of_an_id():
    a = [{"id": 1, "v": "a"}, {"id": 2, "v": "a"}]
    b = [{"id": 2, "v": "b"}, {"id": 3, "v": "b"}]
    assert [(d["id"], d["v"]) for d in interleave_by(lambda d: d["id"], a, b)] == [(1, "a"), (2, "a"), (3, "b")]


def test_answer_chunks_and_papers():
    pool = [{"chunk_id": f"p{i % 3}#c{i}", "paper_id": f"p{i % 3}", "score": 1 / (60 + i)} for i in range(1, 15)]
    top = answer_chunks(pool, N_ANS)
    assert len(top) == 10 and top[0]["chunk_id"] == "p1#c1"
    assert papers_in_order(top) == ["p1", "p2", "p0"]


def test_kadr_preset_and_mode():
    ctx = make_context("kadr")
    assert ctx.mode == "kadr" and ctx.kadr_n_know == N_KNOW == 5 and ctx.kadr_n_ans == N_ANS == 10
    assert ctx.max_rounds == 1 and ctx.synthesize_chunks == ctx.kadr_n_ans
    assert Context().mode == "rra" and Context().corpora == []
    with pytest.raises(ValueError, match="unknown mode 'x'"):
        Context(mode="x")


def test_kadr_prompt_variables():
    assert prompts.variables("kadr_declare") == {"question", "document"}
    assert prompts.variables("kadr_summarize") == {"question", "declarations"}
    assert "XYZ-31" in prompts.render("kadr_declare", question="q", document="d")  # synthetic example
