"""The suite's socket audit (tests/conftest.py): a connection beyond loopback is refused and fails
the test that tried it, from the test itself, a background thread or a fixture; loopback works."""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap

import pytest

from tests import conftest

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("family", "address", "loopback"),
    [
        (socket.AF_INET, ("127.0.0.1", 80), True),
        (socket.AF_INET, ("127.8.9.10", 80), True),
        (socket.AF_INET6, ("::1", 80, 0, 0), True),
        (socket.AF_INET6, ("::ffff:127.0.0.1", 80, 0, 0), True),
        (socket.AF_INET, ("localhost", 80), True),
        (socket.AF_INET, ("192.0.2.1", 80), False),
        (socket.AF_INET6, ("2001:db8::1", 80, 0, 0), False),
        (socket.AF_INET, ("example.com", 443), False),  # a name is not looked up: it leaves the machine
        (socket.AF_UNIX, "/tmp/some.sock", True),
    ],
)
def test_is_loopback(family, address, loopback):
    assert conftest.is_loopback(family, address) is loopback


def test_remote_connect_is_refused_before_it_leaves_and_recorded():
    before = len(conftest._remote_attempts)
    with socket.socket() as s, pytest.raises(ConnectionRefusedError, match="loopback only"):
        s.connect(("192.0.2.1", 9))  # TEST-NET-1: never routed
    with socket.socket() as s:
        assert s.connect_ex(("192.0.2.1", 9)) != 0
    assert len(conftest._remote_attempts) == before + 2
    del conftest._remote_attempts[before:]  # expected here: not a failure of this test


def test_loopback_connects(connections):
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.create_connection(server.getsockname(), timeout=5):
            pass
    assert connections and connections.remote() == []


def test_a_remote_connection_fails_the_test_that_tried_it(tmp_path):
    """In a child pytest with this conftest as its plugin: tried in the test, in a thread and in
    a session fixture, each fails its test (a library that swallowed the refusal included)."""
    (tmp_path / "test_child.py").write_text(
        textwrap.dedent("""
        import socket, threading
        import pytest

        @pytest.fixture(scope="session")
        def online():
            try:
                socket.create_connection(("192.0.2.1", 9), timeout=1)
            except OSError:
                pass  # what an offline-tolerant library does

        def test_swallowed():
            try:
                socket.create_connection(("192.0.2.1", 80), timeout=1)
            except OSError:
                pass

        def test_thread():
            t = threading.Thread(target=lambda: socket.socket().connect_ex(("192.0.2.1", 443)))
            t.start(); t.join()

        def test_fixture(online):
            pass

        def test_loopback_only():
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
    """)
    )
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "tests.conftest",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(tmp_path),
            str(tmp_path / "test_child.py"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=conftest.REPO,
    )
    out = r.stdout
    assert r.returncode == 1, out
    assert "4 passed, 3 errors" in out, out  # each test ran; three fail at teardown, the loopback one not
    for test in ("test_swallowed", "test_thread", "test_fixture"):
        assert f"ERROR at teardown of {test}" in out
    assert "tried to connect beyond loopback (1x): AF_INET ('192.0.2.1', 443)" in out
