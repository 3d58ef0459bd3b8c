"""The served threads' and runs' records, kept beside their checkpoints: the source of truth of
`litloop serve` (in Postgres when `LITLOOP_CHECKPOINT__URL` is set, else in the server's SQLite
checkpoint file).

The LangGraph API server's in-memory runtime keeps its records of threads and runs in its own
files, written every 10 s at best, lost to a `kill -9` in between, and never seen by a second
server on the same database. So every thread and run is written here before the server
acknowledges it (from the custom-auth hooks, agent/serve/auth.py), each run's status as the runtime
changes it (agent/serve/durable.py), and what a runtime lacks is rebuilt from here.

Three tables:

- `litloop_threads`: a thread's id, its owner (the user who first created the id: the one
  atomic claim of ownership, checked on every server), its metadata, when it was created.
- `litloop_runs`: a run's id, thread, the server running it, its status, what the runtime needs
  to start it again (`request`, JSON), how many times a server started it, the reason it failed.
- `litloop_servers`: each live server's id and when it last said so (every `HEARTBEAT_S`); a run
  whose server has been silent for `DEAD_AFTER_S` is taken over by a live one.

This module is the database side only (no langgraph import); agent/serve/durable.py connects it to
the runtime.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

THREADS = "litloop_threads"
RUNS = "litloop_runs"
SERVERS = "litloop_servers"
OLD_OWNERS = "litloop_thread_owners"  # the owners-only table of earlier versions, copied in once
ACTIVE = ("pending", "running")
HEARTBEAT_S = 2.0
DEAD_AFTER_S = 15.0
MAX_STARTS = 3  # a run whose server died this many times while running it fails instead

_SCHEMA = (
    f"CREATE TABLE IF NOT EXISTS {THREADS} (thread_id TEXT PRIMARY KEY, owner TEXT NOT NULL, "
    "metadata TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL)",
    f"CREATE TABLE IF NOT EXISTS {RUNS} (run_id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, server TEXT NOT NULL, "
    "status TEXT NOT NULL, request TEXT NOT NULL, starts INTEGER NOT NULL, error TEXT, "
    "created_at DOUBLE PRECISION NOT NULL, updated_at DOUBLE PRECISION NOT NULL)",
    f"CREATE INDEX IF NOT EXISTS {RUNS}_thread ON {RUNS} (thread_id)",
    f"CREATE TABLE IF NOT EXISTS {SERVERS} (server TEXT PRIMARY KEY, seen_at DOUBLE PRECISION NOT NULL)",
)


@dataclass(frozen=True)
class ThreadRecord:
    thread_id: str
    owner: str
    metadata: dict[str, Any]
    created_at: float


@dataclass(frozen=True)
class RunRecord:
    run_id: str
    thread_id: str
    server: str
    status: str
    request: dict[str, Any]
    starts: int
    error: str | None
    created_at: float
    updated_at: float


def _thread(row: Any) -> ThreadRecord:
    return ThreadRecord(str(row[0]), str(row[1]), json.loads(row[2] or "{}"), float(row[3]))


def _run(row: Any) -> RunRecord:
    return RunRecord(
        str(row[0]), str(row[1]), str(row[2]), str(row[3]), json.loads(row[4] or "{}"), int(row[5]),
        row[6], float(row[7]), float(row[8]),
    )  # fmt: skip


_RUN_COLUMNS = "run_id, thread_id, server, status, request, starts, error, created_at, updated_at"


class Records:
    """The records in one database: Postgres (a URL) or SQLite (a file path). Statements are
    written with `?` placeholders; each method is one transaction."""

    def __init__(self, kind: str, where: str) -> None:
        self.kind, self.where = kind, where
        self._pool: Any = None
        self._ready = False
        self._lock = asyncio.Lock()

    # -- the database -------------------------------------------------------------------------

    async def _run_sql(self, statements: list[tuple[str, tuple]], fetch: str = "none") -> Any:
        """Run the statements in one transaction; the rows of the last (fetch "all"/"one")."""
        if not self._ready:
            async with self._lock:
                if not self._ready:
                    await self._setup()
                    self._ready = True
        if self.kind == "sqlite":
            return await asyncio.to_thread(self._sqlite, statements, fetch)
        pg = [(sql.replace("?", "%s"), params) for sql, params in statements]
        async with self._pool.connection() as conn, conn.transaction():
            cur = None
            for sql, params in pg:
                cur = await conn.execute(sql, params)
            if fetch == "all" and cur is not None:
                return await cur.fetchall()
            if fetch == "one" and cur is not None:
                return await cur.fetchone()
        return None

    def _sqlite(self, statements: list[tuple[str, tuple]], fetch: str) -> Any:
        conn = sqlite3.connect(self.where, timeout=30)
        try:
            with conn:
                cur = None
                for sql, params in statements:
                    cur = conn.execute(sql, params)
                if fetch == "all" and cur is not None:
                    return cur.fetchall()
                if fetch == "one" and cur is not None:
                    return cur.fetchone()
        finally:
            conn.close()
        return None

    async def _setup(self) -> None:
        if self.kind == "sqlite":
            Path(self.where).parent.mkdir(parents=True, exist_ok=True)
            await asyncio.to_thread(self._sqlite_setup)
            return
        from psycopg_pool import AsyncConnectionPool

        self._pool = AsyncConnectionPool(
            self.where, min_size=1, max_size=4, kwargs={"autocommit": True}, open=False, name="litloop-records"
        )
        await self._pool.open(wait=True, timeout=30)
        async with self._pool.connection() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(7246153)")  # servers starting at once
            for sql in _SCHEMA:
                await conn.execute(sql)
            old = await (await conn.execute("SELECT to_regclass(%s)", (OLD_OWNERS,))).fetchone()
            if old and old[0]:
                await conn.execute(
                    f"INSERT INTO {THREADS} SELECT thread_id, owner, '{{}}', 0 FROM {OLD_OWNERS} ON CONFLICT DO NOTHING"
                )

    def _sqlite_setup(self) -> None:
        conn = sqlite3.connect(self.where, timeout=30)
        try:
            with conn:
                for sql in _SCHEMA:
                    conn.execute(sql)
                if conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (OLD_OWNERS,)).fetchone():
                    conn.execute(
                        f"INSERT OR IGNORE INTO {THREADS} SELECT thread_id, owner, '{{}}', 0 FROM {OLD_OWNERS}"
                    )
        finally:
            conn.close()

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()
            self._pool = None
            self._ready = False

    # -- threads ------------------------------------------------------------------------------

    async def claim(self, thread_id: str, owner: str, metadata: dict[str, Any] | None = None) -> str:
        """Record the thread, owned by `owner`, unless the id is taken; the id's owner after."""
        row = await self._run_sql(
            [
                (
                    f"INSERT INTO {THREADS} (thread_id, owner, metadata, created_at) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (thread_id) DO NOTHING",
                    (thread_id, owner, _dumps(metadata or {}), time.time()),
                ),
                (f"SELECT owner FROM {THREADS} WHERE thread_id = ?", (thread_id,)),
            ],
            "one",
        )
        return str(row[0]) if row else owner

    async def thread(self, thread_id: str) -> ThreadRecord | None:
        row = await self._run_sql(
            [(f"SELECT thread_id, owner, metadata, created_at FROM {THREADS} WHERE thread_id = ?", (thread_id,))],
            "one",
        )
        return _thread(row) if row else None

    async def owner_of(self, thread_id: str) -> str | None:
        record = await self.thread(thread_id)
        return record.owner if record else None

    async def threads(self, owner: str | None = None) -> list[ThreadRecord]:
        """Every thread, or those of `owner`."""
        sql = f"SELECT thread_id, owner, metadata, created_at FROM {THREADS}"
        rows = await self._run_sql([(sql + " WHERE owner = ?", (owner,)) if owner else (sql, ())], "all")
        return [_thread(r) for r in rows or []]

    async def set_metadata(self, thread_id: str, metadata: dict[str, Any]) -> None:
        await self._run_sql([(f"UPDATE {THREADS} SET metadata = ? WHERE thread_id = ?", (_dumps(metadata), thread_id))])

    async def forget(self, thread_id: str) -> None:
        """A deleted thread: its record and its runs' records."""
        await self._run_sql(
            [
                (f"DELETE FROM {RUNS} WHERE thread_id = ?", (thread_id,)),
                (f"DELETE FROM {THREADS} WHERE thread_id = ?", (thread_id,)),
            ]
        )

    # -- runs ---------------------------------------------------------------------------------

    async def add_run(self, run_id: str, thread_id: str, server: str, request: dict[str, Any]) -> None:
        now = time.time()
        await self._run_sql(
            [
                (
                    f"INSERT INTO {RUNS} ({_RUN_COLUMNS}) VALUES (?, ?, ?, 'pending', ?, 1, NULL, ?, ?) "
                    "ON CONFLICT (run_id) DO NOTHING",
                    (run_id, thread_id, server, _dumps(request), now, now),
                )
            ]
        )

    async def set_status(self, run_id: str, status: str, error: str | None = None) -> None:
        await self._run_sql(
            [
                (
                    f"UPDATE {RUNS} SET status = ?, error = ?, updated_at = ? WHERE run_id = ?",
                    (status, error, time.time(), run_id),
                )
            ]
        )

    async def drop_run(self, run_id: str) -> None:
        """A run the server refused after it was recorded (a second run on a busy thread)."""
        await self._run_sql([(f"DELETE FROM {RUNS} WHERE run_id = ?", (run_id,))])

    async def run(self, run_id: str) -> RunRecord | None:
        row = await self._run_sql([(f"SELECT {_RUN_COLUMNS} FROM {RUNS} WHERE run_id = ?", (run_id,))], "one")
        return _run(row) if row else None

    async def runs_of(self, thread_id: str) -> list[RunRecord]:
        rows = await self._run_sql(
            [(f"SELECT {_RUN_COLUMNS} FROM {RUNS} WHERE thread_id = ? ORDER BY created_at", (thread_id,))], "all"
        )
        return [_run(r) for r in rows or []]

    async def runs_on(self, server: str) -> list[RunRecord]:
        """The runs a server is running or will run."""
        rows = await self._run_sql(
            [(f"SELECT {_RUN_COLUMNS} FROM {RUNS} WHERE server = ? AND status IN ('pending', 'running')", (server,))],
            "all",
        )
        return [_run(r) for r in rows or []]

    # -- servers ------------------------------------------------------------------------------

    async def heartbeat(self, server: str) -> None:
        await self._run_sql(
            [
                (
                    f"INSERT INTO {SERVERS} (server, seen_at) VALUES (?, ?) "
                    "ON CONFLICT (server) DO UPDATE SET seen_at = excluded.seen_at",
                    (server, time.time()),
                )
            ]
        )

    async def live_servers(self) -> set[str]:
        rows = await self._run_sql(
            [(f"SELECT server FROM {SERVERS} WHERE seen_at >= ?", (time.time() - DEAD_AFTER_S,))], "all"
        )
        return {str(r[0]) for r in rows or []}

    async def orphans(self) -> list[RunRecord]:
        """Runs waiting or running on a server that has stopped saying it is alive."""
        rows = await self._run_sql(
            [
                (
                    f"SELECT {_RUN_COLUMNS} FROM {RUNS} WHERE status IN ('pending', 'running') AND server NOT IN "
                    f"(SELECT server FROM {SERVERS} WHERE seen_at >= ?) ORDER BY created_at",
                    (time.time() - DEAD_AFTER_S,),
                )
            ],
            "all",
        )
        return [_run(r) for r in rows or []]

    async def take_over(self, run: RunRecord, server: str) -> bool:
        """Move an orphaned run to `server`, counting a start; False when another server took it
        first (the update matches only while the run is still on its old server)."""
        row = await self._run_sql(
            [
                (
                    f"UPDATE {RUNS} SET server = ?, status = 'pending', starts = starts + 1, updated_at = ? "
                    "WHERE run_id = ? AND server = ? AND status IN ('pending', 'running')",
                    (server, time.time(), run.run_id, run.server),
                ),
                (f"SELECT server FROM {RUNS} WHERE run_id = ?", (run.run_id,)),
            ],
            "one",
        )
        return bool(row) and str(row[0]) == server


def _dumps(value: Any) -> str:
    return json.dumps(value, default=str, sort_keys=True)


_records: dict[tuple[str, str, int], Records] = {}


def where() -> tuple[str, str]:
    """("postgres", URL) or ("sqlite", path): the store of the served threads' checkpoints."""
    from agent.settings import default_settings

    settings = default_settings()
    if settings.checkpoint.url:
        return "postgres", settings.checkpoint.url
    return "sqlite", str(settings.data_dir / "serve" / "checkpoints.sqlite")


def records() -> Records:
    """This process's records, in the store the settings name: one pool per event loop (a
    pool's connections belong to the loop that opened them)."""
    kind, place = where()
    try:
        loop = id(asyncio.get_running_loop())
    except RuntimeError:
        loop = 0
    key = (kind, place, loop)
    if key not in _records:
        _records[key] = Records(kind, place)
    return _records[key]
