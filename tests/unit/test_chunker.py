from __future__ import annotations

import pytest

from tools.base import MAX_CHUNK_CHARS, Block, Document, Paper
from tools.ingest.chunker import MIN_PACK_CHARS, chunk_document, split_text

pytestmark = pytest.mark.unit


def _doc(blocks=(), **paper):
    defaults = dict(paper_id="p1", title="A Title", abstract="An abstract.")
    defaults.update(paper)
    return Document(Paper(**defaults), tuple(blocks))


def test_title_abstract_chunk_first_with_venue_year_tag():
    chunks = chunk_document(_doc(venue="ACL", year=2025))
    assert [c.kind for c in chunks] == ["title_abstract"]
    assert chunks[0].text.startswith("[ACL 2025] A Title\nAn abstract.")
    assert chunks[0].chunk_id == "p1#c0"


@pytest.mark.parametrize("venue,year", [(None, 2025), ("ACL", None), (None, None)])
def test_no_tag_unless_venue_and_year_known(venue, year):
    text = chunk_document(_doc(venue=venue, year=year))[0].text
    assert not text.startswith("[")
    assert text.startswith("A Title")


def test_long_abstract_overflows_into_text_chunks_under_cap():
    abstract = " ".join(f"Sentence number {i} about sequence labelling." for i in range(120))
    chunks = chunk_document(_doc(abstract=abstract))
    assert chunks[0].kind == "title_abstract"
    assert all(len(c.text) <= MAX_CHUNK_CHARS for c in chunks)
    assert [c.kind for c in chunks].count("title_abstract") == 1
    assert chunks[1].kind == "text" and chunks[1].locator.section == "Abstract"
    # nothing lost: every sentence is somewhere
    joined = " ".join(c.text for c in chunks)
    assert all(f"Sentence number {i} " in joined for i in range(120))


def test_split_text_prefers_sentence_ends_and_respects_cap():
    text = ("a" * 900 + ". ") * 5
    pieces = split_text(text)
    assert all(len(p) <= MAX_CHUNK_CHARS for p in pieces)
    assert all(p.endswith(".") for p in pieces)
    # a run-on 'sentence' with no spaces is still cut
    assert all(len(p) <= 50 for p in split_text("x" * 230, cap=50))


def test_paragraphs_never_merge_across_page_or_section():
    blocks = [
        Block("text", "Short one.", page=1, section="1 Intro"),
        Block("text", "Short two.", page=1, section="1 Intro"),
        Block("text", "Short three.", page=2, section="1 Intro"),
        Block("text", "Short four.", page=2, section="2 Method"),
    ]
    body = chunk_document(_doc(blocks))[1:]
    assert [c.text for c in body] == ["Short one.\nShort two.", "Short three.", "Short four."]
    assert [(c.locator.page, c.locator.section, c.locator.paragraph) for c in body] == [
        (1, "1 Intro", 1),
        (2, "1 Intro", 3),
        (2, "2 Method", 1),
    ]


def test_long_paragraphs_are_not_packed():
    long = "word " * (MIN_PACK_CHARS // 5 + 10)
    blocks = [Block("text", long, page=1, section="S"), Block("text", "next", page=1, section="S")]
    body = chunk_document(_doc(blocks))[1:]
    assert len(body) == 2


def test_five_kinds_keep_object_ids_and_pages():
    blocks = [
        Block("text", "Body.", page=3, section="4 Results"),
        Block("table", "Table 2: F1 scores. CRF 91.2", page=3, section="4 Results", table_id="Table 2"),
        Block("figure", "Figure 1: Architecture.", page=4, section="4 Results", figure_id="Figure 1"),
        Block("equation", "p(y|x) = exp(...) / Z(x)", page=4, section="3 Model"),
    ]
    chunks = chunk_document(_doc(blocks))
    assert {c.kind for c in chunks} == {"title_abstract", "text", "table", "figure", "equation"}
    table = next(c for c in chunks if c.kind == "table")
    assert (table.locator.page, table.locator.table_id) == (3, "Table 2")
    fig = next(c for c in chunks if c.kind == "figure")
    assert (fig.locator.page, fig.locator.figure_id) == (4, "Figure 1")
    # in a paginated source the title-and-abstract chunk is on page 1
    assert chunks[0].locator.page == 1


def test_oversized_table_split_keeps_table_id():
    text = "Table 9: Big. " + "cell value 1.0 " * 400
    chunks = chunk_document(_doc([Block("table", text, page=2, table_id="Table 9")]))
    tables = [c for c in chunks if c.kind == "table"]
    assert len(tables) > 1
    assert all(c.locator.table_id == "Table 9" and len(c.text) <= MAX_CHUNK_CHARS for c in tables)


def test_chunk_ids_are_stable_and_unique():
    blocks = [Block("text", f"Paragraph {i}. " * 60, page=1, section="S") for i in range(5)]
    a, b = chunk_document(_doc(blocks)), chunk_document(_doc(blocks))
    assert [c.chunk_id for c in a] == [c.chunk_id for c in b]
    assert len({c.chunk_id for c in a}) == len(a)


def test_text_windows_cover_the_chunk_and_stay_short():
    from tools.models.embed import text_windows

    assert text_windows("short text", 1000) == ["short text"]
    one = "word " * 240  # 1,200 chars: within a quarter of the window, stays whole
    assert len(text_windows(one, 1000)) == 1
    long = " ".join(f"w{i}" for i in range(600))  # about 2,900 chars
    wins = text_windows(long, 1000)
    assert len(wins) >= 3
    assert all(len(w) <= 1000 for w in wins)
    assert wins[0].startswith("w0 ") and wins[-1].endswith("w599")
    words = set(long.split())
    assert set(" ".join(wins).split()) == words  # every word in some window, none cut


def test_a_paragraph_across_a_page_break_gives_pieces_with_their_pages():
    first = "First page sentence number %d is here. "
    p1 = "".join(first % i for i in range(60)).strip()  # about 2,300 characters on page 3
    p2 = " ".join(f"Second page sentence {i} is here." for i in range(10))
    text = f"{p1} {p2}"
    block = Block("text", text, page=3, section="2 Method", page_end=4, page_end_at=len(p1) + 1)
    chunks = chunk_document(_doc([block]))[1:]
    assert len(chunks) == 2 and all(c.locator.paragraph == 1 for c in chunks)
    assert (chunks[0].locator.page, chunks[0].locator.page_end) == (3, None)  # wholly on page 3
    assert (chunks[1].locator.page, chunks[1].locator.page_end) == (3, 4)  # runs onto page 4
    only_p2 = Block("text", "Short first part. " + p2, page=3, section="2 Method", page_end=4, page_end_at=18)
    (c,) = chunk_document(_doc([only_p2]))[1:]
    assert (c.locator.page, c.locator.page_end) == (3, 4)


def test_footnotes_are_packed_apart_from_the_running_text():
    blocks = [
        Block("text", "A short paragraph.", page=1, section="1 Intro"),
        Block("text", "https://example.org/code", page=1, section="1 Intro", footnote="2"),
        Block("text", "Another short paragraph.", page=1, section="1 Intro"),
        Block("text", "Equal contribution.", page=1, section="1 Intro", footnote="∗"),
        Block("text", "A footnote on the next page.", page=2, section="1 Intro", footnote="3"),
    ]
    body = chunk_document(_doc(blocks))[1:]
    assert [c.text for c in body] == [
        "A short paragraph.\nAnother short paragraph.",
        "https://example.org/code\n\nEqual contribution.",  # a blank line: each note is its own sentence
        "A footnote on the next page.",
    ]
    assert body[0].locator.paragraph == 1 and body[0].locator.footnote is None
    assert body[1].locator.footnote == "2, ∗" and body[1].locator.paragraph is None
    assert (body[2].locator.page, body[2].locator.footnote) == (2, "3")


def test_a_span_of_a_chunk_across_a_page_break_has_its_own_page():
    from tools.base import Locator

    loc = Locator(page=3, section="2 Method", paragraph=1, page_end=4, page_end_at=100)
    assert (loc.page_of(0), loc.page_of(99), loc.page_of(100)) == (3, 3, 4)
    assert loc.at(10, 50) == Locator(page=3, section="2 Method", paragraph=1)
    assert loc.at(120, 180) == Locator(page=4, section="2 Method", paragraph=1)
    assert loc.at(80, 130) == Locator(page=3, section="2 Method", paragraph=1, page_end=4)  # both pages
    assert Locator(page=5).at(0, 10) == Locator(page=5)
    first = "First page sentence here. " * 5
    block = Block(
        "text", first + "Second page sentence.", page=3, section="2 Method", page_end=4, page_end_at=len(first)
    )
    (chunk,) = chunk_document(_doc([block]))[1:]
    assert chunk.locator.page_end_at == len(first)
    at = chunk.text.index("Second page")
    assert chunk.locator.page_of(at) == 4 and chunk.locator.page_of(0) == 3
