"""Words that lost a ligature in extraction are put back from the words themselves."""

import pytest

from tools.base import Block, CiteMark, Document, Paper
from tools.ingest.documents import repaired
from tools.ingest.ligatures import own_words, repair_ligatures


@pytest.mark.parametrize(
    ("broken", "whole"),
    [
        ("conditional random elds for tagging", "conditional random fields for tagging"),
        ("a speci c task", "a specific task"),
        ("three di erent models", "three different models"),
        ("an e cient search", "an efficient search"),
        ("collaborative ltering works", "collaborative filtering works"),
        ("terms are de ned here", "terms are defined here"),
        ("the database o ers", "the database offers"),
        ("we rst compute", "we first compute"),
        ("The eld is young", "The field is young"),
        ("Speci cally, we test", "Specifically, we test"),
        ("the de#nition holds", "the definition holds"),  # the glyph came out as '#'
        ("for £nding paths", "for finding paths"),
        ("to con®gure it", "to configure it"),
    ],
)
def test_a_word_that_lost_its_ligature_is_whole_again(broken, whole):
    fix = repair_ligatures(broken)
    assert fix.text == whole and fix.words >= 1


@pytest.mark.parametrize(
    "text",
    [
        "often we go of ten ways",  # two English words are never joined
        "the CRF le model",  # an acronym stays
        "see http://www.ee.surrey.ac.uk/Research or smola@rst.gmd.de",  # addresses stay
        "the 21 st century",  # an ordinal is not a lost 'fi'
        "Bases de Donn'ees and el sistema",  # other languages' short words
        "we re-use it (re)used",  # prefixes stay prefixes
        "commu- nity detection",  # a hyphenated line cut is not a ligature
        "nested loops and uttering words",  # real words stay
    ],
)
def test_text_that_lost_nothing_is_left_alone(text):
    fix = repair_ligatures(text)
    assert fix.text == text and fix.words == 0


def test_a_short_fragment_is_mended_only_in_a_text_that_lost_other_ligatures():
    assert repair_ligatures("we want to nd it").text == "we want to nd it"
    assert repair_ligatures("to nd the speci c one").text == "to find the specific one"


def test_the_documents_own_words_confirm_a_term_the_vocabulary_lacks():
    text = "the ze ro tagger"
    assert repair_ligatures(text).text == text
    assert repair_ligatures(text, own_words(["Zeffiro: a tagger"])).text == "the zeffiro tagger"


def test_offsets_move_with_the_repaired_text():
    text = "random elds [1] are speci c [2]."
    fix = repair_ligatures(text)
    assert fix.text == "random fields [1] are specific [2]."
    for old, mark in ((text.index("[1]"), "[1]"), (text.index("[2]"), "[2]")):
        assert fix.text[fix.offset(old) : fix.offset(old) + 3] == mark
    assert fix.offset(0) == 0


def test_a_document_is_repaired_everywhere_and_keeps_its_citation_marks():
    body = "Conditional random elds (Lafferty, 2001) are speci c."
    start = body.index("(Lafferty")
    end = body.index(")") + 1
    doc = Document(
        paper=Paper(paper_id="p", title="Random elds for tagging", abstract="We rst tag."),
        blocks=(Block(kind="text", text=body, page=1, cites=(CiteMark(start, end, "b0"),), page_end_at=end),),
    )
    out = repaired(doc)
    assert out.paper.title == "Random fields for tagging" and out.paper.abstract == "We first tag."
    block = out.blocks[0]
    assert block.text == "Conditional random fields (Lafferty, 2001) are specific."
    mark = block.cites[0]
    assert block.text[mark.start : mark.end] == "(Lafferty, 2001)"
    assert block.text[: block.page_end_at].endswith("2001)")
    assert out.ligatures_repaired == 4
    assert repaired(Document(paper=Paper(paper_id="q", title="Nothing lost here"))).ligatures_repaired == 0
