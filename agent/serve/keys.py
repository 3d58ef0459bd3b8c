"""The per-user API keys of litloop's servers (`litloop serve`, `litloop mcp --transport http`):
one JSON file of API key to user name, `LITLOOP_SERVE__KEYS_FILE`. A request names its key as
`Authorization: Bearer KEY` or `x-api-key: KEY`.

The file is read again only when it changes (its size, modification time or inode), so keys are
added or revoked without a restart and a request costs no file read. An edit that leaves the
file malformed (half written, a typo) keeps the last good keys in force and logs the problem
once, with its line; the servers refuse to start on a malformed file. Keys are compared in
constant time (`hmac.compare_digest`), each against every key of the file.
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

KEYS_ENV = "LITLOOP_SERVE__KEYS_FILE"


def load_keys(path: Path) -> dict[str, str]:
    """{api key: user} from the keys file; a clear error naming the file (and the line of a JSON
    error) when it is malformed."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot read the keys file ({exc})") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"{path}:{exc.lineno}: the keys file must be a JSON object of API key to user name "
            f'(line {exc.lineno}, column {exc.colno}: {exc.msg}), e.g. {{"KEY": "alice"}}'
        ) from exc
    if not isinstance(data, dict):
        raise ValueError(
            f'{path}: the keys file must be a JSON object of API key to user name, e.g. {{"KEY": "alice"}}'
        )
    for n, (k, v) in enumerate(data.items(), 1):
        if not (isinstance(k, str) and k.strip() and isinstance(v, str) and v.strip()):
            # the key itself is a secret: the entry is named by its place and its user
            raise ValueError(
                f"{path}: entry {n} (user {v!r}) needs a non-empty key and a non-empty user name, "
                'as in {"KEY": "alice"}'
            )
    return data


class KeyRing:
    """The keys of one file, read again when the file changes; the last good ones kept while an
    edit leaves it malformed."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._stamp: tuple[int, int, int] | None = None
        self._keys: list[tuple[bytes, str]] | None = None
        self._bad_stamp: tuple[int, int, int] | None = None

    def _current(self) -> list[tuple[bytes, str]]:
        try:
            st = os.stat(self.path)
            stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            stamp = None
        with self._lock:
            if self._keys is not None and stamp == self._stamp:
                return self._keys
            if self._keys is not None and stamp is not None and stamp == self._bad_stamp:
                return self._keys  # the same bad edit: logged once already
            try:
                keys = load_keys(self.path)
            except ValueError as exc:
                if self._keys is None:
                    raise
                self._bad_stamp = stamp
                log.error("%s; keeping the %d keys read before until the file is fixed", exc, len(self._keys))
                return self._keys
            self._keys = [(k.encode("utf-8"), user) for k, user in keys.items()]
            self._stamp, self._bad_stamp = stamp, None
            return self._keys

    def user(self, key: str | None) -> str | None:
        """The user of `key`, or None; compared with every key in constant time."""
        given = (key or "").encode("utf-8")
        found = None
        for k, user in self._current():
            if hmac.compare_digest(k, given) and given:
                found = user
        return found


_rings: dict[Path, KeyRing] = {}
_rings_lock = threading.Lock()


def key_ring(path: Path) -> KeyRing:
    """The process's one KeyRing for `path`."""
    path = Path(path)
    with _rings_lock:
        ring = _rings.get(path)
        if ring is None:
            ring = _rings[path] = KeyRing(path)
        return ring


def _text(value: Any) -> str | None:
    return value.decode("latin-1") if isinstance(value, bytes) else value


def key_of(authorization: str | None, headers: Mapping[Any, Any]) -> str | None:
    """The key a request names: its bearer token, else its x-api-key header."""
    if authorization and authorization.lower().startswith("bearer "):
        return authorization[7:].strip()
    return _text(headers.get(b"x-api-key") or headers.get("x-api-key"))


def user_of(path: Path, authorization: str | None, headers: Mapping[Any, Any]) -> str | None:
    """The user whose key the request names, or None (no key, or one the file does not hold)."""
    return key_ring(path).user(key_of(authorization, headers))
