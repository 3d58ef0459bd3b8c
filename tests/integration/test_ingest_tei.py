"""GROBID TEI XML ingestion (tools/ingest/tei.py) on the fixtures of tests/data/tei/: the TEI of a
paper gives what the S2ORC JSON of the same GROBID parse gives; pages come from `coords`; bad
files are IngestErrors naming the file, and a build indexes the good files past them.

`N18-3011.tei.xml` and `2020.acl-main.207.tei.xml` were converted from tests/data/s2orc/ by
tests/data/tei/make_fixture.py; `coords-example.tei.xml` was written by hand (README there).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli.main import app
from agent.settings import get_settings
from tools.base import Document, IngestError
from tools.index import open_index
from tools.ingest.chunker import chunk_document
from tools.ingest.loader import discover, load_documents
from tools.ingest.s2orc import parse_s2orc
from tools.ingest.tei import parse_tei

pytestmark = pytest.mark.integration

DATA = Path(__file__).resolve().parents[1] / "data"
TEI = DATA / "tei"
S2ORC = DATA / "s2orc"

GOOD_TEI = """<?xml version="1.0" encoding="UTF-8"?>
<TEI xmlns="http://www.tei-c.org/ns/1.0"><teiHeader><fileDesc><titleStmt>{title}</titleStmt>
</fileDesc><profileDesc>{abstract}</profileDesc></teiHeader><text><body>{body}</body></text></TEI>
"""


def _tei(path: Path, title: str = "<title>T</title>", abstract: str = "", body: str = "") -> Path:
    path.write_text(GOOD_TEI.format(title=title, abstract=abstract, body=body), encoding="utf-8")
    return path


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def _pair(name: str) -> tuple[Document, Document]:
    [s2orc] = parse_s2orc(S2ORC / f"{name}.json")
    return parse_tei(TEI / f"{name}.tei.xml"), s2orc


def _object(doc: Document, label: str):
    [block] = [b for b in doc.blocks if label in (b.table_id, b.figure_id)]
    return block


# --- the same paper as S2ORC JSON ------------------------------------------------------------


def test_tei_gives_what_the_s2orc_json_of_the_same_parse_gives():
    tei, s2orc = _pair("N18-3011")
    paper = tei.paper
    assert paper.paper_id == "N18-3011"  # the file name without .tei.xml
    assert paper.source == str(TEI / "N18-3011.tei.xml")
    assert paper.title == s2orc.paper.title == "Construction of the Literature Graph in Semantic Scholar"
    assert paper.abstract == s2orc.paper.abstract
    assert paper.authors == s2orc.paper.authors and len(paper.authors) == 23
    assert paper.year is None and paper.venue is None  # the parse names neither
    assert all(b.page is None for b in tei.blocks)  # no coords: no pages, as in S2ORC

    tei_chunks, s2orc_chunks = chunk_document(tei), chunk_document(s2orc)
    assert {c.locator.section for c in tei_chunks} == {c.locator.section for c in s2orc_chunks}
    assert {"1 Introduction", "2.1 Node Types", "6 Conclusion and Future Work"} <= {b.section for b in tei.blocks}
    texts = [c for c in tei_chunks if c.kind == "text"]
    s2orc_texts = [c for c in s2orc_chunks if c.kind == "text"]
    assert abs(len(texts) - len(s2orc_texts)) <= 0.1 * len(s2orc_texts)
    chunk_text = [_norm(c.text) for c in tei_chunks]
    paragraphs = [_norm(b.text) for b in s2orc.blocks if b.kind == "text"]
    found = sum(any(p in c for c in chunk_text) for p in paragraphs)
    assert found >= 0.9 * len(paragraphs), f"{found} of {len(paragraphs)} paragraphs"
    # inline <ref type="bibr"> keeps its words in the paragraph
    assert "digital libraries (e.g., Wu et al., 2014) , researchers" in tei.blocks[0].text

    assert [(e.title, e.year) for e in paper.bibliography] == [(e.title, e.year) for e in s2orc.paper.bibliography]
    assert len(paper.bibliography) == 27
    assert paper.bibliography[0].raw.startswith("Waleed Ammar, Matthew E. Peters")  # <note type="raw_reference">


def test_equations_tables_figures_and_back_matter_as_s2orc_has_them():
    tei, s2orc = _pair("2020.acl-main.207")
    [equation] = [b for b in tei.blocks if b.kind == "equation"]
    assert equation.text == "5 v = Transformer(input) [CLS] , (1)"  # <formula> text, then its <label>
    assert equation.section == "Document Representation"
    assert [(b.text, b.section) for b in s2orc.blocks if b.kind == "equation"] == [(equation.text, equation.section)]
    # unnumbered tables take the number the body gives them (<ref type="table" target="#tab_1">)
    table1, s2orc_table1 = _object(tei, "Table 1"), _object(s2orc, "Table 1")
    assert table1.kind == "table" and table1.text == s2orc_table1.text
    assert table1.text == "Results on the SCIDOCS evaluation suite consisting of 7 tasks."
    table2 = _object(tei, "Table 2")
    assert table2.text.splitlines()[0] == "| : Ablations: Numbers are averages of metrics |"  # a row of its <table>
    assert table2.text == _object(s2orc, "Table 2").text
    assert next(b for b in tei.blocks if b.kind == "figure").text.startswith("t-SNE visualization")
    kinds = [b.kind for b in tei.blocks]
    assert kinds.count("table") == [b.kind for b in s2orc.blocks].count("table") == 4
    acks = [b for b in tei.blocks if b.section == "Acknowledgements"]
    assert acks and acks[0].text.startswith("We thank Kyle Lo")
    # a back division without a heading is named after its type ('annex': Appendix)
    assert any(b.section == "Appendix" and b.text.startswith("A Appendix A -Baseline") for b in tei.blocks)


# --- pages from coords, and the rest of GROBID's markup ---------------------------------------


@pytest.fixture(scope="module")
def coords() -> Document:
    return parse_tei(TEI / "coords-example.tei.xml")


def _starting(doc: Document, text: str):
    return next(b for b in doc.blocks if b.text.startswith(text))


def test_pages_come_from_coords(coords):
    assert _starting(coords, "Citation counts").page == 1  # the <p>'s own coords
    assert _starting(coords, "This paragraph has no coordinates").page == 2  # its first <s>'s
    assert _starting(coords, "c(p) =").page == 2  # <formula coords>
    assert _starting(coords, "This paragraph starts").page == 2  # on pages 2 and 3: the first
    assert _starting(coords, "The code is available").page == 1  # a footnote's <note coords>
    assert _object(coords, "Figure 1").page == 2  # the <graphic coords> inside the figure
    assert _object(coords, "Table 1").page == 3
    assert next(b for b in coords.blocks if b.section == "Acknowledgments").page == 4
    assert next(b for b in coords.blocks if b.section == "3 Results").page == 3
    head = chunk_document(coords)[0]
    assert head.kind == "title_abstract" and head.locator.page == 1  # a paged source


def test_sections_formulas_tables_and_figures(coords):
    sections = [b.section for b in coords.blocks if b.kind == "text"]
    assert sections[:2] == ["1 Introduction", "1 Introduction"]  # <head n="1."> as s2orc.py names it
    assert "3.1 Ablation" in sections  # a nested <div> is its own section
    assert None in sections  # a body-level footnote belongs to no section
    # <s> sentences written back to back are spaced apart; <hi> keeps its words
    assert coords.blocks[0].text == (
        "Citation counts are a common signal (Garfield, 1955). We study them on small corpora, as Fig. 1 shows."
    )
    equation = next(b for b in coords.blocks if b.kind == "equation")
    assert (equation.text, equation.section) == ("c(p) = |{q : q cites p}| (1)", "2 Method")
    table = _object(coords, "Table 1")
    assert table.kind == "table" and table.table_id == "Table 1"
    assert table.text.splitlines() == [
        "Table 1: Counts per corpus.",
        "| Corpus | Papers | Citations |",
        "| A | 120 | 340 |",
        "| B | 80 | 95 |",
        "Counts exclude self-citations.",
    ]
    assert table.section == "2 Method"  # the first section that refers to it
    figure = _object(coords, "Figure 1")
    assert (figure.kind, figure.text) == ("figure", "Figure 1: Citations per paper in the example corpus.")
    assert figure.section == "1 Introduction"


def test_header_and_bibliography(coords):
    paper = coords.paper
    assert paper.title == "Counting Citations in Small Corpora"
    assert paper.abstract == "We count citations in small corpora. Counts agree with a manual tally."
    # forenames, surname and genName; a repeated author once; an affiliation mark ('*') dropped
    assert paper.authors == ("Ada B Example", "Carl Sample Jr.")
    assert (paper.venue, paper.year) == ("Proceedings of the Workshop on Examples", 2021)
    assert chunk_document(coords)[0].text.startswith("[Proceedings of the Workshop on Examples 2021] Counting")
    entries = [(e.title, e.year, e.raw) for e in paper.bibliography]
    assert entries == [
        ("Citation indexes for science", 1955, "Eugene Garfield. 1955. Citation indexes for science. Science 122."),
        (
            "Counting what counts",
            2019,
            "Dana Writer. 2019. Counting what counts. Proceedings of the Workshop on Examples.",
        ),
        ("A Book of Counts", None, "Eve Author. A Book of Counts."),  # 'in press' is no year
    ]  # the empty <biblStruct> is left out


def test_paper_id_argument_wins(tmp_path):
    doc = parse_tei(_tei(tmp_path / "x.tei.xml", body="<p>Text.</p>"), paper_id="given")
    assert doc.paper.paper_id == "given" and [b.text for b in doc.blocks] == ["Text."]
    assert parse_tei(tmp_path / "x.tei.xml").paper.paper_id == "x"
    client = shutil.copy(tmp_path / "x.tei.xml", tmp_path / "PMC12.grobid.tei.xml")  # grobid_client's name
    assert parse_tei(client).paper.paper_id == "PMC12"


# --- bad input ------------------------------------------------------------------------------


HTML = "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>502 Bad Gateway</title></head><body>x</body></html>"
BAD = [
    (
        "truncated",
        (TEI / "coords-example.tei.xml").read_text(encoding="utf-8")[:3000],
        "not well-formed XML (unclosed token at column",
    ),
    ("html", HTML, "this is an HTML page, not GROBID TEI XML"),
    (
        "jats",
        '<article xmlns="http://jats.nlm.nih.gov"><front/></article>',
        'the root element is <article xmlns="http://jats.nlm.nih.gov">; expected <TEI> in the TEI namespace',
    ),
    ("no-namespace", "<TEI><teiHeader/></TEI>", "the root element is <TEI>; expected <TEI> in the TEI namespace"),
    ("empty", "", "the file is empty"),
    (
        "no-title-no-body",
        GOOD_TEI.format(title="", abstract="<abstract><p>An abstract.</p></abstract>", body=""),
        "neither a title nor any body text",
    ),
    (
        "no-title-no-abstract",
        GOOD_TEI.format(title="", abstract="", body="<div><p>Text.</p></div>"),
        "neither a title nor an abstract (its 1 body blocks are not indexed)",
    ),
]


@pytest.mark.parametrize(("name", "content", "message"), BAD, ids=[b[0] for b in BAD])
def test_bad_input_is_an_ingest_error_naming_the_file(tmp_path, name, content, message):
    path = tmp_path / f"{name}.tei.xml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(IngestError) as err:
        parse_tei(path)
    assert str(err.value).startswith(f"{path}") and message in str(err.value)
    assert isinstance(err.value, ValueError) and "ParseError" not in str(err.value)


def test_malformed_xml_gives_its_line(tmp_path):
    path = tmp_path / "bad.tei.xml"
    path.write_text(GOOD_TEI.format(title="<title>T</title>", abstract="", body="<p>x</div>"), encoding="utf-8")
    with pytest.raises(IngestError, match=r"not well-formed XML \(mismatched tag at column \d+\); fix the file") as err:
        parse_tei(path)
    assert err.value.line == 3


def test_cut_or_garbled_files_give_a_document_or_an_ingest_error(tmp_path):
    data = (TEI / "coords-example.tei.xml").read_bytes()
    path = tmp_path / "probe.tei.xml"
    probes = [data[:n] for n in range(0, len(data), len(data) // 60)]
    probes += [data[:n] + b"\xff\xfe" + data[n + 2 :] for n in range(0, len(data), len(data) // 20)]
    for probe in probes:
        path.write_bytes(probe)
        try:
            parse_tei(path)
        except IngestError as exc:
            assert str(exc).startswith(str(path))


def test_missing_file_is_an_ingest_error(tmp_path):
    with pytest.raises(IngestError, match="file not found"):
        parse_tei(tmp_path / "nowhere.tei.xml")


# --- the loader and `litloop index build` ---------------------------------------------------


def test_loader_picks_tei_files_and_goes_on_past_a_bad_one(tmp_path):
    shutil.copy(TEI / "coords-example.tei.xml", tmp_path / "good.tei.xml")
    (tmp_path / "broken.tei.xml").write_text(HTML, encoding="utf-8")
    (tmp_path / "other.xml").write_text("<x/>", encoding="utf-8")  # plain .xml is not read
    files, problems = discover([tmp_path])
    assert [f.name for f in files] == ["broken.tei.xml", "good.tei.xml"] and problems == []
    result = load_documents([tmp_path])
    assert [d.paper.paper_id for d in result.documents] == ["good"]
    [problem] = result.problems
    assert problem.startswith(f"{tmp_path / 'broken.tei.xml'}: this is an HTML page")
    _, problems = discover([tmp_path / "other.xml"])
    assert problems == [f"{tmp_path / 'other.xml'}: unsupported file type; give .jsonl, .json, .tei.xml, .pdf files"]


@pytest.mark.timeout(300)
def test_index_build_indexes_the_good_tei_and_reports_the_broken_one(tmp_path):
    papers = tmp_path / "papers"
    papers.mkdir()
    shutil.copy(TEI / "coords-example.tei.xml", papers / "good.tei.xml")
    broken = papers / "broken.tei.xml"
    broken.write_text((TEI / "coords-example.tei.xml").read_text(encoding="utf-8")[:2000], encoding="utf-8")
    root = tmp_path / "idx"
    r = CliRunner().invoke(app, ["index", "build", str(papers), "--index", str(root), "--json"])
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    assert report["papers_added"] == 1
    [problem] = report["problems"]
    assert problem.startswith(f"{broken}:") and "not well-formed XML" in problem
    idx = open_index(root, get_settings())
    try:
        assert set(idx.papers) == {"good"}
        tables = [c for i in idx.chunks_of["good"] if (c := idx.chunks[i]).kind == "table"]
        assert [(c.locator.table_id, c.locator.page) for c in tables] == [("Table 1", 3)]
    finally:
        idx.close()
