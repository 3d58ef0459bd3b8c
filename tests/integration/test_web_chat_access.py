"""`litloop ui` for real, on loopback, with no browser: the Streamlit server it starts refuses a
WebSocket handshake whose Host is not a name of the bound address (DNS rebinding: the browser
sends the attacker's name); a session opened over a real WebSocket gets the chat only with the
token of the URL `litloop ui` printed, and a page of another local site gets a refusal."""

from __future__ import annotations

import base64
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.served import free_port

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
TOKEN = "integration-ui-token-0123456789"
CHAT_BOX = b"Ask about the literature"


@pytest.fixture(scope="module")
def ui(tmp_path_factory):
    """`litloop ui` with LITLOOP_UI_TOKEN set: (port, what it printed)."""
    tmp = tmp_path_factory.mktemp("ui-access")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("LITLOOP_")}
    env.update(LITLOOP_DATA_DIR=str(tmp / "data"), HOME=str(tmp / "home"), LITLOOP_UI_TOKEN=TOKEN)
    log = (tmp / "ui.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent.cli.main", "ui", "--port", str(port)],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 90
        while True:
            assert proc.poll() is None, (tmp / "ui.log").read_text()
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2)
                break
            except OSError:
                assert time.monotonic() < deadline, "litloop ui did not start"
                time.sleep(0.5)
        yield port, (tmp / "ui.log").read_text()
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def _handshake(port: int, host: str, origin: str) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        key = base64.b64encode(os.urandom(16)).decode()
        s.sendall(
            (
                f"GET /_stcore/stream HTTP/1.1\r\nHost: {host}\r\nOrigin: {origin}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                "Sec-WebSocket-Protocol: streamlit\r\n\r\n"
            ).encode()
        )
        return s.recv(100).split(b"\r\n")[0]


def _session(port: int, query: str, origin: str | None = None) -> bytes:
    """What the app sends a session that ran once with `query` as its URL's query string (the
    protobuf frames, raw: the tests look for the texts in them)."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from websockets.sync.client import connect

    got = b""
    with connect(
        f"ws://127.0.0.1:{port}/_stcore/stream",
        subprotocols=["streamlit"],
        origin=origin or f"http://127.0.0.1:{port}",
        open_timeout=10,
    ) as ws:
        msg = BackMsg()
        msg.rerun_script.query_string = query
        msg.rerun_script.page_script_hash = ""
        ws.send(msg.SerializeToString())
        while True:
            try:
                got += ws.recv(timeout=5)  # the run's frames, then quiet
            except TimeoutError:
                return got


@pytest.mark.timeout(180)
def test_the_printed_url_carries_the_token(ui):
    port, printed = ui
    assert f"http://127.0.0.1:{port}/?token={TOKEN}" in printed
    assert not re.search(rf"http://[\w.]+:{port}(?!/\?token=)", printed)  # Streamlit's own banner is off


@pytest.mark.timeout(180)
def test_the_server_refuses_a_rebound_host_at_the_handshake(ui):
    from agent.cli.chat import streamlit_options

    if "server.allowedHosts" not in streamlit_options():
        pytest.skip("this Streamlit has no server.allowedHosts (1.61+); the app's own Host check remains")
    port, _ = ui
    assert _handshake(port, f"127.0.0.1:{port}", f"http://127.0.0.1:{port}") == b"HTTP/1.1 101 Switching Protocols"
    assert _handshake(port, f"evil.example:{port}", f"http://evil.example:{port}").startswith(b"HTTP/1.1 403")


@pytest.mark.timeout(180)
def test_a_real_session_gets_the_chat_only_with_the_token(ui):
    pytest.importorskip("websockets")
    port, _ = ui
    for query in ("", "token=not-the-token-0123456789"):
        got = _session(port, query)
        assert b"needs the URL that `litloop ui` printed" in got and CHAT_BOX not in got
    assert CHAT_BOX in _session(port, f"token={TOKEN}")
    # a page on another local port passes Streamlit's origin check (it allows localhost), not the app's
    got = _session(port, f"token={TOKEN}", origin="http://localhost:3000")
    assert b"does not answer pages from another site" in got and CHAT_BOX not in got
