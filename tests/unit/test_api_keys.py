"""The servers' API keys: read again when the file changes, the last good keys kept through a
bad edit, a malformed file refused with its line."""

from __future__ import annotations

import json
import logging
import os

import pytest

from agent.serve.keys import KeyRing, load_keys, user_of


def _write(path, data, bump: int) -> None:
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + bump))  # a later edit, whatever the clock's grain


def test_a_key_names_its_user_and_nothing_else_does(tmp_path):
    path = tmp_path / "keys.json"
    _write(path, {"k-alice": "alice", "k-bob": "bob"}, 0)
    ring = KeyRing(path)
    assert ring.user("k-alice") == "alice" and ring.user("k-bob") == "bob"
    assert ring.user("k-alic") is None and ring.user("") is None and ring.user(None) is None
    assert user_of(path, "Bearer k-bob", {}) == "bob" and user_of(path, None, {"x-api-key": "k-alice"}) == "alice"


def test_an_edit_is_read_and_a_bad_edit_keeps_the_last_good_keys(tmp_path, caplog):
    path = tmp_path / "keys.json"
    _write(path, {"k-alice": "alice"}, 0)
    ring = KeyRing(path)
    assert ring.user("k-alice") == "alice"
    _write(path, {"k-alice": "alice", "k-carol": "carol"}, 1_000_000)
    assert ring.user("k-carol") == "carol"  # added without a restart
    with caplog.at_level(logging.ERROR, logger="agent.serve.keys"):
        _write(path, '{"k-alice": "alice", "k-car', 2_000_000)  # half written
        assert ring.user("k-alice") == "alice" and ring.user("k-carol") == "carol"
        assert ring.user("k-alice") == "alice"
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and "keeping the 2 keys read before" in errors[0].getMessage()
    assert "keys.json:1" in errors[0].getMessage()
    _write(path, {"k-bob": "bob"}, 3_000_000)  # fixed: the new keys, the revoked ones gone
    assert ring.user("k-bob") == "bob" and ring.user("k-alice") is None


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{\n  "k-alice": "alice",\n  "k-bob": bob\n}', "keys.json:3"),
        ('["k-alice"]', "a JSON object of API key to user name"),
        ('{"k-alice": "alice", "": "bob"}', "entry 2 (user 'bob') needs a non-empty key"),
    ],
)
def test_a_malformed_keys_file_is_refused_with_where(tmp_path, text, says):
    path = tmp_path / "keys.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=says.replace("(", r"\(").replace(")", r"\)")):
        load_keys(path)
    with pytest.raises(ValueError):
        KeyRing(path).user("k-alice")  # never a good read: nothing to keep
