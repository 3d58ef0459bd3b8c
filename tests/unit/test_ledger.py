"""The shared resumable ledger (`litloop run`, `litloop eval`) and the one JSONL reader."""

from __future__ import annotations

import json

import pytest

from agent.records.ledger import Ledger, is_failure
from tools.jsonl import JsonlError, append_line, iter_jsonl, load_jsonl, read_lines

pytestmark = pytest.mark.unit


def test_ledger_drops_a_torn_line_and_leaves_good_files_alone(tmp_path):
    path = tmp_path / "submission.jsonl"
    good = '{"query_id": "a", "gold_papers": []}\n'
    path.write_text(good)
    before = path.stat().st_mtime_ns
    assert [r["query_id"] for r in Ledger(path).records()] == ["a"]
    assert path.stat().st_mtime_ns == before
    path.write_text(good + '{"query_id": "b", "gold_pa')
    assert [r["query_id"] for r in Ledger(path).records()] == ["a"]
    assert path.read_text() == good
    assert Ledger(tmp_path / "absent.jsonl").records() == []


def test_a_line_without_a_query_id_is_dropped_too(tmp_path):
    path = tmp_path / "runs.jsonl"
    path.write_text('{"query_id": "a", "ok": true}\n[1, 2]\n{"query": "b"}\n')
    assert Ledger(path).ids() == {"a"}
    assert path.read_text() == '{"query_id": "a", "ok": true}\n'


def test_failure_rule_a_failed_question_is_not_done_until_a_retry_succeeds(tmp_path):
    ledger = Ledger(tmp_path / "runs.jsonl")
    with ledger.open() as fh:
        append_line(fh, {"query_id": "a", "ok": True})
        append_line(fh, {"query_id": "b", "ok": False, "error": "RuntimeError: down"})
        append_line(fh, {"query_id": "c", "error": "ScriptExhausted"})
    assert ledger.done() == {"a"}
    assert ledger.ids() == {"a", "b", "c"}  # the failures are recorded, with their errors
    assert ledger.latest()["b"]["error"] == "RuntimeError: down"
    with ledger.open() as fh:
        append_line(fh, {"query_id": "b", "ok": True})  # the retry succeeded
    assert ledger.done() == {"a", "b"}
    assert is_failure({"query_id": "x", "ok": False}) and is_failure({"query_id": "x", "error": "E"})
    assert not is_failure({"query_id": "x", "ok": True, "errors": []})


def test_keep_only_and_sort(tmp_path):
    path = tmp_path / "sub.jsonl"
    path.write_text(
        "".join(json.dumps({"query_id": q, "n": n}) + "\n" for n, q in enumerate(["q1", "q3", "q1", "q2", "zz"]))
    )
    ledger = Ledger(path)
    ledger.keep_only({"q1", "q2", "q3", "zz"})
    assert [(r["query_id"], r["n"]) for r in ledger.records()] == [("q1", 0), ("q3", 1), ("q2", 3), ("zz", 4)]
    ledger.sort(["q1", "q2", "q3"])
    assert [r["query_id"] for r in ledger.records()] == ["q1", "q2", "q3", "zz"]  # unknown ids last
    before = path.stat().st_mtime_ns
    ledger.sort(["q1", "q2", "q3"])
    assert path.stat().st_mtime_ns == before  # already in order: untouched
    assert not list(tmp_path.glob("*.tmp-*"))


def test_reader_names_the_line_and_can_skip_torn_lines(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n\n{"a": \n[1]\n')
    with pytest.raises(JsonlError, match=r"x\.jsonl line 3: invalid JSON \(Expecting value at column 7\)"):
        load_jsonl(path)
    assert [n for n, _ in iter_jsonl(path, skip_bad=True)] == [1]
    path.write_text('{"a": 1}\n[1]\n')
    with pytest.raises(ValueError, match=r"x\.jsonl line 2: expected a JSON object, got an array"):
        load_jsonl(path)
    with pytest.raises(FileNotFoundError, match="no such file"):
        load_jsonl(tmp_path / "nope.jsonl")


def test_reader_keeps_unicode_line_separators_inside_strings(tmp_path):
    path = tmp_path / "t.jsonl"
    record = {"query_id": "a", "text": "one\u2028two\u2029three\x85four"}
    with path.open("w", encoding="utf-8") as fh:
        append_line(fh, record)  # ensure_ascii=False writes them raw
    assert load_jsonl(path) == [record]
    assert [line.number for line in read_lines(path)] == [1]
