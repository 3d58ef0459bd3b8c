"""`litloop serve` as a real subprocess for the tests: started on a free port with the settings
given, waited for until it answers /ok, stopped."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.openai_stub import OpenAIStub


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def server_env(data: Path, stub: OpenAIStub, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LITLOOP_", "LANGSMITH_", "LANGCHAIN_"))}
    env.update(
        LITLOOP_DATA_DIR=str(data),
        LITLOOP_LLM__BASE_URL=stub.base_url,
        LITLOOP_LLM__MODEL="stub-model",
        LITLOOP_LLM__MAX_RETRIES="0",
        **extra,
    )
    return env


def start_server(index: Path, env: dict[str, str], log: Path, *args: str) -> tuple[subprocess.Popen, str]:
    """`litloop serve` on a free port, once it answers /ok; fails the test with its log otherwise."""
    port = free_port()
    cmd = [sys.executable, "-m", "agent.cli.main", "serve", "--index", str(index), "--port", str(port), *args]
    with log.open("ab") as out:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"litloop serve exited: {log.read_text(errors='replace')[-2000:]}")
        try:
            with urllib.request.urlopen(url + "/ok", timeout=2) as r:
                if r.status == 200:
                    return proc, url
        except OSError:
            time.sleep(0.5)
    proc.kill()
    pytest.fail(f"litloop serve did not answer /ok within 120 s: {log.read_text(errors='replace')[-2000:]}")


def stop(proc: subprocess.Popen, timeout: float = 30) -> None:
    """Terminate `proc`, and kill it if it has not ended within `timeout` seconds."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
