"""Paper and chunk records in SQLite (tools/index/store.py): written once, read by row and id through
the views the retrieval code indexes, as lists and dicts would answer."""

from __future__ import annotations

import pytest

from tools.base import Chunk, Locator, Paper
from tools.index.store import (
    ChunkRanges,
    ChunkRows,
    ChunkTable,
    PaperIds,
    PaperRecords,
    PaperRows,
    RecordFile,
    StoreProblem,
    extend_papers,
    write_chunks,
    write_papers,
)

pytestmark = pytest.mark.unit


def _chunks(pid: str, n: int) -> list[Chunk]:
    return [
        Chunk(
            f"{pid}#c{i}",
            pid,
            "title_abstract" if i == 0 else "text",
            f"text {i} of {pid} ünïcode",
            Locator(page=i + 1, section="Intro" if i else None),
        )
        for i in range(n)
    ]


@pytest.fixture
def two_segments(tmp_path):
    seg_a, seg_b = _chunks("a", 3) + _chunks("b", 2), _chunks("c", 4)
    assert write_chunks(tmp_path / "a.sqlite", seg_a) == 5
    assert write_chunks(tmp_path / "b.sqlite", seg_b) == 4
    files = [RecordFile(tmp_path / "a.sqlite"), RecordFile(tmp_path / "b.sqlite")]
    yield ChunkTable(files, [5, 4]), seg_a + seg_b
    for f in files:
        f.close()


def test_chunks_read_back_by_row_and_id_across_segments(two_segments):
    table, written = two_segments
    assert len(table) == 9
    assert [table[i] for i in range(9)] == written == list(table)
    assert table[-1] == written[-1] and table[2:4] == written[2:4]
    assert table[6].locator.page == 2 and table[5].kind == "title_abstract"
    with pytest.raises(IndexError):
        table[9]
    rows = ChunkRows(table)
    assert rows["c#c1"] == 6 and rows.get("a#c0") == 0 and rows.get("nope") is None
    assert "b#c1" in rows and "zz" not in rows and 3 not in rows
    assert list(rows) == [c.chunk_id for c in written] and len(rows) == 9
    with pytest.raises(KeyError):
        rows["missing"]


def test_papers_read_back_by_id_and_row_with_their_chunk_ranges(tmp_path):
    papers = [
        Paper("a", "Title A", "Abstract", authors=("X",), year=2020, references=("b",)),
        Paper("b", "Title B"),
        Paper("empty", "No chunks"),
    ]
    write_papers(tmp_path / "p.sqlite", [(papers[0], 0, 3), (papers[1], 3, 2), (papers[2], 5, 0)])
    f = RecordFile(tmp_path / "p.sqlite")
    try:
        records, ids, rows, ranges = PaperRecords(f, 3), PaperIds(f, 3), PaperRows(f, 3), ChunkRanges(f, 3)
        assert records["a"] == papers[0] and records.get("zz") is None and "b" in records and "zz" not in records
        assert list(records) == ["a", "b", "empty"] and list(records.values()) == papers and len(records) == 3
        assert list(ids) == ["a", "b", "empty"] and ids[1] == "b" and ids[-1] == "empty" and ids[0:2] == ["a", "b"]
        assert rows["empty"] == 2 and "a" in rows and rows.get("zz") is None
        assert ranges["a"] == range(3) and list(ranges["empty"]) == [] and ranges.get("zz", []) == []
        with pytest.raises(IndexError):
            ids[3]
    finally:
        f.close()


def test_a_record_file_is_written_once(tmp_path):
    write_chunks(tmp_path / "c.sqlite", _chunks("a", 1))
    with pytest.raises(FileExistsError, match="written once"):
        write_chunks(tmp_path / "c.sqlite", _chunks("b", 1))
    assert [c.chunk_id for c in ChunkTable([RecordFile(tmp_path / "c.sqlite")], [1])] == ["a#c0"]


def test_a_missing_record_file_is_a_clear_problem(tmp_path):
    with pytest.raises(StoreProblem, match=r"gone.sqlite: record file missing.*rebuild"):
        RecordFile(tmp_path / "gone.sqlite")
    assert not (tmp_path / "gone.sqlite").exists(), "a reader never creates a record file"


def test_an_add_extends_a_copy_of_the_paper_table(tmp_path):
    # the previous version's file is copied: its rows stay, the changed record is rewritten in the
    # copy only, the new papers follow; the old file is left as it was
    old = [Paper("a", "Title A"), Paper("b", "Title B", references=("a",)), Paper("empty", "No chunks")]
    write_papers(tmp_path / "old.sqlite", [(old[0], 0, 3), (old[1], 3, 2), (old[2], 5, 0)])
    before = (tmp_path / "old.sqlite").read_bytes()
    grown = old[0].with_references(["c"])
    new = [Paper("c", "Title C"), Paper("d", "Title D", references=("a", "c"))]
    n = extend_papers(tmp_path / "old.sqlite", tmp_path / "new.sqlite", [(0, grown)], [(new[0], 5, 4), (new[1], 9, 1)])
    assert n == 2 and (tmp_path / "old.sqlite").read_bytes() == before
    f = RecordFile(tmp_path / "new.sqlite")
    try:
        records, ids, ranges = PaperRecords(f, 5), PaperIds(f, 5), ChunkRanges(f, 5)
        assert list(records.values()) == [grown, old[1], old[2], *new] and list(ids) == ["a", "b", "empty", "c", "d"]
        assert ranges["a"] == range(3) and list(ranges["empty"]) == [] and ranges["c"] == range(5, 9)
    finally:
        f.close()
    with pytest.raises(FileExistsError, match="written once"):
        extend_papers(tmp_path / "old.sqlite", tmp_path / "new.sqlite", [], [])
