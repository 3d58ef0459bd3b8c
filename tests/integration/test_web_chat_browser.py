"""The web chat in a real browser: `litloop ui` on loopback, answering through an
OpenAI-compatible stub server of the tests' own, driven by headless Chromium (Debian's
`chromium` through Playwright's `executable_path`; Playwright's own browsers are never
downloaded). Saves a screenshot in the test's temporary folder; with LITLOOP_UPDATE_SCREENSHOT=1
it also refreshes the README's docs/img/web-chat.png (so a plain test run leaves the tree clean)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import build_papers_index
from tests.openai_stub import OpenAIStub
from tests.served import free_port, stop

pytestmark = [pytest.mark.integration, pytest.mark.browser]

REPO = Path(__file__).resolve().parents[2]
SCREENSHOT = REPO / "docs" / "img" / "web-chat.png"
CHROMIUM = os.environ.get("LITLOOP_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
QUESTION = "Which sequence labelling models use conditional random fields, and what F1 do they reach?"


def wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 120) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise AssertionError(f"litloop ui exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise AssertionError(f"litloop ui did not answer on {url} within {timeout:.0f} s")


def printed_url(log: Path, port: int) -> str:
    """The URL `litloop ui` printed, with the session token the chat asks for."""
    found = re.search(rf"http://127\.0\.0\.1:{port}/\?token=[\w-]+", log.read_text())
    assert found, f"litloop ui printed no URL with a token: {log.read_text()[-2000:]}"
    return found.group(0)


@pytest.fixture(scope="module")
def browser_prereqs():
    if not Path(CHROMIUM).exists():
        pytest.skip(
            f"chromium is absent ({CHROMIUM}); install Debian's `chromium` (apt-get install chromium) "
            "or point LITLOOP_CHROMIUM at a Chromium binary"
        )
    pytest.importorskip("playwright.sync_api", reason="playwright (python) is not installed: pip install playwright")


@pytest.fixture(scope="module")
def small_index(tmp_path_factory):
    """Its own index, not the graph tier's `graph_index`: that one may be held open by this
    process while the UI's server process opens this one."""
    return build_papers_index(tmp_path_factory.mktemp("browser-corpus"))


@pytest.fixture
def running_ui(browser_prereqs, small_index, tmp_path):
    with OpenAIStub(delays={"synthesize": 2.0}) as stub:
        port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LITLOOP_", "LANGSMITH_", "LANGCHAIN_"))}
        env.update(
            {
                "LITLOOP_DATA_DIR": str(tmp_path / "data"),
                "LITLOOP_LLM__BASE_URL": stub.base_url,
                "LITLOOP_LLM__MODEL": "stub-model",
                "LITLOOP_LLM__MAX_RETRIES": "0",
                "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
                "HOME": str(tmp_path / "home"),
            }
        )
        log = (tmp_path / "ui.log").open("w")
        script = Path(sys.executable).with_name("litloop")
        litloop = [str(script)] if script.exists() else [sys.executable, "-m", "agent.cli"]
        proc = subprocess.Popen(
            [*litloop, "ui", "--index", str(small_index), "--port", str(port)],
            cwd=REPO,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            wait_healthy(url, proc)
            yield printed_url(tmp_path / "ui.log", port), stub, tmp_path
        finally:
            stop(proc, timeout=20)
            log.close()


def test_ask_in_the_browser_shows_cited_answer(running_ui):
    from playwright.sync_api import expect, sync_playwright

    url, stub, tmp_path = running_ui
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1500})
            page.goto(url.split("?")[0], wait_until="domcontentloaded")  # without the token: refused
            expect(page.get_by_text("needs the URL that", exact=False).first).to_be_visible(timeout=60_000)
            assert page.get_by_placeholder("Ask about the literature…").count() == 0
            page.goto(url, wait_until="domcontentloaded")
            box = page.get_by_placeholder("Ask about the literature…")
            expect(box).to_be_visible(timeout=60_000)
            expect(page.get_by_text("Searching ", exact=False).first).to_be_visible(timeout=30_000)
            box.fill(QUESTION)
            box.press("Enter")
            # live: the first round's step shows while the agent still works
            expect(page.get_by_text("Round 1/3", exact=False).first).to_be_visible(timeout=120_000)
            assert page.get_by_text("Conditional random fields reach 95.7 F1", exact=False).count() == 0
            # the first question loads the embedder in the server: minutes on a small CPU at worst
            first = page.get_by_text("[1] Conditional random fields for sequence labeling", exact=False).first
            expect(first).to_be_visible(timeout=300_000)
            expect(
                page.get_by_text("Conditional random fields reach 95.7 F1 on chunking [1]", exact=False).first
            ).to_be_visible()
            expect(page.get_by_text("[2] Bidirectional LSTM-CRF models", exact=False).first).to_be_visible()
            first.click()  # open the evidence
            expect(page.get_by_text("We present conditional random fields", exact=False).first).to_be_visible()
            expect(page.get_by_text("Where:", exact=False).first).to_be_visible()
            expect(page.get_by_text("LLM calls", exact=False).first).to_be_visible()
            roles = [r["role"] for r in stub.requests]
            assert {"decompose", "verify", "read", "synthesize"} <= set(roles)
            page.get_by_text("Round 1/3", exact=False).first.click()  # open the round's steps too
            expect(page.get_by_text("Subqueries: conditional random fields", exact=False).first).to_be_visible()
            page.mouse.move(0, 0)
            page.wait_for_timeout(500)
            shot = tmp_path / "web-chat.png"
            page.screenshot(path=str(shot))
            if os.environ.get("LITLOOP_UPDATE_SCREENSHOT") == "1":
                SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
                SCREENSHOT.write_bytes(shot.read_bytes())
        finally:
            browser.close()
    assert shot.stat().st_size > 10_000
    traces = list((tmp_path / "data" / "traces").glob("*.jsonl"))
    assert len(traces) == 1  # the answer has its trace
