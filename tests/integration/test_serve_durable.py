"""`litloop serve` keeps what it acknowledged: real servers (subprocesses), a throwaway Postgres,
`kill -9`, restarts and a second server on the same database; the scripted model (stub).

Each test checks what a client sees against what it saw before the crash: the same threads, the
same history checkpoint for checkpoint, the runs with their status; and that another user gets
nothing of them, on either server."""

from __future__ import annotations

import json
import threading
import time
import uuid
from pathlib import Path

import httpx
import pytest

from tests.conftest import build_papers_index
from tests.openai_stub import OpenAIStub, literature_reply
from tests.served import server_env, start_server, stop

pytestmark = [pytest.mark.integration, pytest.mark.server, pytest.mark.postgres, pytest.mark.slow]

QUESTION = "Which sequence labelling models use conditional random fields, and what F1 do they reach?"
FINISHED = ("success", "error", "timeout", "interrupted")


@pytest.fixture(scope="module")
def serve_index(tmp_path_factory) -> Path:
    return build_papers_index(tmp_path_factory.mktemp("durable-corpus"))


@pytest.fixture
def keys(tmp_path) -> Path:
    path = tmp_path / "keys.json"
    path.write_text(json.dumps({"key-alice": "alice", "key-bob": "bob"}))
    return path


def client(url: str, user: str):
    from langgraph_sdk import get_sync_client

    return get_sync_client(url=url, headers={"Authorization": f"Bearer key-{user}"})


def slow_model() -> tuple[threading.Event, OpenAIStub]:
    """A scripted model that holds a question marked SLOW until the event is set."""
    release = threading.Event()

    def reply(role, body, prompt):
        if "SLOW" in prompt:
            release.wait(120)
        return literature_reply(role, body, prompt)

    return release, OpenAIStub(reply)


def ended(api, thread_id: str, run_id: str, within: float = 120) -> dict:
    """The run once it has ended (polled; fails the test if it is still waiting or running)."""
    deadline = time.monotonic() + within
    while True:
        run = api.runs.get(thread_id, run_id)
        if run["status"] in FINISHED or time.monotonic() > deadline:
            return run
        time.sleep(1)


def nothing_for_bob(bob, thread_ids) -> None:
    for tid in thread_ids:
        with pytest.raises(httpx.HTTPStatusError) as taken:
            bob.threads.create(thread_id=tid)
        assert taken.value.response.status_code == 409
        for read in (bob.threads.get, bob.threads.get_state, bob.threads.get_history, bob.runs.list):
            with pytest.raises(httpx.HTTPStatusError) as seen:
                read(tid)
            assert seen.value.response.status_code == 404
    assert not set(thread_ids) & {t["thread_id"] for t in bob.threads.search(limit=100)}


def test_every_acknowledged_thread_survives_a_kill_9_at_any_delay_after_its_answer(
    serve_index, tmp_path, postgres_url, keys
):
    """A thread answered 0.5, 2, 5 or 15 s before a `kill -9` is there after the restart: listed,
    with its metadata, its whole history (no checkpoint more: no run started twice), its run
    finished with success; and still nobody else's."""
    with OpenAIStub() as stub:
        env = server_env(
            tmp_path / "data", stub, LITLOOP_SERVE__KEYS_FILE=str(keys), LITLOOP_CHECKPOINT__URL=postgres_url
        )
        proc, url = start_server(serve_index, env, tmp_path / "server.log")
        kept: dict[str, tuple[list, list[str]]] = {}
        try:
            for delay in (0.5, 2, 5, 15):
                alice = client(url, "alice")
                tid = alice.threads.create(metadata={"asked": f"{delay} s before the kill"})["thread_id"]
                values = alice.runs.wait(tid, "litloop", input={"question": QUESTION})
                assert "95.7" in values["answer"]["text"]
                history = alice.threads.get_history(tid, limit=100)
                kept[tid] = ([h["checkpoint"] for h in history], [r["run_id"] for r in alice.runs.list(tid)])
                time.sleep(delay)
                proc.kill()  # SIGKILL
                proc.wait()
                proc, url = start_server(serve_index, env, tmp_path / "server.log")
                alice, bob = client(url, "alice"), client(url, "bob")
                assert set(kept) <= {t["thread_id"] for t in alice.threads.search(limit=100)}
                for t, (checkpoints, run_ids) in kept.items():
                    assert alice.threads.get(t)["metadata"]["asked"].endswith("before the kill")
                    assert [h["checkpoint"] for h in alice.threads.get_history(t, limit=100)] == checkpoints
                    runs = alice.runs.list(t)
                    assert [r["run_id"] for r in runs] == run_ids
                    assert {r["status"] for r in runs} == {"success"}, runs
                    assert "95.7" in alice.threads.get_state(t)["values"]["answer"]["text"]
                nothing_for_bob(bob, list(kept))
        finally:
            stop(proc)


def test_a_run_killed_mid_way_and_threads_created_during_a_kill_are_not_lost(serve_index, tmp_path, postgres_url, keys):
    """A run acknowledged and cut off by a `kill -9` while it waits on the model is finished by
    the restarted server (never left running); threads whose creation a `kill -9` interrupted
    are there after the restart if the server acknowledged them, and their ids stay the user's."""
    release, stub = slow_model()
    with stub:
        env = server_env(
            tmp_path / "data", stub, LITLOOP_SERVE__KEYS_FILE=str(keys), LITLOOP_CHECKPOINT__URL=postgres_url
        )
        proc, url = start_server(serve_index, env, tmp_path / "server.log")
        try:
            alice = client(url, "alice")
            tid = alice.threads.create()["thread_id"]
            run = alice.runs.create(tid, "litloop", input={"question": QUESTION + " SLOW"})
            time.sleep(2)
            assert alice.runs.get(tid, run["run_id"])["status"] == "running"
            # threads being created while the server is killed
            ids = [str(uuid.uuid4()) for _ in range(8)]
            acknowledged: list[str] = []

            def create(thread_id: str) -> None:
                try:
                    alice.threads.create(thread_id=thread_id)
                    acknowledged.append(thread_id)
                except Exception:  # the kill may cut the request: not acknowledged
                    pass

            workers = [threading.Thread(target=create, args=(i,)) for i in ids]
            for w in workers:
                w.start()
            proc.kill()  # SIGKILL, mid-run and during the creations
            proc.wait()
            for w in workers:
                w.join()
            release.set()
            proc, url = start_server(serve_index, env, tmp_path / "server.log")
            alice, bob = client(url, "alice"), client(url, "bob")
            final = ended(alice, tid, run["run_id"])
            assert final["status"] == "success", final
            assert "95.7" in alice.threads.get_state(tid)["values"]["answer"]["text"]
            for thread_id in acknowledged:
                assert alice.threads.get(thread_id)["thread_id"] == thread_id
            for thread_id in ids:  # acknowledged or not, an id alice sent is never bob's
                alice.threads.create(thread_id=thread_id, if_exists="do_nothing")
            nothing_for_bob(bob, [tid, *ids])
        finally:
            release.set()
            stop(proc)


def test_two_servers_on_one_database_serve_each_others_threads(serve_index, tmp_path, postgres_url, keys):
    """A thread created and answered on server A is listed, read and continued on server B; a
    second run on a thread another server is running is refused (or queued when the client asks);
    when A is killed mid-run, B finishes A's run; another user gets nothing on either."""
    release, stub = slow_model()
    with stub:
        env = server_env(
            tmp_path / "data-a", stub, LITLOOP_SERVE__KEYS_FILE=str(keys), LITLOOP_CHECKPOINT__URL=postgres_url
        )
        proc_a, url_a = start_server(serve_index, env, tmp_path / "server-a.log")
        proc_b, url_b = start_server(
            serve_index, {**env, "LITLOOP_DATA_DIR": str(tmp_path / "data-b")}, tmp_path / "server-b.log"
        )
        try:
            on_a, on_b = client(url_a, "alice"), client(url_b, "alice")
            tid = on_a.threads.create(metadata={"project": "crf"})["thread_id"]
            assert "95.7" in on_a.runs.wait(tid, "litloop", input={"question": QUESTION})["answer"]["text"]
            # read on B
            assert tid in {t["thread_id"] for t in on_b.threads.search(limit=100)}
            assert on_b.threads.get(tid)["metadata"]["project"] == "crf"
            seen_a = [h["checkpoint"] for h in on_a.threads.get_history(tid, limit=100)]
            assert [h["checkpoint"] for h in on_b.threads.get_history(tid, limit=100)] == seen_a
            assert [r["status"] for r in on_b.runs.list(tid)] == ["success"]
            # continued on B, read back on A: one history, B's steps after A's
            again = on_b.runs.wait(tid, "litloop", input={"question": QUESTION + " And on server B?"})
            assert "95.7" in again["answer"]["text"]
            history_a = [h["checkpoint"] for h in on_a.threads.get_history(tid, limit=100)]
            assert history_a == [h["checkpoint"] for h in on_b.threads.get_history(tid, limit=100)]
            assert history_a[-len(seen_a) :] == seen_a and len(history_a) > len(seen_a)
            assert len(on_a.runs.list(tid)) == 2
            # one run at a time: A runs a slow one; B refuses a second, or queues it when asked
            slow = on_a.runs.create(tid, "litloop", input={"question": QUESTION + " SLOW"})
            time.sleep(2)
            with pytest.raises(httpx.HTTPStatusError) as busy:
                on_b.runs.create(tid, "litloop", input={"question": QUESTION}, multitask_strategy="reject")
            assert busy.value.response.status_code == 409
            queued = on_b.runs.create(tid, "litloop", input={"question": QUESTION}, multitask_strategy="enqueue")
            time.sleep(3)
            assert on_b.runs.get(tid, queued["run_id"])["status"] == "pending"
            # A dies mid-run: B takes its run over and finishes it, then the queued one
            proc_a.kill()
            proc_a.wait()
            release.set()
            assert ended(on_b, tid, slow["run_id"])["status"] == "success"
            assert ended(on_b, tid, queued["run_id"])["status"] == "success"
            nothing_for_bob(client(url_b, "bob"), [tid])
        finally:
            release.set()
            stop(proc_b)
            stop(proc_a)
