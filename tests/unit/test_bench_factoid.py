"""The factoid benchmark's scoring (bench.factoid) on hand-made answers, its data set's
shape, and the data set check against a tiny stand-in index (no real index, no model)."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import pytest

from bench.factoid import (
    DATA,
    FIELDS,
    check_dataset,
    load_items,
    normalise,
    score_answer,
    summarise,
)
from tools.base import Locator

pytestmark = pytest.mark.unit

ITEM = {
    "id": "s2orc-x",
    "question": "How many PDFs were selected for processing in S2ORC?",
    "answer_contains": ["30.5M", "30.5 million", "30,500,000"],
    "paper_id": "P1",
    "page": 3,
    "evidence": "and 30.5M PDFs are selected for processing based on these filtering criteria.",
}


def cite(paper_id: str, page: int | None) -> dict:
    return {"paper_id": paper_id, "locator": {} if page is None else {"page": page, "section": "2.1"}}


def test_normalise_folds_case_unicode_space_and_thousands():
    assert normalise("  SciBERT\u00a0uses\n 1,234,567  tokens ") == "scibert uses 1234567 tokens"
    assert normalise("4\u202f113 clicks") == "4113 clicks"
    assert normalise("ﬁne ＴＰＵ v3-８") == "fine tpu v3-8"  # NFKC: ligature and full-width forms
    assert normalise("see [1, 35] and 1,2") == "see [1, 35] and 1,2"  # not thousands groups


def test_correct_number_with_gold_page_cited():
    s = score_answer(ITEM, {"text": "About 30.5M PDFs were processed [1].", "citations": [cite("P1", 3)]})
    assert s["correct"] and s["paper_cited"] and s["page_cited"]
    assert s["matched"] == "30.5M" and s["cited_pages"] == [3] and s["cited_papers"] == ["P1"]


def test_case_and_alternative_spelling():
    s = score_answer(ITEM, {"text": "Roughly 30.5 MILLION of them.", "citations": []})
    assert s["correct"] and s["matched"] == "30.5 million"
    assert not s["paper_cited"] and not s["page_cited"]


def test_thousands_separator_either_side():
    a = {"text": "They selected 30500000 PDFs.", "citations": []}
    assert score_answer(ITEM, a)["correct"]  # the gold's "30,500,000" loses its commas too
    item = dict(ITEM, answer_contains=["4113"])
    assert score_answer(item, {"text": "In 4,113 clicks the ranker won.", "citations": []})["correct"]
    assert not score_answer(item, {"text": "In 4,114 clicks.", "citations": []})["correct"]


def test_wrong_number_is_not_correct():
    for text in ("31.3M PDFs were found.", "130.5M PDFs.", "30.55M PDFs.", "30.5 PDFs", ""):
        assert not score_answer(ITEM, {"text": text, "citations": [cite("P1", 3)]})["correct"], text


def test_a_number_inside_a_longer_number_does_not_count():
    item = dict(ITEM, answer_contains=["4.2"])
    for text in ("an improvement of 14.2 F1", "an improvement of 4.25 F1", "version 4.2.1"):
        assert not score_answer(item, {"text": text})["correct"], text
    for text in ("an improvement of 4.2 F1.", "(4.2)", "gains 4.2."):
        assert score_answer(item, {"text": text})["correct"], text


def test_other_page_of_the_gold_paper():
    s = score_answer(ITEM, {"text": "30.5M", "citations": [cite("P1", 4), cite("P1", None)]})
    assert s["correct"] and s["paper_cited"] and not s["page_cited"]
    assert s["cited_pages"] == [4]


def test_other_paper_on_the_gold_page():
    s = score_answer(ITEM, {"text": "30.5M", "citations": [cite("P2", 3)]})
    assert s["correct"] and not s["paper_cited"] and not s["page_cited"]
    assert s["cited_papers"] == ["P2"]


def test_missing_text_and_citations():
    s = score_answer(ITEM, {})
    assert s == {
        "correct": False,
        "matched": None,
        "paper_cited": False,
        "page_cited": False,
        "cited_pages": [],
        "cited_papers": [],
    }


def test_summarise_shares_and_seconds():
    rows = [
        {
            "paper_id": "P1",
            "correct": True,
            "paper_cited": True,
            "page_cited": True,
            "seconds": 10.0,
            "llm_calls": 2,
            "status": "ok",
            "preset": "x",
        },
        {
            "paper_id": "P1",
            "correct": True,
            "paper_cited": True,
            "page_cited": False,
            "seconds": 20.0,
            "llm_calls": 4,
            "status": "ok",
            "preset": "x",
        },
        {
            "paper_id": "P2",
            "correct": False,
            "paper_cited": True,
            "page_cited": True,
            "seconds": 30.0,
            "llm_calls": 3,
            "status": "partial",
            "preset": "x",
        },
        {
            "paper_id": "P2",
            "correct": False,
            "paper_cited": False,
            "page_cited": False,
            "seconds": 100.0,
            "llm_calls": 3,
            "status": "ok",
            "preset": "x",
        },
    ]
    s = summarise(rows)
    assert s["questions"] == 4 and s["preset"] == "x"
    assert s["correct"] == 0.5 and s["paper_cited"] == 0.75 and s["page_cited"] == 0.5
    assert s["correct_and_page_cited"] == 0.25
    assert s["seconds_median"] == 25.0
    assert s["seconds_p95"] == pytest.approx(30.0 + 0.85 * 70.0)  # rank 2.85 of 0..3
    assert s["llm_calls_mean"] == 3.0
    assert s["status"] == {"ok": 3, "partial": 1}
    assert s["by_paper"]["P1"] == {"questions": 2, "correct": 1.0, "paper_cited": 1.0, "page_cited": 0.5}
    assert s["by_paper"]["P2"]["correct"] == 0.0


def test_summarise_no_rows():
    s = summarise([])
    assert s["questions"] == 0 and s["correct"] is None and s["seconds_median"] is None and s["seconds_p95"] is None


def test_dataset_fields_count_and_ids():
    items = load_items(DATA)
    assert len(items) >= 18
    ids = [it["id"] for it in items]
    assert len(set(ids)) == len(ids)
    for it in items:
        assert set(FIELDS) <= set(it), it.get("id")
        assert isinstance(it["question"], str) and it["question"].strip().endswith("?"), it["id"]
        assert isinstance(it["answer_contains"], list) and it["answer_contains"], it["id"]
        assert all(isinstance(a, str) and a.strip() for a in it["answer_contains"]), it["id"]
        assert isinstance(it["page"], int) and not isinstance(it["page"], bool) and it["page"] >= 1, it["id"]
        assert isinstance(it["paper_id"], str) and isinstance(it["evidence"], str) and it["evidence"].strip(), it["id"]
        # the gold answer is in its own evidence: the item scores itself correct
        assert score_answer(it, {"text": it["evidence"]})["correct"], it["id"]
    papers = {it["paper_id"] for it in items}
    assert papers == {"2020.acl-main.207", "2020.acl-main.447", "2023.eacl-main.121", "N18-3011"}
    assert min(sum(it["paper_id"] == p for it in items) for p in papers) >= 4
    loss = [it for it in items if it["paper_id"] == "2020.acl-main.207" and it["page"] == 3]
    assert any("triplet margin loss" in a for it in loss for a in it["answer_contains"])


def fake_index():
    def chunk(pid, page, text):
        return SimpleNamespace(paper_id=pid, text=text, locator=Locator(page=page))

    return SimpleNamespace(
        papers={"P1": object(), "P2": object()},
        chunks=[
            chunk("P1", 2, "Intro."),
            chunk(
                "P1",
                3,
                "There are around 31.3M PDFs, and 30.5M PDFs\n are selected for "
                "processing based on these filtering criteria. More.",
            ),
            chunk("P2", 3, "and 30.5M PDFs are selected for processing based on these filtering criteria."),
        ],
    )


def test_check_dataset_passes_a_good_item():
    assert check_dataset(fake_index(), [ITEM]) == []


def test_check_dataset_flags_bad_items():
    bad = [
        dict(ITEM, id="wrong-page", page=2),
        dict(ITEM, id="not-there", evidence="50M PDFs are selected."),
        dict(ITEM, id="other-paper", paper_id="P9"),
        dict(ITEM, id="answer-not-in-evidence", answer_contains=["31.3M"]),
        {k: v for k, v in ITEM.items() if k != "page"} | {"id": "no-page"},
        dict(ITEM, id="str-page", page="3"),
        dict(ITEM),
        dict(ITEM),
    ]
    problems = check_dataset(fake_index(), bad)
    text = "\n".join(problems)
    assert "wrong-page: evidence not on page 2 (found on page(s) [3])" in problems
    assert "not-there: evidence not on page 3 (not found in any chunk of the paper)" in problems
    assert "other-paper: paper P9 is not in the index" in problems
    assert "answer-not-in-evidence: none of answer_contains occurs in the evidence" in problems
    assert "no-page: missing page" in problems
    assert "str-page: page '3' is not a 1-based page number" in text
    assert "s2orc-x: id used 2 times" in problems


def test_module_imports_light():
    heavy = ("torch", "chromadb", "sentence_transformers", "transformers", "langgraph")
    probe = f"import sys, bench.factoid\nprint(','.join(m for m in {heavy!r} if m in sys.modules))"
    res = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == ""


def test_where_a_miss_happens_is_named_from_the_shown_sentences_and_the_claims():
    from bench.factoid import miss_stage

    gold = "Of these, 8.1M are open, and 30.5M PDFs are selected for processing based on these filtering criteria."
    other = "We release the corpus under an open licence."
    wrong = {"text": "The corpus is released openly.", "claims": [], "rejected_claims": []}
    assert miss_stage(ITEM, [gold], {"text": "30.5M PDFs were selected [1]."}) == ""
    assert miss_stage(ITEM, [other], wrong) == "not shown"
    assert miss_stage(ITEM, [other, gold], wrong) == "no claim written"
    dropped = {**wrong, "rejected_claims": [{"text": "31M PDFs", "sentence_ids": ["S2"], "reason": "the number '31M'"}]}
    assert miss_stage(ITEM, [other, gold], dropped) == "claim dropped: the number '31M'"
    elsewhere = {**wrong, "rejected_claims": [{"text": "x", "sentence_ids": ["S1"], "reason": "r"}]}
    assert miss_stage(ITEM, [other, gold], elsewhere) == "not cited"
    kept = {**wrong, "claims": [{"text": "PDFs were selected.", "sentences": [{"text": gold}]}]}
    assert miss_stage(ITEM, [other, gold], kept) == "claim kept without the fact"


def test_a_chosen_fact_names_whether_the_gold_sentence_was_offered_ranked_or_copied_from():
    from bench.factoid import miss_stage

    gold = "Of these, 8.1M are open, and 30.5M PDFs are selected for processing based on these filtering criteria."
    other = "We release the corpus under an open licence."
    wrong = {"text": "The corpus is released openly.", "claims": [], "rejected_claims": []}
    assert miss_stage(ITEM, [other], wrong, pool=[other]) == "not offered"
    assert miss_stage(ITEM, [other], wrong, pool=[other, gold]) == "ranked below the sentences copied from"
    copied = {**wrong, "chosen": {"value": "8.1M"}}
    assert miss_stage(ITEM, [gold], {**copied, "chosen": {"value": "31M"}}, pool=[gold]) == "copied another value"
    assert miss_stage(ITEM, [gold], copied, pool=[gold]) == "no claim written"
