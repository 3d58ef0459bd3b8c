"""Record files: SQLite files of JSON records, written once and then only read, shared by the
index's paper and chunk tables and the citation store. Readers open them with `immutable=1` (no
locking, no journal), so any number of processes share one file.
"""

from __future__ import annotations

import itertools
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

PAGE = 2000  # rows per read when streaming a whole table, and per insert


class StoreProblem(RuntimeError):
    """A record file that is missing or unreadable."""


def create(path: Path, schema: str) -> sqlite3.Connection:
    """A new record file at `path` with one table (`schema`), written once, never changed."""
    if path.exists():
        raise FileExistsError(f"{path}: a record file is written once; this one exists")
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=OFF")  # a half-written file is in a folder no reader uses
    db.execute("PRAGMA synchronous=OFF")  # the build fsyncs the whole folder before switching
    db.execute(schema)
    return db


def insert(db: sqlite3.Connection, sql: str, rows: Iterator[tuple]) -> int:
    """Insert `rows` a page at a time in one transaction, close the file; the rows inserted."""
    n = 0
    try:
        with db:
            while page := list(itertools.islice(rows, PAGE)):
                db.executemany(sql, page)
                n += len(page)
    finally:
        db.close()
    return n


class RecordFile:
    """A read-only connection to one record file, shared by the threads of a process."""

    def __init__(self, path: Path):
        path = Path(path)
        if not path.is_file():
            raise StoreProblem(
                f"{path}: record file missing; this index version is incomplete or was "
                "removed while open. Open the index again, or rebuild it"
            )
        self.path = path
        self._db = sqlite3.connect(
            f"file:{quote(str(path.resolve()))}?mode=ro&immutable=1", uri=True, check_same_thread=False
        )
        self._lock = threading.Lock()

    def one(self, sql: str, args: tuple = ()) -> tuple | None:
        with self._lock:
            return self._db.execute(sql, args).fetchone()

    def all(self, sql: str, args: tuple = ()) -> list[tuple]:
        with self._lock:
            return self._db.execute(sql, args).fetchall()

    def pages(self, sql: str) -> Iterator[list[tuple]]:
        """`sql` (which must take `row > ? ORDER BY row LIMIT ?`) a page at a time, by row."""
        last = -1
        while True:
            got = self.all(sql, (last, PAGE))
            if not got:
                return
            yield got
            last = got[-1][0]

    def column(self, table: str, column: str) -> Iterator[Any]:
        """One column of `table` (papers or chunks), in row order, a page at a time."""
        for page in self.pages(f"SELECT row, {column} FROM {table} WHERE row > ? ORDER BY row LIMIT ?"):
            for _, value in page:
                yield value

    def close(self) -> None:
        with self._lock:
            self._db.close()
