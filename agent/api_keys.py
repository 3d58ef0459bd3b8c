"""The per-user API keys of litloop's servers (`litloop serve`, `litloop mcp --transport http`):
one JSON file of API key to user name, `LITLOOP_SERVE__KEYS_FILE`, read on every request so keys
are added or revoked without a restart. A request names its key as `Authorization: Bearer KEY`
or `x-api-key: KEY`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

KEYS_ENV = "LITLOOP_SERVE__KEYS_FILE"


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


def _text(value: Any) -> str | None:
    return value.decode("latin-1") if isinstance(value, bytes) else value


def key_of(authorization: str | None, headers: Mapping[Any, Any]) -> str | None:
    """The key a request names: its bearer token, else its x-api-key header."""
    if authorization and authorization.lower().startswith("bearer "):
        return authorization[7:].strip()
    return _text(headers.get(b"x-api-key") or headers.get("x-api-key"))


def user_of(path: Path, authorization: str | None, headers: Mapping[Any, Any]) -> str | None:
    """The user whose key the request names, or None (no key, or one the file does not hold)."""
    return load_keys(path).get(key_of(authorization, headers) or "")
