"""The records of served threads and runs (agent/serve/records.py) in a real SQLite file: the one
claim of a thread id, the runs of dead servers and the one server that takes each over."""

from __future__ import annotations

import asyncio
import sqlite3
import time

import pytest

from agent.serve.records import DEAD_AFTER_S, RUNS, SERVERS, Records

pytestmark = pytest.mark.unit


def run(coro):
    return asyncio.run(coro)


def test_the_first_claim_of_a_thread_id_owns_it(tmp_path):
    keep = Records("sqlite", str(tmp_path / "records.sqlite"))
    assert run(keep.claim("t1", "alice", {"topic": "crf"})) == "alice"
    assert run(keep.claim("t1", "bob", {"topic": "bob's"})) == "alice"  # taken: the owner stays
    record = run(keep.thread("t1"))
    assert record is not None and record.owner == "alice" and record.metadata == {"topic": "crf"}
    assert [t.thread_id for t in run(keep.threads("bob"))] == []
    run(keep.forget("t1"))
    assert run(keep.owner_of("t1")) is None


def test_the_owners_of_an_earlier_version_are_kept(tmp_path):
    path = tmp_path / "records.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE litloop_thread_owners (thread_id TEXT PRIMARY KEY, owner TEXT NOT NULL)")
        conn.execute("INSERT INTO litloop_thread_owners VALUES ('old', 'alice')")
    keep = Records("sqlite", str(path))
    assert run(keep.claim("old", "bob")) == "alice"


def test_a_dead_servers_runs_are_taken_over_by_one_live_server(tmp_path):
    path = tmp_path / "records.sqlite"
    keep = Records("sqlite", str(path))
    for server in ("dead", "a", "b"):
        run(keep.heartbeat(server))
    run(keep.claim("t1", "alice"))
    run(keep.add_run("r1", "t1", "dead", {"assistant_id": "x", "kwargs": {"input": {"question": "q"}}}))
    run(keep.add_run("r2", "t1", "a", {}))
    run(keep.add_run("r3", "t1", "dead", {}))
    run(keep.set_status("r3", "success"))
    assert run(keep.orphans()) == []  # every server spoke within DEAD_AFTER_S
    with sqlite3.connect(path) as conn:  # the server "dead" last spoke long ago
        conn.execute(f"UPDATE {SERVERS} SET seen_at = ? WHERE server = 'dead'", (time.time() - DEAD_AFTER_S - 1,))
    orphans = run(keep.orphans())
    assert [r.run_id for r in orphans] == ["r1"]  # not a live server's run, not a finished one
    assert orphans[0].request["kwargs"] == {"input": {"question": "q"}}
    assert run(keep.take_over(orphans[0], "b")) is True
    assert run(keep.take_over(orphans[0], "a")) is False  # already b's
    taken = run(keep.run("r1"))
    assert taken is not None and (taken.server, taken.status, taken.starts) == ("b", "pending", 2)
    assert run(keep.orphans()) == []
    assert [r.run_id for r in run(keep.runs_on("b"))] == ["r1"]
    run(keep.set_status("r1", "error", "the model endpoint refused"))
    failed = run(keep.run("r1"))
    assert failed is not None and failed.error == "the model endpoint refused"
    with sqlite3.connect(path) as conn:
        assert conn.execute(f"SELECT count(*) FROM {RUNS}").fetchone()[0] == 3
