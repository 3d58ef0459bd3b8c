"""The web chat in a real browser: `litloop ui` on loopback, answering through an
OpenAI-compatible stub server of the tests' own, driven by headless Chromium (Debian's
`chromium` through Playwright's `executable_path`; Playwright's own browsers are never
downloaded). Saves a screenshot in the test's temporary folder; with LITLOOP_UPDATE_SCREENSHOT=1
it also refreshes the README's docs/img/web-chat.png (so a plain test run leaves the tree clean)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tests.conftest import DEMO_PDFS, build_papers_index
from tests.openai_stub import OpenAIStub, ids_with, literature_reply
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
SECOND = "What does S2ORC-SciBERT reach on PaperField?"  # stands alone: asked alone
S2ORC = "2020.acl-main.447"  # a demo PDF: 55 references, Table 5 cites Beltagy et al. (2019) per row
# what a page must never show: an address with a port (the embedded model's, the stub's)
ADDRESS = re.compile(r"(?:127\.0\.0\.1|localhost|0\.0\.0\.0):\d+|https?://[^\s/]+:\d+")


def chat_reply(role: str, body: dict, prompt: str) -> dict:
    """The tests' literature answers, and for the second question, on S2ORC (the question comes first in
    every prompt) a claim that cites the PaperField row of its Table 5: a table chunk."""
    if SECOND.split("reach")[0] not in prompt:
        return literature_reply(role, body, prompt)
    if role == "decompose":
        return {"subqueries": ["S2ORC-SciBERT PaperField results"]}
    if role == "verify":
        papers = re.findall(r"PAPER (\S+):", prompt)
        return {"evidence_papers": [p for p in papers if p == S2ORC], "sufficient": S2ORC in papers, "missing": ""}
    if role == "read":
        paper = re.search(r"PAPER (\S+):", prompt)
        relevant = paper is not None and paper.group(1) == S2ORC
        return {"sentences": ids_with(prompt, "PaperField")[:1] if relevant else [], "relevant": relevant}
    if role == "synthesize":
        row = [i for i in ids_with(prompt, "PaperField") if i in ids_with(prompt, "65.99")][:1]
        claims = [{"text": "S2ORC-SciBERT reaches 65.99 on PaperField.", "sentences": row}] if row else []
        return {"claims": claims, "insufficient_evidence": not row}
    return literature_reply(role, body, prompt)


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
def home(tmp_path_factory):
    """The UI's home folder, which holds its index and its data folder (`~/litloop-data`, as the
    README's screenshot shows): the page must show them as `~/...`."""
    return tmp_path_factory.mktemp("home")


@pytest.fixture(scope="module")
def small_index(home):
    """Its own index, not the graph tier's `graph_index`: that one may be held open by this
    process while the UI's server process opens this one. The small corpus and the S2ORC PDF
    (many references, tables)."""
    import shutil as sh

    corpus = home / "corpus"
    pdfs = corpus / "pdfs"
    pdfs.mkdir(parents=True)
    for suffix in (".pdf", ".meta.json"):
        sh.copy(DEMO_PDFS / f"{S2ORC}{suffix}", pdfs / f"{S2ORC}{suffix}")
    return build_papers_index(corpus, extra_sources=[pdfs])


@pytest.fixture
def running_ui(browser_prereqs, small_index, home, tmp_path):
    # the answer is streamed in pieces of 8 characters 0.15 s apart: the page shows it growing
    with OpenAIStub(chat_reply, delays={"synthesize": 2.0}, stream_piece=8, stream_delay=0.15) as stub:
        port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LITLOOP_", "LANGSMITH_", "LANGCHAIN_"))}
        env.update(
            {
                "LITLOOP_DATA_DIR": str(home / "litloop-data"),
                "LITLOOP_LLM__BASE_URL": stub.base_url,
                "LITLOOP_LLM__MODEL": "stub-model",
                "LITLOOP_LLM__MAX_RETRIES": "0",
                "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
                "HOME": str(home),
            }
        )
        log = (tmp_path / "ui.log").open("w")
        script = Path(sys.executable).with_name("litloop")
        litloop = [str(script)] if script.exists() else [sys.executable, "-m", "agent.cli.main"]
        proc = subprocess.Popen(
            [*litloop, "ui", "--index", str(small_index), "--port", str(port)],
            cwd=REPO,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            # as a script's background job starts it: SIGINT ignored, which Ctrl-C must still stop
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
        )
        url = f"http://127.0.0.1:{port}"
        try:
            wait_healthy(url, proc)
            yield printed_url(tmp_path / "ui.log", port), stub, tmp_path, proc
        finally:
            stop(proc, timeout=20)
            log.close()


def descendants(pid: int) -> list[int]:
    """The processes below `pid` (from /proc): the UI's Streamlit server, a model server it started."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"


def page_problems(page, home: Path) -> list[str]:
    """Text on the page (and in its inputs) that shows the home folder's absolute path or an
    address with a port."""
    text = page.inner_text("body")
    values = page.locator("input, textarea").evaluate_all("els => els.map(e => e.value)")
    bad = [f"the home folder {home} in: {line}" for line in text.splitlines() if str(home) in line]
    bad += [f"the home folder {home} in an input: {v}" for v in values if str(home) in v]
    return bad + [f"an address with a port: {m}" for m in ADDRESS.findall(text)]


def settled(page, timeout_s: float = 120) -> None:
    """Wait until Streamlit has finished its run (the app's `data-test-script-state` is no longer
    "running"; the status widget is not drawn with the minimal toolbar): a button clicked while
    a run is still drawing the page can be drawn again before its callback shows, and the rows
    of the page before stay (stale) until the run ends."""
    app = page.locator("[data-test-script-state]").first
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if app.get_attribute("data-test-script-state") != "running":
            page.wait_for_timeout(150)
            if app.get_attribute("data-test-script-state") != "running":
                return
        page.wait_for_timeout(150)
    raise AssertionError(f"the page was still running after {timeout_s:.0f} s")


def progress_within(page, seconds: float, steps_before: int) -> bool:
    """Whether a running step shows within `seconds` of sending: the starting status, or one
    more round than the page showed before."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if page.get_by_text("Starting: opening the index", exact=False).count() or (
            page.get_by_text(re.compile(r"^Round 1/")).count() > steps_before
        ):
            return True
        page.wait_for_timeout(100)
    return False


def test_ask_and_follow_up_in_the_browser(running_ui, home):
    from playwright.sync_api import expect, sync_playwright

    url, stub, tmp_path, proc = running_ui
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1500})
            elsewhere: list[str] = []  # every request the page makes to a host other than the chat's
            server = urlparse(url).netloc
            page.on(
                "request",
                lambda req: (
                    elsewhere.append(req.url)
                    if urlparse(req.url).scheme in ("http", "https", "ws", "wss") and urlparse(req.url).netloc != server
                    else None
                ),
            )
            page.goto(url.split("?")[0], wait_until="domcontentloaded")  # without the token: refused
            expect(page.get_by_text("needs the URL that", exact=False).first).to_be_visible(timeout=60_000)
            assert page.get_by_placeholder("Ask about the literature…").count() == 0
            page.goto(url, wait_until="domcontentloaded")
            box = page.get_by_placeholder("Ask about the literature…")
            expect(box).to_be_visible(timeout=60_000)
            expect(page.get_by_text("Searching ~/corpus/idx", exact=False).first).to_be_visible(timeout=30_000)
            box.fill("   ")  # a blank question is refused in place: no run, no conversation
            box.press("Enter")
            expect(page.get_by_text("Type a question first", exact=False).first).to_be_visible(timeout=30_000)
            assert page.get_by_text(re.compile(r"^Round 1/")).count() == 0
            box.fill(QUESTION)
            box.press("Enter")
            assert progress_within(page, 2.0, 0), "no progress shown within 2 s of sending the question"
            # live: the first round's step shows while the agent still works
            expect(page.get_by_text("Round 1/3", exact=False).first).to_be_visible(timeout=120_000)
            assert page.get_by_text("Conditional random fields reach 95.7 F1", exact=False).count() == 0
            # the first question loads the embedder in the server: minutes on a small CPU at worst
            first = page.get_by_text("[1] Conditional random fields for sequence labeling", exact=False).first
            # the answer's words show while the model writes them, before the checked answer
            draft = page.locator(".litloop-draft").first
            expect(draft).to_contain_text("Conditional random", timeout=300_000)
            assert first.count() == 0, "the draft showed only once the answer was complete"
            expect(first).to_be_visible(timeout=300_000)
            expect(page.locator(".litloop-draft")).to_have_count(0)  # the checked answer replaces it
            expect(
                page.get_by_text("Conditional random fields reach 95.7 F1 on chunking [1]", exact=False).first
            ).to_be_visible()
            expect(page.get_by_text("[2] Bidirectional LSTM-CRF models", exact=False).first).to_be_visible()
            # the claim's marker opens its quote in place, inside the answer
            marker = page.locator("span.litloop-cite", has_text="[1]").first
            body = marker.locator(".litloop-cite-body")
            expect(body).to_be_hidden()
            marker.click()
            expect(body).to_be_visible(timeout=10_000)
            expect(body).to_contain_text("Conditional random fields")
            page.mouse.click(5, 5)  # a click elsewhere closes it
            # the paper's card shows where the quote sits and the quote; its passage opens below
            expect(page.get_by_text("Where:", exact=False).first).to_be_visible()
            page.get_by_text("The passage of [1]", exact=False).first.click()
            quoted = page.get_by_text("We present conditional random fields", exact=False).filter(visible=True)
            expect(quoted.first).to_be_visible()
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

            # a reload keeps the conversation open (its address names it), and the next question goes on in it
            page.reload(wait_until="domcontentloaded")
            expect(
                page.get_by_text("Conditional random fields reach 95.7 F1 on chunking [1]", exact=False).first
            ).to_be_visible(timeout=60_000)
            box = page.get_by_placeholder("Ask about the literature…")
            # a question that stands alone: progress at once, its own words in its steps, a table
            # cited, and nothing of the conversation before it (not a follow-up)
            rounds_before = page.get_by_text(re.compile(r"^Round 1/")).count()
            asked_before = len(stub.requests)
            box.fill(SECOND)
            box.press("Enter")
            assert progress_within(page, 2.0, rounds_before), "no progress shown within 2 s of the second question"
            answer = page.get_by_text("S2ORC-SciBERT reaches 65.99 on PaperField [1]", exact=False).first
            expect(answer).to_be_visible(timeout=300_000)
            page.get_by_text(re.compile(r"^Round 1/")).last.click()
            expect(page.get_by_text("Subqueries: S2ORC-SciBERT PaperField results", exact=False).first).to_be_visible()
            assert "Earlier in this conversation" not in page.inner_text("body")
            prompts = [
                " ".join(str(m.get("content")) for m in r["body"]["messages"]) for r in stub.requests[asked_before:]
            ]
            assert prompts and not [p for p in prompts if QUESTION in p or "Earlier in this" in p]
            second = page.locator('[data-testid="stChatMessage"]').last
            assert "Conditional random fields for sequence labeling" not in second.inner_text()  # no earlier paper
            expect(page.get_by_text(re.compile(r"^\[1\] S2ORC")).last).to_be_visible()  # its card
            page.get_by_text("The passage of [1]", exact=False).last.click()
            table = page.locator("table.litloop-table").last
            expect(table).to_be_visible()
            expect(table.locator("mark", has_text="PaperField").first).to_be_visible()
            # its References, inside its card: counts first, five rows a page, the next page, all
            settled(page)
            page.get_by_role("button", name=re.compile(r"^References \(\d+\)")).last.click()
            expect(page.get_by_text("References of:", exact=False).first).to_be_visible(timeout=60_000)
            where = page.get_by_text(re.compile(r"^Page 1 of \d+ · rows 1–5 of \d+$"))
            expect(where).to_be_visible()
            settled(page)
            total = int(where.inner_text().rsplit(" of ", 1)[1])
            rows = page.locator("strong").filter(has_text=re.compile(r"^\d+\. "))
            assert rows.count() == 5, rows.all_inner_texts()
            first_page = rows.all_inner_texts()
            settled(page)
            page.get_by_role("button", name="Next").click()
            expect(page.get_by_text(re.compile(r"^Page 2 of \d+ · rows 6–10 of"))).to_be_visible(timeout=60_000)
            settled(page)
            assert not set(rows.all_inner_texts()) & set(first_page)
            settled(page)
            page.get_by_role("button", name=f"Show all {total}").click()
            expect(page.get_by_text(f"All {total} rows")).to_be_visible(timeout=60_000)
            settled(page)  # the rows of the page before go once the run ends
            assert rows.count() == total
            marks = [m for m in page.locator("mark").all_inner_texts() if m.strip()]
            assert any(m.rstrip().endswith(")") for m in marks), marks
            unclosed = [m for m in marks if m.count("(") != m.count(")") or m.count("[") != m.count("]")]
            assert not unclosed, unclosed  # a highlight never stops before its closing parenthesis
            expect(page.get_by_role("button", name="Close").last).to_be_visible()
            problems = page_problems(page, home)
            assert not problems, problems
            assert not elsewhere, f"the page asked other hosts than the chat's: {elsewhere}"
        finally:
            browser.close()
    assert shot.stat().st_size > 10_000
    traces = list((home / "litloop-data" / "traces").glob("*.jsonl"))
    assert len(traces) == 2  # each answer has its trace
    # Ctrl-C stops the UI and every process it started (its server, a model server), even with
    # SIGINT ignored at its start
    below = descendants(proc.pid)
    assert below, "litloop ui runs no server process"
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 0
    deadline = time.monotonic() + 30
    while any(alive(pid) for pid in below) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [pid for pid in below if alive(pid)], "processes outlived litloop ui after Ctrl-C"
