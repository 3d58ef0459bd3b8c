"""`litloop ui` for real, on loopback: the Streamlit server it starts refuses a WebSocket
handshake whose Host is not a name of the bound address (DNS rebinding: the browser sends the
attacker's name), and it prints the URL with the token."""

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

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _handshake(port: int, host: str, origin: str) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        key = base64.b64encode(os.urandom(16)).decode()
        s.sendall((f"GET /_stcore/stream HTTP/1.1\r\nHost: {host}\r\nOrigin: {origin}\r\nUpgrade: websocket\r\n"
                   f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                   "Sec-WebSocket-Protocol: streamlit\r\n\r\n").encode())
        return s.recv(100).split(b"\r\n")[0]


@pytest.mark.timeout(180)
def test_the_server_refuses_a_rebound_host_at_the_handshake(tmp_path):
    pytest.importorskip("streamlit")
    from agent.cli_chat import streamlit_options

    if "server.allowedHosts" not in streamlit_options():
        pytest.skip("this Streamlit has no server.allowedHosts (1.61+); the app's own Host check remains")
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("LITLOOP_")}
    env.update(LITLOOP_DATA_DIR=str(tmp_path / "data"), HOME=str(tmp_path / "home"))
    log = (tmp_path / "ui.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "agent.cli", "ui", "--port", str(port)], cwd=REPO, env=env,
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while True:
            assert proc.poll() is None, (tmp_path / "ui.log").read_text()
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2)
                break
            except OSError:
                assert time.monotonic() < deadline, "litloop ui did not start"
                time.sleep(0.5)
        assert _handshake(port, f"127.0.0.1:{port}", f"http://127.0.0.1:{port}") == b"HTTP/1.1 101 Switching Protocols"
        assert _handshake(port, f"evil.example:{port}", f"http://evil.example:{port}").startswith(b"HTTP/1.1 403")
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
    assert re.search(rf"http://127\.0\.0\.1:{port}/\?token=[\w-]{{40,}}", (tmp_path / "ui.log").read_text())
