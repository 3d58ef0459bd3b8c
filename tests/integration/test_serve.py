"""`litloop serve` as a real subprocess, asked through a langgraph-sdk client, scripted model (stub)."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import PAPERS, build_papers_index
from tests.openai_stub import OpenAIStub

pytestmark = [pytest.mark.integration, pytest.mark.server]

QUESTION = "Which sequence labelling models use conditional random fields, and what F1 do they reach?"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def serve_index(tmp_path_factory) -> Path:
    return build_papers_index(tmp_path_factory.mktemp("serve-corpus"))


@pytest.fixture(scope="module")
def server(serve_index, tmp_path_factory):
    folder = tmp_path_factory.mktemp("serve")
    with OpenAIStub() as stub:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LITLOOP_", "LANGSMITH_", "LANGCHAIN_"))}
        env.update(
            {
                "LITLOOP_DATA_DIR": str(folder / "data"),
                "LITLOOP_LLM__BASE_URL": stub.base_url,
                "LITLOOP_LLM__MODEL": "stub-model",
                "LITLOOP_LLM__MAX_RETRIES": "0",
                "HOME": str(folder / "home"),
            }
        )
        port = free_port()
        log = (folder / "server.log").open("wb")
        cmd = [
            sys.executable,
            "-m",
            "agent.cli",
            "serve",
            "--index",
            str(serve_index),
            "--port",
            str(port),
            "--jobs",
            "4",
        ]
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"litloop serve exited: {(folder / 'server.log').read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(url + "/ok", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.5)
        else:
            proc.kill()
            pytest.fail("litloop serve did not answer /ok within 120 s")
        yield url, env
        proc.terminate()
        proc.wait(timeout=30)


def test_a_cited_answer_through_the_agent_protocol(server):
    from langgraph_sdk import get_client

    url, _ = server

    async def main() -> tuple[dict, list[str], list]:
        client = get_client(url=url)
        thread = await client.threads.create()
        nodes: list[str] = []
        async for part in client.runs.stream(
            thread["thread_id"], "litloop", input={"question": QUESTION}, stream_mode="updates"
        ):
            if part.event == "updates" and isinstance(part.data, dict):
                nodes += list(part.data)
        state = await client.threads.get_state(thread["thread_id"])
        history = await client.threads.get_history(thread["thread_id"])
        return state["values"], nodes, history

    values, nodes, history = asyncio.run(main())
    # the agent's steps arrive as events, in the graph's order
    assert nodes[:4] == ["decompose", "search", "rerank", "verify"], nodes
    assert nodes[-1] == "synthesize"
    answer = values["answer"]
    assert "95.7" in answer["text"], answer
    assert answer["citations"] and "crf" in {c["paper_id"] for c in answer["citations"]}
    assert len(history) >= len(nodes)
    assert {p for p, *_ in PAPERS} >= {c["paper_id"] for c in answer["citations"]}


def test_the_server_answers_as_litloop_ask(server, serve_index):
    import json

    from langgraph_sdk import get_sync_client

    url, env = server
    client = get_sync_client(url=url)
    thread = client.threads.create()
    values = client.runs.wait(thread["thread_id"], "litloop", input={"question": QUESTION})
    assert isinstance(values, dict)
    asked = subprocess.run(
        [sys.executable, "-m", "agent.cli", "ask", QUESTION, "--index", str(serve_index), "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert asked.returncode == 0, asked.stderr[-2000:]
    record = json.loads(asked.stdout)
    assert values["answer"]["text"] and values["answer"]["text"] == record["answer"]["freeform"]["text"]


def test_eight_concurrent_threads_of_five_questions(server):
    from langgraph_sdk import get_client

    url, _ = server
    questions = [f"{QUESTION} (thread {t}, question {q})" for t in range(8) for q in range(5)]

    async def one_thread(client, t: int) -> tuple[str, list[str]]:
        thread = await client.threads.create(metadata={"load": t})
        got = []
        for q in range(5):
            values = await client.runs.wait(thread["thread_id"], "litloop", input={"question": questions[t * 5 + q]})
            assert isinstance(values, dict) and "95.7" in values["answer"]["text"], values
            got.append(values["question"])
        return thread["thread_id"], got

    async def main():
        client = get_client(url=url)
        done = await asyncio.gather(*(one_thread(client, t) for t in range(8)))
        runs = {tid: await client.runs.list(tid, limit=20) for tid, _ in done}
        return done, runs

    done, runs = asyncio.run(main())
    assert len({tid for tid, _ in done}) == 8
    for t, (tid, got) in enumerate(done):
        # every answer delivered to its own thread, in the order asked
        assert got == questions[t * 5 : t * 5 + 5]
        assert len(runs[tid]) == 5 and all(r["status"] == "success" for r in runs[tid])


@pytest.mark.slow
def test_kill_9_mid_run_then_restart_keeps_the_threads(serve_index, tmp_path):
    """A `kill -9` of the server while a run waits on the model, then a restart on the same data
    folder: the answered thread's history is intact, and the interrupted run is not silently
    lost (it is still listed, with a status other than success, or it is resumed)."""
    import threading

    from langgraph_sdk import get_sync_client

    from tests.openai_stub import literature_reply

    release = threading.Event()

    def reply(role, body, prompt):
        if "SLOW" in prompt:
            release.wait(60)
        return literature_reply(role, body, prompt)

    with OpenAIStub(reply) as stub:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LITLOOP_", "LANGSMITH_", "LANGCHAIN_"))}
        env.update(
            LITLOOP_DATA_DIR=str(tmp_path / "data"),
            LITLOOP_LLM__BASE_URL=stub.base_url,
            LITLOOP_LLM__MODEL="stub-model",
            LITLOOP_LLM__MAX_RETRIES="0",
        )

        def start() -> tuple[subprocess.Popen, str]:
            port = free_port()
            cmd = [sys.executable, "-m", "agent.cli", "serve", "--index", str(serve_index), "--port", str(port)]
            proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            url = f"http://127.0.0.1:{port}"
            for _ in range(240):
                try:
                    with urllib.request.urlopen(url + "/ok", timeout=2):
                        return proc, url
                except OSError:
                    time.sleep(0.5)
            proc.kill()
            pytest.fail("litloop serve did not start")

        proc, url = start()
        client = get_sync_client(url=url)
        done = client.threads.create()
        client.runs.wait(done["thread_id"], "litloop", input={"question": QUESTION})
        slow = client.threads.create()
        run = client.runs.create(slow["thread_id"], "litloop", input={"question": QUESTION + " SLOW"})
        time.sleep(12)  # the run waits on the model
        proc.kill()  # SIGKILL
        proc.wait()
        release.set()
        proc, url = start()
        try:
            client = get_sync_client(url=url)
            history = client.threads.get_history(done["thread_id"])
            assert history and "95.7" in history[0]["values"]["answer"]["text"]
            runs = client.runs.list(slow["thread_id"])
            assert [r["run_id"] for r in runs] == [run["run_id"]], runs
            final = client.runs.join(slow["thread_id"], run["run_id"])
            status = client.runs.get(slow["thread_id"], run["run_id"])["status"]
            assert status != "success" or "95.7" in final["answer"]["text"], (status, final)
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def test_one_users_key_cannot_reach_another_users_thread(serve_index, tmp_path):
    import json

    import httpx
    from langgraph_sdk import get_sync_client

    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"key-alice": "alice", "key-bob": "bob"}))
    with OpenAIStub() as stub:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LITLOOP_", "LANGSMITH_", "LANGCHAIN_"))}
        env.update(
            LITLOOP_DATA_DIR=str(tmp_path / "data"),
            LITLOOP_LLM__BASE_URL=stub.base_url,
            LITLOOP_LLM__MODEL="stub-model",
            LITLOOP_LLM__MAX_RETRIES="0",
            LITLOOP_SERVE__KEYS_FILE=str(keys),
        )
        port = free_port()
        cmd = [sys.executable, "-m", "agent.cli", "serve", "--index", str(serve_index), "--port", str(port)]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        url = f"http://127.0.0.1:{port}"
        try:
            for _ in range(240):
                try:
                    with urllib.request.urlopen(url + "/ok", timeout=2):
                        break
                except OSError:
                    time.sleep(0.5)
            alice = get_sync_client(url=url, headers={"Authorization": "Bearer key-alice"})
            bob = get_sync_client(url=url, headers={"Authorization": "Bearer key-bob"})
            nobody = get_sync_client(url=url, headers={"Authorization": "Bearer wrong"})
            thread = alice.threads.create()
            values = alice.runs.wait(thread["thread_id"], "litloop", input={"question": QUESTION})
            assert isinstance(values, dict) and "95.7" in values["answer"]["text"]
            assert alice.threads.get(thread["thread_id"])["metadata"]["owner"] == "alice"
            # bob can neither read, list, nor continue alice's thread
            with pytest.raises(httpx.HTTPStatusError) as seen:
                bob.threads.get(thread["thread_id"])
            assert seen.value.response.status_code == 404
            with pytest.raises(httpx.HTTPStatusError):
                bob.threads.get_history(thread["thread_id"])
            with pytest.raises(httpx.HTTPStatusError):
                bob.runs.wait(thread["thread_id"], "litloop", input={"question": QUESTION})
            assert thread["thread_id"] not in {t["thread_id"] for t in bob.threads.search()}
            assert len(alice.threads.get_history(thread["thread_id"])) >= 1
            with pytest.raises(httpx.HTTPStatusError) as refused:
                nobody.threads.search()
            assert refused.value.response.status_code == 401
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def test_a_full_queue_refuses_with_429_and_a_run_can_be_cancelled(serve_index, tmp_path):
    import threading

    import httpx
    from langgraph_sdk import get_sync_client

    from tests.openai_stub import literature_reply

    release = threading.Event()

    def reply(role, body, prompt):
        if "SLOW" in prompt:
            release.wait(60)
        return literature_reply(role, body, prompt)

    with OpenAIStub(reply) as stub:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LITLOOP_", "LANGSMITH_", "LANGCHAIN_"))}
        env.update(
            LITLOOP_DATA_DIR=str(tmp_path / "data"),
            LITLOOP_LLM__BASE_URL=stub.base_url,
            LITLOOP_LLM__MODEL="stub-model",
            LITLOOP_LLM__MAX_RETRIES="0",
            LITLOOP_SERVE__MAX_QUEUE="2",
        )
        port = free_port()
        cmd = [sys.executable, "-m", "agent.cli", "serve", "--index", str(serve_index), "--port", str(port)]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        url = f"http://127.0.0.1:{port}"
        try:
            for _ in range(240):
                try:
                    with urllib.request.urlopen(url + "/ok", timeout=2):
                        break
                except OSError:
                    time.sleep(0.5)
            client = get_sync_client(url=url)
            threads = [client.threads.create()["thread_id"] for _ in range(3)]
            runs = [client.runs.create(t, "litloop", input={"question": QUESTION + " SLOW"}) for t in threads[:2]]
            t0 = time.monotonic()
            with pytest.raises(httpx.HTTPStatusError) as refused:
                client.runs.create(threads[2], "litloop", input={"question": QUESTION})
            assert time.monotonic() - t0 < 10  # refused at once, not left to hang
            response = refused.value.response
            assert response.status_code == 429
            assert int(response.headers["Retry-After"]) >= 1
            assert "queue is full" in response.text
            # cancellation: the run waiting on the model is stopped and marked so
            client.runs.cancel(threads[0], runs[0]["run_id"], wait=True)
            assert client.runs.get(threads[0], runs[0]["run_id"])["status"] == "interrupted"
            release.set()
            client.runs.join(threads[1], runs[1]["run_id"])
            assert client.runs.get(threads[1], runs[1]["run_id"])["status"] == "success"
            # the places are given back: a new run is admitted and answered
            values = client.runs.wait(threads[2], "litloop", input={"question": QUESTION})
            assert isinstance(values, dict) and "95.7" in values["answer"]["text"]
        finally:
            release.set()
            proc.terminate()
            proc.wait(timeout=30)
