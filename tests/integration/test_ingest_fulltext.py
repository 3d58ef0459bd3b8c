"""PDF and S2ORC ingestion on the real ACL papers: the four PDFs ship in the demo corpus
(tools/corpora/demo_data/pdfs); the S2ORC/GROBID JSON fixtures ship with the tests
(tests/data/s2orc/).

Every expected value here was read off the PDFs (page images) and the JSON files by hand:
pages are the PDF's 1-based page numbers, not the proceedings' printed ones.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tests.conftest import DEMO_PDFS
from tools.base import MAX_CHUNK_CHARS, Document, IngestError
from tools.ingest.chunker import chunk_document
from tools.ingest.pdf import parse_pdf
from tools.ingest.s2orc import parse_s2orc
from tools.tables import split_cells

pytestmark = pytest.mark.integration

PDF_PAGES = {
    "N18-3011": 8,
    "2020.acl-main.207": 13,
    "2020.acl-main.447": 15,
    "2023.eacl-main.121": 20,
}
# the S2ORC/GROBID JSON fixtures ship with the tests (Apache-2.0; tests/data/s2orc/README.md)
S2ORC_DATA = Path(__file__).resolve().parents[1] / "data" / "s2orc"
S2ORC_SHAPES = sorted((S2ORC_DATA / "s2orc_json").glob("*.json"))


@pytest.fixture(scope="module")
def fulltext() -> Path:
    """The S2ORC JSON fixtures (the PDFs come from DEMO_PDFS)."""
    return S2ORC_DATA


@pytest.fixture(scope="module")
def pdfs() -> dict[str, Document]:
    """The four bundled PDFs, parsed once for the module (parsing is the slow part)."""
    return {stem: parse_pdf(DEMO_PDFS / f"{stem}.pdf") for stem in PDF_PAGES}


def _first_page(doc: Document, section: str) -> int | None:
    return next((b.page for b in doc.blocks if b.section == section), None)


def _object(doc: Document, label: str):
    found = [b for b in doc.blocks if label in (b.table_id, b.figure_id)]
    assert len(found) == 1, f"{label}: {len(found)} blocks"
    return found[0]


def _titles(doc: Document) -> dict[str, int | None]:
    return {e.title.lower(): e.year for e in doc.paper.bibliography}


# --- PDFs: structure shared by all four -------------------------------------------------------


@pytest.mark.parametrize("stem", PDF_PAGES)
def test_every_block_has_an_exact_page_and_a_kind(pdfs, stem):
    doc = pdfs[stem]
    assert doc.paper.paper_id == stem  # the file stem when nothing else is given
    assert doc.paper.source.endswith(f"{stem}.pdf")
    assert len(doc.blocks) > 50
    for block in doc.blocks:
        assert block.kind in ("text", "equation", "figure", "table")
        assert block.page is not None and 1 <= block.page <= PDF_PAGES[stem]
        assert block.text.strip()
        assert (block.kind == "table") == (block.table_id is not None)
        assert (block.kind == "figure") == (block.figure_id is not None)
    for chunk in chunk_document(doc):  # a long table is cut by rows, caption and header on each piece
        assert len(chunk.text) <= MAX_CHUNK_CHARS, chunk.chunk_id
        if chunk.kind == "table":
            assert chunk.text.startswith("Table") and "|---|" in chunk.text, chunk.chunk_id
    body = " ".join(b.text for b in doc.blocks)
    assert "Proceedings of" not in body  # the first-page footer is furniture
    assert not any(b.text.startswith(doc.paper.abstract[:60]) for b in doc.blocks)
    assert all(b.section for b in doc.blocks)  # the front matter is not body text


@pytest.mark.parametrize(
    ("stem", "title", "venue", "year", "abstract_start"),
    [
        (
            "N18-3011",
            "Construction of the Literature Graph in Semantic Scholar",
            "NAACL",
            2018,
            "We describe a deployed scalable system for organizing published scientific literature",
        ),
        (
            "2020.acl-main.207",
            "SPECTER: Document-level Representation Learning using Citation-informed Transformers",
            "ACL",
            2020,
            "Representation learning is a critical ingredient for natural language processing systems.",
        ),
        (
            "2020.acl-main.447",
            "S2ORC: The Semantic Scholar Open Research Corpus",
            "ACL",
            2020,
            "We introduce S2ORC, a large corpus of 81.1M English-language academic papers",  # footnote mark 1 dropped
        ),
        (
            # no Title in the PDF metadata: the largest font on page 1 gives it
            "2023.eacl-main.121",
            "LONGEVAL: Guidelines for Human Evaluation of Faithfulness in Long-form Summarization",
            "EACL",
            2023,
            "While human evaluation remains best practice for accurately judging the faithfulness",
        ),
    ],
)
def test_title_venue_year_and_abstract(pdfs, stem, title, venue, year, abstract_start):
    paper = pdfs[stem].paper
    assert paper.title == title
    assert (paper.venue, paper.year) == (venue, year)
    assert paper.abstract.startswith(abstract_start)
    assert paper.venue_year_tag == f"[{venue} {year}]"


@pytest.mark.parametrize(
    ("stem", "section", "page"),
    [
        ("N18-3011", "1 Introduction", 1),
        ("N18-3011", "3 Extracting Metadata", 2),
        ("N18-3011", "4.4 Entity Linking Models", 5),
        ("N18-3011", "6 Conclusion and Future Work", 7),
        ("2020.acl-main.207", "1 Introduction", 1),
        ("2020.acl-main.207", "2.3 Citation-Based Pretraining Objective", 3),
        ("2020.acl-main.207", "3.4 Recommendation", 5),
        ("2020.acl-main.207", "5 Results", 6),
        ("2020.acl-main.207", "6 Analysis", 7),
        ("2020.acl-main.207", "Acknowledgements", 9),
        ("2020.acl-main.207", "A Appendix A - Baseline Details", 12),
        ("2020.acl-main.447", "2 Constructing the corpus", 2),
        ("2020.acl-main.447", "2.6 Linking bibliographies to papers", 4),
        ("2020.acl-main.447", "8 Conclusion", 8),
        ("2020.acl-main.447", "F Numeric representations in S2ORC-SCIBERT", 15),
        ("2023.eacl-main.121", "1 Introduction", 1),
        ("2023.eacl-main.121", "2 Survey of human evaluation practices", 2),
        ("2023.eacl-main.121", "Limitations", 10),
        ("2023.eacl-main.121", "Ethical Considerations", 10),
    ],
)
def test_sections_start_on_the_right_page(pdfs, stem, section, page):
    assert _first_page(pdfs[stem], section) == page


@pytest.mark.parametrize(
    ("stem", "label", "page", "caption_start", "row"),
    [
        ("N18-3011", "Figure 1", 1, "Figure 1: Part of the literature graph.", None),
        ("N18-3011", "Table 1", 3, "Table 1: Results of the ScienceParse system.", "title | 85.5 | 85.5 | 85.5"),
        (
            "N18-3011",
            "Table 2",
            4,
            "Table 2: Document-level evaluation of three approaches",
            "Hybrid | 91.5 | 1990 | 92.1 | 3126",
        ),
        ("N18-3011", "Table 4", 6, "Table 4: The Bag of Concepts F1 score", "Neural | 84.6 | 85.8"),
        ("2020.acl-main.207", "Figure 1", 2, "Figure 1: Overview of SPECTER.", None),
        (
            "2020.acl-main.207",
            "Table 1",
            7,
            "Table 1: Results on the SCIDOCS evaluation suite consisting of 7 tasks.",
            "SPECTER (Ours) | 82.0 | 86.4 | 83.6 | 91.5",
        ),
        ("2020.acl-main.207", "Table 2", 7, "Table 2: Ablations: Numbers are averages", "+ venue | 84.5 | 88.0"),
        ("2020.acl-main.207", "Figure 2", 8, "Figure 2: t-SNE visualization of paper embeddings", None),
        ("2020.acl-main.207", "Table 3", 8, "Table 3: Comparison with task-specific fine-tuning.", None),
        ("2020.acl-main.447", "Table 1", 2, "Table 1: A comparison of S2ORC with other publicly-available", None),
        ("2020.acl-main.447", "Figure 2", 5, "Figure 2: Distribution of papers by Microsoft Academic field", None),
        (
            "2020.acl-main.447",
            "Table 8",
            13,
            "Table 8: PDFs filtered out before GROBID processing",
            "Over 50 pages | 2.27M",
        ),
        (
            "2023.eacl-main.121",
            "Table 3",
            5,
            "Table 3: Average standard deviation of faithfulness scores",
            "SQuALITY | 18.5 | 6.8",
        ),
        ("2023.eacl-main.121", "Figure 3", 5, "Figure 3: 95% confidence intervals of estimated model", None),
    ],
)
def test_captions_tables_and_figures(pdfs, stem, label, page, caption_start, row):
    block = _object(pdfs[stem], label)
    assert block.page == page
    assert block.text.startswith(caption_start)
    if row is not None:  # rows are pipe-table lines: "| title | 85.5 | 85.5 | 85.5 |"
        cells = [c.strip() for c in row.split("|")]
        rows = [split_cells(line) for line in block.text.splitlines()[1:]]
        assert cells in rows or any(r[: len(cells)] == cells for r in rows), block.text


def test_table_and_figure_bodies_leave_the_running_text(pdfs):
    specter = " ".join(b.text for b in pdfs["2020.acl-main.207"].blocks if b.kind == "text")
    assert "Fasttext-sum (2017)" not in specter  # a row of Table 1
    assert "Start w/ BERT-Large" not in specter  # a row of Table 2
    longeval = " ".join(b.text for b in pdfs["2023.eacl-main.121"].blocks if b.kind == "text")
    assert "He recognized her as old Hazeltyne" not in longeval  # text inside Figure 1


def test_a_full_width_caption_stays_one_block(pdfs):
    # Table 5 of S2ORC: a five-line caption across both columns whose last words ("of runs.")
    # fall in the left column below it.
    table5 = _object(pdfs["2020.acl-main.447"], "Table 5")
    caption = table5.text.splitlines()[0]
    assert "to which we refer the reader for descriptions" in caption
    assert caption.endswith("do not report standard deviation or number of runs.")


def test_two_column_reading_order(pdfs):
    page1 = [b.text for b in pdfs["2020.acl-main.207"].blocks if b.page == 1 and b.footnote is None]
    left = next(i for i, t in enumerate(page1) if t.startswith("As the pace of scientific publication"))
    later = next(i for i, t in enumerate(page1) if t.startswith("In this paper, we introduce a new method"))
    assert left < later
    # the paragraph broken by the column break is one block, read left column first
    assert "representing individual words or sentences, extensions to whole-document" in page1[left]


def test_a_paragraph_across_a_page_break_is_one_block_from_its_first_page(pdfs):
    """SPECTER p. 1 right column ends "...substantially outperform the state-" and p. 2 goes on
    "of-the-art on a variety of document-level tasks": one block on p. 1 to p. 2, the
    hyphenation undone, and its chunk keeps the start page, the end page and its paragraph."""
    doc = pdfs["2020.acl-main.207"]
    block = next(b for b in doc.blocks if b.text.startswith("In this paper, we introduce a new method"))
    assert (block.page, block.page_end) == (1, 2) and "outperform the state-of-the-art on a variety" in block.text
    assert block.text[block.page_end_at :].lstrip().startswith(("of-the-art", "state-of-the-art"))
    chunk = next(c for c in chunk_document(doc) if c.text.startswith("In this paper, we introduce"))
    assert chunk.locator.page == 1 and chunk.locator.page_end == 2 and chunk.locator.paragraph == 3
    assert chunk.locator.describe().startswith("pp. 1–2")


def test_footnotes_are_blocks_of_their_own(pdfs):
    """SPECTER footnote 2 (p. 1, foot of the right column) is not inside the paragraph it
    interrupts; it is a footnote block with its mark, and the footnotes of a page and section
    are one chunk apart from the running text."""
    doc = pdfs["2020.acl-main.207"]
    notes = [b for b in doc.blocks if b.footnote is not None]
    two = next(b for b in notes if b.footnote == "2")
    assert two.page == 1 and two.text == "SPECTER: Scientific Paper Embeddings using Citation-informed TransformERs"
    running = [b.text for b in doc.blocks if b.footnote is None]
    assert not any("SPECTER: Scientific Paper" in t or "github.com/allenai/scidocs" in t for t in running)
    chunk = next(c for c in chunk_document(doc) if c.locator.footnote and "2" in c.locator.footnote.split(", "))
    assert chunk.kind == "text" and chunk.locator.page == 1 and chunk.locator.paragraph is None
    assert "Citation-informed TransformERs" in chunk.text and "footnote" in chunk.locator.describe()
    # a first-page note on the authors ("∗ Equal contribution") is not the paper's text
    assert not any(b.text.startswith("Equal contribution") for b in doc.blocks)
    assert not any(b.footnote == "∗" for b in doc.blocks)
    # the marks are gone from the sentences they followed
    assert not any(t.endswith(("paper:5", "embeddings.15")) for t in running)


def test_equations_are_their_own_blocks(pdfs):
    equations = [b for b in pdfs["2020.acl-main.207"].blocks if b.kind == "equation"]
    assert any("Transformer(input)" in b.text and b.text.endswith("(1)") and b.page == 2 for b in equations)
    loss = next(b for b in equations if "L = max" in b.text)
    assert loss.page == 3 and loss.text.splitlines() == [
        "We then train the model using the following triplet margin loss function:",
        "L = max d PQ, P+ − d PQ, P− + m , 0 (2)",
    ]


def test_an_equation_is_one_block_with_its_lead_in(pdfs):
    """S2ORC p. 4: the title-similarity score, a fraction over three lines, is one equation
    block that starts with the sentence introducing it; so are J and C with theirs."""
    equations = [b for b in pdfs["2020.acl-main.447"].blocks if b.kind == "equation" and b.page == 4]
    stitle = next(b for b in equations if "Stitle =" in b.text)
    lead, maths = stitle.text.split("\n")
    assert lead.endswith("harmonic mean between a Jaccard index and a containment metric:")
    assert maths == "2 × J × C Stitle = (1) J + C"
    jc = next(b for b in equations if "J =" in b.text)
    assert "min (|N1|, |N2|)" in jc.text and jc.text.startswith("where the Jaccard index J")
    assert len(equations) == 2


def test_dehyphenation_and_ligatures_in_body_text(pdfs):
    body = " ".join(b.text for b in pdfs["2020.acl-main.207"].blocks)
    assert "representations" in body and "repre- sentations" not in body
    assert "ﬁ" not in body and "ﬂ" not in body


def test_a_footnote_mark_glued_to_a_version_number_is_not_part_of_it(pdfs):
    # "GROBID v0.5.5" + a raised "10" (its footnote's mark; footnote 10 is on that page)
    body = " ".join(b.text for b in pdfs["2020.acl-main.447"].blocks if not b.footnote)
    assert "SCIENCEPARSE v3.0.0 and GROBID v0.5.5 (Lopez, 2009)" in body
    assert "v0.5.510" not in body and "v3.0.09" not in body


def test_two_footnotes_packed_in_one_chunk_are_two_sentences(pdfs):
    from tools.ingest.chunker import chunk_document
    from tools.retrieval.sentences import split_sentences

    chunks = [c for c in chunk_document(pdfs["2020.acl-main.447"]) if "pronounced “stork”" in c.text]
    assert len(chunks) == 1
    sentences = [s["text"] for s in split_sentences(chunks[0].chunk_id, chunks[0].text, chunks[0].kind)]
    assert "pronounced “stork”" in sentences  # footnote 7 alone, not glued to footnote 8
    assert any(s.startswith("The papers included in S2ORC are a curated subset") for s in sentences)


@pytest.mark.parametrize(
    ("stem", "section", "opening"),
    [
        ("2020.acl-main.447", "2.1 Processing PDFs › Selecting PDFs", "We remove PDFs which are less likely"),
        ("N18-3011", "2.1 Node Types › Papers", "We obtain metadata and PDF files"),
        ("2020.acl-main.207", "4 Experiments › Training Data", "To train our model"),
    ],
)
def test_a_run_in_paragraph_heading_names_its_subsection_and_is_not_its_first_sentence(pdfs, stem, section, opening):
    from tools.retrieval.sentences import split_sentences

    block = next(b for b in pdfs[stem].blocks if b.section == section)
    sentences = [s["text"] for s in split_sentences("", block.text)]
    assert sentences[1].startswith(opening), sentences[:2]
    assert section.split(" › ")[1] in sentences[0]


@pytest.mark.parametrize(
    ("stem", "title", "year"),
    [
        ("N18-3011", "content-based citation recommendation", 2018),
        ("N18-3011", "semi-supervised sequence tagging with bidirectional language models", 2017),
        ("N18-3011", "glove: global vectors for word representation", 2014),
        ("N18-3011", "long short-term memory", 1997),
        ("2020.acl-main.207", "construction of the literature graph in semantic scholar", 2018),
        ("2020.acl-main.207", "scibert: a pretrained language model for scientific text", 2019),
        ("2020.acl-main.207", "bert: pre-training of deep bidirectional transformers for language understanding", 2019),
        ("2020.acl-main.207", "inductive representation learning on large graphs", 2017),
        ("2020.acl-main.447", "construction of the literature graph in semantic scholar", 2018),
        ("2020.acl-main.447", "context-enhanced citation sentiment detection", 2012),
        ("2020.acl-main.447", "cord-19: the covid-19 open research dataset", 2020),
        ("2023.eacl-main.121", "rouge: a package for automatic evaluation of summaries", 2004),
        ("2023.eacl-main.121", "bertscore: evaluating text generation with bert", 2020),
    ],
)
def test_bibliography_titles(pdfs, stem, title, year):
    assert _titles(pdfs[stem]).get(title, "missing") == year


def test_bibliography_sizes(pdfs):
    assert len(pdfs["N18-3011"].paper.bibliography) == 27  # as GROBID also found
    assert 50 <= len(pdfs["2020.acl-main.207"].paper.bibliography) <= 60
    for stem, doc in pdfs.items():
        entries = doc.paper.bibliography
        with_year = sum(e.year is not None for e in entries)
        with_title = sum(bool(e.title) for e in entries)
        assert with_year >= 0.95 * len(entries), stem
        assert with_title >= 0.95 * len(entries), stem
        assert all(e.raw and "\n" not in e.raw for e in entries), stem


def test_trusted_metadata_wins():
    doc = parse_pdf(
        DEMO_PDFS / "N18-3011.pdf",
        metadata={
            "paper_id": "lit-graph",
            "title": "The Literature Graph",
            "authors": ["W. Ammar"],
            "venue": "NAACL-HLT",
            "year": "2018",
        },
    )
    paper = doc.paper
    assert (paper.paper_id, paper.title, paper.authors) == ("lit-graph", "The Literature Graph", ("W. Ammar",))
    assert (paper.venue, paper.year) == ("NAACL-HLT", 2018)
    assert parse_pdf(DEMO_PDFS / "N18-3011.pdf", paper_id="explicit").paper.paper_id == "explicit"


# --- PDFs that cannot be read ---------------------------------------------------------------


def _pdf_bytes(objects: list[bytes], trailer_extra: bytes = b"") -> bytes:
    """A minimal valid PDF with the given objects (1 = catalog) and a correct xref table."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R " % (len(objects) + 1) + trailer_extra
    out += b">>\nstartxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


BLANK_PAGE = [
    b"<< /Type /Catalog /Pages 2 0 R >>",
    b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] >>",
]


def test_corrupt_pdf_is_an_ingest_error_naming_the_file(tmp_path):
    bad = tmp_path / "garbage.pdf"
    bad.write_bytes(b"%PDF-1.5\n" + os.urandom(4000))
    with pytest.raises(IngestError) as err:
        parse_pdf(bad)
    assert str(bad) in str(err.value) and err.value.path == str(bad)
    assert "not a readable PDF" in str(err.value)


def test_truncated_pdf_is_an_ingest_error(tmp_path):
    bad = tmp_path / "truncated.pdf"
    bad.write_bytes(_pdf_bytes(BLANK_PAGE)[:60])
    with pytest.raises(IngestError, match="truncated.pdf"):
        parse_pdf(bad)


def test_encrypted_pdf_asks_for_the_password_to_be_removed(tmp_path):
    # Standard security handler (RC4, revision 2) whose user password is not empty: nothing
    # can be read without it.
    encrypt = b"<< /Filter /Standard /V 1 /R 2 /O <" + b"ab" * 32 + b"> /U <" + b"cd" * 32 + b"> /P -44 >>"
    ids = b"/Encrypt 4 0 R /ID [<0123456789abcdef0123456789abcdef><0123456789abcdef0123456789abcdef>] "
    locked = tmp_path / "locked.pdf"
    locked.write_bytes(_pdf_bytes([*BLANK_PAGE, encrypt], ids))
    with pytest.raises(IngestError) as err:
        parse_pdf(locked)
    assert str(locked) in str(err.value)
    assert "encrypted" in str(err.value) and "remove the password" in str(err.value)


def test_pdf_without_text_asks_for_ocr(tmp_path):
    blank = tmp_path / "scan.pdf"
    blank.write_bytes(_pdf_bytes(BLANK_PAGE))
    with pytest.raises(IngestError) as err:
        parse_pdf(blank)
    assert str(blank) in str(err.value) and "OCR" in str(err.value)


def _helvetica_page(ops: list[str], outline: list[bytes] | None = None) -> bytes:
    """A one-page PDF (612 x 792 pt) drawing `ops` with Helvetica as F1 and Helvetica-Bold as F2;
    `outline`, when given, is its outline's objects from number 7 on (7 the /Outlines root)."""
    stream = "\n".join(ops).encode("latin-1")
    catalog = b"<< /Type /Catalog /Pages 2 0 R" + (b" /Outlines 7 0 R" if outline else b"") + b" >>"
    return _pdf_bytes(
        [
            catalog,
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /Font << /F1 5 0 R /F2 6 0 R >> >> >>",
            b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold >>",
            *(outline or []),
        ]
    )


def _toy_paper(extra_ops: tuple[str, ...] = ()) -> bytes:
    """A one-column page in Helvetica: title, abstract, two sections, a fully ruled table
    (one cell on two lines) and a reference list with a hanging indent; `extra_ops` are drawn
    after them."""

    def text(x: float, y: float, size: int, font: str, s: str) -> str:
        return f"BT /{font} {size} Tf {x} {y} Td ({s}) Tj ET"

    ops = [
        text(72, 720, 16, "F2", "A Toy Paper About Ruled Tables"),
        text(72, 690, 12, "F2", "Abstract"),
        text(72, 675, 10, "F1", "We study toy tables in a synthetic document. This abstract has two lines of text"),
        text(72, 663, 10, "F1", "so that the parser can find it under its own heading."),
        text(72, 635, 12, "F2", "1 Introduction"),
        text(72, 620, 10, "F1", "Tables with full grids are found by pdfplumber. This paragraph explains why the toy"),
        text(72, 608, 10, "F1", "document exists and gives the parser some ordinary running text to read in one"),
        text(72, 596, 10, "F1", "column, from the left margin to the right margin of the page, without hyphens."),
        text(72, 570, 12, "F2", "2 Results"),
        text(72, 550, 10, "F1", "Table 1: Toy results with a full grid."),
    ]
    xs, ys = [72, 200, 330, 460], [540, 510, 480, 450]
    ops += [f"0.5 w {xs[0]} {y} m {xs[-1]} {y} l S" for y in ys]
    ops += [f"0.5 w {x} {ys[0]} m {x} {ys[-1]} l S" for x in xs]
    for r, row in enumerate([["Model", "Precision", "Recall"], ["Alpha", "0.91", "0.85"], ["Beta", "0.88", "0.90"]]):
        for c, cell in enumerate(row):
            ops.append(text(xs[c] + 5, ys[r + 1] + 16, 10, "F1", cell))
    ops.append(text(xs[0] + 5, ys[2] + 5, 10, "F1", "(ours)"))  # second line of the "Alpha" cell
    ops += [
        text(72, 425, 10, "F1", "The grid table above is read cell by cell, and its rows stay out of this text."),
        text(72, 395, 12, "F2", "References"),
        text(72, 380, 10, "F1", "Ann Author and Bob Writer. 2019. A study of toy tables. In Proceedings"),
        text(82, 368, 10, "F1", "of the Toy Conference."),
        text(72, 356, 10, "F1", "Carl Coder. 2020. Grids and rules: a survey. In ACL."),
        *extra_ops,
    ]
    return _helvetica_page(ops)


def test_one_column_paper_with_a_ruled_table(tmp_path):
    path = tmp_path / "toy.pdf"
    path.write_bytes(_toy_paper())
    doc = parse_pdf(path)
    paper = doc.paper
    assert paper.title == "A Toy Paper About Ruled Tables"  # not an appendix "A" heading
    assert paper.abstract.startswith("We study toy tables in a synthetic document.")
    assert (paper.venue, paper.year) == (None, None)  # "In ACL." in a reference is not a venue
    assert [(b.kind, b.section, b.page) for b in doc.blocks] == [
        ("text", "1 Introduction", 1),
        ("table", "2 Results", 1),
        ("text", "2 Results", 1),
    ]
    assert doc.blocks[0].text.endswith("to the right margin of the page, without hyphens.")
    # pdfplumber's find_tables reads the grid: the two-line cell stays one cell
    assert doc.blocks[1].text.splitlines() == [
        "Table 1: Toy results with a full grid.",
        "| Model | Precision | Recall |",
        "|---|---|---|",
        "| Alpha (ours) | 0.91 | 0.85 |",
        "| Beta | 0.88 | 0.90 |",
    ]
    assert [(e.title, e.year) for e in paper.bibliography] == [
        ("A study of toy tables", 2019),
        ("Grids and rules: a survey", 2020),
    ]


SIDEWAYS = "This note is printed sideways along the right edge of the page and the reader cannot follow it"


def test_text_the_reader_drops_is_put_back_from_the_plain_text_layer(tmp_path):
    """The reader leaves rotated words out; the text floor finds them in pypdfium2's plain text
    of the page and puts them back as a paragraph of that page, and the text account is taken
    against that layer."""
    path = tmp_path / "sideways.pdf"
    path.write_bytes(_toy_paper((f"BT /F1 7 Tf 0 1 -1 0 560 90 Tm ({SIDEWAYS}) Tj ET",)))
    doc = parse_pdf(path)
    back = [b for b in doc.blocks if "printed sideways" in b.text]
    assert [(b.kind, b.page, b.section) for b in back] == [("text", 1, "2 Results")]
    assert back[0].text == SIDEWAYS
    assert doc.blocks[-1] is back[0]  # after the page's last block: it comes last in the plain layer
    account = doc.text_account
    assert account is not None and account.against == "the PDF's plain text layer"
    assert account.put_back == 1 and account.put_back_words == len(SIDEWAYS.split())
    assert account.share > 0.95 and account.problem("sideways.pdf") is None
    # the same page without the sideways note: nothing is put back, the table's grid is not lost
    path.write_bytes(_toy_paper())
    plain = parse_pdf(path)
    assert plain.text_account is not None and plain.text_account.put_back == 0
    assert [b.text for b in plain.blocks] == [b.text for b in doc.blocks if b is not back[0]]


def _revtex_like() -> bytes:
    """A REVTeX-like page written here: body at 10 pt, headings in bold a point smaller,
    numbered roman, lettered and arabic; superscript citations glued to their word; and a
    bibliography with no heading whose labels are superscripts glued to the first initial."""

    def text(x: float, y: float, size: int, font: str, s: str) -> str:
        return f"BT /{font} {size} Tf {x} {y} Td ({s}) Tj ET"

    def cited(x: float, y: float, s: str, marks: str) -> str:  # the marks raised 4 pt right after the text
        return f"BT /F1 10 Tf {x} {y} Td ({s}) Tj /F1 7 Tf 4 Ts ({marks}) Tj 0 Ts ET"

    body = "Pens were cut from the flight feathers of geese and swans for many centuries before steel"
    ops = [
        text(72, 740, 14, "F2", "Quills and Nibs: A Toy Study"),
        text(72, 700, 9, "F2", "I. INTRODUCTION"),
        text(72, 685, 10, "F1", body),
        cited(72, 673, "nibs replaced them in the offices of the nineteenth century, as two surveys show.", "1,2"),
        text(72, 650, 9, "F2", "A. Feathers"),
        text(72, 635, 10, "F1", "The best feathers came from the left wing of the bird, and they were hardened in"),
        cited(72, 623, "hot sand before they were cut into pens with a small knife, the penknife.", "3"),
        text(72, 600, 9, "F2", "1. Cutting"),
        text(72, 585, 10, "F1", "A pen was cut with a slit in its point so that the ink would flow evenly down."),
        text(72, 562, 9, "F2", "II. STEEL"),
        text(72, 547, 10, "F1", "Steel nibs were stamped from sheet metal in great numbers in the later decades"),
        cited(72, 535, "of the century and sold by the gross to clerks, schools and writers everywhere.", "2,4"),
        text(72, 500, 9, "F1", "1P. Quill, J. Writ. 3, 1 (1990)."),
        text(72, 488, 9, "F1", "2S. Nib and T. Blot, J. Writ. 5, 10 (1995)."),
        text(72, 476, 9, "F1", "3T. Blot, Pap. Lett. 7, 3 (2001)."),
        text(72, 464, 9, "F1", "4V. Well, Desk Stud. 1, 1 (2003)."),
    ]
    return _helvetica_page(ops)


def test_a_revtex_like_paper_roman_and_lettered_headings_superscripts_and_an_unheaded_bibliography(tmp_path):
    from tools.citations.extract import paper_contexts
    from tools.ingest.chunker import chunk_document

    path = tmp_path / "revtex.pdf"
    path.write_bytes(_revtex_like())
    doc = parse_pdf(path)
    assert [b.section for b in doc.blocks if b.kind == "text"] == [
        "I. INTRODUCTION",
        "I. INTRODUCTION › A. Feathers",
        "I. INTRODUCTION › A. Feathers › 1 Cutting",
        "II. STEEL",
    ]
    assert [(e.authors, e.year) for e in doc.paper.bibliography] == [
        (("P. Quill",), 1990),
        (("S. Nib", "T. Blot"), 1995),
        (("T. Blot",), 2001),
        (("V. Well",), 2003),
    ]
    contexts = paper_contexts(doc, chunk_document(doc))
    assert sorted({c.key for c in contexts}) == ["b0", "b1", "b2", "b3"]
    assert sorted(c.key for c in contexts if c.section == "II. STEEL") == ["b1", "b3"]


def test_run_in_subsections_the_outline_names_are_headings(tmp_path):
    """An outline (bookmarks) names the subsections of a page where they are run into their
    paragraphs ('1.1. Feathers. The best ...', the style of the AMS classes): each starts its
    section, and its paragraph keeps the rest of the line."""

    def text(y: float, font: str, s: str) -> str:
        return f"BT /{font} 10 Tf 72 {y} Td ({s}) Tj ET"

    ops = [
        "BT /F2 14 Tf 72 740 Td (Quills and Nibs) Tj ET",
        text(700, "F2", "1. Pens"),
        text(685, "F1", "Writing was done with pens cut from feathers for a thousand years and more."),
        text(665, "F1", "1.1. Feathers. The best feathers came from the left wing of a goose or a swan,"),
        text(653, "F1", "and they were hardened in hot sand before they were cut with the penknife."),
        text(633, "F1", "1.2. Steel. Steel nibs were stamped from sheet metal by the million and sold"),
        text(621, "F1", "by the gross to the clerks of banks and offices in the later nineteenth century."),
    ]

    def item(title: str, parent: int, prev: int | None, nxt: int | None, y: int) -> bytes:
        links = (b" /Prev %d 0 R" % prev if prev else b"") + (b" /Next %d 0 R" % nxt if nxt else b"")
        return b"<< /Title (%s) /Parent %d 0 R /Dest [3 0 R /XYZ 72 %d 0]%s >>" % (title.encode(), parent, y, links)

    outline = [
        b"<< /Type /Outlines /First 8 0 R /Last 8 0 R /Count 3 >>",
        b"<< /Title (1 Pens) /Parent 7 0 R /First 9 0 R /Last 10 0 R /Count 2 /Dest [3 0 R /XYZ 72 710 0] >>",
        item("1.1 Feathers", 8, None, 10, 675),
        item("1.2 Steel", 8, 9, None, 643),
    ]
    path = tmp_path / "runin.pdf"
    path.write_bytes(_helvetica_page(ops, outline))
    doc = parse_pdf(path)
    assert [(b.section, b.text.split()[:3]) for b in doc.blocks] == [
        ("1 Pens", ["Writing", "was", "done"]),
        ("1.1 Feathers", ["The", "best", "feathers"]),
        ("1.2 Steel", ["Steel", "nibs", "were"]),
    ]


def test_subsection_numbers_that_continue_the_section_are_headings_in_any_face(tmp_path):
    """'2.1 Discarded' set in the body's regular face on a line of its own, under a bold '2.
    Changes' (JPSJ), is a subsection; a number that does not continue the numbering is text."""

    def text(y: float, font: str, s: str) -> str:
        return f"BT /{font} 10 Tf 72 {y} Td ({s}) Tj ET"

    ops = [
        "BT /F2 14 Tf 72 740 Td (Quills and Nibs) Tj ET",
        text(700, "F2", "1. Pens"),
        text(685, "F1", "Writing was done with pens cut from feathers for a thousand years and more."),
        text(665, "F1", "1.1 Feathers"),
        text(650, "F1", "The best feathers came from the left wing of a goose or a swan, and they were"),
        text(638, "F1", "hardened in hot sand before they were cut with the penknife by the writer."),
        text(618, "F1", "1.3 Steel"),
        text(603, "F1", "Steel nibs were stamped from sheet metal by the million and sold by the gross."),
        text(583, "F1", "1.2 Ink"),
        text(568, "F1", "Ink was made from oak galls and iron salts, and it darkened as it dried on paper."),
    ]
    path = tmp_path / "faces.pdf"
    path.write_bytes(_helvetica_page(ops))
    blocks = parse_pdf(path).blocks
    assert list(dict.fromkeys(b.section for b in blocks)) == ["1 Pens", "1.1 Feathers", "1.2 Ink"]
    # '1.3 Steel' skips 1.2: not a heading, its line stays text of 1.1
    assert any(b.section == "1.1 Feathers" and "1.3 Steel" in b.text for b in blocks)


def test_a_dated_alphabetical_listing_before_the_references_is_not_the_bibliography(tmp_path):
    """A guide shows its bibliography's source (alphabetical, dated lines) before the real list
    under 'REFERENCES' set in the body's face: the listing stays text, the list after the line
    that names it is the bibliography."""

    def text(y: float, s: str) -> str:
        return f"BT /F1 10 Tf 72 {y} Td ({s}) Tj ET"

    names = ["Abel", "Blot", "Cask", "Dunn", "Egg", "Fell", "Gall", "Hook", "Ink", "Jott", "Kent", "Lamb"]
    entries = [f"{n}, {n[0]}. Q., J. Writ. {k + 1}, 10 (19{60 + k})." for k, n in enumerate(names)]
    prose = "The guide explains at some length how a list of works is written for the journal."
    ops = ["BT /F2 14 Tf 72 740 Td (A Guide to Citing Pens) Tj ET"]
    ops += [text(710 - 11 * n, prose) for n in range(27)]  # the listing comes in the paper's second half
    ops += [text(400 - 11 * n, e) for n, e in enumerate(entries)]
    ops += [text(260, "and it prints as the list below, in the journal's own style for its references.")]
    ops += [text(235, "REFERENCES")] + [text(215 - 11 * n, e) for n, e in enumerate(entries)]
    path = tmp_path / "guide.pdf"
    path.write_bytes(_helvetica_page(ops))
    doc = parse_pdf(path)
    assert [e.raw for e in doc.paper.bibliography] == entries
    assert any(b.text.startswith("Abel, A. Q.") for b in doc.blocks)  # the listing, as text


def test_missing_pdf_is_an_ingest_error(tmp_path):
    with pytest.raises(IngestError, match="file not found"):
        parse_pdf(tmp_path / "nowhere.pdf")


# --- S2ORC JSON ------------------------------------------------------------------------------


def test_s2orc_2020_release_with_pdf_parse(fulltext):
    [doc] = parse_s2orc(fulltext / "N18-3011.json")
    paper = doc.paper
    assert paper.paper_id == "N18-3011"
    assert paper.title == "Construction of the Literature Graph in Semantic Scholar"
    assert paper.abstract.startswith("We describe a deployed scalable system")
    assert paper.authors[:2] == ("Waleed Ammar", "Dirk Groeneveld") and len(paper.authors) == 23
    assert paper.year is None  # the record's year is empty
    assert all(b.page is None for b in doc.blocks)
    assert [b.kind for b in doc.blocks].count("text") == 71
    sections = {b.section for b in doc.blocks}
    assert {
        "1 Introduction",
        "2.1 Node Types",
        "4.2 Entity Extraction Models",
        "6 Conclusion and Future Work",
    } <= sections
    assert doc.blocks[0].text.startswith("The goal of this work is to facilitate algorithmic discovery")
    assert len(paper.bibliography) == 27
    first = paper.bibliography[0]
    assert first.title.startswith("The ai2 system at semeval-2017 task 10")
    assert first.year == 2017 and first.raw.startswith("Waleed Ammar, Matthew E. Peters")
    assert "content-based citation recommendation" in _titles(doc)


def test_s2orc_specter_equations_tables_and_truncated_id(fulltext):
    [doc] = parse_s2orc(fulltext / "2020.acl-main.207.json")
    # the record says paper_id "2020": cut at the first dot; the file name is the real id
    assert doc.paper.paper_id == "2020.acl-main.207"
    equation = next(b for b in doc.blocks if b.kind == "equation")
    assert "Transformer(input)" in equation.text and equation.text.endswith("(1)")
    assert equation.section == "Document Representation"
    table1 = next(b for b in doc.blocks if b.table_id == "Table 1")  # number from the body's "Table 1"
    assert table1.text == "Results on the SCIDOCS evaluation suite consisting of 7 tasks."
    table2 = next(b for b in doc.blocks if b.table_id == "Table 2")
    assert "Ablations: Numbers are averages of metrics" in table2.text  # from the table content
    assert next(b for b in doc.blocks if b.kind == "figure").text.startswith("t-SNE visualization")
    acks = [b for b in doc.blocks if b.section == "Acknowledgements"]
    assert acks and acks[0].text.startswith("We thank Kyle Lo")  # back matter is kept
    assert _titles(doc)["construction of the literature graph in semantic scholar"] == 2018


@pytest.mark.parametrize("path", S2ORC_SHAPES, ids=lambda p: p.stem[:12])
def test_every_s2orc_shape_parses(path):
    [doc] = parse_s2orc(path)
    assert doc.paper.paper_id == path.stem
    assert doc.paper.source == str(path)
    assert [b for b in doc.blocks if b.kind == "text"]
    assert all(b.text.strip() and b.page is None for b in doc.blocks)
    assert doc.paper.bibliography and all(e.raw for e in doc.paper.bibliography)
    assert not doc.paper.abstract.startswith("Abstract")


def test_s2orc_metadata_shape(fulltext):
    [doc] = parse_s2orc(fulltext / "s2orc_json" / "10002293.json")
    paper = doc.paper
    assert paper.title.startswith("Antimicrobial Photodynamic Therapy against Endodontic")
    assert (paper.venue, paper.year) == ("Frontiers in microbiology", 2017)
    assert paper.bibliography[0].link == "25540194"  # S2ORC's `links` to the cited paper
    figure1 = next(b for b in doc.blocks if b.figure_id == "Figure 1")
    assert figure1.text.startswith("FIGURE 1 | Chemical structures of the photosensitizers")


def test_s2orc_bare_parse_without_title(fulltext):
    [doc] = parse_s2orc(fulltext / "s2orc_json" / "18980380.json")
    assert doc.paper.title == ""
    assert doc.paper.abstract.startswith("This technical note studies Markov decision processes")
    assert "V. CONCLUSION" in {b.section for b in doc.blocks}
    assert doc.paper.bibliography[0].link == "7229756"  # the singular `link` field
    table = next(b for b in doc.blocks if b.table_id == "Table I")  # body says "Table I"
    assert table.text.startswith("TOTAL DISCOUNTED REWARDS")


def test_s2orc_caption_decides_figure_or_table(fulltext):
    [doc] = parse_s2orc(fulltext / "s2orc_json" / "24e6b80e338a4e543de6b49cada07156c9149d22.json")
    assert doc.paper.year == 2011  # from "2011-11"
    # GROBID filed "FIG. 1. Map of the ECS ..." under TABREF0: the caption is right
    figure1 = next(b for b in doc.blocks if b.figure_id == "Figure 1")
    assert figure1.kind == "figure" and figure1.text.startswith("FIG. 1. Map of the ECS")


def test_s2orc_jsonl_gives_one_document_per_line(fulltext, tmp_path):
    names = ["10045593.json", "94551546.json"]
    lines = [json.dumps(json.loads((fulltext / "s2orc_json" / n).read_text())) for n in names]
    jsonl = tmp_path / "papers.jsonl"
    jsonl.write_text("\n".join(lines) + "\n\n", encoding="utf-8")
    docs = parse_s2orc(jsonl)
    assert [d.paper.paper_id for d in docs] == ["10045593", "94551546"]
    assert all(d.blocks for d in docs)


def test_s2orc_errors_name_the_file_and_line(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text('{"paper_id": "x",\n "body_text": [\n', encoding="utf-8")
    with pytest.raises(IngestError) as err:
        parse_s2orc(broken)
    assert str(broken) in str(err.value) and "not valid JSON" in str(err.value)
    assert err.value.line is not None

    jsonl = tmp_path / "two.jsonl"
    jsonl.write_text('{"paper_id": "a", "title": "A", "body_text": []}\n{"paper_id": \n', encoding="utf-8")
    with pytest.raises(IngestError) as err:
        parse_s2orc(jsonl)
    assert err.value.line == 2 and f"{jsonl}:2:" in str(err.value)

    anonymous = tmp_path / "anonymous.json"
    anonymous.write_text(json.dumps({"title": "T", "body_text": [{"text": "x"}]}), encoding="utf-8")
    with pytest.raises(IngestError, match="no 'paper_id'; give every paper a unique id"):
        parse_s2orc(anonymous)


def test_s2orc_skips_empty_paragraphs_and_placeholder_equations(tmp_path):
    record = {
        "paper_id": "p1",
        "title": "P1",
        "pdf_parse": {
            "body_text": [
                {"text": "  ", "section": "Intro", "sec_num": "1"},
                {"text": "EQUATION", "section": "Intro", "eq_spans": [{"start": 0, "end": 8, "text": "EQUATION"}]},
                {"text": "Real text.", "section": "Intro", "sec_num": "1"},
            ],
            "bib_entries": {"BIBREF0": {"title": "A title", "year": "2019", "authors": [{"first": "A", "last": "B"}]}},
        },
    }
    path = tmp_path / "p1.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    [doc] = parse_s2orc(path)
    assert [(b.kind, b.text, b.section) for b in doc.blocks] == [("text", "Real text.", "1 Intro")]
    entry = doc.paper.bibliography[0]
    assert (entry.title, entry.year, entry.raw, entry.link) == ("A title", 2019, "A B. 2019. A title.", None)


def test_pdfs_parsed_in_worker_processes_equal_the_serial_parse(tmp_path):
    """A build parses PDFs in a pool (LITLOOP_INGEST__WORKERS): the same Documents in the same
    order as one by one, and a broken PDF is still reported with its file, the rest kept."""
    import shutil

    from tools.ingest.loader import load_documents

    for stem in ("N18-3011", "2020.acl-main.207"):
        shutil.copy(DEMO_PDFS / f"{stem}.pdf", tmp_path / f"{stem}.pdf")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.5\nnot really a pdf")
    serial = load_documents([tmp_path], workers=1)
    pooled = load_documents([tmp_path], workers=2)
    assert [d.paper.paper_id for d in pooled.documents] == ["2020.acl-main.207", "N18-3011"]
    assert pooled.documents == serial.documents
    assert pooled.problems == serial.problems and "broken.pdf" in pooled.problems[0]


def _review_copy() -> bytes:
    """Three one-column pages of a review copy: a running head and foot on every page and line
    numbers down the left margin, around ordinary paragraphs."""

    def text(x: float, y: float, size: int, font: str, s: str) -> str:
        return f"BT /{font} {size} Tf {x} {y} Td ({s}) Tj ET"

    sentence = "Line %d of page %d says something ordinary about toy papers and their parsing here."
    streams, number = [], 1
    for page in range(1, 4):
        ops = [
            text(72, 760, 9, "F1", "Under review as a conference paper at TOYCONF 2026"),
            text(290, 30, 9, "F1", f"Page {page} of 3"),
        ]
        if page == 1:
            ops += [text(72, 720, 16, "F2", "A Toy Review Copy"), text(72, 690, 12, "F2", "1 Introduction")]
        y = 670 if page == 1 else 720
        for k in range(14):
            ops.append(text(40, y, 8, "F1", str(number)))
            ops.append(text(72, y, 10, "F1", sentence % (k + 1, page)))
            y, number = y - 13, number + 1
        streams.append("\n".join(ops).encode("latin-1"))
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R 4 0 R 5 0 R] /Count 3 >>"]
    for k in range(3):
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
            b"/Resources << /Font << /F1 9 0 R /F2 10 0 R >> >> >>" % (6 + k)
        )
    for stream in streams:
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objects += [
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold >>",
    ]
    return _pdf_bytes(objects)


def test_running_heads_and_line_numbers_are_dropped(tmp_path):
    path = tmp_path / "review.pdf"
    path.write_bytes(_review_copy())
    doc = parse_pdf(path)
    body = "\n".join(b.text for b in doc.blocks)
    assert "Under review" not in body and "Page 2 of 3" not in body
    assert "Line 1 of page 2 says something ordinary" in body
    first = next(b for b in doc.blocks if "Line 1 of page 1" in b.text)
    assert first.text.startswith("Line 1 of page 1 says something ordinary about toy papers")  # no "1 " before it
    assert not any(re.search(r"\bhere\. \d+ Line", b.text) or re.match(r"\d+ Line", b.text) for b in doc.blocks)


@pytest.mark.parametrize(
    ("stem", "label", "header_rows", "rows", "cell"),
    [
        # read off the page images (bench/data/pdf_tables.json): two header levels, CS and Bio spanning
        ("N18-3011", "Table 2", 2, 5, (3, 2, "1990")),
        # numbers set one space apart, and a row label close to its first value
        ("2020.acl-main.207", "Table 3", 1, 6, (4, 1, "82.9")),
        # a full-width table whose header cells wrap over three lines: one header row
        ("2020.acl-main.447", "Table 1", 1, 7, (6, 4, "CiteSeerX")),
    ],
)
def test_tables_are_grids_with_their_rows_and_cells(pdfs, stem, label, header_rows, rows, cell):
    from tools.tables import parse_grid

    grid, heads = parse_grid(_object(pdfs[stem], label).text)
    assert (heads, len(grid)) == (header_rows, rows)
    r, c, text = cell
    assert grid[r][c] == text
    assert len({len(row) for row in grid}) == 1  # every row has every column
