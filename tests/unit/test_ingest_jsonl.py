from __future__ import annotations

import json

import pytest

from tools.base import IngestError
from tools.ingest.loader import discover, load_documents

pytestmark = pytest.mark.unit


def _write(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_records_parse_and_bad_lines_are_reported_with_line_numbers(tmp_path):
    f = _write(
        tmp_path / "papers.jsonl",
        [
            json.dumps(
                {"paper_id": "a", "title": "Alpha", "abstract": "About alpha.", "year": "2001", "references": ["b"]}
            ),
            "{not json",
            json.dumps({"title": "No id", "abstract": "x"}),
            json.dumps({"paper_id": "b", "title": "Beta", "abstract": ""}),
            json.dumps({"paper_id": "a", "title": "Alpha again", "abstract": "dup"}),
            json.dumps({"paper_id": "c", "title": "", "abstract": ""}),
            json.dumps({"paper_id": "d", "title": "D", "abstract": "d", "year": "soon"}),
        ],
    )
    res = load_documents([f])
    assert [d.paper.paper_id for d in res.documents] == ["a", "b"]
    assert res.documents[0].paper.year == 2001
    assert res.documents[0].paper.references == ("b",)
    text = "\n".join(res.problems)
    assert f"{f}:2: not valid JSON" in text
    assert f"{f}:3: record has no 'paper_id'; give every paper a unique id" in text
    assert "duplicate paper_id 'a'" in text
    assert f"{f}:6: paper 'c' has neither a title nor an abstract" in text
    assert f"{f}:7: paper 'd': field 'year': expected a year such as 2019, got a string ('soon')" in text


def test_known_ids_are_skipped_as_already_indexed_not_as_problems(tmp_path):
    f = _write(tmp_path / "p.jsonl", [json.dumps({"paper_id": "a", "title": "A", "abstract": "a"})])
    res = load_documents([f], known_ids={"a"})
    assert res.documents == [] and res.problems == [] and res.already_indexed == ["a"]


def test_folder_without_supported_files_and_missing_path(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("hi")
    files, problems = discover([tmp_path / "empty", tmp_path / "nope.jsonl", tmp_path / "empty" / "notes.txt"])
    assert files == []
    assert any("no supported files in this folder" in p for p in problems)
    assert any("no such file" in p for p in problems)
    assert any("unsupported file type" in p for p in problems)


def test_ingest_error_names_file_and_line():
    e = IngestError("x.jsonl", "bad", line=4)
    assert str(e) == "x.jsonl:4: bad"
