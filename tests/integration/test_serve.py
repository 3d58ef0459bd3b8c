"""`litloop serve` as a real subprocess, asked through a langgraph-sdk client, scripted model (stub).

The load, kill -9 and isolation tests run twice: with the threads' checkpoints in the embedded
SQLite file (the default) and in a throwaway Postgres (`LITLOOP_CHECKPOINT__URL`, marker
`postgres`); each checks that the history the server gives is the one in that store."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import PAPERS, build_papers_index
from tests.openai_stub import OpenAIStub
from tests.served import server_env, start_server, stop

pytestmark = [pytest.mark.integration, pytest.mark.server]

QUESTION = "Which sequence labelling models use conditional random fields, and what F1 do they reach?"
BACKENDS = [pytest.param("sqlite", id="sqlite"), pytest.param("postgres", id="postgres", marks=pytest.mark.postgres)]


def backend_env(backend: str, request: pytest.FixtureRequest) -> dict[str, str]:
    """The settings that put the served threads' checkpoints in a fresh Postgres database."""
    if backend != "postgres":
        return {}
    return {"LITLOOP_CHECKPOINT__URL": request.getfixturevalue("postgres_url")}


def checkpointed_threads(env: dict[str, str]) -> dict[str, int]:
    """{thread id: checkpoints} in the served threads' store: Postgres, or the SQLite file."""
    if env.get("LITLOOP_CHECKPOINT__URL"):
        import psycopg

        with psycopg.connect(env["LITLOOP_CHECKPOINT__URL"]) as conn:
            rows = conn.execute("SELECT thread_id, count(*) FROM checkpoints GROUP BY thread_id").fetchall()
    else:
        import sqlite3

        path = Path(env["LITLOOP_DATA_DIR"]) / "serve" / "checkpoints.sqlite"
        with sqlite3.connect(path) as conn:
            rows = conn.execute("SELECT thread_id, count(*) FROM checkpoints GROUP BY thread_id").fetchall()
    return {str(t): int(n) for t, n in rows}


@pytest.fixture(scope="module")
def serve_index(tmp_path_factory) -> Path:
    return build_papers_index(tmp_path_factory.mktemp("serve-corpus"))


@pytest.fixture(scope="module", params=BACKENDS)
def server(request, serve_index, tmp_path_factory):
    """A server with --jobs 4 for the module: (url, env)."""
    folder = tmp_path_factory.mktemp("serve")
    pg = None
    if request.param == "postgres":
        import uuid

        pg = request.getfixturevalue("postgres_cluster").new_database("s_" + uuid.uuid4().hex[:12])
    with OpenAIStub() as stub:
        extra = {"LITLOOP_CHECKPOINT__URL": pg} if pg else {}
        env = server_env(folder / "data", stub, HOME=str(folder / "home"), **extra)
        proc, url = start_server(serve_index, env, folder / "server.log", "--jobs", "4")
        yield url, env
        stop(proc)


def test_a_cited_answer_through_the_agent_protocol(server):
    from langgraph_sdk import get_client

    url, env = server

    async def main() -> tuple[str, dict, list[str], list]:
        client = get_client(url=url)
        thread = await client.threads.create()
        nodes: list[str] = []
        async for part in client.runs.stream(
            thread["thread_id"], "litloop", input={"question": QUESTION}, stream_mode="updates"
        ):
            if part.event == "updates" and isinstance(part.data, dict):
                nodes += list(part.data)
        state = await client.threads.get_state(thread["thread_id"])
        history = await client.threads.get_history(thread["thread_id"], limit=100)
        return thread["thread_id"], state["values"], nodes, history

    tid, values, nodes, history = asyncio.run(main())
    # the agent's steps arrive as events, in the graph's order
    assert nodes[:4] == ["decompose", "search", "rerank", "verify"], nodes
    assert nodes[-1] == "synthesize"
    answer = values["answer"]
    assert "95.7" in answer["text"], answer
    assert answer["citations"] and "crf" in {c["paper_id"] for c in answer["citations"]}
    assert len(history) >= len(nodes)
    assert {p for p, *_ in PAPERS} >= {c["paper_id"] for c in answer["citations"]}
    # the history the server gave is the one in the store, checkpoint for checkpoint
    assert checkpointed_threads(env)[tid] == len(history)


def test_the_server_answers_as_litloop_ask(server, serve_index):
    import json

    from langgraph_sdk import get_sync_client

    url, env = server
    client = get_sync_client(url=url)
    thread = client.threads.create()
    values = client.runs.wait(thread["thread_id"], "litloop", input={"question": QUESTION})
    assert isinstance(values, dict)
    asked = subprocess.run(
        [sys.executable, "-m", "agent.cli.main", "ask", QUESTION, "--index", str(serve_index), "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert asked.returncode == 0, asked.stderr[-2000:]
    record = json.loads(asked.stdout)
    assert values["answer"]["text"] and values["answer"]["text"] == record["answer"]["freeform"]["text"]
    # the served run's output is the same record as `litloop ask --json`, field for field (but
    # the run's own trace and time)
    from agent.api import result_of
    from agent.records.models import AskOut, ask_record

    served = ask_record(
        result_of(values, question=QUESTION, query_id=record["query_id"], preset=record["preset"])
    ).model_dump(mode="json")
    assert set(served) == set(AskOut.model_fields) == set(record)
    differ = {k for k in served if served[k] != record[k]}
    assert differ <= {"trace_id", "seconds"}, {k: (served[k], record[k]) for k in differ}


def test_eight_concurrent_threads_of_five_questions(server):
    from langgraph_sdk import get_client

    url, env = server
    questions = [f"{QUESTION} (thread {t}, question {q})" for t in range(8) for q in range(5)]

    async def one_thread(client, t: int) -> tuple[str, list[str]]:
        thread = await client.threads.create(metadata={"load": t})
        got = []
        for q in range(5):
            values = await client.runs.wait(thread["thread_id"], "litloop", input={"question": questions[t * 5 + q]})
            assert isinstance(values, dict) and "95.7" in (values.get("answer") or {}).get("text", ""), values
            got.append(values["question"])
        return thread["thread_id"], got

    async def main():
        client = get_client(url=url)
        done = await asyncio.gather(*(one_thread(client, t) for t in range(8)))
        runs = {tid: await client.runs.list(tid, limit=20) for tid, _ in done}
        history = {tid: await client.threads.get_history(tid, limit=1000) for tid, _ in done}
        return done, runs, history

    done, runs, history = asyncio.run(main())
    assert len({tid for tid, _ in done}) == 8
    stored = checkpointed_threads(env)
    for t, (tid, got) in enumerate(done):
        # every answer delivered to its own thread, in the order asked
        assert got == questions[t * 5 : t * 5 + 5]
        assert len(runs[tid]) == 5 and all(r["status"] == "success" for r in runs[tid])
        # the thread's history holds its five questions, newest first, and nothing of another thread
        asked: list[str] = []
        for h in history[tid]:
            q = h["values"].get("question")
            if q and (not asked or asked[-1] != q):
                asked.append(q)
        assert asked == questions[t * 5 : t * 5 + 5][::-1], asked
        assert stored[tid] == len(history[tid])


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_kill_9_mid_run_then_restart_keeps_the_threads(serve_index, tmp_path, backend, request):
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
        env = server_env(tmp_path / "data", stub, **backend_env(backend, request))
        proc, url = start_server(serve_index, env, tmp_path / "server.log")
        client = get_sync_client(url=url)
        done = client.threads.create()
        client.runs.wait(done["thread_id"], "litloop", input={"question": QUESTION})
        before = client.threads.get_history(done["thread_id"], limit=100)
        slow = client.threads.create()
        run = client.runs.create(slow["thread_id"], "litloop", input={"question": QUESTION + " SLOW"})
        time.sleep(12)  # the run waits on the model, past a flush of the runtime's files
        proc.kill()  # SIGKILL
        proc.wait()
        release.set()
        proc, url = start_server(serve_index, env, tmp_path / "server.log")
        try:
            client = get_sync_client(url=url)
            history = client.threads.get_history(done["thread_id"], limit=100)
            assert history and "95.7" in history[0]["values"]["answer"]["text"]
            assert [h["checkpoint"] for h in history] == [h["checkpoint"] for h in before]
            runs = client.runs.list(slow["thread_id"])
            assert [r["run_id"] for r in runs] == [run["run_id"]], runs
            final = client.runs.join(slow["thread_id"], run["run_id"])
            status = client.runs.get(slow["thread_id"], run["run_id"])["status"]
            assert status != "success" or "95.7" in final["answer"]["text"], (status, final)
            stored = checkpointed_threads(env)
            assert stored[done["thread_id"]] == len(history)
            assert stored[slow["thread_id"]] == len(client.threads.get_history(slow["thread_id"], limit=100))
        finally:
            stop(proc)


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_users_key_cannot_reach_another_users_thread(serve_index, tmp_path, backend, request):
    import json

    import httpx
    from langgraph_sdk import get_sync_client

    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"key-alice": "alice", "key-bob": "bob"}))
    with OpenAIStub() as stub:
        env = server_env(tmp_path / "data", stub, LITLOOP_SERVE__KEYS_FILE=str(keys), **backend_env(backend, request))
        proc, url = start_server(serve_index, env, tmp_path / "server.log")
        try:
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
                bob.threads.get_state(thread["thread_id"])
            with pytest.raises(httpx.HTTPStatusError):
                bob.runs.wait(thread["thread_id"], "litloop", input={"question": QUESTION})
            assert thread["thread_id"] not in {t["thread_id"] for t in bob.threads.search()}
            assert len(alice.threads.get_history(thread["thread_id"])) >= 1
            # the store API is scoped per user: bob neither reads, lists nor overwrites alice's item
            alice.store.put_item(("notes",), "plan", {"text": "alice's private note"})
            assert bob.store.get_item(("notes",), "plan") is None  # not found, for him
            assert bob.store.search_items(("notes",))["items"] == []
            bob.store.put_item(("notes",), "plan", {"text": "bob's"})
            assert alice.store.get_item(("notes",), "plan")["value"] == {"text": "alice's private note"}
            assert bob.store.get_item(("notes",), "plan")["value"] == {"text": "bob's"}
            with pytest.raises(httpx.HTTPStatusError) as refused:
                nobody.threads.search()
            assert refused.value.response.status_code == 401
        finally:
            stop(proc)


def test_a_full_queue_refuses_with_429_and_a_cancelled_run_gives_its_place_back(serve_index, tmp_path):
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
        env = server_env(tmp_path / "data", stub, LITLOOP_SERVE__MAX_QUEUE="2")
        proc, url = start_server(serve_index, env, tmp_path / "server.log")  # --jobs 1
        try:
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
            # the second run waits for the one worker; cancelled, it gives its place back
            waiting = client.runs.get(threads[1], runs[1]["run_id"])
            assert waiting["status"] == "pending", waiting
            client.runs.cancel(threads[1], runs[1]["run_id"], wait=True)
            assert client.runs.get(threads[1], runs[1]["run_id"])["status"] != "pending"
            admitted = client.runs.create(threads[2], "litloop", input={"question": QUESTION})
            # and the queue is full again: the running run and the new one
            with pytest.raises(httpx.HTTPStatusError) as again:
                client.runs.create(threads[1], "litloop", input={"question": QUESTION})
            assert again.value.response.status_code == 429
            # cancellation of the run waiting on the model: stopped and marked so
            client.runs.cancel(threads[0], runs[0]["run_id"], wait=True)
            assert client.runs.get(threads[0], runs[0]["run_id"])["status"] == "interrupted"
            release.set()
            values = client.runs.join(threads[2], admitted["run_id"])
            assert isinstance(values, dict) and "95.7" in values["answer"]["text"]
            # every place is back: two runs at once are admitted and answered
            more = [client.runs.create(t, "litloop", input={"question": QUESTION}) for t in threads[:2]]
            for t, r in zip(threads[:2], more, strict=True):
                assert "95.7" in client.runs.join(t, r["run_id"])["answer"]["text"]
        finally:
            release.set()
            stop(proc)


def test_a_postgres_that_does_not_answer_stops_litloop_serve_with_the_reason(serve_index, monkeypatch, tmp_path):
    from typer.testing import CliRunner

    from agent.cli.main import app
    from agent.settings import default_settings
    from tests.openai_stub import refused_url

    port = refused_url().split(":")[-1].split("/")[0]  # a port where nothing listens
    monkeypatch.setenv("LITLOOP_CHECKPOINT__URL", f"postgresql://litloop:s3cret@127.0.0.1:{port}/litloop")
    monkeypatch.setenv("LITLOOP_CHECKPOINT__CONNECT_TIMEOUT_S", "2")
    monkeypatch.setenv("LITLOOP_DATA_DIR", str(tmp_path / "data"))
    default_settings.cache_clear()
    result = CliRunner(env={"COLUMNS": "300"}).invoke(app, ["serve", "--index", str(serve_index)])
    default_settings.cache_clear()
    said = " ".join(result.output.replace("│", " ").split())  # the message as one line, out of its box
    assert result.exit_code != 0
    assert "LITLOOP_CHECKPOINT__URL" in said and "no connection to Postgres" in said, said
    assert "s3cret" not in said and "litloop:***@" in said


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_thread_stays_its_owners_after_a_kill_9_and_on_a_second_server(serve_index, tmp_path, backend, request):
    """The owner of a thread is kept beside its checkpoints, not only in the runtime's records: a
    `kill -9` right after the answer (before the runtime writes its files) and a restart, then
    another user creating a thread with the same id, is refused and reads nothing of it; with
    Postgres, the same on a second server over the same database."""
    import json

    import httpx
    from langgraph_sdk import get_sync_client

    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"key-alice": "alice", "key-bob": "bob"}))

    def clients(url: str) -> tuple:
        return tuple(get_sync_client(url=url, headers={"Authorization": f"Bearer key-{u}"}) for u in ("alice", "bob"))

    def bob_gets_nothing(bob, tid: str) -> None:
        with pytest.raises(httpx.HTTPStatusError) as taken:
            bob.threads.create(thread_id=tid)
        assert taken.value.response.status_code == 409
        for read in (bob.threads.get, bob.threads.get_state, bob.threads.get_history):
            with pytest.raises(httpx.HTTPStatusError) as seen:
                read(tid)
            assert seen.value.response.status_code == 404
        with pytest.raises(httpx.HTTPStatusError):
            bob.runs.wait(tid, "litloop", input={"question": "What did the last user ask?"})

    with OpenAIStub() as stub:
        env = server_env(tmp_path / "data", stub, LITLOOP_SERVE__KEYS_FILE=str(keys), **backend_env(backend, request))
        proc, url = start_server(serve_index, env, tmp_path / "server.log")
        alice, bob = clients(url)
        tid = alice.threads.create()["thread_id"]
        values = alice.runs.wait(tid, "litloop", input={"question": QUESTION})
        assert "95.7" in values["answer"]["text"]
        proc.kill()  # SIGKILL within a second of the answer: the runtime's files may not have it
        proc.wait()
        # make the loss certain: the runtime's own records gone, as a crash before their flush
        # leaves them (the checkpoints and the ownership record stay where they are kept)
        import shutil

        shutil.rmtree(tmp_path / "data" / "serve" / ".langgraph_api")
        proc, url = start_server(serve_index, env, tmp_path / "server.log")
        others = []
        try:
            alice, bob = clients(url)
            bob_gets_nothing(bob, tid)
            # alice may take her own id up again (what the runtime lost of the thread, its record
            # and state view, is not rebuilt yet: its checkpoints are still in the store)
            assert alice.threads.create(thread_id=tid, if_exists="do_nothing")["thread_id"] == tid
            assert checkpointed_threads(env)[tid] >= 1
            if backend == "postgres":  # a second server on the same database
                other, other_url = start_server(
                    serve_index, {**env, "LITLOOP_DATA_DIR": str(tmp_path / "data-b")}, tmp_path / "server-b.log"
                )
                others.append(other)
                _, bob_b = clients(other_url)
                bob_gets_nothing(bob_b, tid)
        finally:
            for p in (proc, *others):
                stop(p)
