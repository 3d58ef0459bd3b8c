"""Papers that give different figures for the same thing (agent/answer/disagree.py)."""

from __future__ import annotations

from agent.answer.disagree import disagreement_note, disagreements, figures


def claim(text, paper, n):
    return {"text": text, "sentences": [{"paper_id": paper, "text": text}], "citations": [n]}


def test_figures_keep_their_unit_word():
    assert figures("CRFs reach 95.7 F1 on 3,186 abstracts and 12 % more.") == {
        "f1": ("95.7", "F1"),
        "abstracts": ("3186", "abstracts"),
        "%": ("12", "%"),
    }


def test_two_papers_with_different_figures_for_one_thing_disagree():
    claims = [claim("CRFs reach 95.7 F1 on chunking.", "crf", 1), claim("CRFs reach 42 F1 on chunking.", "spam", 2)]
    found = disagreements(claims)
    assert found == [{"claims": [0, 1], "unit": "F1", "figures": ["95.7", "42"], "papers": ["crf", "spam"]}]
    assert disagreement_note(found, claims) == "The papers give different figures: 95.7 F1 [1] against 42 F1 [2]."


def test_no_disagreement_for_the_same_paper_the_same_figure_or_another_topic():
    same_paper = [claim("CRFs reach 95.7 F1 on chunking.", "crf", 1), claim("CRFs reach 42 F1 on chunking.", "crf", 1)]
    same_figure = [claim("CRFs reach 95.7 F1 on chunking.", "a", 1), claim("CRFs reach 95.7 F1 on chunking.", "b", 2)]
    other_topic = [
        claim("CRFs reach 95.7 F1 on chunking.", "crf", 1),
        claim("A BiLSTM tagger gets 90.9 F1 on CoNLL-2003 named entities.", "lstm", 2),
    ]
    assert disagreements(same_paper) == disagreements(same_figure) == disagreements(other_topic) == []
    assert disagreement_note([], []) == ""
