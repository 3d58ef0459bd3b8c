"""Overview answers: the shape read from meaning (agent/reading/shape.py, agent/reading/shape_reader.py) and the
themes (agent/answer/overview.py)."""

from __future__ import annotations

import numpy as np
import pytest

from agent.answer.overview import asks_for_table, cluster, theme_count, theme_names
from agent.reading.shape import citation_subject, question_shape, shape_by_meaning, shape_by_wording
from agent.reading.shape_reader import SHAPES, load_examples, load_topics, opening, with_swapped_topics


@pytest.mark.parametrize(
    "question",
    [
        "Give me an overview of the literature on active learning.",
        "What is known about boosting for text categorization?",
        "What has been published on boosting for text categorization?",
        "Which methods have been proposed for citation recommendation?",
    ],
)
def test_overview_wordings_are_read_as_overviews(question):
    assert shape_by_wording(question) == "overview"


def test_a_question_about_one_paper_is_not_an_overview():
    assert shape_by_wording("What are the main results of the PageRank paper?") is None


@pytest.mark.parametrize(
    "question",
    ["Do any of the indexed documents discuss web crawling strategies?", "List everything on ontology matching."],
)
def test_more_list_wordings_ask_for_papers(question):
    assert shape_by_wording(question) == "papers"


def test_passive_citation_questions_name_their_subject():
    assert citation_subject("In which papers is S2ORC cited?") == "S2ORC"
    assert citation_subject("Show me the citing sentences for SciBERT.") == "SciBERT"
    assert citation_subject("Where was the first SIGIR conference held?") is None


def test_the_meaning_pass_leaves_fact_unless_confident():
    assert shape_by_meaning({"fact": 0.3, "papers": 0.5, "overview": 0.1, "comparison": 0.1}, 0.6) == "fact"
    assert shape_by_meaning({"fact": 0.1, "papers": 0.7, "overview": 0.1, "comparison": 0.1}, 0.6) == "papers"
    # a citation question no citation pattern reads is answered as a list of papers
    assert (
        shape_by_meaning({"fact": 0.1, "papers": 0.3, "citation": 0.4, "overview": 0.1, "comparison": 0.1}, 0.6)
        == "papers"
    )


@pytest.mark.parametrize(
    ("question", "shape"),
    [
        ("Bring me up to date with work on protein folding.", "overview"),
        ("Any literature on federated learning?", "papers"),
        ("Where do GloVe and word2vec part ways?", "comparison"),
    ],
)
def test_the_fitted_reader_reads_wordings_no_pattern_matches(question, shape):
    # none of these wordings is among the examples and no pattern reads them: only the reader,
    # fitted on the shipped examples with the bundled embedder, can give them their shape
    assert shape_by_wording(question) is None
    assert question not in {r["question"] for r in load_examples()}
    assert question_shape(question) == shape
    assert question_shape(question, "wording") == "fact"


def test_the_fitted_reader_keeps_a_how_question_a_fact():
    # "how does X do Y" wants an explanation from the papers, not a list of them
    assert question_shape("How does SPECTER use citations to learn document-level representations of papers?") == "fact"


def test_a_quantity_question_is_never_made_a_list():
    assert question_shape("What share of papers carry a DOI?") == "fact"


def test_the_examples_cover_every_shape_and_swap_topics():
    rows = load_examples()
    assert {r["shape"] for r in rows} == set(SHAPES) and len(rows) >= 500
    swapped = with_swapped_topics([("Which papers use SciBERT?", "papers")], load_topics(), swaps=3)
    assert len(swapped) == 4 and all(s == "papers" for _, s in swapped)
    assert any("SciBERT" not in q for q, _ in swapped[1:])
    assert opening("Give me an overview of the literature on X", 5) == "Give me an overview of"


def test_clusters_join_alike_papers_and_leave_unlike_ones_apart():
    v = np.array([[1.0, 0.0], [0.95, 0.05], [0.0, 1.0], [0.05, 0.95]])
    assert cluster(v, 2) == [[0, 1], [2, 3]]
    # orthogonal papers are not forced into one theme
    assert cluster(np.eye(3), 1) == [[0], [1], [2]]
    assert theme_count(1, 4) == 1 and theme_count(20, 4) == 4


def test_themes_are_named_by_terms_their_papers_share_and_others_do_not():
    texts = [
        "Wrapper induction for web sources learns extraction rules",
        "Hierarchical wrapper induction learns extraction rules",
        "Hidden Markov models for information extraction",
        "Hidden Markov models learn field extraction",
    ]
    names = theme_names(texts, [[0, 1], [2, 3]], "Give me an overview of extraction")
    assert names[0][0] in ("wrapper induction", "extraction rules")
    assert names[1][0] == "hidden markov" or "markov" in names[1][0]
    assert not any(t == "extraction" for n in names for t in n)  # the question's word names nothing


def test_an_overview_over_papers_of_two_topics_has_a_theme_for_each():
    from types import SimpleNamespace

    from agent.answer.overview import themes
    from agent.settings import get_settings
    from tools.ingest.plan import settings_embedder

    texts = [
        "Wrapper induction learns extraction rules for semi-structured web sources from labelled pages.",
        "PageRank ranks web pages by the stationary distribution of a random surfer on the link graph.",
        "Inducing wrappers for web data extraction from a few example pages.",
        "HITS computes hub and authority scores from the hyperlink structure of the web.",
        "A wrapper learner that extracts records from HTML pages.",
        "Link analysis ranking: the eigenvector of the web graph ranks pages.",
    ]
    idx = SimpleNamespace(embedder=settings_embedder(get_settings()))
    got = themes(idx, "Give me an overview of web research", list("abcdef"), texts, 4)
    assert len(got) >= 2
    for theme in got:  # no theme mixes the two topics
        assert set(theme["papers"]) <= {"a", "c", "e"} or set(theme["papers"]) <= {"b", "d", "f"}, got


def test_a_lead_longer_than_its_limit_is_dropped():
    from agent.answer.leads import lead_sentences, too_long

    assert too_long("one two three", 3) is None and "4 words" in too_long("one two three four", 3)
    sents = {p: [{"chunk_id": p, "start": i, "end": i + 1, "text": f"{p}{i}"} for i in range(3)] for p in "ab"}
    assert [s["text"] for s in lead_sentences(["b", "a"], sents)] == ["b0", "a0"]
    assert lead_sentences(["a"], sents) == []  # one paper's quote is its own lead


def test_theme_names_come_from_the_titles_when_they_are_given():
    texts = [
        "Hidden Markov models for information extraction. Extraction will become crucial as text becomes available.",
        "Information extraction with hidden Markov models. Such tools become crucial when text becomes available.",
    ]
    titles = ["Hidden Markov models for information extraction", "Information extraction with hidden Markov models"]
    plain = theme_names(texts, [[0, 1]], "Give me an overview of text tools")[0]
    named = theme_names(texts, [[0, 1]], "Give me an overview of text tools", titles=titles)[0]
    assert "become crucial" in plain  # the sentences' verbs name a theme without the titles
    assert named and all(any(t in title.lower() for title in titles) for t in named)


def test_a_table_is_given_where_the_question_asks_for_one():
    assert asks_for_table("Give me an overview of crawling as a table")
    assert not asks_for_table("Give me an overview of crawling")


def test_the_web_chat_sets_each_theme_as_a_heading_above_its_papers():
    from agent.chat.render import answer_markdown, table_rows_shown

    answer = {
        "text": "3 of the 9 papers read answer this, in 2 themes:\n"
        "Theme 1: wrapper, induction (2 papers)\n- A (a): “x” [1]\n- B (b): “y” [2]\n"
        "Theme 2: crawler (1 paper)\n- C (c): “z” [3]",
        "themes": [{"name": "wrapper, induction", "papers": ["a", "b"]}, {"name": "crawler", "papers": ["c"]}],
        "table_rows": [{"theme": "crawler", "paper": "C (c)", "what it says": "“z” [3]"}],
    }
    lines = answer_markdown(answer).split("\n")
    heads = [n for n, line in enumerate(lines) if line.startswith("**Theme ")]
    assert [lines[n] for n in heads] == ["**Theme 1: wrapper, induction (2 papers)**", "**Theme 2: crawler (1 paper)**"]
    assert all(lines[n - 1] == "" and lines[n + 1] == "" for n in heads)  # a list of its own below each
    assert lines[heads[0] + 2 : heads[0] + 4] == ["- A (a): “x” [1]", "- B (b): “y” [2]"]
    assert table_rows_shown(answer) == []  # the themed list already shows these rows
    # a theme's lead is a paragraph of its own between the heading and the papers
    answer["text"] = answer["text"].replace("(2 papers)\n", "(2 papers)\nBoth learn rules [1]\n")
    answer["themes"][0]["lead"] = "Both learn rules"
    lines = answer_markdown(answer).split("\n")
    head = lines.index("**Theme 1: wrapper, induction (2 papers)**")
    assert lines[head + 1 : head + 5] == ["", "*Both learn rules [1]*", "", "- A (a): “x” [1]"]
    fact = {"text": "CRFs reach 95.7 F1 [1].", "table_rows": [{"model": "CRF", "f1": "95.7"}]}
    assert answer_markdown(fact) == fact["text"] and table_rows_shown(fact) == fact["table_rows"]
    compared = {"text": "Compared:\n| Paper | F1 |\n|---|---|\n| A | 1 |", "table_rows": [{"paper": "A", "F1": "1"}]}
    assert table_rows_shown(compared) == []  # the text is that table already


def test_the_held_out_shape_set_shares_no_template_and_no_topic_with_the_examples():
    import json
    import re
    from pathlib import Path

    rows = [json.loads(line) for line in (Path("bench/data/question_shapes_heldout.jsonl")).read_text().splitlines()]
    assert len(rows) >= 100 and len({r["family"] for r in rows}) >= 20
    assert sum(r["shape"] == "fact" for r in rows) >= 20
    examples = [e["question"].lower() for e in load_examples()]
    topics = [t.lower() for t in load_topics()]

    def names(text: str, term: str) -> bool:
        return re.search(rf"(?<!\w){re.escape(term.lower())}s?(?!\w)", text) is not None

    def start(q: str) -> str:
        return " ".join(re.findall(r"[a-z0-9']+", q.lower())[:4])

    starts = {start(e) for e in examples}
    for r in rows:
        assert r["topics"] and all(names(r["question"].lower(), t) for t in r["topics"]), r["id"]
        for t in r["topics"]:
            assert not any(names(e, t) for e in examples), (r["id"], t)
            assert not any(names(x, t) for x in topics), (r["id"], t)
        assert start(r["question"]) not in starts, r["id"]
