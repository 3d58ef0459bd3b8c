"""A `langgraph-sdk` client of `litloop serve` and an `mcp` client of `litloop mcp` each get a cited
answer to the demo question from the demo corpus, with the scripted model (OpenAI stub).

The index is the demo corpus's shipped files restricted (tests/conftest.py
`build_demo_slice_index`: the four full-text PDFs, SPECTER among them, and the first CiteSeer
records): the whole demo index takes minutes to embed on two cores."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from agent.cli.main import DEMO_QUESTION
from tests.conftest import build_demo_slice_index
from tests.openai_stub import SPECTER, OpenAIStub, demo_reply
from tests.served import server_env, start_server, stop

pytestmark = [pytest.mark.integration, pytest.mark.server, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def demo_slice(tmp_path_factory) -> Path:
    return build_demo_slice_index(tmp_path_factory.mktemp("demo-slice"))


@pytest.fixture(scope="module")
def stub():
    with OpenAIStub(demo_reply) as s:
        yield s


def check_cited(answer: dict) -> None:
    """A cited answer about SPECTER: its claim cites SPECTER's PDF, with the page and the quote."""
    assert answer["status"] == "ok", answer
    assert "SPECTER" in answer["text"] and "[1]" in answer["text"], answer["text"]
    cited = answer["citations"]
    assert cited and {c["paper_id"] for c in cited} == {SPECTER}, cited
    for c in cited:  # a chunk of the PDF (its abstract or body), located on its page, quoting citations
        assert c["locator"].get("page"), c["locator"]
        assert "citation" in c["quote"].lower() and c["quote"] in c["chunk_text"], c["quote"]


def test_a_langgraph_sdk_client_gets_a_cited_answer_from_the_demo_corpus(demo_slice, stub, tmp_path):
    from langgraph_sdk import get_sync_client

    env = server_env(tmp_path / "data", stub)
    proc, url = start_server(demo_slice, env, tmp_path / "server.log")
    try:
        client = get_sync_client(url=url)
        thread = client.threads.create()
        values = client.runs.wait(thread["thread_id"], "litloop", input={"question": DEMO_QUESTION})
        assert isinstance(values, dict)
        check_cited(values["answer"])
    finally:
        stop(proc)


def test_an_mcp_client_gets_a_cited_answer_from_the_demo_corpus(demo_slice, stub, tmp_path):
    import sys

    from mcp import ClientSession, StdioServerParameters, stdio_client

    env = server_env(tmp_path / "data", stub)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "agent.cli.main", "mcp", "--index", str(demo_slice)], env=env, cwd=str(REPO)
    )

    async def main() -> dict:
        with (tmp_path / "mcp.log").open("w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write, read_timeout_seconds=240) as session,
            ):
                await session.initialize()
                result = await session.call_tool("ask", {"question": DEMO_QUESTION})
                assert not result.is_error, result.content
                return dict(result.structured_content or {})

    record = anyio.run(main)  # the record of `litloop ask --json`: the citations under attribution
    check_cited({**record, "citations": record["attribution"]["citations"]})
