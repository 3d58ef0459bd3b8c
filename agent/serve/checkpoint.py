"""Where LangGraph keeps the checkpoints of threads: the one place that chooses the checkpointer.

SQLite (an embedded file) is the default; `LITLOOP_CHECKPOINT__URL=postgresql://...` keeps them in
Postgres with LangGraph's Postgres checkpointer (`langgraph-checkpoint-postgres`), so several
processes (chats, servers) share the threads and they survive a restart of any of them. The chats
(agent/chat/session.py) and everything else that compiles the graph with threads call
`open_checkpointer`; psycopg is imported only when a Postgres URL is set.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent.settings import Settings


class CheckpointProblem(RuntimeError):
    """The configured checkpoint store cannot be used (a bad URL, a server that does not answer)."""


def redact_url(url: str) -> str:
    """The URL with its password masked, for messages and logs."""
    return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", url)


def is_postgres(url: str | None) -> bool:
    return bool(url) and str(url).split("://", 1)[0] in ("postgresql", "postgres")


@dataclass
class Checkpointer:
    """A LangGraph checkpointer and what closes it."""

    saver: Any
    kind: str  # "sqlite" | "postgres"
    where: str  # the file, or the URL with its password masked
    _resource: Any = None

    def close(self) -> None:
        if self._resource is not None:
            self._resource.close()
            self._resource = None


def open_checkpointer(settings: Settings | None = None, *, sqlite_path: Path | str | None = None) -> Checkpointer:
    """The checkpointer the settings name: Postgres when `checkpoint.url` is set, else SQLite at
    `sqlite_path` (default `data_dir/chat/chats.sqlite`). Tables are created when missing."""
    if settings is None:
        from agent.settings import default_settings

        settings = default_settings()
    url = settings.checkpoint.url
    if url:
        if not is_postgres(url):
            raise CheckpointProblem(
                f"LITLOOP_CHECKPOINT__URL={redact_url(url)}: not a Postgres URL; give postgresql://USER:PASSWORD@HOST:PORT/DB, "
                "or unset it for the embedded SQLite file"
            )
        return _open_postgres(url, settings.checkpoint.pool_size, settings.checkpoint.connect_timeout_s)
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = Path(sqlite_path) if sqlite_path is not None else settings.data_dir / "chat" / "chats.sqlite"
    path.parent.mkdir(parents=True, exist_ok=True)
    # its own connection: the saver serialises its statements with its own lock
    conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
    saver = SqliteSaver(conn)
    saver.setup()
    return Checkpointer(saver, "sqlite", str(path), conn)


def _open_postgres(url: str, pool_size: int, timeout_s: float) -> Checkpointer:
    try:
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row
        from psycopg_pool import ConnectionPool, PoolTimeout
    except ImportError as exc:  # pragma: no cover - installed with litloop
        raise CheckpointProblem(
            f"LITLOOP_CHECKPOINT__URL is set but the Postgres checkpointer is not installed ({exc}); "
            "install it with: pip install langgraph-checkpoint-postgres 'psycopg[binary]' psycopg-pool"
        ) from exc
    shown = redact_url(url)
    pool = ConnectionPool(
        url,
        min_size=1,
        max_size=max(1, pool_size),
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
        open=False,
        timeout=timeout_s,
        name="litloop-checkpoints",
    )
    try:
        pool.open(wait=True, timeout=timeout_s)
        saver = PostgresSaver(pool)  # type: ignore[arg-type]
        saver.setup()
    except PoolTimeout as exc:
        pool.close()
        raise CheckpointProblem(
            f"LITLOOP_CHECKPOINT__URL={shown}: no connection to Postgres within {timeout_s:g} s; "
            "check that the server runs and the URL (host, port, user, password, database) is right"
        ) from exc
    except Exception as exc:
        pool.close()
        raise CheckpointProblem(f"LITLOOP_CHECKPOINT__URL={shown}: {type(exc).__name__}: {exc}") from exc
    return Checkpointer(saver, "postgres", shown, pool)


@asynccontextmanager
async def served_checkpointer() -> AsyncIterator[Any]:
    """The checkpointer of `litloop serve` (the `checkpointer` of the langgraph.json it writes):
    LangGraph's async Postgres checkpointer on `LITLOOP_CHECKPOINT__URL` when it is set, else its
    async SQLite checkpointer in `data_dir/serve/checkpoints.sqlite`. Either writes each
    checkpoint as it is made, so a crash of the server loses none (the in-memory runtime's own
    checkpointer is written to its files every 10 s at best). Entered once per event loop of the
    server and closed with it.

    It is entered after the runtime has loaded its records and before its workers start: there
    the server settles the runs it reloaded against the records beside the checkpoints and starts
    keeping them in step (agent/serve/durable.py), until the server stops."""
    from agent.serve import durable
    from agent.settings import default_settings

    settings = default_settings()
    url = settings.checkpoint.url
    if not url:
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        path = settings.data_dir / "serve" / "checkpoints.sqlite"
        path.parent.mkdir(parents=True, exist_ok=True)
        async with AsyncSqliteSaver.from_conn_string(str(path)) as sqlite_saver:
            await sqlite_saver.setup()
            async with durable.start(sqlite_saver):
                yield sqlite_saver
        return
    if not is_postgres(url):
        raise CheckpointProblem(
            f"LITLOOP_CHECKPOINT__URL={redact_url(url)}: not a Postgres URL; give postgresql://USER:PASSWORD@HOST:PORT/DB, "
            "or unset it for the embedded SQLite file"
        )
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg.rows import dict_row
    from psycopg_pool import AsyncConnectionPool, PoolTimeout

    shown, timeout_s = redact_url(url), settings.checkpoint.connect_timeout_s
    pool: AsyncConnectionPool = AsyncConnectionPool(
        url,
        min_size=1,
        max_size=max(1, settings.checkpoint.pool_size),
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
        open=False,
        timeout=timeout_s,
        name="litloop-serve-checkpoints",
    )
    try:
        await pool.open(wait=True, timeout=timeout_s)
        saver = AsyncPostgresSaver(pool)  # type: ignore[arg-type]  # a dict_row pool, as the saver expects
        await saver.setup()
    except PoolTimeout as exc:
        await pool.close()
        raise CheckpointProblem(
            f"LITLOOP_CHECKPOINT__URL={shown}: no connection to Postgres within {timeout_s:g} s; "
            "check that the server runs and the URL (host, port, user, password, database) is right"
        ) from exc
    try:
        async with durable.start(saver):
            yield saver
    finally:
        await pool.close()
