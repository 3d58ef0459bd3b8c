"""Bibliographies by the shape of their entries (tools/ingest/pdf/references.py): found without
a heading, split into entries, their authors read, on entries written here in each shape; and a
review copy's line numbers (tools/ingest/pdf/furniture.py)."""

from __future__ import annotations

from tools.ingest.pdf.furniture import drop_line_numbers
from tools.ingest.pdf.model import PageData, Word
from tools.ingest.pdf.references import (
    author_list_starts,
    entry_label,
    numbered_list_starts,
    parse_reference,
    split_references,
)

# REVTeX's AIP styles: no heading, superscript labels the PDF's text glues to the first initial
GLUED = [
    "1P. Quill, J. Writ. 3, 1 (1990).",
    "2S. Nib and T. Blot, J. Writ. 5, 10 (1995).",
    "3T. Blot, Pap. Lett. 7, 3 (2001); U. Sand, ibid. 8, 5",
    "(2002).",
    "4V. Well, Desk Stud. 1, 1 (2003).",
]


def test_an_unheaded_bibliography_with_glued_superscript_labels():
    assert numbered_list_starts(GLUED)
    assert [entry_label(t) for t in GLUED] == [1, 2, 3, None, 4]
    entries = split_references([(0.0, t) for t in GLUED])
    assert [e.split("\n")[0][:3] for e in entries] == ["1P.", "2S.", "3T.", "4V."]
    assert parse_reference(entries[1]).authors == ("S. Nib", "T. Blot")
    # prose that opens with a number is no bibliography
    assert not numbered_list_starts(["1990 was the year pens changed.", "Then came 1995.", "And 2001."])


# REVTeX's author-year styles: no heading, entries in alphabetical order, surname first
ALPHABETICAL = [
    "Blot, T., Pap. Lett. 7, 3 (2001).",
    "Nib, S. and Blot, T., “Steel nibs replace feathers,” J. Writ. 5, 10 (1995).",
    "Quill, P., J. Writ. 3, 1 (1990).",
    "Sand, Jr., U., Well, V., and Blot, T., Pap. Lett. 8, 5 (2002).",
    "Well, V., Desk Stud. 1, 1 (2003).",
]


def test_an_unheaded_alphabetical_author_year_bibliography():
    assert author_list_starts(ALPHABETICAL)
    assert not author_list_starts(list(reversed(ALPHABETICAL)))  # not in order: not a bibliography
    prose = ["Quill, P., wrote that pens were feathers.", "Nib, S., disagreed.", "Blot, T., agreed."]
    assert not author_list_starts(prose)
    assert parse_reference(ALPHABETICAL[1]).authors == ("S. Nib", "T. Blot")
    assert parse_reference(ALPHABETICAL[3]).authors == ("U. Sand Jr.", "V. Well", "T. Blot")


def test_apa_entries_with_a_hanging_indent_and_particles():
    lines = [
        (0.0, "Quill, P., & von Ink, R. (1990). Feathers as pens: A history of the quill and"),
        (36.0, "its makers. Journal of Writing, 3(1),"),
        (36.0, "1-9."),
        (0.0, "Nib, S. (1995). Steel nibs. Desk Press."),
    ]
    entries = split_references(lines)
    assert len(entries) == 2 and entries[0].endswith("1-9.")
    assert parse_reference(entries[0].replace("\n", " ")).authors == ("P. Quill", "R. von Ink")
    assert parse_reference("Lassen, S. R., Steele, M. M., & Sailor, W. (2006). A title.").authors == (
        "S. R. Lassen",
        "M. M. Steele",
        "W. Sailor",  # the last initial keeps its full stop
    )


def _word(text: str, x0: float, top: float) -> Word:
    return Word(text, x0, x0 + 6 * len(text), top, top + 9, 9.0, len(text), 0, 0, top + 8)


def test_every_fifth_line_numbered_in_the_gutter_is_dropped():
    words = []
    for row in range(40):
        top = 60 + row * 12
        words += [_word("prose", 72, top), _word("words", 110, top)]  # the left column's text
        words += [_word("more", 320, top), _word("text", 350, top)]  # the right column's
        if row % 5 == 4:
            words.append(_word(str(row + 1), 40, top))  # the left margin: 5, 10, ...
            words.append(_word(str(row + 201), 300, top))  # the gutter: 205, 210, ...
    words.append(_word("2019", 350, 700))  # a number in the text stays
    page = PageData(1, 612, 792, words, [])
    gone = drop_line_numbers(page)
    assert gone == [str(n) for row in range(4, 40, 5) for n in (row + 1, row + 201)]
    assert "2019" in [w.text for w in page.words] and len(page.words) == 40 * 4 + 1


def test_the_bibliography_ends_at_its_last_entry():
    from tools.ingest.pdf.references import bibliography_end

    labelled = ["[1] P. Quill. Feathers. 1990.", "[2] S. Nib. Nibs. 1995.", "of the appendix and its", "equations."]
    assert bibliography_end(labelled) == 2  # the appendix's prose after entry 2 is no entry
    addresses = [
        "Quill P (1990). Feathers as pens. Journal of Writing, 3, 1-9.",
        "Nib S (1995). Steel nibs. Desk Press.",
        "Bourget D, Chalmers D (forthcoming). What pens do. Desk Press.",
        "Department of Writing",
        "University of Somewhere",
    ]
    assert bibliography_end(addresses) == 3  # an entry without a year stays; an address does not
    assert bibliography_end(addresses[:3]) == 3 and bibliography_end([]) == 0
