"""Regression cases of the ingestion probes: hostile-but-fair input gives a per-record message
naming the file, the line and the field, and nothing but the bad record is lost.

Each test writes the probe input, then checks that the build's reader (`load_documents`, what
`litloop index build` calls) keeps every good record and reports the bad one clearly.
"""

from __future__ import annotations

import json

import pytest

from tools.base import MAX_CHUNK_CHARS, Block, Document, IngestError, Paper
from tools.ingest.chunker import chunk_document, split_text, title_abstract_text
from tools.ingest.loader import load_documents
from tools.ingest.s2orc import parse_s2orc

pytestmark = pytest.mark.unit

GOOD = {"paper_id": "good", "title": "A good paper", "abstract": "It is fine."}


def _jsonl(path, records):
    """Write records (dicts are dumped, str lines and bytes go in as they are) one per line."""
    out = b""
    for r in records:
        line = r if isinstance(r, bytes) else (r if isinstance(r, str) else json.dumps(r)).encode()
        out += line + b"\n"
    path.write_bytes(out)
    return path


def _ids(result):
    return [d.paper.paper_id for d in result.documents]


def _one_problem(result, path, line):
    [problem] = result.problems
    assert problem.startswith(f"{path}:{line}: "), problem
    return problem


# --- item 1: a title longer than the chunk cap hung the build ----------------------------------


@pytest.mark.timeout(10)
@pytest.mark.parametrize("title_chars", [MAX_CHUNK_CHARS - 8, MAX_CHUNK_CHARS - 1, MAX_CHUNK_CHARS, 2500, 9000])
def test_long_title_is_chunked_without_hanging_and_nothing_is_lost(title_chars):
    words = [f"w{i}" for i in range(title_chars)]
    title = " ".join(words)[:title_chars].rsplit(" ", 1)[0]
    doc = Document(Paper("long", title=title, abstract="The abstract. " * 40, venue="ACL", year=2020))
    chunks = chunk_document(doc)
    assert chunks[0].kind == "title_abstract" and chunks[0].text.startswith("[ACL 2020] w0 w1")
    assert [c.kind for c in chunks].count("title_abstract") == 1
    assert all(0 < len(c.text) <= MAX_CHUNK_CHARS for c in chunks)
    joined = " ".join(c.text for c in chunks).split()
    assert all(w in joined for w in title.split())  # every word of the title is indexed
    assert joined.count("abstract.") == 40


@pytest.mark.timeout(10)
def test_long_title_through_the_reader(tmp_path):
    f = _jsonl(
        tmp_path / "p.jsonl",
        [{"paper_id": "t", "title": "x" * 2100, "abstract": "Short.", "venue": "ACL", "year": 2020}, GOOD],
    )
    res = load_documents([f])
    assert _ids(res) == ["t", "good"] and res.problems == []
    assert all(len(c.text) <= MAX_CHUNK_CHARS for c in chunk_document(res.documents[0]))


def test_title_abstract_text_keeps_head_and_abstract_apart_when_there_is_room():
    doc = Document(Paper("p", title="T", abstract="Sentence one. " * 200))
    first, overflow = title_abstract_text(doc)
    assert first.startswith("T\nSentence one.") and len(first) <= MAX_CHUNK_CHARS and overflow


@pytest.mark.parametrize("cap", [0, -5])
def test_split_text_refuses_a_cap_below_one(cap):
    with pytest.raises(ValueError, match="cap"):
        split_text("some text", cap)


# --- item 2: a record with neither title nor abstract ----------------------------------------


@pytest.mark.parametrize(
    "name,lines",
    [
        ("s2orc.json", [{"paper_id": "s2f", "pdf_parse": {}}]),
        ("s2orc.jsonl", [{"paper_id": "s2f", "pdf_parse": {}}, {"paper_id": "good", "title": "T", "pdf_parse": {}}]),
        ("papers.jsonl", [{"paper_id": "s2f", "title": "", "abstract": "  "}, GOOD]),
        ("body.json", [{"paper_id": "s2f", "body_text": [{"text": "A body paragraph.", "section": "Intro"}]}]),
    ],
)
def test_no_title_and_no_abstract_is_refused_by_every_reader(tmp_path, name, lines):
    path = _jsonl(tmp_path / name, lines)
    res = load_documents([path])
    assert "s2f" not in _ids(res)
    assert len(res.documents) == len(lines) - 1
    line = None if name.endswith(".json") else 1
    [problem] = res.problems
    assert problem.startswith(f"{path}:{line}: " if line else f"{path}: ")
    assert "paper 's2f' has neither a title nor an abstract" in problem


def test_body_without_title_or_abstract_says_what_is_not_indexed(tmp_path):
    path = _jsonl(tmp_path / "body.json", [{"paper_id": "b", "body_text": [{"text": "One."}, {"text": "Two."}]}])
    [problem] = load_documents([path]).problems
    assert "2 body blocks" in problem and "add a 'title'" in problem


# --- item 3: wrong field types ---------------------------------------------------------------


@pytest.mark.parametrize(
    "field,value,expected",
    [
        ("authors", 5, "field 'authors': expected a list of author names or one string of names, got an integer (5)"),
        ("authors", ["A. Author", 7], "field 'authors': item 2 is an integer (7), expected a name or an author object"),
        ("year", float("inf"), "field 'year': expected a year such as 2019, got a number (inf)"),
        ("year", "soon", "field 'year': expected a year such as 2019, got a string ('soon')"),
        ("year", 12019, "field 'year': expected a year between 1000 and 2100, got an integer (12019)"),
        ("title", 3, "field 'title': expected a string, got an integer (3)"),
        ("references", "abc", "field 'references': expected an array, got a string ('abc')"),
        ("references", [["x"]], "field 'references[0]': expected a paper id (a string), got an array"),
        ("venue", {"name": "ACL"}, "field 'venue': expected a string, got an object"),
    ],
)
def test_wrong_field_type_in_a_jsonl_record_costs_that_record_only(tmp_path, field, value, expected):
    bad = {"paper_id": "bad", "title": "Bad", "abstract": "b", field: value}
    f = _jsonl(tmp_path / "p.jsonl", [GOOD, json.dumps(bad), {**GOOD, "paper_id": "good2"}])
    res = load_documents([f])
    assert _ids(res) == ["good", "good2"]
    assert expected in _one_problem(res, f, 2)


def test_year_1e999_literal_in_the_file(tmp_path):
    f = _jsonl(tmp_path / "p.jsonl", ['{"paper_id": "y", "title": "T", "abstract": "a", "year": 1e999}', GOOD])
    res = load_documents([f])
    assert _ids(res) == ["good"]
    assert "field 'year'" in _one_problem(res, f, 1)


def test_good_values_of_every_jsonl_field_are_accepted(tmp_path):
    rec = {
        "paper_id": 17,
        "title": " Spaced   title ",
        "abstract": "x",
        "year": "2011-11",
        "venue": "ACL",
        "authors": [{"first": "Ada", "last": "Lovelace"}, "Alan Turing", {"name": "Grace Hopper"}],
        "references": [3, "b"],
        "field": "cs",
    }
    f = _jsonl(tmp_path / "p.jsonl", [rec, {**GOOD, "year": 2019.0, "authors": "A One, B Two"}])
    res = load_documents([f])
    assert res.problems == []
    first, second = (d.paper for d in res.documents)
    assert (first.paper_id, first.title, first.year, first.references) == ("17", "Spaced title", 2011, ("3", "b"))
    assert first.authors == ("Ada Lovelace", "Alan Turing", "Grace Hopper")
    assert (second.year, second.authors) == (2019, ("A One", "B Two"))


def _s2orc_line(paragraph=None, **parse):
    body = [{"text": "Body text of the paper.", "section": "Intro", **(paragraph or {})}]
    return {"paper_id": "bad", "title": "S2ORC paper", "pdf_parse": {"body_text": body, **parse}}


@pytest.mark.parametrize(
    "record,field,expected",
    [
        (_s2orc_line({"eq_spans": 5}), "pdf_parse.body_text[0].eq_spans", "expected an array"),
        (
            _s2orc_line({"eq_spans": [{"start": 0, "end": "x"}]}),
            "pdf_parse.body_text[0].eq_spans[0].end",
            "expected a character offset (a whole number), got a string ('x')",
        ),
        (_s2orc_line({"ref_spans": 7}), "pdf_parse.body_text[0].ref_spans", "expected an array, got an integer (7)"),
        (
            _s2orc_line({"ref_spans": [{"ref_id": ["FIGREF0"], "text": "Figure 1"}]}),
            "pdf_parse.body_text[0].ref_spans[0].ref_id",
            "expected an id (a string), got an array",
        ),
        (_s2orc_line({"text": ["a", "b"]}), "pdf_parse.body_text[0].text", "expected a string, got an array"),
        (
            _s2orc_line(bib_entries={"BIBREF0": 3}),
            "pdf_parse.bib_entries.BIBREF0",
            "expected an object, got an integer (3)",
        ),
        (_s2orc_line(ref_entries=[1, 2]), "pdf_parse.ref_entries", "expected an object, got an array"),
        ({**_s2orc_line(), "metadata": "x"}, "metadata", "expected an object, got a string ('x')"),
        ({**_s2orc_line(), "authors": 5}, "authors", "expected a list of author names"),
        ({**_s2orc_line(), "year": 1e999}, "year", "expected a year such as 2019"),
        ({"paper_id": "bad", "title": "T", "body_text": 5}, "body_text", "expected an array, got an integer (5)"),
        (
            {"paper_id": "bad", "title": "T", "abstract": 5, "body_text": []},
            "abstract",
            "expected a string or an array of paragraph objects, got an integer (5)",
        ),
    ],
)
def test_wrong_field_type_in_an_s2orc_record_costs_that_record_only(tmp_path, record, field, expected):
    good = {"paper_id": "good", "title": "Fine", "pdf_parse": {"body_text": [{"text": "Fine body."}]}}
    f = _jsonl(tmp_path / "s2orc.jsonl", [good, record, {**good, "paper_id": "good2"}])
    res = load_documents([f])
    assert _ids(res) == ["good", "good2"]
    problem = _one_problem(res, f, 2)
    assert f"field '{field}': {expected}" in problem


def test_wrong_field_type_in_a_single_s2orc_json_names_the_field(tmp_path):
    path = tmp_path / "one.json"
    path.write_text(json.dumps(_s2orc_line({"eq_spans": [{"start": 0, "end": "x"}]})), encoding="utf-8")
    res = load_documents([path])
    assert res.documents == []
    [problem] = res.problems
    assert problem.startswith(f"{path}: ") and "pdf_parse.body_text[0].eq_spans[0].end" in problem
    with pytest.raises(IngestError, match=r"eq_spans\[0\]\.end"):
        parse_s2orc(path)


def test_pdf_sidecar_with_wrong_types_is_reported(tmp_path):
    (tmp_path / "paper.pdf").write_bytes(b"%PDF-1.4 not really")
    (tmp_path / "paper.meta.json").write_text(json.dumps({"title": "T", "authors": 5}), encoding="utf-8")
    [problem] = load_documents([tmp_path / "paper.pdf"]).problems
    assert problem.startswith(f"{tmp_path / 'paper.meta.json'}: field 'authors'")


# --- item 4: one bad byte, a BOM, an empty file ----------------------------------------------


def test_a_bad_byte_loses_only_its_line(tmp_path):
    f = _jsonl(tmp_path / "p.jsonl", [GOOD, b'{"paper_id": "b", "title": "caf\xe9 \xff"}', {**GOOD, "paper_id": "c"}])
    res = load_documents([f])
    assert _ids(res) == ["good", "c"]
    problem = _one_problem(res, f, 2)
    assert "not UTF-8 text" in problem and "byte 0xe9 at byte 32 of the line" in problem


def test_a_bad_byte_in_an_s2orc_jsonl_loses_only_its_line(tmp_path):
    good = {"paper_id": "good", "title": "Fine", "pdf_parse": {"body_text": [{"text": "Fine body."}]}}
    f = _jsonl(tmp_path / "s.jsonl", [good, b'{"paper_id": "x\xff"}', {**good, "paper_id": "good2"}])
    res = load_documents([f])
    assert _ids(res) == ["good", "good2"] and "not UTF-8 text" in _one_problem(res, f, 2)


def test_utf8_bom_is_accepted(tmp_path):
    f = tmp_path / "bom.jsonl"
    f.write_bytes(b"\xef\xbb\xbf" + json.dumps(GOOD).encode() + b"\n" + json.dumps({**GOOD, "paper_id": "b"}).encode())
    res = load_documents([f])
    assert _ids(res) == ["good", "b"] and res.problems == []
    single = tmp_path / "bom.json"
    single.write_bytes(b"\xef\xbb\xbf" + json.dumps({"paper_id": "s", "title": "T", "body_text": []}).encode())
    assert _ids(load_documents([single])) == ["s"]


@pytest.mark.parametrize("content", [b"", b"\n\n  \n", b"\xef\xbb\xbf"])
@pytest.mark.parametrize("name", ["empty.jsonl", "empty.json"])
def test_an_empty_file_is_reported(tmp_path, name, content):
    f = tmp_path / name
    f.write_bytes(content)
    res = load_documents([f])
    assert res.documents == []
    [problem] = res.problems
    assert problem.startswith(f"{f}: ") and "empty" in problem


@pytest.mark.parametrize(
    "line,reason",
    [
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"paper_id": ' + "7" * 5000 + "}", "not valid JSON"),
        ("[1, 2]", "expected a JSON object, got an array"),
        ("null", "expected a JSON object, got null"),
        ("{not json", "not valid JSON"),
    ],
)
def test_unreadable_lines_cost_only_themselves(tmp_path, line, reason):
    f = _jsonl(tmp_path / "p.jsonl", [GOOD, line, {**GOOD, "paper_id": "c"}])
    res = load_documents([f])
    assert _ids(res) == ["good", "c"]
    assert reason in _one_problem(res, f, 2)


def test_a_bad_first_line_does_not_hide_an_s2orc_file(tmp_path):
    good = {"paper_id": "good", "pdf_parse": {"body_text": [{"text": "Body."}]}, "title": "T"}
    f = _jsonl(tmp_path / "s.jsonl", ["{broken", good])
    res = load_documents([f])
    assert _ids(res) == ["good"] and res.documents[0].blocks  # read as S2ORC, body kept


def test_a_bad_line_in_a_json_file_holding_jsonl(tmp_path):
    good = {"paper_id": "good", "title": "T", "body_text": [{"text": "Body."}]}
    f = _jsonl(tmp_path / "s.json", [good, "{broken", {**good, "paper_id": "good2"}])
    res = load_documents([f])
    assert _ids(res) == ["good", "good2"] and "not valid JSON" in _one_problem(res, f, 2)


# --- pathological size: more chunks than the cap ---------------------------------------------


def test_a_record_over_the_chunk_cap_is_reported_and_truncated(tmp_path):
    huge = " ".join(f"Sentence {i} of a runaway abstract." for i in range(2000))
    f = _jsonl(tmp_path / "p.jsonl", [{"paper_id": "huge", "title": "Huge", "abstract": huge}, GOOD])
    res = load_documents([f], max_chunks=5)
    assert _ids(res) == ["huge", "good"]
    whole = len(chunk_document(res.documents[0]))
    assert whole > 30
    [problem] = res.problems
    assert problem.startswith(f"{f}: paper 'huge' makes {whole} chunks, more than the limit of 5")
    assert "LITLOOP_INGEST__MAX_CHUNKS_PER_PAPER" in problem
    chunks = chunk_document(res.documents[0], max_chunks=5)
    assert len(chunks) == 5 and chunks[0].kind == "title_abstract"
    assert [c.chunk_id for c in chunks] == [f"huge#c{i}" for i in range(5)]


def test_chunk_cap_counts_body_blocks_too():
    blocks = [Block("text", f"Paragraph {i}. " * 200, section=f"S{i}") for i in range(10)]
    doc = Document(Paper("p", title="T", abstract="A."), tuple(blocks))
    assert len(chunk_document(doc)) > 10
    assert len(chunk_document(doc, max_chunks=3)) == 3
    assert chunk_document(doc, max_chunks=1000) == chunk_document(doc)


# --- duplicates ------------------------------------------------------------------------------


def test_already_indexed_papers_are_not_problems(tmp_path):
    f = _jsonl(tmp_path / "p.jsonl", [GOOD, {**GOOD, "paper_id": "new"}, {**GOOD, "paper_id": "new"}])
    res = load_documents([f], known_ids={"good"})
    assert _ids(res) == ["new"]
    assert res.already_indexed == ["good"]
    [problem] = res.problems  # a duplicate inside the input is still a problem
    assert "duplicate paper_id 'new'" in problem


def test_a_bad_byte_in_a_json_file_names_its_line(tmp_path):
    lines = _jsonl(
        tmp_path / "lines.json",
        [{"paper_id": "a", "title": "A", "body_text": []}, b'{"paper_id": "\xff"}', {"paper_id": "b", "title": "B"}],
    )
    res = load_documents([lines])
    assert _ids(res) == ["a", "b"] and "not UTF-8 text" in _one_problem(res, lines, 2)
    pretty = tmp_path / "pretty.json"
    pretty.write_bytes(b'{\n  "paper_id": "p",\n  "title": "caf\xe9"\n}\n')
    [problem] = load_documents([pretty]).problems
    assert problem.startswith(f"{pretty}:3: not UTF-8 text (byte 0xe9 at byte 16 of the line)")
