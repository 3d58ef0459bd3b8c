"""Sentence splitting and selection (tools/retrieval/sentences.py): the unit of evidence."""

from __future__ import annotations

import pytest

from tools.retrieval.sentences import (
    select_sentences,
    sentence_ids,
    sentence_index,
    split_sentences,
)

pytestmark = pytest.mark.unit


def texts(chunk_text, kind="text"):
    out = split_sentences("p#c0", chunk_text, kind)
    for s in out:  # every offset points at its own text
        assert " ".join(chunk_text[s["start"] : s["end"]].split()) == s["text"]
    return [s["text"] for s in out]


def test_abbreviations_decimals_and_figure_references_do_not_split():
    text = (
        "We follow Cohan et al. (2020), e.g. for SciBERT. The F1 is 0.89 in Fig. 2 and Table 3. "
        "Results are in Sec. 4.2, i.e. below."
    )
    assert texts(text) == [
        "We follow Cohan et al. (2020), e.g. for SciBERT.",
        "The F1 is 0.89 in Fig. 2 and Table 3.",
        "Results are in Sec. 4.2, i.e. below.",
    ]


def test_a_line_break_inside_a_paragraph_is_not_a_sentence_end():
    assert texts("The triplet loss uses a margin\nof 1 between papers. It works well.") == [
        "The triplet loss uses a margin of 1 between papers.",
        "It works well.",
    ]


def test_table_rows_are_sentences_and_an_equation_is_one():
    table = "Table 1: Results.\nModel | F1\nSPECTER | 80.0\n\nSciBERT | 75.2"
    assert texts(table, "table") == ["Table 1: Results.", "Model | F1", "SPECTER | 80.0", "SciBERT | 75.2"]
    assert texts("  L = max(d(P, P+) - d(P, P-) + m, 0). (1)\n", "equation") == [
        "L = max(d(P, P+) - d(P, P-) + m, 0). (1)"
    ]


def test_a_fragment_is_glued_to_its_neighbour():
    assert texts("(1) We train with a triplet loss. See it.") == ["(1) We train with a triplet loss. See it."]


def test_empty_text_has_no_sentence():
    assert split_sentences("p#c0", "  \n", "text") == []


def test_selection_keeps_the_best_matches_within_budget_in_original_order():
    sents = split_sentences(
        "p#c0",
        "Cats sleep a lot. The triplet loss uses citations. Dogs bark at night. "
        "Citations give positive papers for the loss.",
        "text",
    )
    chosen = select_sentences(sents, ["how does the triplet loss use citations"], budget_chars=80)
    assert [s["text"] for s in chosen] == [
        "The triplet loss uses citations.",
        "Citations give positive papers for the loss.",
    ]
    # a budget smaller than the best sentence still yields that sentence
    assert [s["text"] for s in select_sentences(sents, ["triplet loss citations"], 5)] == [
        "The triplet loss uses citations."
    ]


def test_shown_ids_map_back():
    assert sentence_ids(3) == ["S1", "S2", "S3"]
    assert [sentence_index(x) for x in ("S1", "s12", " S3 ", "S", "C1", "1", None)] == [
        0,
        11,
        2,
        None,
        None,
        None,
        None,
    ]


def test_stemming_matches_a_plural_to_its_singular():
    from tools.retrieval.sentences import Sentence, sentence_scores

    rows = [
        Sentence(chunk_id="c", start=0, end=10, text="| title | 0.91 | 0.88 |"),
        Sentence(chunk_id="c", start=11, end=20, text="| venue | 0.71 | 0.69 |"),
    ]
    assert sentence_scores(rows, ["F1 for titles"]) == [0.0, 0.0]  # no shared word
    stemmed = sentence_scores(rows, ["F1 for titles"], stem=True)
    assert stemmed[0] > 0 and stemmed[1] == 0.0


def test_stemmed_tokens_and_the_tokenizer_names():
    import threading

    from tools.retrieval.text import STEMMED_TOKENIZER, TOKENIZER_VERSION, tokenize, tokenizer_for

    assert tokenize("Citation embeddings of papers", stem=True) == ["citat", "embed", "paper"]
    assert tokenizer_for(TOKENIZER_VERSION)("Embeddings") == ["embeddings"]
    assert tokenizer_for(STEMMED_TOKENIZER)("Embeddings") == ["embed"]
    with pytest.raises(ValueError, match="unknown tokenizer 'porter'"):
        tokenizer_for("porter")
    out: list[list[str]] = []  # one stemmer per thread: concurrent readers do not share one
    threads = [threading.Thread(target=lambda: out.append(tokenize("running learners", stem=True))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == [["run", "learner"]] * 4
