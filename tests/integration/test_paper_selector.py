"""The paper-wide evidence selector (`agent.reading.evidence.pick_paper_sentences`) on a real index of a
demo PDF: it finds the answering sentence anywhere in the paper, keeps to its budget and returns
the paper's order."""

from __future__ import annotations

import pytest

from agent.reading.evidence import paper_sentences_ranked, pick_paper_sentences
from agent.settings import get_settings

pytestmark = pytest.mark.integration

PDF = "N18-3011"
QUESTION = "With which embeddings are ScienceParse's word embeddings initialised?"
GOLD = "Word embeddings are initialized with GloVe"


@pytest.fixture(scope="module")
def idx(built_index):
    from tools.index import open_index

    index = open_index(built_index, get_settings())
    yield index
    index.close()


def test_the_answering_sentence_is_shown_within_the_budget(idx):
    shown = pick_paper_sentences(idx, PDF, [QUESTION], 1000)
    assert any(GOLD in s["text"] for s in shown)
    assert sum(len(s["text"]) + 1 for s in shown) <= 1000 or len(shown) == 1
    rows = [(idx.chunk_row[s["chunk_id"]], s["start"]) for s in shown]
    assert rows == sorted(rows)  # the paper's order, as a reader reads it


def test_the_ranking_covers_the_whole_paper_and_puts_the_answer_near_the_top(idx):
    ranked = paper_sentences_ranked(idx, PDF, [QUESTION])
    every = {c.chunk_id for c in idx.paper_chunks(PDF)}
    assert {s["chunk_id"] for s in ranked} <= every and len({s["chunk_id"] for s in ranked}) > 6
    first = next(n for n, s in enumerate(ranked) if GOLD in s["text"])
    assert first < 5, [s["text"][:80] for s in ranked[:5]]


def test_the_reader_uses_it_when_the_run_asks(idx, monkeypatch):
    from types import SimpleNamespace

    from agent.context import make_context
    from agent.methods.rra import read as rra

    monkeypatch.setattr(rra, "index_for", lambda ctx: idx)
    state = {"question": QUESTION, "subqueries": [], "pool": {}}
    runtime = SimpleNamespace(context=make_context("local-fast", evidence_selector="paper"))
    assert any(GOLD in s["text"] for s in rra.sentences_to_read(state, runtime, PDF))


def test_a_cited_papers_id_in_a_claim_is_not_read_as_a_figure(idx):
    from agent.answer.claims import check_claims
    from agent.llm.schemas import Claim

    shown = [s for s in pick_paper_sentences(idx, PDF, [QUESTION], 1000) if GOLD in s["text"]]
    ok, _ = check_claims([Claim(text="N18-3011 initializes word embeddings with GloVe.", sentences=["S1"])], shown, idx)
    assert ok, "the paper's id is not a figure"
    _, bad = check_claims(
        [Claim(text="N18-3011 initializes 3011 embeddings with GloVe.", sentences=["S1"])], shown, idx
    )
    assert "'3011'" in bad[0]["reason"]  # the same digits written as a figure still need the sentence


def test_the_mixed_selector_keeps_the_reader_chunks_neighbours_and_the_papers_best(idx):
    from agent.reading.evidence import pick_mixed_sentences

    far = [c.chunk_id for c in idx.paper_chunks(PDF) if GOLD not in c.text][:2]  # chunks without the answer
    shown = pick_mixed_sentences(idx, PDF, far, [QUESTION], 1000)
    assert any(GOLD in s["text"] for s in shown)  # found paper-wide, outside the reader's chunks
    assert {s["chunk_id"] for s in shown} & set(far)  # and the reader's chunks still have their place
    assert sum(len(s["text"]) + 1 for s in shown) <= 1000 + max(len(s["text"]) for s in shown)
    rows = [(idx.chunk_row[s["chunk_id"]], s["start"]) for s in shown]
    assert rows == sorted(rows) and len(set(rows)) == len(rows)
