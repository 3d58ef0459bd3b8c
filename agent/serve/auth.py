"""Per-user API keys and thread ownership for `litloop serve`, through the LangGraph API server's
own custom-auth hooks (`auth` in the langgraph.json that `litloop serve` writes).

The keys file (`LITLOOP_SERVE__KEYS_FILE`, agent/serve/keys.py) is a JSON object of API key to user name. A request
without a known key (`Authorization: Bearer KEY`, or `x-api-key: KEY`) is refused with 401. Every
thread, run and assistant a user creates is stamped with `owner` = that user, and every read,
search, update and run is filtered on it, so a user can neither see nor continue another's thread.

A thread's owner is also claimed beside its checkpoints (agent/serve/owners.py) when the thread
is created, before the server acknowledges it, and every create, read, update, run and copy of a
thread id is checked against that record: the runtime's own records (and the metadata stamp)
can be lost to a `kill -9` and are not shared by a second server on the same database, the
record beside the checkpoints is both.
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
    """A new run takes a place in the bounded queue (agent/serve/queue.py) or is refused with 429."""
    from agent.serve.queue import admit, max_queue, server_runs

    await check_thread_owner(ctx, value)
    runs = await server_runs()
    wait = admit(str(value.get("run_id")), runs)
    if wait is not None:
        raise Auth.exceptions.HTTPException(
            status_code=429,
            detail=f"the model queue is full ({max_queue()} runs); retry in {wait} s",
            headers={"Retry-After": str(wait)},
        )
    return await owned_by_the_user(ctx, value)


@auth.on.threads
async def thread_of_the_user(ctx: Auth.types.AuthContext, value: Any) -> dict[str, str] | None:
    """A thread's owner checked against the record beside the checkpoints, then the metadata
    stamp and filter every resource gets."""
    await check_thread_owner(ctx, value)
    return await owned_by_the_user(ctx, value)


async def check_thread_owner(ctx: Auth.types.AuthContext, value: Any) -> None:
    """Creating a thread claims its id for the user (another's id: 409, as an existing thread);
    any other use of a thread id another user claimed is 404, as a thread that is not there."""
    if not os.environ.get(KEYS_ENV) or not isinstance(value, dict) or not value.get("thread_id"):
        return
    from agent.serve import owners

    thread_id, user = str(value["thread_id"]), ctx.user.identity
    if ctx.resource == "threads" and ctx.action == "create":
        if await owners.claim(thread_id, user) != user:
            raise Auth.exceptions.HTTPException(status_code=409, detail=f"Thread with ID {thread_id} already exists")
        return
    owner = await owners.owner_of(thread_id)
    if owner is not None and owner != user:
        raise Auth.exceptions.HTTPException(status_code=404, detail=f"Thread with ID {thread_id} not found")


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
