"""bench/pdf.py: paragraph and heading agreement, sentence ends, table rows and the cut
statistics on hand-made inputs (no PDF is parsed)."""

from __future__ import annotations

import json
from collections import Counter
from types import SimpleNamespace

import pytest

from bench.pdf import (
    TABLES,
    cut_stats,
    ends_sentence,
    grobid_paragraphs,
    grobid_sections,
    merge_tolerant_alignment,
    our_paragraphs,
    overlap,
    paragraph_alignment,
    section_agreement,
    section_key,
    table_rows,
    table_scores,
    tokens,
)
from tools.base import Chunk, Locator

pytestmark = pytest.mark.unit


def words(prefix: str, n: int) -> list[str]:
    """n distinct letter-only words ("wba", "wbb", ...): digits would be tokens of their own."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    return [f"{prefix}{letters[i // 26]}{letters[i % 26]}" for i in range(n)]


def test_tokens_are_nfkc_lower_case_word_runs():
    assert tokens("The ﬁrst Model-2, (SPECTER)!") == ["the", "first", "model", "2", "specter"]


def test_overlap_is_a_multiset_intersection_over_the_longer_side():
    def bag(text):
        return Counter(tokens(text))

    assert overlap(bag("the the the cat"), bag("the cat cat cat")) == pytest.approx(2 / 4)
    assert overlap(bag("a b c"), bag("a b c d e f")) == pytest.approx(3 / 6)
    assert overlap(bag(""), bag("")) == 0.0


def test_one_paragraph_at_95_percent_and_one_at_50_gives_half_precision_and_recall():
    g1, g2 = words("w", 20), words("v", 10)
    ours = [" ".join(g1[:19] + ["x"]), " ".join(g2[:5] + words("u", 5))]  # 19/20 and 5/10
    r = paragraph_alignment(ours, [" ".join(g1), " ".join(g2)])
    assert (r["ours"], r["theirs"], r["matched_ours"], r["matched_theirs"]) == (2, 2, 1, 1)
    assert r["precision"] == pytest.approx(0.5) and r["recall"] == pytest.approx(0.5)
    assert r["f1"] == pytest.approx(0.5)


def test_match_threshold_is_inclusive_and_uses_the_longer_paragraph():
    g = words("w", 9)
    assert paragraph_alignment([" ".join(g + ["x"])], [" ".join(g)])["precision"] == 1.0  # 9/10
    assert paragraph_alignment([" ".join(g + ["x", "y"])], [" ".join(g)])["precision"] == 0.0  # 9/11
    # a paragraph cut in two matches nothing; the whole one is then unmatched as well
    whole = words("w", 40)
    r = paragraph_alignment([" ".join(whole[:20]), " ".join(whole[20:])], [" ".join(whole)])
    assert (r["precision"], r["recall"]) == (0.0, 0.0)


def test_recall_counts_reference_paragraphs_once_each():
    g = " ".join(words("w", 10))
    r = paragraph_alignment([g], [g, g, " ".join(words("z", 10))])
    assert r["precision"] == 1.0 and r["recall"] == pytest.approx(2 / 3)


def test_empty_sides_give_no_rate():
    r = paragraph_alignment([], ["some text here"])
    assert r["precision"] is None and r["recall"] == 0.0 and r["f1"] is None


def test_section_key_drops_the_number():
    assert section_key("2.1 Node Types") == "node types"
    assert section_key("A Appendix A - Baseline Details") == "appendix a baseline details"
    assert section_key("II. RELATED WORK") == "related work"
    assert section_key("B.1 FINE-grained evaluations") == "fine grained evaluations"
    assert section_key("Acknowledgements") == "acknowledgements"
    assert section_key("5. ELMo ELMo") == "elmo elmo"


def test_section_agreement_as_sets_with_the_unmatched_names():
    ours = ["1 Introduction", "2.1 Overview", "2.1 Overview", "Acknowledgements"]
    theirs = ["1 Introduction", "2 Model 2.1 Overview", "Document Representation"]
    r = section_agreement(ours, theirs)
    assert (r["ours"], r["theirs"]) == (3, 3)
    assert r["precision"] == pytest.approx(1 / 3) and r["recall"] == pytest.approx(1 / 3)
    assert r["unmatched_ours"] == ["2.1 Overview", "Acknowledgements"]
    assert r["unmatched_theirs"] == ["2 Model 2.1 Overview", "Document Representation"]


def test_grobid_side_skips_empty_and_sectionless_entries():
    body = [
        {"text": "Intro text.", "section": "Introduction", "sec_num": "1"},
        {"text": "  ", "section": "Introduction", "sec_num": "1"},
        {"text": "1 https://example.org a footnote", "section": "", "sec_num": None},
        {"text": "More.", "section": "Document Representation", "sec_num": None},
    ]
    assert grobid_paragraphs(body) == ["Intro text.", "More."]
    assert grobid_sections(body) == ["1 Introduction", "Document Representation"]


@pytest.mark.parametrize(
    "text",
    [
        "Done.",
        'He said "yes."',
        "(see Table 2.)",
        "as follows:",
        "Really?” ",
        "Stop!\n",
        "the set [1, 2.]",
        "future research.1",
        "reproducibility. 11",
        "(Smith, 2019).12",
        "of the paper:5",
        "were formatted.†",
    ],
)
def test_sentence_ends(text):
    assert ends_sentence(text)


@pytest.mark.parametrize(
    "text",
    [
        "the model is",
        "pretraining cor-",
        "",
        "   ",
        "i.e.,",
        "Hochreiter and Schmidhuber, 1997)",
        "discussed in §2.1",
        "we use v3.4",
        "costs 12",
    ],
)
def test_mid_sentence_ends(text):
    assert not ends_sentence(text)


def test_table_rows_counts_cell_lines_after_the_caption():
    text = "Table 1: A | B in the caption\nA | B\n1 | 2\nwrapped cell line\n3 | 4\n..."
    assert table_rows(text) == 3
    assert table_rows("Table 2: only a caption") == 0
    assert table_rows("") == 0


def chunk(kind, text, page=1, **loc):
    return Chunk("p#c", "p", kind, text, Locator(page=page, **loc))


def footnote(text):
    return SimpleNamespace(kind="text", text=text, locator=SimpleNamespace(page=2, footnote=True))


def test_cut_stats_rates_counts_and_shortest_examples():
    long_end = "x" * 130 + " ends here."
    long_cut = "y" * 130 + " and then the"
    chunks = [
        chunk("title_abstract", "Title"),
        chunk("text", long_end),
        chunk("text", long_cut),
        chunk("text", "Short but whole."),
        chunk("text", "short and cut"),
        chunk("equation", "a = b"),
        chunk("equation", "z" * 45),
        footnote("1 https://x.org"),
    ]
    s = cut_stats(chunks)
    assert s["text_chunks"] == 4  # the footnote and non-text chunks are left out
    assert s["fragment_rate"] == pytest.approx(2 / 4) and s["mid_sentence_rate"] == pytest.approx(2 / 4)
    assert (s["equation_chunks"], s["short_equation_chunks"], s["footnote_chunks"]) == (2, 1, 1)
    assert [e["text"] for e in s["examples"]["fragments"]] == ["short and cut", "Short but whole."]
    assert [e["chars"] for e in s["examples"]["mid_sentence"]] == [13, len(long_cut)]
    assert s["examples"]["mid_sentence"][1]["text"] == long_cut[:60]
    assert s["examples"]["mid_sentence"][1]["end"] == long_cut[-40:]


def test_cut_stats_without_text_chunks_has_no_rates():
    s = cut_stats([chunk("table", "Table 1: x\na | b", table_id="Table 1")])
    assert s["fragment_rate"] is None and s["mid_sentence_rate"] is None


def test_table_scores_found_page_and_rows():
    expected = [
        {"paper": "p", "label": "Table 1", "page": 3, "header_rows": 1, "body_rows": 2, "columns": 2},
        {"paper": "p", "label": "Table 2", "page": 4, "header_rows": 1, "body_rows": 1, "columns": 2},
        {"paper": "p", "label": "Table 3", "page": 5, "header_rows": 0, "body_rows": 1, "columns": 1},
        {"paper": "p", "label": "Table 4", "page": 6, "header_rows": 1, "body_rows": 1, "columns": 2},
        {"paper": "other", "label": "Table 1", "page": 1, "header_rows": 1, "body_rows": 1, "columns": 2},
    ]
    chunks = {
        "p": [
            chunk("table", "Table 1: c\nh | h\n1 | 2\n3 | 4", page=3, table_id="Table 1"),
            chunk("table", "Table 2: c\nh | h\n1 | 2\n3 | 4", page=5, table_id="Table 2"),
            chunk("table", "Table 3: a box of prose", page=5, table_id="Table 3"),
            chunk("text", "Table 4 is mentioned here.", page=6),
        ]
    }
    r = table_scores(expected, chunks)
    assert (r["total"], r["found"], r["page_right"]) == (4, 3, 2)
    assert (r["rows_right"], r["rows_total"]) == (1, 3)
    by = {t["label"]: t for t in r["per_table"]}
    assert by["Table 2"]["got_rows"] == 3 and by["Table 2"]["rows_right"] is False
    assert by["Table 3"]["rows_right"] is None and by["Table 4"]["found"] is False


def test_the_table_inventory_is_well_formed():
    data = json.loads(TABLES.read_text(encoding="utf-8"))
    assert data["how"] and len(data["tables"]) == 27
    seen = set()
    for t in data["tables"]:
        key = (t["paper"], t["label"])
        assert key not in seen
        seen.add(key)
        assert t["page"] >= 1 and t["columns"] >= 1 and t["body_rows"] >= 1 and t["header_rows"] >= 0
        assert len(t["cells"]) == 2
        for c in t["cells"]:
            assert 0 <= c["row"] < t["header_rows"] + t["body_rows"] and 0 <= c["column"] < t["columns"]
            assert c["text"].strip()


def test_subscripts_split_the_same_way_in_both_parses():
    assert tokens("nodes p1 ! p2") == tokens("nodes p 1 ! p 2") == ["nodes", "p", "1", "p", "2"]


def test_merge_tolerant_alignment_matches_a_paragraph_the_other_side_merged():
    a, b, c = (" ".join(words(x, 30)) for x in "abc")
    strict = paragraph_alignment([a, b, c], [f"{a} {b}", c])
    tolerant = merge_tolerant_alignment([a, b, c], [f"{a} {b}", c])
    assert (strict["precision"], strict["recall"]) == (pytest.approx(1 / 3), 0.5)
    assert (tolerant["precision"], tolerant["recall"]) == (pytest.approx(1 / 3), 1.0)  # theirs: a+b found
    assert merge_tolerant_alignment([f"{a} {b}", c], [a, b, c])["precision"] == 1.0


def test_body_only_leaves_out_acknowledgements_and_lettered_appendices():
    from tools.base import Block, Document, Paper

    doc = Document(
        Paper(paper_id="p", title="t"),
        (
            Block("text", "Body text.", section="2 Method"),
            Block("text", "Thanks.", section="Acknowledgements"),
            Block("text", "Details.", section="A Appendix A - Baselines"),
            Block("text", "A note.", section="2 Method", footnote="3"),
        ),
    )
    assert our_paragraphs(doc) == ["Body text.", "Thanks.", "Details."]
    assert our_paragraphs(doc, body_only=True) == ["Body text."]
