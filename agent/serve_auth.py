"""Per-user API keys and thread ownership for `litloop serve`, through the LangGraph API server's
own custom-auth hooks (`auth` in the langgraph.json that `litloop serve` writes).

The keys file (`LITLOOP_SERVE__KEYS_FILE`) is a JSON object of API key to user name. A request
without a known key (`Authorization: Bearer KEY`, or `x-api-key: KEY`) is refused with 401. Every
thread, run and assistant a user creates is stamped with `owner` = that user, and every read,
search, update and run is filtered on it, so a user can neither see nor continue another's thread.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from langgraph_sdk import Auth

auth = Auth()
_KEYS_ENV = "LITLOOP_SERVE__KEYS_FILE"


def load_keys(path: Path) -> dict[str, str]:
    """{api key: user} from the keys file; a clear error naming the file when it is malformed."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: the keys file must be a JSON object of API key to user name ({exc})") from exc
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and k and v for k, v in data.items()
    ):
        raise ValueError(
            f'{path}: the keys file must be a JSON object of API key to user name, e.g. {{"KEY": "alice"}}'
        )
    return data


@auth.authenticate
async def authenticate(authorization: str | None, headers: dict) -> Auth.types.MinimalUserDict:
    if not os.environ.get(_KEYS_ENV):
        return {"identity": "anyone"}  # no keys file: one shared space (only the queue bound applies)
    keys = load_keys(Path(os.environ[_KEYS_ENV]))
    key = None
    if authorization and authorization.lower().startswith("bearer "):
        key = authorization[7:].strip()
    if key is None:
        raw = headers.get(b"x-api-key") or headers.get("x-api-key")
        key = raw.decode() if isinstance(raw, bytes) else raw
    user = keys.get(key or "")
    if user is None:
        raise Auth.exceptions.HTTPException(
            status_code=401, detail="a valid API key is required (Authorization: Bearer KEY)"
        )
    return {"identity": user}


@auth.on.threads.create_run
async def admitted_to_the_queue(*, ctx: Auth.types.AuthContext, value: Any) -> dict[str, str] | None:
    """A new run takes a place in the bounded queue (agent/serve_queue.py) or is refused with 429."""
    from agent.serve_queue import admit, max_queue, server_runs

    runs = await server_runs()
    wait = admit(str(value.get("run_id")), runs)
    if wait is not None:
        raise Auth.exceptions.HTTPException(
            status_code=429,
            detail=f"the model queue is full ({max_queue()} runs); retry in {wait} s",
            headers={"Retry-After": str(wait)},
        )
    return await owned_by_the_user(ctx, value)


@auth.on
async def owned_by_the_user(ctx: Auth.types.AuthContext, value: dict) -> dict[str, str] | None:
    """Stamp what a user creates with its owner; filter everything else on it."""
    if not os.environ.get(_KEYS_ENV):
        return None
    owner = {"owner": ctx.user.identity}
    metadata = value.setdefault("metadata", {}) if isinstance(value, dict) else None
    if isinstance(metadata, dict):
        metadata.update(owner)
    return owner
