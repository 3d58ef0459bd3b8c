"""What `litloop serve` does so that nothing it acknowledged is lost and two servers on one
database serve each other's threads: the LangGraph API server's in-memory runtime, made a cache of
the records beside the checkpoints (agent/serve/records.py).

- **Written before the answer.** A thread and a run are recorded by the custom-auth hooks
  (agent/serve/auth.py) before the server acknowledges them; each status the runtime gives a run is
  recorded as it is given (`install_hooks` wraps the runtime's two status writers), and a loop
  (`keep_in_step`, every `HEARTBEAT_S`) records what no hook saw (a waiting run cancelled).
- **Rebuilt on a miss.** A thread the runtime does not have (lost to a `kill -9` before the
  runtime wrote its files, or created on another server) is put back from its record, with its
  runs and its last checkpoint's values, when a request names it (`restore`), and a user's threads
  when the user lists them (`restore_all`).
- **No run stuck.** Each server says every `HEARTBEAT_S` that it is alive. At start, the runs the
  runtime reloads are set to what their records say (finished runs stay finished; another live
  server's run is not run twice). A run whose server has been silent for `DEAD_AFTER_S` is taken
  over by one live server (an atomic update of its record) and run again from its request; after
  `MAX_STARTS` starts it is marked failed, with the reason in its metadata (`error`).
- **One run at a time per thread.** Within a server the runtime serialises a thread's runs (the
  client's `multitask_strategy`); another server's active run on the thread is kept in this
  runtime as a `running` stand-in (`foreign`), so a second run is rejected or queued behind it
  exactly as one of this server's own.

The runtime's internals used here (its store of records, `Runs.put`, and the two status writers)
are langgraph-runtime-inmem's; the serve extra pins the versions this was tested with.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from datetime import UTC, datetime
from typing import Any

from agent.serve.records import ACTIVE, DEAD_AFTER_S, HEARTBEAT_S, MAX_STARTS, RunRecord, ThreadRecord, records

log = logging.getLogger(__name__)

SERVER = uuid.uuid4().hex  # this server process's id in the records
FOREIGN = "running"  # the status of a stand-in for another server's active run
FINISHED = ("success", "error", "timeout", "interrupted")
GRACE_S = 10.0  # a recorded run the runtime has not stored within this was refused by it

foreign: set[str] = set()  # run ids this runtime holds as stand-ins for another server's runs
_saver: Any = None  # the served checkpointer, for the values of a thread put back
_loop: asyncio.Task | None = None


async def _store() -> dict[str, Any]:
    from langgraph_runtime.database import connect

    async with connect() as conn:
        return conn.store


def _uuid(value: Any) -> uuid.UUID:
    return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))


def _when(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds or time.time(), UTC)


def _has_thread(store: dict[str, Any], thread_id: str) -> bool:
    tid = _uuid(thread_id)
    return any(t["thread_id"] == tid for t in store["threads"])


# -- put back what the runtime lacks -----------------------------------------------------------


async def restore(thread_id: str) -> None:
    """Put the thread back into this runtime from its record, with its runs, if it is missing;
    if it is there, add the runs other servers recorded on it since."""
    store = await _store()
    if not _has_thread(store, thread_id):
        record = await records().thread(thread_id)
        if record is not None:
            await _put_thread(record)
        return
    for run in await records().runs_of(thread_id):
        if run.server != SERVER:
            _put_run(store, run)


async def restore_all(owner: str | None) -> None:
    """Put back every recorded thread of `owner` (every thread when None) this runtime lacks."""
    store = await _store()
    have = {str(t["thread_id"]) for t in store["threads"]}
    for record in await records().threads(owner):
        if record.thread_id not in have:
            await _put_thread(record)


async def _values(thread_id: str) -> dict[str, Any] | None:
    if _saver is None:
        return None
    found = await _saver.aget_tuple({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}})
    if found is None:
        return None
    channels = found.checkpoint.get("channel_values") or {}
    return {k: v for k, v in channels.items() if not k.startswith(("__", "branch:"))}


async def _put_thread(record: ThreadRecord) -> None:
    values = await _values(record.thread_id)
    runs = await records().runs_of(record.thread_id)
    store = await _store()
    if _has_thread(store, record.thread_id):  # put back by another request meanwhile
        return
    now = datetime.now(UTC)
    active = any(r.status in ACTIVE for r in runs)
    metadata = dict(record.metadata)
    if runs:  # the graph its runs ran, which the runtime reads the thread's state and history with
        assistant_id = str(runs[-1].request.get("assistant_id") or "")
        for assistant in store.get("assistants", []):
            if str(assistant["assistant_id"]) == assistant_id:
                metadata.setdefault("assistant_id", assistant_id)
                metadata.setdefault("graph_id", assistant["graph_id"])
    store["threads"].append(
        {
            "thread_id": _uuid(record.thread_id),
            "created_at": _when(record.created_at),
            "updated_at": now,
            "state_updated_at": now,
            "metadata": metadata,
            "status": "busy" if active else "idle",
            "config": {},
            "values": values,
        }
    )
    for run in runs:
        _put_run(store, run)


def _put_run(store: dict[str, Any], run: RunRecord) -> None:
    """A recorded run into the runtime: as it ended, or as a stand-in when another server runs it
    (or will take it over: never as `pending`, which this runtime's workers would start)."""
    rid = _uuid(run.run_id)
    if any(r["run_id"] == rid for r in store["runs"]):
        return
    request = run.request
    status = run.status if run.status in FINISHED else FOREIGN
    if status == FOREIGN:
        foreign.add(run.run_id)
    metadata = dict(request.get("metadata") or {})
    if run.error:
        metadata["error"] = run.error
    store["runs"].append(
        {
            "run_id": rid,
            "thread_id": _uuid(run.thread_id),
            "assistant_id": _uuid(request.get("assistant_id") or uuid.UUID(int=0)),
            "metadata": metadata,
            "status": status,
            "kwargs": request.get("kwargs") or {},
            "multitask_strategy": request.get("multitask_strategy") or "reject",
            "created_at": _when(run.created_at),
            "updated_at": _when(run.updated_at),
        }
    )


# -- a run's status, as the runtime gives it ----------------------------------------------------


def _reason(exception: BaseException | None) -> str | None:
    return None if exception is None else f"{type(exception).__name__}: {exception}"[:2000]


async def record_status(run_id: Any, status: str, exception: BaseException | None = None) -> None:
    rid = str(run_id)
    if rid in foreign:
        return
    try:
        if status == "rollback":
            await records().drop_run(rid)
        else:
            await records().set_status(rid, status, _reason(exception) if status == "error" else None)
    except Exception:  # the records' store failed: the loop retries from the runtime's view
        log.warning("litloop serve: could not record run %s as %s", rid, status, exc_info=True)


def install_hooks() -> None:
    """Record each run status the runtime writes, right after it writes it."""
    from langgraph_runtime_inmem.ops import Runs, Threads

    if getattr(Threads.set_joint_status, "_litloop", False):
        return
    joint, single = Threads.set_joint_status, Runs.set_status

    async def set_joint_status(conn, thread_id, run_id, run_status, graph_id, checkpoint=None, exception=None):
        await joint(conn, thread_id, run_id, run_status, graph_id, checkpoint=checkpoint, exception=exception)
        await record_status(run_id, run_status, exception)

    async def set_status(conn, run_id, status):
        result = await single(conn, run_id, status)
        await record_status(run_id, status)
        return result

    set_joint_status._litloop = True  # type: ignore[attr-defined]
    Threads.set_joint_status = staticmethod(set_joint_status)
    Runs.set_status = staticmethod(set_status)


# -- at start, and every HEARTBEAT_S ------------------------------------------------------------


async def settle_at_start(saver: Any) -> None:
    """Before the runtime's workers start: the runs it reloaded from its files take their
    recorded status (or are taken over from this server's previous life), and the threads it
    has that were never recorded are recorded."""
    global _saver
    _saver = saver
    install_hooks()
    keep = records()
    await keep.heartbeat(SERVER)
    store = await _store()
    live = await keep.live_servers()
    for run in list(store["runs"]):
        if run["status"] not in ACTIVE:
            continue
        record = await keep.run(str(run["run_id"]))
        if record is None:
            continue
        if record.status in FINISHED:
            run["status"] = record.status  # it ended after the runtime last wrote its files
        elif record.server != SERVER and record.server in live:
            run["status"] = FOREIGN
            foreign.add(record.run_id)
        elif await keep.take_over(record, SERVER):
            await _started_again(store, record, run)
        else:
            run["status"] = FOREIGN
            foreign.add(record.run_id)
    for thread in store["threads"]:
        meta = thread.get("metadata") or {}
        await keep.claim(str(thread["thread_id"]), str(meta.get("owner") or "anyone"), meta)


async def _started_again(store: dict[str, Any], record: RunRecord, run: dict[str, Any] | None) -> None:
    """A run taken over from a dead server: started again here, or failed after MAX_STARTS."""
    starts = record.starts + 1
    if starts > MAX_STARTS:
        reason = f"its server stopped while running it, {record.starts} times; ask again"
        await records().set_status(record.run_id, "error", reason)
        if run is not None:
            run["status"] = "error"
            run.setdefault("metadata", {})["error"] = reason
        foreign.discard(record.run_id)
        return
    foreign.discard(record.run_id)
    if run is not None:  # already in this runtime: its workers start it
        run["status"] = "pending"
        return
    await _put_pending(store, record)


async def _put_pending(store: dict[str, Any], record: RunRecord) -> None:
    from langgraph_runtime.database import connect
    from langgraph_runtime_inmem.ops import Runs

    request = record.request
    async with connect() as conn:
        created = await Runs.put(
            conn,
            _uuid(request["assistant_id"]),
            request.get("kwargs") or {},
            thread_id=_uuid(record.thread_id),
            run_id=_uuid(record.run_id),
            status="pending",
            metadata=request.get("metadata") or {},
            prevent_insert_if_inflight=False,
            multitask_strategy=request.get("multitask_strategy") or "enqueue",
            if_not_exists="reject",
        )
        async for _ in created:
            pass
    rid = _uuid(record.run_id)
    for run in store["runs"]:
        if run["run_id"] == rid:  # its place in the thread's queue: when it was first created
            run["created_at"] = _when(record.created_at)


async def keep_in_step() -> None:
    """One pass: say this server is alive, record what the hooks missed, forget the runs the
    runtime refused, follow other servers' runs, and take over the runs of dead servers."""
    keep = records()
    await keep.heartbeat(SERVER)
    store = await _store()
    mine = {str(r["run_id"]): r for r in store["runs"] if str(r["run_id"]) not in foreign}
    now = time.time()
    for record in await keep.runs_on(SERVER):
        run = mine.get(record.run_id)
        if run is None:
            if now - record.created_at > GRACE_S:
                await keep.drop_run(record.run_id)  # recorded at admission, then refused (409)
        elif run["status"] != record.status and run["status"] in FINISHED:
            await keep.set_status(record.run_id, run["status"])
    for rid in list(foreign):
        followed = await keep.run(rid)
        run = next((r for r in store["runs"] if str(r["run_id"]) == rid), None)
        if followed is None or run is None:
            foreign.discard(rid)
            continue
        if followed.status in FINISHED:
            run["status"] = followed.status
            if followed.error:
                run.setdefault("metadata", {})["error"] = followed.error
            foreign.discard(rid)
            await _after_foreign_run(store, run["thread_id"])
    for record in await keep.orphans():
        if not await keep.take_over(record, SERVER):
            continue
        if not _has_thread(store, record.thread_id):
            thread = await keep.thread(record.thread_id)
            if thread is None:
                continue
            await _put_thread(thread)
        run = next((r for r in store["runs"] if str(r["run_id"]) == record.run_id), None)
        if run is not None and record.run_id in foreign:
            store["runs"].remove(run)  # the stand-in goes: the runtime's own run replaces it
            run = None
        await _started_again(store, record, run)


async def _after_foreign_run(store: dict[str, Any], thread_id: Any) -> None:
    """Another server's run on a thread ended: the thread's values from its last checkpoint, and
    idle unless a run is still waiting or running on it."""
    thread = next((t for t in store["threads"] if t["thread_id"] == thread_id), None)
    if thread is None:
        return
    thread["values"] = await _values(str(thread_id))
    if not any(r["thread_id"] == thread_id and r["status"] in ACTIVE for r in store["runs"]):
        thread["status"] = "idle"


async def _loop_forever() -> None:
    while True:
        await asyncio.sleep(HEARTBEAT_S)
        try:
            await keep_in_step()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.warning("litloop serve: keeping the records in step failed; retrying", exc_info=True)


def start(saver: Any) -> contextlib.AbstractAsyncContextManager[None]:
    """Settle the records at start, then keep them in step until the server stops."""

    @contextlib.asynccontextmanager
    async def running() -> Any:
        global _loop
        await settle_at_start(saver)
        if _loop is None or _loop.done():
            _loop = asyncio.create_task(_loop_forever())
        try:
            yield
        finally:
            if _loop is not None:
                _loop.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await _loop
                _loop = None
            await records().close()

    return running()


__all__ = ["DEAD_AFTER_S", "SERVER", "foreign", "keep_in_step", "record_status", "restore", "restore_all", "start"]
