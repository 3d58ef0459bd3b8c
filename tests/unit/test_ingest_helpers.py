"""Pure helpers of the PDF ingester: headings, captions, dehyphenation, references, venues."""

from __future__ import annotations

import pytest

from tools.ingest.pdf import (
    dehyphenate,
    guess_venue_year,
    match_caption,
    match_heading,
    normalize_text,
    parse_reference,
    split_references,
)

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("3 Method", ("3", "Method")),
        ("4.2 Results", ("4.2", "Results")),
        ("2.2 Background: Pretrained Transformers", ("2.2", "Background: Pretrained Transformers")),
        ("A Appendix A - Baseline Details", ("A", "Appendix A - Baseline Details")),
        ("B.1 FINE-grained evaluations", ("B.1", "FINE-grained evaluations")),
        ("II. RELATED WORK", ("II", "RELATED WORK")),
        ("Abstract", (None, "Abstract")),
        ("Introduction", (None, "Introduction")),
        ("References", (None, "References")),
        ("Acknowledgments", (None, "Acknowledgments")),
        ("Conclusion", (None, "Conclusion")),
        ("Ethics Statement", (None, "Ethics Statement")),
    ],
)
def test_headings_are_recognised(text, expected):
    assert match_heading(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "2 84.2 88.4 91.5 36.9 80.0",  # a table row in bold
        "1 We show that the model works on all the tasks.",  # a sentence, not a heading
        "Table 1: Results on the SCIDOCS evaluation suite",
        "SPECTER (Ours) 82.0 86.4 83.6",
        "",
        "3 Results,",
    ],
)
def test_non_headings_are_refused(text):
    assert match_heading(text) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Table 2: Ablations: Numbers are averages", ("table", "Table 2")),
        ("Table 3. Comparison with fine-tuning", ("table", "Table 3")),
        ("Figure 1: Overview of SPECTER.", ("figure", "Figure 1")),
        ("Fig. 3. Accuracy per task", ("figure", "Figure 3")),
        ("TABLE IV: Results", ("table", "Table IV")),
        ("FIGURE 2 | Model of the LED sources", ("figure", "Figure 2")),
    ],
)
def test_captions_are_recognised(text, expected):
    assert match_caption(text) == expected


@pytest.mark.parametrize(
    "text",
    ["Table 1 presents the main results", "Figures 2 and 3 show", "In Table 2: we", "Tables: none"],
)
def test_running_text_is_not_a_caption(text):
    assert match_caption(text) is None


def test_dehyphenation_joins_split_words_and_keeps_compounds():
    assert dehyphenate("repre-\nsentation learning") == "representation learning"
    assert dehyphenate("the state-\nof-the-art model") == "the state-of-the-art model"
    assert dehyphenate("a BERT-\nBased model") == "a BERT-Based model"
    # the document's own vocabulary decides the ambiguous cases
    assert dehyphenate("SciB-\nERT", {"scibert"}) == "SciBERT"
    assert dehyphenate("Context-\nenhanced", {"context", "enhanced"}) == "Context-enhanced"
    assert dehyphenate("fine-\ntuning", {"fine-tuning"}) == "fine-tuning"
    assert dehyphenate("one\ntwo  \n three") == "one two three"


def test_normalisation_folds_ligatures_and_tex_accents():
    assert normalize_text("ﬁne-grained ﬂow") == "fine-grained flow"
    assert normalize_text("Michael Fa¨rber") == "Michael Färber"
    assert normalize_text("Mart´ın") == "Martín"
    assert normalize_text("x (cid:16) y") == "x  y"


ACL_REFERENCES = [
    (0.0, "Waleed Ammar, Dirk Groeneveld, Chandra Bha-"),
    (7.2, "gavatula, Iz Beltagy, Miles Crawford, Doug"),
    (7.2, "Downey, and Oren Etzioni. 2018. Construction of"),
    (7.2, "the literature graph in semantic scholar. In NAACL."),
    (0.0, "Iz Beltagy, Kyle Lo, and Arman Cohan. 2019. Sci-"),
    (7.2, "BERT: A pretrained language model for scientific"),
    (7.2, "text. In EMNLP."),
    (0.0, "Will Hamilton, Zhitao Ying, and Jure Leskovec. 2017a."),
    (7.2, "Inductive Representation Learning on Large Graphs."),
    (7.2, "In NIPS."),
]


def test_acl_references_split_on_hanging_indent():
    entries = split_references(ACL_REFERENCES)
    assert len(entries) == 3
    assert entries[0].startswith("Waleed Ammar") and entries[0].endswith("In NAACL.")
    assert entries[2].endswith("In NIPS.")


def test_acl_reference_titles_and_years():
    vocab = {"scibert"}
    entries = [parse_reference(dehyphenate(e, vocab)) for e in split_references(ACL_REFERENCES)]
    assert [(e.title, e.year) for e in entries] == [
        ("Construction of the literature graph in semantic scholar", 2018),
        ("SciBERT: A pretrained language model for scientific text", 2019),
        ("Inductive Representation Learning on Large Graphs", 2017),
    ]
    assert entries[0].raw.startswith("Waleed Ammar, Dirk Groeneveld, Chandra Bhagavatula")


def test_numbered_references_without_indent_split_on_labels():
    lines = [
        (0.0, "[1] H. Xu and S. Mannor, \u201cDistributionally robust Markov decision"),
        (0.0, "processes,\u201d Math. Oper. Res., 2012."),
        (0.0, "[2] M. L. Puterman, Markov Decision Processes. Wiley, 2014."),
    ]
    entries = split_references(lines)
    assert len(entries) == 2
    first = parse_reference(dehyphenate(entries[0]))
    assert first.title == "Distributionally robust Markov decision processes"
    assert first.year == 2012


def test_reference_title_keeps_abbreviations_and_questions():
    entry = parse_reference(
        "Dominika Tkaczyk and Joeran Beel. 2018. Machine learning vs. rules and "
        "out-of-the-box vs. retrained: An evaluation of open-source bibliographic reference "
        "and citation parsers. In JCDL."
    )
    assert entry.title.startswith("Machine learning vs. rules and out-of-the-box vs. retrained")
    assert entry.title.endswith("citation parsers")
    question = parse_reference("Ann Author. 2021. What's in a name? In ACL.")
    assert question.title == "What's in a name?"


@pytest.mark.parametrize(
    ("footer", "expected"),
    [
        (
            "Proceedings of the 58th Annual Meeting of the Association for Computational "
            "Linguistics, pages 2270–2282 July 5 - 10, 2020. ©2020 Association for "
            "Computational Linguistics",
            ("ACL", 2020),
        ),
        (
            "Proceedings of NAACL-HLT 2018, pages 84–91 New Orleans, Louisiana, June 1 - 6, "
            "2018. c2017 Association for Computational Linguistics",
            ("NAACL", 2018),
        ),
        (
            "Proceedings of the 17th Conference of the European Chapter of the Association "
            "for Computational Linguistics, pages 1650–1669 May 2-6, 2023 ©2023 Association",
            ("EACL", 2023),
        ),
        (
            "Proceedings of the 2020 Conference on Empirical Methods in Natural Language "
            "Processing, pages 1–10, November 16–20, 2020.",
            ("EMNLP", 2020),
        ),
        (
            "Proceedings of the 28th International Conference on Computational Linguistics, "
            "pages 5–9 Barcelona, Spain (Online), December 8-13, 2020",
            ("COLING", 2020),
        ),
        (
            "Proceedings of the 2nd Workshop on Scholarly Document Processing, pages 1–8 "
            "June 10, 2021. ©2021 Association for Computational Linguistics",
            (None, 2021),
        ),
        ("Findings of the Association for Computational Linguistics: EMNLP 2020", (None, None)),
        ("no footer on this page", (None, None)),
    ],
)
def test_venue_and_year_from_the_first_page_footer(footer, expected):
    assert guess_venue_year(footer) == expected


def test_a_bibliography_is_told_from_prose_in_other_templates_shapes():
    from tools.ingest.pdf.references import bibliography_shape

    # ACM: bracketed labels, a wrapped line that opens with a number is no label out of order
    acm = [
        "[1] Rafal Ablamowicz and Bertfried Fauser. 2007. CLIFFORD: a Maple",
        "11 Package for Clifford Algebra Computations, version 11. Retrieved",
        "February 28, 2008 from http://math.tntech.edu/rafal/cliff11/index.html",
        "[2] Patricia S. Abril and Robert Plant. 2007. The patent holder's dilemma:",
    ]
    assert bibliography_shape(acm)
    # APA, a two-entry list of six lines: a year on every third line
    apa = [
        "Lassen, S. R., Steele, M. M., & Sailor, W. (2006). The re-",
        "lationship of school-wide positive behavior support",
        "to academic achievement in an urban middle school.",
        "Psychology in the Schools, 43(6), 701-712.",
        "Shotton, M. A. (1989). Computer addiction? A study of com-",
        "puter dependency. Taylor & Francis.",
    ]
    assert bibliography_shape(apa)
    prose = [
        "References should be numbered sequentially through the text and prepared by means of cite and",
        "bibitem commands, linking citations in the text with their entry in the reference list.",
        "When several references occur together in the text cite may be used with multiple labels.",
    ]
    assert not bibliography_shape(prose)


def test_numbered_entries_split_at_the_next_label_even_when_indented():
    from tools.ingest.pdf.references import split_references

    lines = [
        (4.0, "1. L. Lamport, LaTeX: A Document Preparation System, Addison-Wesley, 1994."),
        (4.0, "2. G. J. Alred, C. T. Brusaw, and W. E. Oliu, Handbook of Technical Writing, 2003"),
        (9.0, "(seventh edition)."),
        (4.0, "3. L. C. Perelman, J. Paradis, and E. Barrett, Mayfield Handbook, 1997."),
    ]
    entries = split_references(lines)
    assert len(entries) == 3 and entries[1].endswith("(seventh edition).")


@pytest.mark.parametrize(
    ("raw", "authors"),
    [
        ("L. Breiman. Statistical modeling: The two cultures. Statistical Science, 16:199-231, 2001.", ("L. Breiman",)),
        (
            "R. L. Brown, J. Durbin, and J. M. Evans. Techniques for testing the constancy. JRSS, 37:149-163, 1975.",
            ("R. L. Brown", "J. Durbin", "J. M. Evans"),
        ),
        ("1. Zubarev D. N., Nonequilibrium Statistical Thermodynamics, Consultants Bureau, 1974.", ("D. N. Zubarev",)),
        (
            "Lassen, S. R., Steele, M. M., & Sailor, W. (2006). The relationship of support.",
            ("S. R. Lassen", "M. M. Steele", "W. Sailor"),
        ),
        ("Iz Beltagy, Kyle Lo, and Arman Cohan. 2019. SciBERT. In EMNLP.", ("Iz Beltagy", "Kyle Lo", "Arman Cohan")),
    ],
)
def test_authors_are_read_in_each_styles_order(raw, authors):
    from tools.ingest.pdf.references import parse_reference

    assert parse_reference(raw).authors == authors


def test_computer_modern_bold_is_bold_by_its_name():
    from tools.ingest.pdf.fonts import FontFacts

    assert FontFacts().kind("SXJMFL+CMB10")[0] and FontFacts().kind("ABCDEF+CMBX12")[0]
    assert not FontFacts().kind("EHKDFJ+CMR10")[0]


def test_appendix_headings_are_numbered_headings():
    from tools.ingest.pdf.text import match_heading

    assert match_heading("Appendix A: Proofs of the lemmas") == ("Appendix A", "Proofs of the lemmas")
    assert match_heading("APPENDIX B. DATA") == ("APPENDIX B", "DATA")
    assert match_heading("Appendix 2") == ("Appendix 2", "Appendix 2")
    assert match_heading("Appendix A shows that the bound holds for every graph.") is None  # a sentence
