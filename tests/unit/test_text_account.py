"""A PDF build's accounting of every page's words: what reached the document, what was dropped
for a reason, and what was lost."""

from __future__ import annotations

from tools.base import Block, Document, Dropped, Paper
from tools.ingest.pdf.accounting import account

WORDS = [
    "the",
    "cells",
    "were",
    "counted",
    "in",
    "every",
    "sample",
    "of",
    "the",
    "survey",
    "and",
    "pooled",
    "across",
    "stations",
]


def _doc(*blocks: Block, dropped: tuple[Dropped, ...] = ()) -> Document:
    return Document(paper=Paper(paper_id="p", title="T"), blocks=blocks, dropped=dropped)


def test_a_page_whose_words_reached_no_block_is_lost_and_named():
    pages = {1: WORDS * 3, 2: WORDS * 3, 3: WORDS * 3}
    doc = _doc(Block("text", " ".join(WORDS * 3), page=1), Block("text", " ".join(WORDS * 3), page=3))
    got = account(pages, doc, {})
    assert [round(p.share, 2) for p in got.pages] == [1.0, 0.0, 1.0]
    assert [p.page for p in got.lost_pages()] == [2] and round(got.share, 2) == 0.67
    message = got.problem("paper.pdf (p)")
    assert message is not None and "kept 0.67 of the paper's text" in message and "p. 2 kept 0.00" in message


def test_dropped_for_a_reason_a_bibliography_line_and_a_paragraph_across_pages_count_as_kept():
    head = "Journal of Surveys 12"
    pages = {1: [*WORDS, *head.split()], 2: [*WORDS[:5], *head.split(), "Smith", "2019", "Survey", "methods"]}
    across = " ".join(WORDS + WORDS[:5])
    doc = _doc(
        Block("text", across, page=1, page_end=2, page_end_at=len(" ".join(WORDS))),
        dropped=(Dropped(1, head, "running head or foot"), Dropped(2, head, "running head or foot")),
    )
    got = account(pages, doc, {2: ["Smith 2019. Survey methods."]})  # a bibliography line of page 2
    assert all(p.share == 1.0 for p in got.pages) and got.problem("x") is None


def test_a_page_of_a_few_words_is_not_judged_alone():
    got = account({1: WORDS * 3, 2: ["Figure", "3"]}, _doc(Block("text", " ".join(WORDS * 3), page=1)), {})
    assert got.lost_pages() == [] and got.share > 0.85 and got.problem("x") is None
