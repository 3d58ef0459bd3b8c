"""Citation contexts on real text: the shipped PDFs, the S2ORC JSON and GROBID TEI fixtures, and an
index of the four demo PDFs (real parser, chunker, sentence splitter, BM25, Chroma, embedder):
exact counts checked by hand, one record per cited work across papers, adds and compaction that
keep every context, an index from before contexts that still opens and says how to get them, and
the `cites` / `refs` commands."""

from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli.main import app
from agent.settings import get_settings
from bench.citations import GOLD, score
from tests.conftest import DEMO_PDFS
from tools.citations.extract import paper_contexts
from tools.index import build_index, compact_index, index_info, open_index, upgrade_index
from tools.ingest.chunker import chunk_document
from tools.ingest.pdf import parse_pdf
from tools.ingest.s2orc import parse_s2orc
from tools.ingest.tei import parse_tei

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
S2ORC = REPO / "tests" / "data" / "s2orc"
TEI = REPO / "tests" / "data" / "tei"
FORMAT1 = REPO / "tests" / "data" / "index-format1"


def _contexts(doc):
    chunks = chunk_document(doc)
    return chunks, paper_contexts(doc, chunks)


def _gold(paper: str) -> dict:
    return json.loads(next(g for g in GOLD if g.stem == paper).read_text())


@pytest.mark.parametrize(("paper", "count"), [("N18-3011", 30), ("2020.acl-main.207", 97)])
def test_pdf_contexts_match_the_hand_count(paper, count):
    """Every page of each PDF was read by hand and each in-text citation of a bibliography entry
    written down ('surname year', under the page its year is printed on): 30 in N18-3011, 97 in
    SPECTER (2020.acl-main.207); groups count one per work, '2017a,b' two, model names with years
    in a table none. How, in detail: the "how" of bench/data/citations/<paper>.json. Each found
    context must be one of them, on its page, naming the entry the hand count names."""
    doc = parse_pdf(DEMO_PDFS / f"{paper}.pdf", paper_id=paper)
    chunks, contexts = _contexts(doc)
    assert len(contexts) == count
    by_id = {c.chunk_id: c for c in chunks}
    raw = {e.key: e.raw for e in doc.paper.bibliography}
    found = [(by_id[c.chunk_id].locator.page_of(c.cite_end - 1), raw[c.key]) for c in contexts]
    result = score(found, {int(p): v for p, v in _gold(paper)["pages"].items()})
    assert result["right"] == count, (result["wrong"], result["missed"])
    for c in contexts:  # the sentence is the chunk's text there, holding the citation
        text = by_id[c.chunk_id].text
        assert c.start <= c.cite_start < c.cite_end <= c.end or c.start <= c.cite_start < c.end
        assert " ".join(text[c.start : c.end].split()) == c.sentence
        assert c.page is not None and c.section


def test_s2orc_and_tei_of_one_parse_give_the_same_contexts():
    """SPECTER's GROBID parse as S2ORC JSON and as TEI: 58 cite spans link an entry, and 4 that
    GROBID left unlinked name one by their text ('(Kiros et al., 2015)', 'Hamilton et al.,
    2017a,b' twice, 'Wu et al., 2019a,b' once: its 2019b is not in GROBID's bibliography); the
    other unlinked spans are footnote marks, a hyperparameter list ('[5, 10, 15]') and works
    GROBID's bibliography lacks (RoBERTa, Bruna 2014) or garbled (Řehůřek). N18-3011: 20 linked
    spans and '(e.g., Lample et al., 2016'. Counted from the fixture's spans, listed above."""
    for paper, count in (("2020.acl-main.207", 62), ("N18-3011", 21)):
        s2orc_doc = parse_s2orc(S2ORC / f"{paper}.json")[0]
        tei_doc = parse_tei(TEI / f"{paper}.tei.xml")
        _, from_json = _contexts(s2orc_doc)
        _, from_tei = _contexts(tei_doc)
        assert len(from_json) == len(from_tei) == count
        assert [(c.key.removeprefix("BIBREF"), c.sentence) for c in from_json] == [
            (c.key.removeprefix("b"), c.sentence) for c in from_tei
        ]
        assert all(c.page is None for c in from_json)  # S2ORC has no pages


@pytest.fixture(scope="module")
def pdf_index(tmp_path_factory) -> Path:
    """An index of the four demo PDFs, built once for the module (read only: a test that changes
    it works on a copy)."""
    root = tmp_path_factory.mktemp("cites") / "idx"
    build_index([DEMO_PDFS], root, get_settings())
    return root


def _all_contexts(root: Path) -> list[dict]:
    idx = open_index(root, get_settings())
    try:
        return [c.to_dict() for pid in idx.papers for c in idx.citations.contexts(pid)]
    finally:
        idx.close()


def test_cites_lists_the_citing_sentences_with_page_and_intent(pdf_index):
    shown = CliRunner().invoke(app, ["cites", "N18-3011", "--index", str(pdf_index), "--json"])
    assert shown.exit_code == 0, shown.output
    record = json.loads(shown.stdout)
    (work,) = record["works"]
    assert work["target"] == "N18-3011" and work["kind"] == "paper" and not record["notes"]
    citing = {c["paper_id"]: c["contexts"] for c in work["citing"]}
    assert set(citing) == {"2020.acl-main.207", "2020.acl-main.447"}
    # SPECTER cites it once (its training data), S2ORC three times (hand-checked in the PDFs)
    assert [c["page"] for c in citing["2020.acl-main.207"]] == [5]
    assert "Semantic Scholar corpus (Ammar et al., 2018)" in citing["2020.acl-main.207"][0]["sentence"]
    assert [c["page"] for c in citing["2020.acl-main.447"]] == [1, 2, 2]
    assert all(c["intent"] and c["section"] for cs in citing.values() for c in cs)
    text = CliRunner().invoke(app, ["cites", "N18-3011", "--index", str(pdf_index)])
    assert text.exit_code == 0 and "cited by 2 papers, 4 sentences" in text.stdout, text.output


def test_a_work_outside_the_index_cited_by_two_papers_is_one_record(pdf_index):
    """SciBERT is in SPECTER's and S2ORC's bibliographies, not in the index: one reference record,
    found by a title word, cited by both."""
    shown = CliRunner().invoke(app, ["cites", "SciBERT", "--index", str(pdf_index), "--json"])
    assert shown.exit_code == 0, shown.output
    works = json.loads(shown.stdout)["works"]
    (scibert,) = [w for w in works if w["title"].lower().startswith("scibert")]
    assert scibert["kind"] == "reference" and scibert["target"].startswith("ref:")
    assert {c["paper_id"] for c in scibert["citing"]} == {"2020.acl-main.207", "2020.acl-main.447"}
    refs = CliRunner().invoke(app, ["refs", "2020.acl-main.207", "--index", str(pdf_index), "--json"])
    record = json.loads(refs.stdout)
    assert len(record["references"]) == 57 and record["contexts"] == 97
    by_target = {r["target"]: r for r in record["references"]}
    # 'Beltagy 2019' 8 times in the hand count of SPECTER (pages 1, 1, 2, 5, 6, 8, 12, 12)
    assert by_target["N18-3011"]["kind"] == "paper" and len(by_target[scibert["target"]]["contexts"]) == 8
    unknown = CliRunner().invoke(app, ["cites", "no such work at all", "--index", str(pdf_index)])
    assert unknown.exit_code == 2 and "nothing in index" in unknown.output


def test_an_add_and_a_compaction_keep_every_context(pdf_index, tmp_path):
    root = tmp_path / "idx"
    shutil.copytree(pdf_index, root)
    before = _all_contexts(root)
    assert len(before) == 311  # 30 + 97 (hand-counted) + the other two PDFs'
    report = build_index([S2ORC / "s2orc_json"], root, get_settings())
    assert report.contexts_added > 0
    added = _all_contexts(root)
    assert [c for c in added if c["paper_id"] in {c["paper_id"] for c in before}] == before
    assert len(added) == len(before) + report.contexts_added
    info = index_info(root, get_settings())
    assert info["counts"]["contexts"] == len(added) and len(info["segments"]) == 2
    assert sum(s["contexts"] for s in info["segments"]) == len(added)
    compact_index(root, get_settings())
    after = index_info(root, get_settings())
    assert len(after["segments"]) == 1 and after["segments"][0]["contexts"] == len(added)
    assert _all_contexts(root) == added
    shown = CliRunner().invoke(app, ["index", "info", "--index", str(root)])
    assert f"{len(added)} in the text" in shown.stdout, shown.output


def test_an_index_from_before_contexts_opens_and_says_how_to_get_them(tmp_path):
    with tarfile.open(FORMAT1 / "index.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    root = tmp_path / "v1idx"
    upgrade_index(root, get_settings())
    shown = CliRunner().invoke(app, ["index", "info", "--index", str(root)])
    assert "not recorded" in shown.stdout and "--rebuild" in shown.stdout, shown.output
    idx = open_index(root, get_settings())
    try:
        cited = next(pid for pid in idx.papers if idx.graph.citations(pid))
    finally:
        idx.close()
    result = CliRunner().invoke(app, ["cites", cited, "--index", str(root), "--json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert record["works"][0]["citing"] and all(c["contexts"] == [] for c in record["works"][0]["citing"])
    assert "rebuild it" in record["notes"][0]


def test_intent_reads_the_cue_beside_each_citation():
    """Each context's intent is classified with its citation's place in the sentence: the marker
    is found in every sentence of SPECTER's, and a citation gets the cue beside it, not one next
    to another citation of the same sentence (read by hand: SciBERT is what SPECTER uses, BERT
    in the same sentence is background)."""
    from tools.citations.extract import _marker_in_sentence

    doc = parse_pdf(DEMO_PDFS / "2020.acl-main.207.pdf", paper_id="2020.acl-main.207")
    chunks, contexts = _contexts(doc)
    texts = {c.chunk_id: c.text for c in chunks}
    for c in contexts:
        span = _marker_in_sentence(c, texts[c.chunk_id])
        assert span is not None, c
        assert c.sentence[span[0] : span[1]] == " ".join(texts[c.chunk_id][c.cite_start : c.cite_end].split())
    expected = [  # (the sentence begins, the cited surname, its intent)
        ("Specifically, we use SciBERT", "Beltagy", "uses"),
        ("Specifically, we use SciBERT", "Devlin", "background"),
        ("We also compare with Citeomatic", "Bhagavatula", "compares"),
        ("With respect to the terminology used by Devlin", "Devlin", "contrasts"),
        ("We follow the approach of Feldman", "Feldman", "uses"),
    ]
    for start, surname, intent in expected:
        got = [
            c.intent
            for c in contexts
            if c.sentence.startswith(start) and surname in texts[c.chunk_id][c.cite_start : c.cite_end]
        ]
        assert got == [intent], (start, surname, got)
