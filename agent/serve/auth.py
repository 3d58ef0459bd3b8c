"""Per-user API keys and thread ownership for `litloop serve`, through the LangGraph API server's
own custom-auth hooks (`auth` in the langgraph.json that `litloop serve` writes).

The keys file (`LITLOOP_SERVE__KEYS_FILE`, agent/serve/keys.py) is a JSON object of API key to user name. A request
without a known key (`Authorization: Bearer KEY`, or `x-api-key: KEY`) is refused with 401. Every
thread, run and assistant a user creates is stamped with `owner` = that user, and every read,
search, update and run is filtered on it, so a user can neither see nor continue another's thread.

Every thread and run is also recorded beside the checkpoints (agent/serve/records.py) before the
server acknowledges it, the thread's owner with it: the first user to create a thread id claims it
there, atomically, and every create, read, update, run and copy of a thread id is checked against
that record. The runtime's own records (and the metadata stamp) can be lost to a `kill -9` and are
not shared by a second server on the same database; the records beside the checkpoints are both,
and a thread the runtime lacks is put back from them (agent/serve/durable.py).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from langgraph_sdk import Auth

from agent.serve.keys import KEYS_ENV, user_of

auth = Auth()


@auth.authenticate
async def authenticate(authorization: str | None, headers: dict) -> Auth.types.MinimalUserDict:
    if not os.environ.get(KEYS_ENV):
        return {"identity": "anyone"}  # no keys file: one shared space (only the queue bound applies)
    user = user_of(Path(os.environ[KEYS_ENV]), authorization, headers)
    if user is None:
        raise Auth.exceptions.HTTPException(
            status_code=401, detail="a valid API key is required (Authorization: Bearer KEY)"
        )
    return {"identity": user}


@auth.on.threads.create_run
async def admitted_to_the_queue(*, ctx: Auth.types.AuthContext, value: Any) -> dict[str, str] | None:
    """A new run: its thread checked and put back if this server lacks it, no other server's
    run active on the thread (unless the client queues behind it), a place in the bounded queue
    (agent/serve/queue.py) or 429, and the run recorded before the server acknowledges it."""
    from agent.serve import durable
    from agent.serve.queue import admit, max_queue, server_runs
    from agent.serve.records import records

    await check_thread(ctx, value)
    runs = await server_runs()
    wait = admit(str(value.get("run_id")), runs)
    if wait is not None:
        raise Auth.exceptions.HTTPException(
            status_code=429,
            detail=f"the model queue is full ({max_queue()} runs); retry in {wait} s",
            headers={"Retry-After": str(wait)},
        )
    filters = await owned_by_the_user(ctx, value)
    if isinstance(value, dict) and value.get("thread_id") and value.get("run_id"):
        await records().add_run(str(value["run_id"]), str(value["thread_id"]), durable.SERVER, _request(value))
    return filters


@auth.on.threads.delete
async def thread_deleted(ctx: Auth.types.AuthContext, value: Any) -> dict[str, str] | None:
    """A deleted thread's records go with it (after the owner check)."""
    from agent.serve.records import records

    await check_thread(ctx, value)
    if isinstance(value, dict) and value.get("thread_id"):
        await records().forget(str(value["thread_id"]))
    return await owned_by_the_user(ctx, value)


@auth.on.threads.search
async def threads_listed(ctx: Auth.types.AuthContext, value: Any) -> dict[str, str] | None:
    """A user's list of threads includes those created on another server, or lost by this one
    (and a thread's list of runs, those of another server)."""
    from agent.serve import durable

    if isinstance(value, dict) and value.get("thread_id"):
        await check_thread(ctx, value)
        return await owned_by_the_user(ctx, value)
    await durable.restore_all(ctx.user.identity if os.environ.get(KEYS_ENV) else None)
    return await owned_by_the_user(ctx, value)


@auth.on.threads
async def thread_of_the_user(ctx: Auth.types.AuthContext, value: Any) -> dict[str, str] | None:
    """A thread's owner checked against its record, the thread put back if this server lacks
    it, then the metadata stamp and filter every resource gets."""
    await check_thread(ctx, value)
    filters = await owned_by_the_user(ctx, value)
    if ctx.action == "update" and isinstance(value, dict) and value.get("thread_id") and value.get("metadata"):
        from agent.serve.records import records

        keep = records()
        record = await keep.thread(str(value["thread_id"]))
        if record is not None:
            await keep.set_metadata(record.thread_id, {**record.metadata, **dict(value["metadata"])})
    return filters


def _user(ctx: Auth.types.AuthContext) -> str:
    return ctx.user.identity if os.environ.get(KEYS_ENV) else "anyone"


async def check_thread(ctx: Auth.types.AuthContext, value: Any) -> None:
    """Creating a thread records it and claims its id for the user (another's id: 409, as an
    existing thread); any other use of a thread id another user claimed is 404, as a thread that
    is not there; a thread this server lacks is put back from its record."""
    if not isinstance(value, dict) or not value.get("thread_id"):
        return
    from agent.serve import durable
    from agent.serve.records import records

    thread_id, user, keys = str(value["thread_id"]), _user(ctx), bool(os.environ.get(KEYS_ENV))
    keep = records()
    if ctx.resource == "threads" and ctx.action == "create":
        metadata = dict(value.get("metadata") or {})
        if keys:
            metadata["owner"] = user
        existed = await keep.thread(thread_id) is not None
        if await keep.claim(thread_id, user, metadata) != user and keys:
            raise Auth.exceptions.HTTPException(status_code=409, detail=f"Thread with ID {thread_id} already exists")
        if existed:  # a thread of this user's that this server lacks: back first, so it exists
            await durable.restore(thread_id)
        return
    owner = await keep.owner_of(thread_id)
    if keys and owner not in (None, user, "anyone"):
        raise Auth.exceptions.HTTPException(status_code=404, detail=f"Thread with ID {thread_id} not found")
    if owner is None and ctx.action == "create_run" and value.get("if_not_exists") == "create":
        await keep.claim(thread_id, user, {"owner": user} if keys else {})
    await durable.restore(thread_id)


def _request(value: dict[str, Any]) -> dict[str, Any]:
    """What a server needs to start the run again: the run's create request as JSON (the user
    object left out; its id stays in the configurable)."""
    import json

    from langgraph_api.serde import json_dumpb

    kwargs = dict(value.get("kwargs") or {})
    config = dict(kwargs.get("config") or {})
    configurable = dict(config.get("configurable") or {})
    configurable.pop("langgraph_auth_user", None)
    config["configurable"] = configurable
    kwargs["config"] = config
    request = {
        "assistant_id": value.get("assistant_id"),
        "kwargs": kwargs,
        "metadata": value.get("metadata") or {},
        "multitask_strategy": value.get("multitask_strategy"),
    }
    loaded: dict[str, Any] = json.loads(json_dumpb(request))
    return loaded


@auth.on
async def owned_by_the_user(ctx: Auth.types.AuthContext, value: dict) -> dict[str, str] | None:
    """Stamp what a user creates with its owner; filter everything else on it."""
    if not os.environ.get(KEYS_ENV):
        return None
    owner = {"owner": ctx.user.identity}
    metadata = value.setdefault("metadata", {}) if isinstance(value, dict) else None
    if isinstance(metadata, dict):
        metadata.update(owner)
    return owner


@auth.on.store
async def scoped_to_the_user(ctx: Auth.types.AuthContext, value: dict) -> None:
    """The store API (`/store/items`, which the graph does not use) is scoped per user: every
    namespace a request names is read under the user's own name first, so one user can neither
    read, list nor overwrite another's items."""
    if not os.environ.get(KEYS_ENV):
        return None
    namespace = tuple(value.get("namespace") or ())
    if not namespace or namespace[0] != ctx.user.identity:
        namespace = (ctx.user.identity, *namespace)
    value["namespace"] = namespace
    return None
