"""RecordView's lookups of one paper: its chunks in order, and the ids a mistyped one may mean."""

from __future__ import annotations

import pytest

from tools.base import Chunk, Locator, Paper
from tools.index import RecordView

pytestmark = pytest.mark.unit


def table(paper_ids: list[str], chunks: list[Chunk]) -> RecordView:
    """A view made by hand over in-memory records, with the row lookups every view sets."""
    t = RecordView()
    t.papers = {p: Paper(p, title=p) for p in paper_ids}
    t.chunks = chunks
    t.paper_ids = list(t.papers)
    t.paper_row = {pid: i for i, pid in enumerate(t.paper_ids)}
    t.chunk_row = {c.chunk_id: i for i, c in enumerate(chunks)}
    chunks_of: dict[str, list[int]] = {}
    for i, c in enumerate(chunks):
        chunks_of.setdefault(c.paper_id, []).append(i)
    t.chunks_of = chunks_of
    return t


def chunk(pid: str, n: int, kind: str = "text") -> Chunk:
    return Chunk(f"{pid}#c{n}", pid, kind, f"{pid} chunk {n}", Locator(page=n + 1))  # type: ignore[arg-type]


def test_paper_chunks_are_in_chunk_order_and_empty_for_a_paper_without_any():
    # the chunks of two papers interleaved in the rows: each paper's keep their order
    rows = [
        chunk("a", 0, "title_abstract"),
        chunk("b", 0, "title_abstract"),
        chunk("a", 1),
        chunk("b", 1),
        chunk("a", 2, "table"),
    ]
    t = table(["a", "b", "bare"], rows)
    assert [c.chunk_id for c in t.paper_chunks("a")] == ["a#c0", "a#c1", "a#c2"]
    assert [c.kind for c in t.paper_chunks("a")] == ["title_abstract", "text", "table"]
    assert t.paper_chunks("bare") == []


def test_ids_like_suggests_case_variants_then_ids_it_begins_capped():
    ids = ["W00-1234", "w00-1299", "W00-1300", "X99", "w00-1234x"]
    t = table(ids, [chunk(p, 0) for p in ids])
    assert t.ids_like("w00-1234") == ["W00-1234", "w00-1234x"]
    assert t.ids_like("W00-1") == ["W00-1234", "w00-1299", "W00-1300", "w00-1234x"]
    assert t.ids_like("W00-1", limit=2) == ["W00-1234", "w00-1299"]
    assert t.ids_like("nothing") == [] and t.ids_like("") == []
    assert "X99" not in t.ids_like("X99")  # the id itself is no suggestion


def test_ids_like_finds_the_paper_of_a_chunk_id():
    t = table(["p1", "p2"], [chunk("p1", 0), chunk("p2", 0), chunk("p2", 1)])
    assert t.ids_like("p2#c1") == ["p2"]


def test_ids_like_matches_a_bare_id_against_namespaced_ones():
    # over several corpora (tools.index.multi.MultiIndex) ids are CORPUS:ID
    ids = ["nlp:crf", "med:CRF", "med:crf2", "nlp:hmm"]
    t = table(ids, [chunk(p, 0) for p in ids])
    assert t.ids_like("crf") == ["nlp:crf", "med:CRF", "med:crf2"]
    assert t.ids_like("NLP:CRF") == ["nlp:crf"]
    assert t.ids_like("med:") == ["med:CRF", "med:crf2"]
