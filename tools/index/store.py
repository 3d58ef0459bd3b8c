"""Paper and chunk records on disk (SQLite), read by row or id when a query needs them.

An index version holds its papers in `papers.sqlite`; each segment holds its chunks in
`chunks.sqlite` (tools/index/__init__.py has the layout). Opening an index connects to these files and
reads nothing else: a record is parsed when something asks for it, and kept in a small cache,
so opening a million-chunk index costs what opening a ten-chunk one does.

Decision: SQLite (the standard library's) over Arrow/Parquet. Reads here are point lookups (a
chunk by row for a BM25 hit, by id for a dense hit, a paper's chunk range), which SQLite answers
from its B-tree in microseconds without loading anything; Parquet would need a reader per row
group and an extra package. The files are written once and never changed, so readers open them
with `immutable=1` (no locking, no journal) and any number of processes share them.

The views (`ChunkTable`, `ChunkRows`, `PaperRecords`, `PaperIds`, `PaperRows`, `ChunkRanges`)
are the `Sequence`s and `Mapping`s the retrieval code indexes (`index.chunks[row]`,
`index.chunk_row[chunk_id]`, `index.papers[paper_id]`, ...), so it runs unchanged on them.
"""

from __future__ import annotations

import bisect
import json
import shutil
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from tools.base import Chunk, Paper
from tools.record_files import RecordFile, StoreProblem, create, insert

CACHE = 8192  # records kept parsed per table (a query touches a few hundred)

_CHUNKS = """CREATE TABLE chunks (row INTEGER PRIMARY KEY, chunk_id TEXT NOT NULL UNIQUE,
    paper_id TEXT NOT NULL, record TEXT NOT NULL)"""
_PAPERS = """CREATE TABLE papers (row INTEGER PRIMARY KEY, paper_id TEXT NOT NULL UNIQUE,
    first_chunk INTEGER NOT NULL, n_chunks INTEGER NOT NULL, record TEXT NOT NULL)"""


def _row_in(row: Any, n: int, what: str, check: bool = True) -> int:
    """A sequence index as a row: negative counts from the end, as a list's does; with `check`,
    outside 0..n-1 is an IndexError."""
    row = int(row)
    if row < 0:
        row += n
    if check and not 0 <= row < n:
        raise IndexError(f"{what} row {row} outside 0..{n - 1}")
    return int(row)


# ----------------------------------------------------------------------------- writing


def write_chunks(path: Path, chunks: Iterable[Chunk]) -> int:
    """Write `chunks` in row order; the number written."""
    rows = ((i, c.chunk_id, c.paper_id, json.dumps(c.to_dict(), ensure_ascii=False)) for i, c in enumerate(chunks))
    return insert(create(Path(path), _CHUNKS), "INSERT INTO chunks VALUES (?, ?, ?, ?)", rows)


def write_papers(path: Path, papers: Iterable[tuple[Paper, int, int]]) -> int:
    """Write (paper, first chunk row, chunk count) in row order; the number written."""
    rows = (_paper_row(i, p, first, count) for i, (p, first, count) in enumerate(papers))
    return insert(create(Path(path), _PAPERS), "INSERT INTO papers VALUES (?, ?, ?, ?, ?)", rows)


def _paper_row(row: int, p: Paper, first: int, count: int) -> tuple[Any, ...]:
    return (row, p.paper_id, first, count, json.dumps(p.to_dict(), ensure_ascii=False))


def extend_papers(
    old: Path, path: Path, changed: Iterable[tuple[int, Paper]], papers: Iterable[tuple[Paper, int, int]]
) -> int:
    """A version's paper table as a copy of the previous version's file `old` with the records of
    `changed` (row, paper) replaced and `papers` (paper, first chunk row, chunk count) appended:
    what an add writes, in time for the new papers, not the whole table. The number appended."""
    path = Path(path)
    if path.exists():
        raise FileExistsError(f"{path}: a record file is written once; this one exists")
    shutil.copyfile(old, path)
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=OFF")  # as `_create`: the copy is in a folder no reader uses
    db.execute("PRAGMA synchronous=OFF")
    try:
        with db:
            db.executemany(
                "UPDATE papers SET record = ? WHERE row = ?",
                ((json.dumps(p.to_dict(), ensure_ascii=False), row) for row, p in changed),
            )
            (start,) = db.execute("SELECT COALESCE(MAX(row) + 1, 0) FROM papers").fetchone()
    except BaseException:
        db.close()
        raise
    rows = (_paper_row(start + i, p, first, count) for i, (p, first, count) in enumerate(papers))
    return insert(db, "INSERT INTO papers VALUES (?, ?, ?, ?, ?)", rows)


# ----------------------------------------------------------------------------- reading


class _Cache(OrderedDict[Any, Any]):
    def __init__(self, size: int = CACHE):
        super().__init__()
        self.size = size
        self.lock = threading.Lock()

    def put(self, key: Any, value: Any) -> Any:
        with self.lock:
            self[key] = value
            if len(self) > self.size:
                self.popitem(last=False)
        return value


def _chunk(record: str) -> Chunk:
    return Chunk.from_dict(json.loads(record))


def _paper(record: str) -> Paper:
    return Paper.from_dict(json.loads(record))


class ChunkTable(Sequence[Chunk]):
    """The chunks of several segments as one sequence: a segment's rows follow the previous ones'."""

    def __init__(self, files: Sequence[RecordFile], sizes: Sequence[int]):
        self.files = list(files)
        self.offsets = [0]
        for n in sizes:
            self.offsets.append(self.offsets[-1] + n)
        self._cache = _Cache()

    def __len__(self) -> int:
        return self.offsets[-1]

    def _locate(self, row: int) -> tuple[RecordFile, int]:
        s = bisect.bisect_right(self.offsets, row) - 1
        return self.files[s], row - self.offsets[s]

    def __getitem__(self, row: Any) -> Any:
        if isinstance(row, slice):
            return [self[i] for i in range(*row.indices(len(self)))]
        row = _row_in(row, len(self), "chunk")
        hit = self._cache.get(row)
        if hit is not None:
            return hit
        f, local = self._locate(row)
        got = f.one("SELECT record FROM chunks WHERE row = ?", (local,))
        if got is None:
            raise StoreProblem(f"{f.path}: chunk row {local} is missing; rebuild the index")
        return self._cache.put(row, _chunk(got[0]))

    def __iter__(self) -> Iterator[Chunk]:
        for f in self.files:
            for record in f.column("chunks", "record"):
                yield _chunk(record)

    def row_of(self, chunk_id: str) -> int | None:
        for f, off in zip(self.files, self.offsets, strict=False):
            got = f.one("SELECT row FROM chunks WHERE chunk_id = ?", (chunk_id,))
            if got is not None:
                return int(off + got[0])
        return None

    def ids(self) -> Iterator[str]:
        for f in self.files:
            yield from f.column("chunks", "chunk_id")


class ChunkRows(Mapping[str, int]):
    """chunk id -> global row, looked up in the segments' files."""

    def __init__(self, table: ChunkTable):
        self._table = table

    def __getitem__(self, chunk_id: str) -> int:
        row = self._table.row_of(chunk_id) if isinstance(chunk_id, str) else None
        if row is None:
            raise KeyError(chunk_id)
        return row

    def __contains__(self, chunk_id: object) -> bool:
        return isinstance(chunk_id, str) and self._table.row_of(chunk_id) is not None

    def __iter__(self) -> Iterator[str]:
        return self._table.ids()

    def __len__(self) -> int:
        return len(self._table)


class PaperRecords(Mapping[str, Paper]):
    """paper id -> Paper, from a version's `papers.sqlite`, in row order."""

    def __init__(self, file: RecordFile, size: int):
        self.file = file
        self._size = size
        self._cache = _Cache()

    def __getitem__(self, paper_id: str) -> Paper:
        hit = self._cache.get(paper_id)
        if hit is not None:
            return hit  # type: ignore[no-any-return]  # the cache holds what put stored: Papers
        got = (
            self.file.one("SELECT record FROM papers WHERE paper_id = ?", (paper_id,))
            if isinstance(paper_id, str)
            else None
        )
        if got is None:
            raise KeyError(paper_id)
        paper = _paper(got[0])
        self._cache.put(paper_id, paper)
        return paper

    def __contains__(self, paper_id: object) -> bool:
        return isinstance(paper_id, str) and (
            paper_id in self._cache or self.file.one("SELECT 1 FROM papers WHERE paper_id = ?", (paper_id,)) is not None
        )

    def __iter__(self) -> Iterator[str]:
        yield from self.file.column("papers", "paper_id")

    def __len__(self) -> int:
        return self._size

    def values(self) -> Iterator[Paper]:  # type: ignore[override]  # a stream, not a view
        """Every paper in row order, streamed (not cached)."""
        for record in self.file.column("papers", "record"):
            yield _paper(record)


class PaperIds(Sequence[str]):
    """Paper ids by row (the row order of the paper BM25 index and the paper embeddings).

    The whole id column is read on the first lookup and kept (tens of milliseconds and a few MB at
    the published 27K papers): Relate maps a few hundred rows to ids per seed, and a query each
    was most of its time."""

    def __init__(self, file: RecordFile, size: int):
        self.file = file
        self._size = size
        self._ids: list[str] | None = None
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self._size

    def _all(self) -> list[str]:
        with self._lock:
            if self._ids is None:
                self._ids = list(self.file.column("papers", "paper_id"))
            return self._ids

    def __getitem__(self, row: Any) -> Any:
        if isinstance(row, slice):
            return [self[i] for i in range(*row.indices(len(self)))]
        row = _row_in(row, len(self), "paper", check=False)  # the table itself says a row is not there
        ids = self._ids if self._ids is not None else self._all()
        if not 0 <= row < len(ids):
            raise IndexError(f"paper row {row} outside 0..{len(self) - 1}")
        return ids[row]

    def __iter__(self) -> Iterator[str]:
        yield from self.file.column("papers", "paper_id")


V = TypeVar("V")


class _ByPaperId(Mapping[str, V]):
    """A lookup by paper id over the version's paper table: `COLUMNS` of the paper's row, made
    into the value by `_value`."""

    COLUMNS = ""

    def __init__(self, file: RecordFile, size: int):
        self.file = file
        self._size = size

    def _value(self, got: tuple[Any, ...]) -> V:
        raise NotImplementedError

    def __getitem__(self, paper_id: str) -> V:
        got = (
            self.file.one(f"SELECT {self.COLUMNS} FROM papers WHERE paper_id = ?", (paper_id,))
            if isinstance(paper_id, str)
            else None
        )
        if got is None:
            raise KeyError(paper_id)
        return self._value(got)

    def __contains__(self, paper_id: object) -> bool:
        return (
            isinstance(paper_id, str)
            and self.file.one("SELECT 1 FROM papers WHERE paper_id = ?", (paper_id,)) is not None
        )

    def __iter__(self) -> Iterator[str]:
        yield from self.file.column("papers", "paper_id")

    def __len__(self) -> int:
        return self._size


class PaperRows(_ByPaperId[int]):
    """paper id -> row."""

    COLUMNS = "row"

    def _value(self, got: tuple[Any, ...]) -> int:
        return int(got[0])


class ChunkRanges(_ByPaperId[range]):
    """paper id -> the rows of its chunks (a paper's chunks are consecutive, title and abstract first)."""

    COLUMNS = "first_chunk, n_chunks"

    def _value(self, got: tuple[Any, ...]) -> range:
        return range(got[0], got[0] + got[1])
