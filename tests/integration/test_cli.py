"""The command line against a real index: JSON contract, human output, errors."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from agent.cli.main import app

from .conftest import CRF_ID

pytestmark = pytest.mark.integration

runner = CliRunner()


def test_search_json_contract(built_index):
    r = runner.invoke(
        app,
        ["search", "conditional random fields sequence labeling", "--index", str(built_index), "--k", "3", "--json"],
    )
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["query"] == "conditional random fields sequence labeling" and data["retriever"] == "hybrid"
    assert len(data["hits"]) == 3
    hit = data["hits"][0]
    assert hit["paper_id"] == CRF_ID
    assert set(hit) == {"paper_id", "title", "score", "chunk"}
    assert set(hit["chunk"]) == {"chunk_id", "kind", "text", "locator", "withheld", "score", "source"}
    assert hit["chunk"]["withheld"] is False  # the command shows paper text as stored


def test_search_human_output_shows_locator(built_index):
    r = runner.invoke(app, ["search", "literature graph semantic scholar", "--index", str(built_index), "-k", "2"])
    assert r.exit_code == 0, r.output
    assert "Construction of the Literature Graph in Semantic Scholar" in r.stdout
    assert "p. " in r.stdout


def test_index_info_json(built_index):
    r = runner.invoke(app, ["index", "info", "--index", str(built_index), "--json"])
    assert r.exit_code == 0, r.output
    info = json.loads(r.stdout)
    assert info["counts"]["papers"] > 200
    assert set(info["counts"]["chunks_by_kind"]) == {"title_abstract", "text", "equation", "figure", "table"}
    assert info["embedder"]["name"] == "bundled:all-MiniLM-L6-v2" and info["compatible_with_settings"]
    shown = runner.invoke(app, ["index", "info", "--index", str(built_index)])
    words = info["counts"]["ligatures_repaired"]["words"]
    assert shown.exit_code == 0 and f"{words} words that had lost a ligature" in " ".join(shown.stdout.split())


def test_index_build_says_which_words_it_repaired(tmp_path):
    (tmp_path / "papers.jsonl").write_text(
        json.dumps({"paper_id": "a", "title": "Random elds", "abstract": "We de ne a speci c model."}) + "\n"
    )
    r = runner.invoke(app, ["index", "build", str(tmp_path / "papers.jsonl"), "--index", str(tmp_path / "idx")])
    assert r.exit_code == 0, r.output
    assert "Repaired 3 words in 1 paper whose text had lost a ligature" in " ".join(r.stdout.split())


def test_bad_retriever_and_missing_index_are_clear_errors(built_index, tmp_path):
    r = runner.invoke(app, ["search", "x", "--index", str(built_index), "--retriever", "magic"])
    assert r.exit_code == 2 and "--retriever must be one of" in r.output
    r = runner.invoke(app, ["search", "x", "--index", str(tmp_path / "none")])
    assert r.exit_code == 1 and "no index here" in r.output
    r = runner.invoke(app, ["index", "build", str(tmp_path), "--index", str(tmp_path / "new")])
    assert r.exit_code == 1 and "no supported files in this folder" in r.output


# ----------------------------------------------------------------------------- index show

PDF_ID = "N18-3011"


def _indexed_chunks(root, paper_id):
    from agent.settings import get_settings
    from tools.index import open_index

    idx = open_index(root, get_settings())
    try:
        return idx.papers[paper_id], idx.paper_chunks(paper_id)
    finally:
        idx.close()


def test_index_show_prints_every_chunk_in_order_with_kind_page_and_full_text(built_index):
    paper, chunks = _indexed_chunks(built_index, PDF_ID)
    r = runner.invoke(app, ["index", "show", PDF_ID, "--index", str(built_index)])
    assert r.exit_code == 0, r.output
    head = r.stdout.split("\n  1. ")[0]
    assert paper.title in head and PDF_ID in head and f"source: {paper.source}" in head
    assert f"{len(chunks)} chunks: " in head and "title_abstract 1" in head
    # each chunk's header line (number, id, kind, locator) then its text verbatim, in index order
    at = 0
    for n, c in enumerate(chunks, start=1):
        line = f"{n:>3}. {c.chunk_id}  {c.kind} · {c.locator.describe()}\n{c.text}\n"
        found = r.stdout.find(line, at)
        assert found > at, f"chunk {n} ({c.chunk_id}) missing or out of order"
        at = found
    assert {c.kind for c in chunks} >= {"title_abstract", "text"}
    assert "  text · p. " in r.stdout  # a PDF's body chunks name their page


def test_index_show_json_is_the_paper_record_and_its_chunks(built_index):
    paper, chunks = _indexed_chunks(built_index, CRF_ID)
    r = runner.invoke(app, ["index", "show", CRF_ID, "--index", str(built_index), "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert set(data) == {"paper", "flagged", "text_loss", "chunk_count", "first_chunk", "chunks"}
    assert data["text_loss"] is None and data["flagged"] is False  # a CiteSeer record: no PDF, no steering
    assert data["paper"] == paper.to_dict()
    assert data["chunk_count"] == len(chunks) and data["first_chunk"] == 0
    assert data["chunks"] == [
        {
            "chunk_id": c.chunk_id,
            "kind": c.kind,
            "text": c.text,
            "locator": c.locator.to_dict(),
            "withheld": False,
            "score": None,
            "source": None,
        }
        for c in chunks
    ]


def test_index_show_unknown_id_names_it_and_the_index_and_suggests_ids(built_index):
    r = runner.invoke(app, ["index", "show", "n18-3011", "--index", str(built_index)])
    assert r.exit_code == 2 and r.stdout == ""
    message = " ".join(r.output.split())  # rich may wrap the line
    assert "no paper 'n18-3011' in index" in message and str(built_index) in message
    assert "litloop search" in message and f"did you mean {PDF_ID}?" in message
    r = runner.invoke(app, ["index", "show", "no-such-paper", "--index", str(built_index)])
    assert r.exit_code == 2 and "did you mean" not in r.output and "no-such-paper" in r.output


def test_index_show_over_several_corpora_takes_namespaced_ids(graph_index, monkeypatch):
    import agent.cli.index
    from agent.settings import get_settings
    from tools.index import open_index
    from tools.index.multi import MultiIndex

    monkeypatch.setattr(
        agent.cli.index,
        "open_index_or_demo",
        lambda index, corpus=None: MultiIndex(
            {"one": open_index(graph_index, get_settings()), "two": open_index(graph_index, get_settings())}
        ),
    )
    r = runner.invoke(app, ["index", "show", "two:crf", "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["paper"]["paper_id"] == "two:crf" and data["paper"]["references"] == ["two:hmm", "two:memm"]
    assert [c["chunk_id"] for c in data["chunks"]] == ["two:crf#c0"]
    r = runner.invoke(app, ["index", "show", "crf"])
    assert r.exit_code == 2
    message = " ".join(r.output.split())
    assert "in corpora one, two" in message and "did you mean one:crf, two:crf?" in message


def _lose_page_3(monkeypatch) -> None:
    """A reader fault: every block of page 3 of a PDF goes missing."""
    import dataclasses

    import tools.ingest.pdf as pdf

    real = pdf.build_document

    def losing_page_3(*args, **kwargs):
        doc = real(*args, **kwargs)
        return dataclasses.replace(doc, blocks=tuple(b for b in doc.blocks if b.page != 3))

    monkeypatch.setattr(pdf, "build_document", losing_page_3)


def test_a_page_the_reader_loses_is_put_back_from_the_plain_text_layer(tmp_path, monkeypatch):
    # the reader fault of the test below, with the text floor at work: page 3's paragraphs come
    # back from pypdfium2's text of the page, so they can be found and cited, and nothing warns
    from tests.conftest import DEMO_PDFS

    _lose_page_3(monkeypatch)
    (tmp_path / "in").mkdir()
    shutil.copy(DEMO_PDFS / "N18-3011.pdf", tmp_path / "in" / "N18-3011.pdf")
    idx = tmp_path / "idx"
    r = runner.invoke(app, ["index", "build", str(tmp_path / "in"), "--index", str(idx)])
    assert r.exit_code == 0, r.output
    assert "kept" not in " ".join(r.output.split())
    shown = json.loads(runner.invoke(app, ["index", "show", "N18-3011", "--index", str(idx), "--json"]).stdout)
    page_3 = [c for c in shown["chunks"] if c["locator"]["page"] == 3]
    assert len(page_3) >= 3 and sum(len(c["text"].split()) for c in page_3) > 500


def test_a_pdf_build_that_loses_a_page_says_so_and_the_index_keeps_the_note(tmp_path, monkeypatch):
    # the reader fault, and the text floor unable to put the page back (no run counts as a
    # paragraph): the accounting of each page's words against the PDF's plain text layer reports it
    import tools.ingest.pdf.floor as floor
    from tests.conftest import DEMO_PDFS

    _lose_page_3(monkeypatch)
    monkeypatch.setattr(floor, "MIN_RUN", 10**9)
    (tmp_path / "in").mkdir()
    shutil.copy(DEMO_PDFS / "N18-3011.pdf", tmp_path / "in" / "N18-3011.pdf")
    idx = tmp_path / "idx"
    r = runner.invoke(app, ["index", "build", str(tmp_path / "in"), "--index", str(idx)])
    assert r.exit_code == 0, r.output
    said = " ".join(r.output.split())
    assert "warning:" in said and "N18-3011" in said and "p. 3 kept 0.0" in said
    info = json.loads(runner.invoke(app, ["index", "info", "--index", str(idx), "--json"]).stdout)
    [loss] = info["counts"]["text_losses"]
    assert loss["paper_id"] == "N18-3011" and loss["lost_pages"] == [3] and loss["share"] < 0.9
    shown = runner.invoke(app, ["index", "show", "N18-3011", "--index", str(idx)])
    assert "pages 3 kept under half" in " ".join(shown.stdout.split())
    assert "1 PDF(s) kept too little" in " ".join(
        runner.invoke(app, ["index", "info", "--index", str(idx)]).stdout.split()
    )
