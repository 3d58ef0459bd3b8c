"""The ingestion probes through a real build (BM25, Chroma, the bundled embedder): one folder of
hostile-but-fair input builds, every good paper is indexed, every bad record is reported with
its file and line; `--strict` writes nothing and leaves no folder; rerunning it is not a failure.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli.main import app
from agent.settings import get_settings
from tools.base import MAX_CHUNK_CHARS
from tools.index import BuildFailed, build_index, open_index

pytestmark = pytest.mark.integration

GOOD_S2ORC = {
    "paper_id": "s2good",
    "title": "A full-text paper",
    "pdf_parse": {"body_text": [{"text": "Its body text.", "section": "Intro"}]},
}


def _lines(path: Path, records) -> Path:
    path.write_bytes(b"".join((r if isinstance(r, bytes) else json.dumps(r).encode()) + b"\n" for r in records))
    return path


def _paper(pid: str, **fields) -> dict:
    return {"paper_id": pid, "title": f"Paper {pid}", "abstract": f"The abstract of {pid}.", **fields}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Path:
    """A folder holding every probe of the issue next to good papers."""
    d = tmp_path_factory.mktemp("hostile")
    _lines(
        d / "papers.jsonl",
        [
            _paper("j1"),
            _paper("authors5", authors=5),  # line 2
            b'{"paper_id": "year1e999", "title": "T", "abstract": "a", "year": 1e999}',  # line 3
            _paper("longtitle", title="word " * 500, venue="ACL", year=2020),  # 2,500 characters
            b'{"paper_id": "badbyte", "title": "caf\xe9"}',  # line 5
            _paper("huge", abstract=" ".join(f"Sentence {i} of a runaway abstract." for i in range(400))),
            _paper("j2"),
        ],
    )
    _lines(
        d / "s2orc.jsonl",
        [
            GOOD_S2ORC,
            {"paper_id": "s2f", "pdf_parse": {}},  # line 2: neither title nor abstract
            {**GOOD_S2ORC, "paper_id": "eq5", "pdf_parse": {"body_text": [{"text": "x", "eq_spans": 5}]}},
            {**GOOD_S2ORC, "paper_id": "eqx", "pdf_parse": {"body_text": [{"text": "x", "eq_spans": [{"end": "x"}]}]}},
            {**GOOD_S2ORC, "paper_id": "ref7", "pdf_parse": {"body_text": [{"text": "x", "ref_spans": 7}]}},
            {
                **GOOD_S2ORC,
                "paper_id": "reflist",
                "pdf_parse": {"body_text": [{"text": "x", "ref_spans": [{"ref_id": ["a"]}]}]},
            },
            {**GOOD_S2ORC, "paper_id": "s2good2"},
        ],
    )
    (d / "bom.jsonl").write_bytes(b"\xef\xbb\xbf" + json.dumps(_paper("bom")).encode() + b"\n")
    (d / "empty.jsonl").write_bytes(b"")
    return d


EXPECTED = {"j1", "longtitle", "huge", "j2", "s2good", "s2good2", "bom"}
PROBLEMS = [
    ("papers.jsonl:2:", "field 'authors'"),
    ("papers.jsonl:3:", "field 'year'"),
    ("papers.jsonl:5:", "not UTF-8 text"),
    ("papers.jsonl:", "paper 'huge' makes"),
    ("s2orc.jsonl:2:", "paper 's2f' has neither a title nor an abstract"),
    ("s2orc.jsonl:3:", "field 'pdf_parse.body_text[0].eq_spans'"),
    ("s2orc.jsonl:4:", "field 'pdf_parse.body_text[0].eq_spans[0].end'"),
    ("s2orc.jsonl:5:", "field 'pdf_parse.body_text[0].ref_spans'"),
    ("s2orc.jsonl:6:", "field 'pdf_parse.body_text[0].ref_spans[0].ref_id'"),
    ("empty.jsonl:", "the file is empty"),
]


@pytest.mark.timeout(300)
def test_hostile_folder_builds_and_loses_only_the_bad_records(hostile, tmp_path, monkeypatch):
    monkeypatch.setenv("LITLOOP_INGEST__MAX_CHUNKS_PER_PAPER", "4")
    settings = get_settings()
    report = build_index([hostile], tmp_path / "idx", settings)
    assert len(report.problems) == len(PROBLEMS), "\n".join(report.problems)
    for where, what in PROBLEMS:
        assert any(where in p and what in p for p in report.problems), (where, what, report.problems)
    idx = open_index(tmp_path / "idx", settings)
    try:
        assert set(idx.papers) == EXPECTED
        assert len(idx.chunks_of["huge"]) == 4  # truncated at the cap, and said so
        long_chunks = [idx.chunks[i] for i in idx.chunks_of["longtitle"]]
        assert long_chunks[0].kind == "title_abstract" and long_chunks[0].text.startswith("[ACL 2020] word")
        assert all(len(c.text) <= MAX_CHUNK_CHARS for c in idx.chunks)
        assert len(idx.paper_embeddings) == len(EXPECTED)  # no paper without its head vector
    finally:
        idx.close()


@pytest.mark.timeout(300)
def test_strict_on_a_new_folder_writes_nothing_and_leaves_no_folder(hostile, tmp_path):
    root = tmp_path / "new" / "idx"
    with pytest.raises(BuildFailed) as exc:
        build_index([hostile], root, get_settings(), strict=True)
    assert len(exc.value.problems) == len(PROBLEMS) - 1  # all but the cap (2,000 chunks by default)
    assert not root.exists() and not root.parent.exists()
    # a build that reads nothing fails the same clean way
    with pytest.raises(BuildFailed, match="no papers could be read"):
        build_index([hostile / "empty.jsonl"], root, get_settings())
    assert not root.parent.exists()


@pytest.mark.timeout(300)
def test_strict_rerun_of_the_same_input_succeeds(tmp_path):
    papers = _lines(tmp_path / "papers.jsonl", [_paper("a"), _paper("b")])
    root = tmp_path / "idx"
    first = build_index([papers], root, get_settings(), strict=True)
    assert first.papers_added == 2 and first.problems == []
    version = (root / "CURRENT").read_text()
    r = CliRunner().invoke(app, ["index", "build", str(papers), "--index", str(root), "--strict", "--json"])
    assert r.exit_code == 0, r.output
    again = json.loads(r.stdout)
    assert again["papers_added"] == 0 and again["already_indexed"] == 2 and again["problems"] == []
    assert (root / "CURRENT").read_text() == version  # nothing to add: the live version stays
    r = CliRunner().invoke(app, ["index", "build", str(papers), "--index", str(root), "--strict"])
    assert r.exit_code == 0 and "2 papers of the input were already in the index (skipped)" in r.output
    # a new bad record still fails --strict, and the index that was there is untouched
    _lines(papers, [_paper("a"), _paper("c", authors=5)])
    r = CliRunner().invoke(app, ["index", "build", str(papers), "--index", str(root), "--strict"])
    assert r.exit_code == 1 and "field 'authors'" in r.output
    assert (root / "CURRENT").read_text() == version and (root / version.strip() / "manifest.json").exists()
