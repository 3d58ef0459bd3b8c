"""Hostile inputs to the JSONL reader and `litloop score`: a line nested 100,000 arrays deep, bytes
that are not UTF-8, a BOM, query ids the files do not share. Each is a clear message that names
the file and the line (or counts and names the ids), never a traceback."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from agent.cli.main import app
from agent.records.ledger import Ledger
from tools.jsonl import JsonlError, iter_jsonl, read_lines

from .test_eval_score_cli import GOLD, SUBMISSION, write

pytestmark = pytest.mark.unit

runner = CliRunner()
DEEP = "[" * 100_000 + "]" * 100_000


def test_a_line_nested_too_deeply_is_that_line_problem(tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_text('{"query_id": "a"}\n' + DEEP + '\n{"query_id": "b"}\n')
    lines = list(read_lines(path))
    assert [line.number for line in lines] == [1, 2, 3]
    assert lines[1].problem().startswith("invalid JSON (nested more than about")
    assert lines[0].value == {"query_id": "a"} and lines[2].value == {"query_id": "b"}
    with pytest.raises(JsonlError, match=r"deep.jsonl line 2: invalid JSON \(nested more than"):
        list(iter_jsonl(path))


def test_an_integer_too_long_to_convert_is_that_line_problem(tmp_path):
    path = tmp_path / "long.jsonl"
    path.write_text('{"query_id": "a"}\n{"query_id": ' + "9" * 5000 + '}\n{"query_id": "b"}\n')
    assert [r["query_id"] for _, r in iter_jsonl(path, skip_bad=True)] == ["a", "b"]
    with pytest.raises(JsonlError, match=r"long.jsonl line 2: a value the JSON parser refuses"):
        list(iter_jsonl(path))


def test_a_byte_that_is_not_utf8_costs_its_line_only(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"query_id": "a"}\n{"query_id": "\xff"}\n{"query_id": "b"}\n')
    assert [r["query_id"] for _, r in iter_jsonl(path, skip_bad=True)] == ["a", "b"]
    with pytest.raises(JsonlError) as info:
        list(iter_jsonl(path))
    assert str(info.value) == (
        f"{path} line 2: not UTF-8 text (byte 0xff at byte 15 of the line); re-save the file as UTF-8"
    )


def test_a_bom_is_accepted_and_lines_end_at_newlines_only(tmp_path):
    path = tmp_path / "bom.jsonl"
    path.write_bytes('\ufeff{"query_id": "a", "text": "x\u2028y"}\r\n\n{"query_id": "b"}\n'.encode())
    assert [(n, r["query_id"]) for n, r in iter_jsonl(path)] == [(1, "a"), (3, "b")]


def test_a_ledger_drops_an_undecodable_line_like_a_torn_one(tmp_path):
    path = tmp_path / "runs.jsonl"
    path.write_bytes(b'{"query_id": "a", "ok": true}\n{"query_id": "\xfe\n')
    assert Ledger(path).done() == {"a"} and path.read_bytes() == b'{"query_id": "a", "ok": true}\n'


@pytest.mark.parametrize("which", ["gold", "submission"])
def test_score_names_the_file_and_line_of_a_deep_line(tmp_path, which):
    gold = write(tmp_path / "gold.jsonl", GOLD + ([DEEP] if which == "gold" else []))
    sub = write(tmp_path / "sub.jsonl", SUBMISSION + ([DEEP] if which == "submission" else []))
    r = runner.invoke(app, ["score", "--gold", str(gold), "--submission", str(sub)])
    assert r.exit_code == 1, r.output
    assert f"{which[:4] if which == 'gold' else 'sub'}.jsonl line 3: invalid JSON (nested more than" in r.stderr
    assert "Traceback" not in r.output and "RecursionError" not in r.output


def test_score_names_the_file_and_line_of_bytes_that_are_not_utf8(tmp_path):
    gold = write(tmp_path / "gold.jsonl", GOLD)
    sub = tmp_path / "sub.jsonl"
    sub.write_bytes(json.dumps(SUBMISSION[0]).encode() + b"\n" + b'{"query_id": "q2\x80"}\n')
    r = runner.invoke(app, ["score", "--gold", str(gold), "--submission", str(sub)])
    assert r.exit_code == 1
    assert f"{sub} line 2: not UTF-8 text (byte 0x80 at byte 17 of the line)" in " ".join(r.stderr.split())


def test_score_reports_missing_and_extra_query_ids(tmp_path):
    gold = write(tmp_path / "gold.jsonl", GOLD + [{**GOLD[1], "query_id": f"g{i}"} for i in range(6)])
    extra = [{"query_id": "zz1", "gold_papers": [], "answer": {}}, {"query_id": "zz2", "gold_papers": [], "answer": {}}]
    sub = write(tmp_path / "sub.jsonl", SUBMISSION[:1] + extra)
    r = runner.invoke(app, ["score", "--gold", str(gold), "--submission", str(sub)])
    assert r.exit_code == 0, r.output
    err = " ".join(r.stderr.split())
    assert f"warning: 7 of 8 gold questions have no line in {sub} (q2, g0, g1, g2, g3 and 2 more): each scores 0" in err
    assert f"warning: 2 query id(s) in {sub} are not in {gold} (zz1, zz2): not scored" in err
    assert "missing predictions: 7 (q2, g0, g1, g2, g3 and 2 more)  extra predictions: 2 (zz1, zz2)" in r.stdout
    # --json: the same warnings on stderr, the full lists in the counts
    r = runner.invoke(app, ["score", "--gold", str(gold), "--submission", str(sub), "--json"])
    counts = json.loads(r.stdout)["details"]["counts"]
    assert counts["extra_predictions"] == ["zz1", "zz2"] and len(counts["missing_predictions"]) == 7
    assert "2 query id(s)" in r.stderr


def test_score_of_matching_files_warns_of_nothing(tmp_path):
    gold, sub = write(tmp_path / "gold.jsonl", GOLD), write(tmp_path / "sub.jsonl", SUBMISSION)
    r = runner.invoke(app, ["score", "--gold", str(gold), "--submission", str(sub)])
    assert r.exit_code == 0 and "warning" not in r.stderr
    assert "missing predictions: 0  extra predictions: 0" in r.stdout
