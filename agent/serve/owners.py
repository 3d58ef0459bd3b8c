"""Who owns each served thread, kept beside the threads' checkpoints: in Postgres when
`LITLOOP_CHECKPOINT__URL` is set, else in the server's SQLite checkpoint file.

The server's runtime keeps its thread records (and the `owner` stamped in their metadata) in its
own files, which a `kill -9` can leave behind, and which a second server on the same database
never sees. So ownership is not taken from them: the first user to create a thread id claims it
here, in one atomic insert, before the server acknowledges the thread, and every later create,
read, update, run or copy of that id on any server is checked against this record. A thread id
with no record here (a server without keys, or a thread from before the record was kept) falls
back to the runtime's metadata filter.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

TABLE = "litloop_thread_owners"
_SCHEMA = f"CREATE TABLE IF NOT EXISTS {TABLE} (thread_id TEXT PRIMARY KEY, owner TEXT NOT NULL)"
_made: set[str] = set()  # the stores this process has made the table in: once each, not per request


def _where() -> tuple[str, str]:
    """("postgres", URL) or ("sqlite", path): the store of the served threads' checkpoints."""
    from agent.settings import default_settings

    settings = default_settings()
    if settings.checkpoint.url:
        return "postgres", settings.checkpoint.url
    return "sqlite", str(settings.data_dir / "serve" / "checkpoints.sqlite")


async def claim(thread_id: str, user: str) -> str:
    """Record `user` as the owner of `thread_id` unless someone already is; the owner after."""
    kind, where = _where()
    if kind == "postgres":
        import psycopg

        async with await psycopg.AsyncConnection.connect(where, autocommit=True) as conn:
            await _make_table(conn, where)
            await conn.execute(
                f"INSERT INTO {TABLE} (thread_id, owner) VALUES (%s, %s) ON CONFLICT (thread_id) DO NOTHING",
                (thread_id, user),
            )
            row = await (await conn.execute(f"SELECT owner FROM {TABLE} WHERE thread_id = %s", (thread_id,))).fetchone()
        return str(row[0]) if row else user
    return await asyncio.to_thread(_sqlite_claim, Path(where), thread_id, user)


async def owner_of(thread_id: str) -> str | None:
    """The user who owns `thread_id`, or None when no one has claimed it here."""
    kind, where = _where()
    if kind == "postgres":
        import psycopg

        async with await psycopg.AsyncConnection.connect(where, autocommit=True) as conn:
            await _make_table(conn, where)
            row = await (await conn.execute(f"SELECT owner FROM {TABLE} WHERE thread_id = %s", (thread_id,))).fetchone()
        return str(row[0]) if row else None
    return await asyncio.to_thread(_sqlite_owner, Path(where), thread_id)


async def _make_table(conn: Any, where: str) -> None:
    if where not in _made:
        await conn.execute(_SCHEMA)
        _made.add(where)


def _sqlite(path: Path) -> sqlite3.Connection:
    new = str(path) not in _made
    if new:
        path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=30)
    if new:
        conn.execute(_SCHEMA)
        _made.add(str(path))
    return conn


def _sqlite_claim(path: Path, thread_id: str, user: str) -> str:
    conn = _sqlite(path)
    try:
        with conn:  # one transaction: the insert and the read see the same row
            conn.execute(f"INSERT OR IGNORE INTO {TABLE} (thread_id, owner) VALUES (?, ?)", (thread_id, user))
            row = conn.execute(f"SELECT owner FROM {TABLE} WHERE thread_id = ?", (thread_id,)).fetchone()
    finally:
        conn.close()
    return str(row[0]) if row else user


def _sqlite_owner(path: Path, thread_id: str) -> str | None:
    conn = _sqlite(path)
    try:
        row = conn.execute(f"SELECT owner FROM {TABLE} WHERE thread_id = ?", (thread_id,)).fetchone()
    finally:
        conn.close()
    return str(row[0]) if row else None
