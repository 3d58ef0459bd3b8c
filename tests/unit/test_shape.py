"""The answer's shape read from the question's wording (agent/reading/shape.py), and what it sizes."""

from __future__ import annotations

import pytest

from agent.context import make_context
from agent.reading.shape import (
    asks_quantity,
    claims_cap,
    comparison_columns,
    papers_to_read,
    question_shape,
    reads_jointly,
    shape_for,
)


@pytest.mark.parametrize(
    "question",
    [
        "Which papers apply reinforcement learning on a mobile robot?",
        "Which of the demo papers use GROBID?",
        "What other studies report HMM extractors?",
        "List the papers that build citation indexes",
        "Name all studies that use ScienceParse",
        "Papers that combine collaborative filtering with content-based filtering",
        "Are there any papers on wrapper induction?",
        "which works build on SciBERT",
    ],
)
def test_which_papers_questions_ask_for_papers(question):
    assert question_shape(question) == "papers"


@pytest.mark.parametrize(
    "question",
    [
        "What loss function does SPECTER train with?",
        "What F1 does S2ORC report for titles?",
        "How many papers does S2ORC contain?",
        "What share of papers carry a DOI?",
        "Which dataset has the most papers?",
        "Which model is best on SciDocs?",
        "",
    ],
)
def test_everything_else_is_a_fact(question):
    assert question_shape(question) == "fact"


def test_the_run_can_say_the_shape_itself():
    assert shape_for("What loss does SPECTER use?", "papers") == "papers"
    assert shape_for("Which papers use GROBID?", "fact") == "fact"
    assert shape_for("Which papers use GROBID?", "auto") == "papers"


def test_the_shape_sizes_the_reading_and_the_claims():
    ctx = make_context("local-fast")  # reads 2 papers, at most 3 claims
    assert papers_to_read(ctx, "What loss does SPECTER use?") == ctx.read_papers == 2
    assert papers_to_read(ctx, "Which papers use GROBID?") == ctx.list_papers == 10
    assert claims_cap(ctx, "What loss does SPECTER use?") == 2  # fact_claims
    assert claims_cap(ctx, "Which papers use GROBID?") == 10
    wide = make_context("paper")  # reads 50, at most 8 claims
    assert papers_to_read(wide, "Which papers use GROBID?") == 50
    assert claims_cap(make_context("paper", fact_claims=5), "What loss?") == 5


def test_questions_about_a_cited_work_name_it():
    from agent.reading.shape import citation_subject, subject_names

    assert citation_subject("Who cites N18-3011?") == "N18-3011"
    assert citation_subject("What do the papers in the collection say about GROBID?") == "GROBID"
    assert citation_subject("Which papers build on SPECTER?") == "SPECTER"
    assert citation_subject('How do my papers describe "GROBID"?') == "GROBID"
    assert citation_subject("Which papers cite the SPECTER paper?") == "SPECTER paper"
    assert subject_names("SPECTER paper") == ["SPECTER paper", "SPECTER"]
    # other questions, "which papers use X" included (a method, searched for as usual)
    for q in ("Which papers use CRFs?", "What F1 do CRFs reach?", "Who wrote SPECTER?", ""):
        assert citation_subject(q) is None


@pytest.mark.parametrize(
    "question",
    [
        "How many PDFs were parsed?",
        "By how much did the clickthrough rate improve?",
        "What share of the bigrams are in the source?",
        "What title accuracy does the clustering reach?",
        "What Bag of Concepts F1 does the linker reach?",
        "Which precision does ScienceParse reach for titles?",
    ],
)
def test_a_question_for_a_number_asks_for_a_quantity(question):
    assert asks_quantity(question)


@pytest.mark.parametrize(
    "question",
    [
        "What loss function is SPECTER trained with?",
        "On which GPU was the model trained?",
        "Which papers use GROBID?",
        "What does the paper propose?",
    ],
)
def test_other_questions_do_not(question):
    assert not asks_quantity(question)


@pytest.mark.parametrize(
    ("question", "columns"),
    [
        (
            "Compare SPECTER and S2ORC on their training data and evaluation tasks",
            ["training data", "evaluation tasks"],
        ),
        ("How do SPECTER and SciBERT differ in training objective?", ["training objective"]),
        ("Compare CRFs and HMMs in terms of accuracy, speed, and label bias.", ["accuracy", "speed", "label bias"]),
        ("Contrast HMMs and MEMMs with respect to the label bias or the features", ["label bias", "features"]),
        ("What is the difference between HMMs and CRFs?", ["finding"]),
        ("CRF vs HMM", ["finding"]),
    ],
)
def test_a_comparison_has_a_column_per_aspect_it_names(question, columns):
    assert question_shape(question) == "comparison"
    assert comparison_columns(question) == columns


@pytest.mark.parametrize(
    "question",
    [
        "How does the model compare to the baseline on F1?",  # one paper's figure: a fact
        "Which papers compare HMMs and CRFs?",  # asks for papers
        "What F1 does S2ORC report for titles?",
    ],
)
def test_questions_that_mention_comparing_are_not_always_comparisons(question):
    assert question_shape(question) != "comparison"


def test_a_comparison_covers_the_list_and_may_make_a_claim_per_cell():
    ctx = make_context("local-fast")
    question = "Compare HMMs and CRFs on F1 and speed"
    assert papers_to_read(ctx, question) == ctx.list_papers
    assert claims_cap(ctx, question) == ctx.compare_papers * 2
    assert reads_jointly(ctx, question) and not reads_jointly(make_context("paper"), question)


def test_the_meaning_pass_reads_no_comparison_where_nothing_is_compared():
    # a reader sure of "comparison" is overruled only when the question relates nothing to
    # anything; the same reader's word stands when the question names two things
    from agent.reading.shape import shape_from

    sure = {"fact": 0.05, "papers": 0.05, "overview": 0.05, "comparison": 0.8, "citation": 0.05}
    assert shape_from("Which model is best on SciDocs?", lambda q: sure) == "fact"
    assert shape_from("Which works better on SciDocs, SPECTER or SciBERT?", lambda q: sure) == "comparison"
    assert shape_from("What separates SPECTER from SciBERT?", lambda q: sure) == "comparison"


@pytest.mark.parametrize(
    ("question", "explains"),
    [
        ("How does SPECTER use citations to learn document-level representations of papers?", True),
        ("Why does co-training help when labelled data is scarce?", True),
        ("Explain the HITS algorithm.", True),
        ("How many papers does S2ORC contain?", False),
        ("How does the model compare to the baseline on F1?", False),  # a figure is asked for
        ("What margin does SPECTER's loss use?", False),
    ],
)
def test_an_explanation_is_written_not_copied(question, explains):
    from agent.answer.copy import chooses_fact
    from agent.reading.shape import asks_explanation

    assert asks_explanation(question) == explains
    ctx = make_context("local-fast")  # answers a fact by choose-then-copy
    assert chooses_fact(ctx, {"question": question}) == (not explains)
