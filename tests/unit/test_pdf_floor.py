"""The text floor (tools/ingest/pdf/floor.py) on a plain layer the test writes: what it puts back,
where, and what it leaves out for a stated reason."""

from __future__ import annotations

from tools.base import Block, Document, Dropped, Paper
from tools.ingest.pdf.floor import (
    FRONT_REASON,
    MARGIN_REASON,
    REGION_REASON,
    PlainPage,
    PlainWord,
    covered,
    floor,
    fold,
    is_prose,
    runs,
)

W, H = 600.0, 800.0
FIRST = "Retrieval augmented models read the passages that a search engine finds for each question they are asked."
LOST = "A whole paragraph that the reader dropped because its layout confused the column finder on this page."
SECOND = "The second paragraph of the section reports how often the answers cite the passage that holds the fact."


def page(number: int, *lines: tuple[str, float]) -> PlainPage:
    """A plain page: each line's words laid left to right at the line's top."""
    out = PlainPage(number, W, H)
    for text, top in lines:
        x = 72.0
        for w in text.split():
            out.words.append(PlainWord(w, (x, top, x + 6 * len(w), top + 10)))
            x += 6 * len(w) + 4
    return out


def doc(*blocks: Block, dropped: tuple[Dropped, ...] = ()) -> Document:
    return Document(Paper(paper_id="p", title="A paper"), blocks=blocks, dropped=dropped)


def test_covered_runs_and_prose():
    plain = fold("one two three four five six seven eight nine ten")
    assert covered(plain, [fold("one two three four five")]) == [True] * 5 + [False] * 5
    assert covered(plain, [fold("seven eight")]) == [False] * 6 + [True, True] + [False] * 2  # a short text whole
    assert covered(plain, [fold("two three nine ten eleven")]) == [False] * 10  # no run of five in order
    assert runs([True, False, False, True, False]) == [(1, 3), (4, 5)]
    assert is_prose(LOST.split())
    assert not is_prose(
        ["x", "=", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12"]
    )  # maths and numbers are not a paragraph
    assert not is_prose(["a", "short", "sliver"])
    assert fold("Färber’s ﬁne-tuned") == ["farber", "s", "fine", "tuned"]  # accents and ligatures aside


def test_a_lost_paragraph_goes_back_after_the_block_it_follows():
    d = doc(
        Block("text", FIRST, page=2, section="2 Method"),
        Block("text", SECOND, page=2, section="2 Method › 2.1 Data"),
    )
    layer = [page(2, (FIRST, 200), (LOST, 300), (SECOND, 400))]
    found = floor(layer, d, {}, {})
    assert [b.text for b in found.blocks] == [FIRST, LOST, SECOND]
    assert (found.blocks[1].page, found.blocks[1].section, found.blocks[1].kind) == (2, "2 Method", "text")
    account = found.account
    assert account.put_back == 1 and account.put_back_words == len(fold(LOST))
    assert account.share == 1.0 and account.against == "the PDF's plain text layer"


def test_text_left_out_on_purpose_is_not_put_back_and_says_why():
    head = "Journal of Toy Studies volume twelve issue three pages one to twenty two published by the toy press"
    affil = "Department of Computer Science University of Somewhere Street Address City Country email someone at example dot org"
    inside = "Legend axis label first series second series third series baseline model ours theirs another label"
    d = doc(
        Block("text", FIRST, page=1, section="1 Introduction"),
        Block("text", SECOND, page=1, section="1 Introduction"),
    )
    layer = [page(1, (head, 20), (affil, 120), (FIRST, 200), (inside, 500), (SECOND, 600))]
    found = floor(layer, d, {1: [("abstract", "")]}, {1: [(60.0, 490.0, 1200.0, 520.0)]})
    assert [b.text for b in found.blocks] == [FIRST, SECOND]  # nothing put back
    reasons = dict(found.account.dropped)
    assert reasons[MARGIN_REASON] == len(fold(head))  # the top 8 % of the page
    assert reasons[FRONT_REASON] == len(fold(affil))  # page 1, above the paper's text
    assert reasons[REGION_REASON] == len(fold(inside))  # inside a figure's body
    assert found.account.share == 1.0


def test_what_the_reader_dropped_with_a_reason_counts_as_kept_and_slivers_as_lost():
    d = doc(
        Block("text", FIRST, page=3, section="3 Results"),
        dropped=(Dropped(3, "Running head of the paper repeated here", "running head or foot"),),
    )
    sliver = "x y z 1 2 3 4 5 6"  # maths the reader lost: too short and not prose, not put back
    layer = [page(3, ("Running head of the paper repeated here", 100), (FIRST, 200), (sliver, 300))]
    found = floor(layer, d, {}, {})
    assert [b.text for b in found.blocks] == [FIRST]
    [share] = found.account.pages
    head = len(fold("Running head of the paper repeated here"))
    assert share.words == len(fold(FIRST)) + head + 9 and share.kept == len(fold(FIRST)) + head
    assert dict(found.account.dropped)["running head or foot"] == head


def test_a_fragment_between_bibliography_entries_is_not_a_paragraph():
    e1 = "Ann Author and Bob Writer. 2019. A study of toy tables. In Proceedings of the Toy Conference."
    e2 = "Carl Coder. 2020. Grids and rules: a survey of tables in the wild. In Proceedings of ACL."
    frag = "an entry the splitter missed with its authors and its title and its venue and its pages"
    d = doc(Block("text", FIRST, page=5, section="5 Conclusion"))
    layer = [page(5, (FIRST, 100), (e1, 300), (frag, 320), (e2, 340))]
    found = floor(layer, d, {5: [("bibliography", e1), ("bibliography", e2)]}, {})
    assert [b.text for b in found.blocks] == [FIRST]
    assert found.account.pages[0].kept == len(fold(FIRST)) + len(fold(e1)) + len(fold(e2))
