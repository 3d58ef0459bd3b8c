"""Property-based fuzz tier over the readers a build uses (hypothesis, marker `fuzz`).

The property, for the JSONL paper reader, the S2ORC reader (JSONL and single JSON), the PDF
sidecar and the chunker (litloop has no TEI reader; GROBID output comes in as S2ORC JSON): arbitrary JSON values in every field, arbitrary bytes, deep nesting give either a record
or one clear per-record message naming the file and line, never an uncaught exception, never a
reader-bug message (`records.READER_BUG`, the safety net that must not fire), and never more
than the bad record lost: the good records around it are always indexed.

The budget is fixed so CI stays fast and repeatable: `derandomize=True` (the examples are a
function of the test, the same on every run), no example database, `max_examples` per test in
the `ci` profile. `HYPOTHESIS_PROFILE=deep` runs 20 times as many examples for a local search.
The `ci` profile's example count and run time are in the README's "Tests" section.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tools.base import MAX_CHUNK_CHARS, Block, Document, IngestError, Paper
from tools.ingest.chunker import chunk_document
from tools.ingest.loader import _sidecar, load_documents
from tools.ingest.records import READER_BUG

pytestmark = [pytest.mark.unit, pytest.mark.fuzz]

EXAMPLES = 200
_COMMON = dict(
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
settings.register_profile("ci", max_examples=EXAMPLES, **_COMMON)
settings.register_profile("deep", max_examples=EXAMPLES * 20, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# --- strategies ---------------------------------------------------------------------------------

# json.dumps cannot write an integer past Python's 4,300-digit str() limit: a marker string is
# swapped for one in the written line (rare: a line holding one is refused whole).
HUGE = "\x00huge\x00"
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(0, 99).map(lambda n: HUGE if n == 0 else n),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.sampled_from(["", " ", "2019", "2011-11", "EQUATION", "FIGREF0", "Figure 2", "\u2028"]),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12,
)


def maybe(valid: st.SearchStrategy) -> st.SearchStrategy:
    """Mostly a well-shaped value (so the fuzz reaches deep fields and many records are kept),
    one time in eight anything at all."""
    return st.integers(0, 7).flatmap(lambda n: json_values if n == 0 else valid)


def record(fields: dict[str, st.SearchStrategy], required: tuple[str, ...] = ()) -> st.SearchStrategy:
    """An object with the `required` fields and any subset of the others, plus a stray key."""
    return st.builds(
        lambda present, stray: {**stray, **present},
        st.fixed_dictionaries(
            {k: fields[k] for k in required}, optional={k: v for k, v in fields.items() if k not in required}
        ),
        st.dictionaries(st.text(max_size=6), json_values, max_size=1),
    )


ids = st.one_of(st.text(min_size=1, max_size=12).filter(lambda s: not s.startswith("good-")), st.integers(0, 10**6))
author = maybe(
    st.one_of(
        st.text(max_size=20),
        record(
            {
                "first": maybe(st.text(max_size=8)),
                "middle": maybe(st.lists(st.text(max_size=5), max_size=2)),
                "last": maybe(st.text(max_size=8)),
            }
        ),
    )
)
authors = maybe(st.one_of(st.lists(author, max_size=3), st.text(max_size=30)))
years = maybe(st.one_of(st.integers(1000, 2100), st.sampled_from(["2019", "2011-11", "", None])))
long_text = st.one_of(
    st.text(max_size=60), st.builds(lambda w, n: (w + " ") * n, st.text(min_size=1, max_size=12), st.integers(150, 600))
)

paper_record = record(
    {
        "paper_id": maybe(ids),
        "title": maybe(long_text),
        "abstract": maybe(long_text),
        "authors": authors,
        "venue": maybe(st.text(max_size=10)),
        "year": years,
        "references": maybe(st.lists(maybe(ids), max_size=3)),
        "field": maybe(st.text(max_size=8)),
    },
    required=("paper_id", "title"),
)

offset = maybe(st.integers(-5, 50))
span = maybe(
    record(
        {
            "start": offset,
            "end": offset,
            "text": maybe(st.text(max_size=15)),
            "ref_id": maybe(st.sampled_from(["FIGREF0", "TABREF0", "BIBREF0", None])),
            "raw_str": maybe(st.text(max_size=15)),
            "eq_num": maybe(st.text(max_size=4)),
        }
    )
)
spans = maybe(st.lists(span, max_size=2))
paragraph = maybe(
    record(
        {
            "text": maybe(long_text),
            "section": maybe(st.text(max_size=10)),
            "sec_num": maybe(st.sampled_from(["1", "2.1", None])),
            "eq_spans": spans,
            "ref_spans": spans,
            "cite_spans": spans,
        }
    )
)
paragraphs = maybe(st.lists(paragraph, max_size=3))
ref_entry = maybe(
    record(
        {
            "text": maybe(st.text(max_size=20)),
            "type_str": maybe(st.sampled_from(["figure", "table"])),
            "num": maybe(st.sampled_from(["1", 2, None])),
            "content": maybe(st.text(max_size=30)),
        }
    )
)
bib_entry = maybe(
    record(
        {
            "title": maybe(st.text(max_size=20)),
            "year": years,
            "authors": authors,
            "raw_text": maybe(st.text(max_size=20)),
            "link": maybe(ids),
            "links": maybe(ids),
        }
    )
)
parse = maybe(
    record(
        {
            "paper_id": maybe(ids),
            "abstract": paragraphs,
            "body_text": paragraphs,
            "back_matter": paragraphs,
            "ref_entries": maybe(st.dictionaries(st.sampled_from(["FIGREF0", "TABREF1", "x"]), ref_entry, max_size=2)),
            "bib_entries": maybe(
                st.dictionaries(st.sampled_from(["BIBREF0", "BIBREF1" + "9" * 40, "b"]), bib_entry, max_size=2)
            ),
        }
    )
)
s2orc_record = record(
    {
        "paper_id": maybe(ids),
        "title": maybe(long_text),
        "abstract": maybe(st.one_of(long_text, paragraphs)),
        "authors": authors,
        "year": years,
        "venue": maybe(st.text(max_size=10)),
        "metadata": maybe(
            record(
                {
                    "title": maybe(st.text(max_size=20)),
                    "year": years,
                    "authors": authors,
                    "venue": maybe(st.text(max_size=10)),
                }
            )
        ),
        "pdf_parse": parse,
        "grobid_parse": parse,
        "latex_parse": parse,
        "body_text": paragraphs,
    },
    required=("paper_id", "title"),
)

GOOD = [
    {"paper_id": "good-1", "title": "A good paper", "abstract": "It reads fine."},
    {"paper_id": "good-2", "title": "Another good paper", "abstract": "So does this."},
]
GOOD_S2ORC = [
    {
        "paper_id": f"good-{n}",
        "title": "A full-text paper",
        "pdf_parse": {"body_text": [{"text": "Body text.", "section": "Intro"}]},
    }
    for n in (1, 2)
]

# --- the property -------------------------------------------------------------------------------


def _dump(value) -> bytes:
    return json.dumps(value, ensure_ascii=False).replace(json.dumps(HUGE), "7" * 5000).encode()


def _check(path: Path, bad_lines: set[int | None], good_ids: set[str], records: int | None = None) -> None:
    """The property, for a file whose lines `bad_lines` are fuzzed (holding `records` records
    between them, one a line unless said) and the rest are good."""
    res = load_documents([path])
    ids = [d.paper.paper_id for d in res.documents]
    assert good_ids <= set(ids), res.problems  # nothing but the bad records lost
    assert len(ids) + len(res.problems) <= len(good_ids) + (records or len(bad_lines)), (ids, res.problems)
    for problem in res.problems:
        assert READER_BUG not in problem, problem
        assert any(problem.startswith(f"{path}:{n}: " if n else f"{path}: ") for n in bad_lines), problem
        assert len(problem) < 2000, problem  # one readable message, not a dump of the record
    for doc in res.documents:
        paper = doc.paper
        assert isinstance(paper.paper_id, str) and paper.paper_id and isinstance(paper.title, str)
        assert paper.year is None or isinstance(paper.year, int)
        assert all(isinstance(a, str) for a in paper.authors)
        chunks = chunk_document(doc)
        assert chunks[0].kind == "title_abstract" and all(0 < len(c.text) <= MAX_CHUNK_CHARS for c in chunks)


def _sandwich(path: Path, good: list[dict], bad: bytes) -> Path:
    path.write_bytes(_dump(good[0]) + b"\n" + bad + b"\n" + _dump(good[1]) + b"\n")
    return path


@given(rec=st.one_of(paper_record, json_values))
def test_fuzz_jsonl_paper_records(tmp_path, rec):
    _check(_sandwich(tmp_path / "papers.jsonl", GOOD, _dump(rec)), {2}, {"good-1", "good-2"})


@given(rec=s2orc_record)
def test_fuzz_s2orc_jsonl_records(tmp_path, rec):
    _check(_sandwich(tmp_path / "s2orc.jsonl", GOOD_S2ORC, _dump(rec)), {2}, {"good-1", "good-2"})


@given(rec=st.one_of(s2orc_record, json_values, st.lists(s2orc_record, max_size=3)))
def test_fuzz_s2orc_single_json(tmp_path, rec):
    path = tmp_path / "paper.json"
    path.write_bytes(_dump(rec))
    _check(path, {None}, set(), records=max(1, len(rec)) if isinstance(rec, list) else 1)


@given(
    lines=st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), min_size=1, max_size=4),
    s2orc=st.booleans(),
)
def test_fuzz_arbitrary_bytes_cost_only_their_lines(tmp_path, lines, s2orc):
    good = GOOD_S2ORC if s2orc else GOOD
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b"\n".join([_dump(good[0]), *lines, _dump(good[1])]) + b"\n")
    _check(path, set(range(2, 2 + len(lines))), {"good-1", "good-2"})


@given(
    depth=st.integers(1, 60_000), opener=st.sampled_from(["[", '{"a": ']), field=st.sampled_from(["title", "authors"])
)
def test_fuzz_deep_nesting(tmp_path, depth, opener, field):
    closer = "]" if opener == "[" else "}"
    line = f'{{"paper_id": "deep", "{field}": {opener * depth}1{closer * depth}}}'.encode()
    _check(_sandwich(tmp_path / "deep.jsonl", GOOD, line), {2}, {"good-1", "good-2"})


sidecar = st.one_of(
    json_values,
    record(
        {
            "paper_id": maybe(ids),
            "title": maybe(long_text),
            "abstract": maybe(st.text(max_size=20)),
            "authors": authors,
            "venue": maybe(st.text(max_size=10)),
            "year": years,
        }
    ),
)


@given(meta=sidecar)
def test_fuzz_pdf_sidecar_gives_typed_metadata_or_a_message(tmp_path, meta):
    """What parse_pdf is given from `<name>.meta.json`: typed fields, or an IngestError."""
    (tmp_path / "paper.meta.json").write_bytes(_dump(meta))
    try:
        got = _sidecar(tmp_path / "paper.pdf")
    except IngestError as exc:
        assert str(exc).startswith(f"{tmp_path / 'paper.meta.json'}"), exc
        return
    assert set(got) <= {"paper_id", "title", "abstract", "authors", "venue", "year"}
    assert all(isinstance(got[k], str) for k in ("paper_id", "title", "abstract", "venue") if k in got)
    assert all(isinstance(a, str) for a in got.get("authors", ()))
    assert isinstance(got.get("year", 2000), int)


words = st.text(max_size=50)
texts = st.one_of(
    words,
    st.builds(lambda w, n: (w + " ") * n, words, st.integers(1, 400)),
    st.builds(lambda c, n: c * n, st.sampled_from(["x", ". ", "a.b", " ", "\n"]), st.integers(1, 5000)),
)


@given(
    title=texts,
    abstract=texts,
    venue=st.sampled_from([None, "ACL"]),
    year=st.sampled_from([None, 2020]),
    bodies=st.lists(st.tuples(st.sampled_from(["text", "table", "equation"]), texts), max_size=3),
    cap=st.one_of(st.none(), st.integers(1, 6)),
)
def test_fuzz_chunker_ends_keeps_every_character_and_respects_the_caps(title, abstract, venue, year, bodies, cap):
    paper = Paper("p", title=title, abstract=abstract, venue=venue, year=year)
    blocks = tuple(
        Block(kind, text, section="S", table_id="Table 1" if kind == "table" else None) for kind, text in bodies
    )
    if not paper.title.strip() and not paper.abstract.strip():
        return  # refused by every reader (documents.document): never chunked
    doc = Document(paper, blocks)
    whole = chunk_document(doc)
    chunks = chunk_document(doc, max_chunks=cap)
    assert chunks == whole[:cap] if cap else chunks == whole
    assert whole[0].kind == "title_abstract" and all(0 < len(c.text) <= MAX_CHUNK_CHARS for c in whole)
    squeeze = lambda s: "".join(s.split())  # noqa: E731 - only whitespace may change
    given_text = (f"[{venue} {year}]" if venue and year else "") + title + abstract + "".join(t for _, t in bodies)
    assert squeeze("".join(c.text for c in whole)) == squeeze(given_text)
