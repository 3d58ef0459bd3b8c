"""One test per citation style and per bibliography label the linker reads
(tools/citations/intext.py), on entries and sentences written here, in each style's form, with
the entries parsed as a PDF build parses them (tools/ingest/pdf/references.py)."""

from __future__ import annotations

from dataclasses import replace

from tools.citations.intext import Linker
from tools.ingest.pdf.references import parse_reference


def linker(*raws: str) -> Linker:
    return Linker([replace(parse_reference(raw), key=f"b{n}") for n, raw in enumerate(raws)])


def cited(lk: Linker, text: str) -> list[tuple[str, str]]:
    """(the citation as printed, the entry's key) for each citation found."""
    return [(text[f.start : f.end], f.key) for f in lk.find(text)]


NUMBERED_BRACKETS = (
    "[1] P. Quill and R. Ink. Feathers as pens. Journal of Writing, 3:1-9, 1990.",
    "[2] S. Nib. Steel nibs replace feathers. Journal of Writing, 5:10-20, 1995.",
    "[3] T. Blot. On drying ink. Paper Letters, 7:3-4, 2001.",
    "[4] U. Sand. Blotting sand. Paper Letters, 8:5-6, 2002.",
    "[5] V. Well. Inkwells through time. Desk Studies, 1:1-2, 2003.",
)


def test_bracketed_numbers_with_lists_and_ranges():
    lk = linker(*NUMBERED_BRACKETS)
    text = "Pens changed [1, 3-5], then again [2–4], and once more [2,5]; see also Sand[4]."
    assert cited(lk, text) == [
        ("[1, 3-5]", "b0"),
        ("[1, 3-5]", "b2"),
        ("[1, 3-5]", "b3"),
        ("[1, 3-5]", "b4"),
        ("[2–4]", "b1"),
        ("[2–4]", "b2"),
        ("[2–4]", "b3"),
        ("[2,5]", "b1"),
        ("[2,5]", "b4"),
        ("[4]", "b3"),
    ]


def test_numbers_that_name_no_entry_are_not_citations():
    lk = linker(*NUMBERED_BRACKETS)
    assert cited(lk, "The interval [0, 1] and the set [5, 10, 15] and the range [1-40] cite nothing.") == []


def test_numbered_entries_labelled_with_a_full_stop_or_a_parenthesis():
    dotted = linker("1. Quill P., Ink R., Feathers as pens, 1990.", "2. Nib S., Steel nibs, 1995.")
    assert cited(dotted, "As shown before [1–2].") == [("[1–2]", "b0"), ("[1–2]", "b1")]
    paren = linker("1) P. Quill: Feathers as pens (Writing Press, 1990).", "2) S. Nib: Steel nibs (Desk, 1995).")
    assert cited(paren, "Feathers came first [2].") == [("[2]", "b1")]


def test_superscript_numbers_glued_to_the_word_before_them():
    lk = linker("1. P. Quill, Feathers as pens, 1990.", "2. S. Nib, Steel nibs, 1995.", "3. T. Blot, Ink, 2001.")
    texts = ["Feathers were used for centuries1,2 and then replaced.3", "Drying is slow.1"]
    lk.prepare(texts)
    assert lk.superscripts
    assert cited(lk, texts[0]) == [("1,2", "b0"), ("1,2", "b1"), (".3", "b2")]
    # a number that follows its own word is not a citation, nor a number beyond the entries
    assert cited(lk, "as Fig.1 shows, and version2 of it, in table3, at step 12 of 40") == []
    # in a paper that cites with brackets, glued numbers are left alone
    bracketed = linker("1. P. Quill, Feathers as pens, 1990.", "2. S. Nib, Steel nibs, 1995.")
    bracketed.prepare(["Feathers [1] and nibs [2] and more [1, 2].", "a value x2 here"])
    assert not bracketed.superscripts and cited(bracketed, "a value x2 here") == []


def test_references_named_in_words():
    lk = linker(*NUMBERED_BRACKETS)
    assert cited(lk, "as shown in Ref. 2 and in Refs. 3 and 5, not in Ref. 9") == [
        ("Ref. 2", "b1"),
        ("Refs. 3 and 5", "b2"),
        ("Refs. 3 and 5", "b4"),
    ]


AUTHOR_YEAR = (
    "Quill, P. (1990). Feathers as pens. Journal of Writing, 3, 1-9.",
    "Nib, S., & Blot, T. (1995). Steel nibs replace feathers. Journal of Writing, 5, 10-20.",
    "Sand, U., Well, V., & Blot, T. (2002a). Blotting sand. Paper Letters, 8, 5-6.",
    "Sand, U., Well, V., & Blot, T. (2002b). Blotting paper. Paper Letters, 9, 1-2.",
    "Brown, R., Durbin, J., & Evans, J. (1975). Constancy over time. Series B, 37, 149-163.",
)


def test_author_year_with_and_without_commas_and_et_al():
    lk = linker(*AUTHOR_YEAR)
    assert cited(lk, "Feathers (Quill, 1990) and nibs (Nib and Blot 1995) were compared.") == [
        ("Quill, 1990", "b0"),
        ("Nib and Blot 1995", "b1"),
    ]
    assert cited(lk, "Sand et al. (2002a) and Sand et al. 2002b disagree.") == [
        ("Sand et al. (2002a", "b2"),
        ("Sand et al. 2002b", "b3"),
    ]


def test_several_works_in_one_bracket():
    lk = linker(*AUTHOR_YEAR)
    found = cited(lk, "Writing tools were studied (Quill 1990; Nib & Blot, 1995; Sand et al. 2002a,b).")
    assert [k for _, k in found] == ["b0", "b1", "b2", "b3"]


def test_a_list_of_three_authors_names_its_entry():
    lk = linker(*AUTHOR_YEAR)
    assert [k for _, k in cited(lk, "Brown, Durbin, and Evans (1975) tested constancy.")] == ["b4"]
    # a name list that begins with words that are not names is read from its next name
    assert cited(lk, "a pen (Goose Feather Quill, Nib and Blot, 1995) was used") == [("Nib and Blot, 1995", "b1")]


def test_surname_then_initials_without_full_stops():
    # JSS and Vancouver print 'Zeileis A, Hornik K (2007)': the initials follow the surname
    lk = linker("Quill P, Ink R (1990). Feathers as pens. Journal of Writing, 3, 1-9.")
    assert cited(lk, "As Quill and Ink (1990) show.") == [("Quill and Ink (1990", "b0")]


def test_a_year_in_running_text_is_not_a_citation():
    lk = linker(*AUTHOR_YEAR)
    assert cited(lk, "In 1990 pens were feathers; by 1995, Quill had retired, and Table 2, 2002 lists it.") == []
