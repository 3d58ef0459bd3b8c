"""The corpus registry: discovery (package folder and entry points), names, namespacing, slices,
and multi-corpus fusion over in-memory indexes (no embedder, no Chroma)."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest

from agent.settings import get_settings
from tests.conftest import DEMO_PDFS, REPO
from tools.base import Chunk, Locator, Paper, Passage, namespaced, split_namespaced
from tools.registry import (
    Corpus,
    CorpusProblem,
    Registry,
    UnknownCorpus,
    get_corpus,
    slice_inputs,
)

pytestmark = pytest.mark.unit

EXAMPLES = REPO / "docs" / "examples"


class FakeEntryPoint:
    def __init__(self, name, value, load):
        self.name, self.value, self._load = name, value, load

    def load(self):
        return self._load()


def _boom():
    raise ImportError("no module named my_broken_plugin")


def test_discovers_the_shipped_corpora():
    reg = Registry()
    assert {"demo", "pubmed"} <= set(reg.names())
    assert reg.get("pubmed").origin == "tools.corpora.pubmed"
    assert reg.get("demo").origin == "tools.corpora.demo"


def test_unknown_corpus_is_a_clear_error_listing_the_registered_ones():
    with pytest.raises(UnknownCorpus) as exc:
        get_corpus("pubmedd")
    msg = str(exc.value)
    assert "unknown corpus 'pubmedd'" in msg and "demo" in msg and "pubmed" in msg and "docs/corpora.md" in msg


def test_entry_points_register_plugins_and_skip_bad_ones(monkeypatch, caplog):
    import importlib

    monkeypatch.syspath_prepend(str(EXAMPLES))
    eps = [
        FakeEntryPoint("my_pdfs", "my_pdfs", lambda: importlib.import_module("my_pdfs")),
        FakeEntryPoint("broken", "my_broken_plugin", _boom),
        FakeEntryPoint("notacorpus", "x:y", lambda: {"name": "x"}),
        FakeEntryPoint("dup", "x:DUP", lambda: Corpus("pubmed", "another pubmed", lambda s: [])),
    ]
    monkeypatch.setattr("tools.registry._entry_points", lambda group: eps)
    with caplog.at_level(logging.WARNING, logger="tools.registry"):
        reg = Registry()
        names = reg.names()
    assert "my_pdfs" in names and "broken" not in names
    assert reg.get("my_pdfs").origin == "entry point my_pdfs (my_pdfs)"
    assert reg.get("pubmed").origin == "tools.corpora.pubmed"  # the built-in one wins
    text = caplog.text
    assert "failed to load" in text and "not a tools.registry.Corpus" in text and "already registered" in text


def test_example_module_declares_a_pdf_folder(monkeypatch):
    import importlib

    monkeypatch.syspath_prepend(str(EXAMPLES))
    monkeypatch.setenv("MY_PDFS_DIR", str(DEMO_PDFS))
    corpus = importlib.import_module("my_pdfs").CORPUS
    settings = get_settings()
    assert corpus.source_files(settings) == [DEMO_PDFS]
    assert corpus.index_path(settings) == settings.data_dir / "corpora" / "my_pdfs"
    assert len((EXAMPLES / "my_pdfs.py").read_text().splitlines()) < 50


def test_register_from_code_and_duplicates():
    reg = Registry()
    c = reg.register(Corpus("mine", "mine", lambda s: []))
    assert c.origin == "register()" and "mine" in reg.names()
    with pytest.raises(CorpusProblem, match="already registered"):
        reg.register(Corpus("mine", "again", lambda s: []))
    reg.unregister("mine")
    assert "mine" not in reg.names()


@pytest.mark.parametrize("bad", ["", "a:b", "Upper", "-x", "x" * 41, "has space"])
def test_corpus_names_are_checked(bad):
    with pytest.raises(CorpusProblem, match="not valid"):
        Corpus(bad, "d", lambda s: [])


def test_missing_sources_are_a_clear_error(tmp_path):
    c = Corpus("gone", "d", lambda s: [tmp_path / "nothing.jsonl"])
    with pytest.raises(CorpusProblem, match="nothing.jsonl not found"):
        c.source_files(get_settings())


def test_demo_keeps_its_historical_index_place():
    s = get_settings()
    assert get_corpus("demo").index_path(s) == s.demo_index
    assert get_corpus("pubmed").index_path(s) == s.data_dir / "corpora" / "pubmed"


def test_namespacing_round_trip():
    assert namespaced("pubmed", "pmid1#c0") == "pubmed:pmid1#c0"
    assert split_namespaced("demo:arxiv:1234#c2") == ("demo", "arxiv:1234#c2")  # ids may hold ':'
    with pytest.raises(ValueError):
        split_namespaced("no-namespace")


def test_slice_inputs(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "recs.jsonl").write_text("".join(json.dumps({"paper_id": str(i), "title": "t", "abstract": "a"}) + "\n"
                                            for i in range(5)))
    folder = src / "pdfs"
    folder.mkdir()
    (folder / "big.pdf").write_bytes(b"x" * 100)
    (folder / "small.pdf").write_bytes(b"x" * 10)
    (folder / "small.meta.json").write_text("{}")
    out = slice_inputs([src / "recs.jsonl", folder], 1, tmp_path / "work")
    assert len(out[0].read_text().splitlines()) == 1
    assert sorted(p.name for p in out[1].iterdir()) == ["small.meta.json", "small.pdf"]
    with pytest.raises(ValueError):
        slice_inputs([src / "recs.jsonl"], 0, tmp_path / "w2")


def test_corpus_info_of_an_unbuilt_corpus():
    row = get_corpus("pubmed").info(get_settings())
    assert row["built"] is False and row["papers"] is None and row["name"] == "pubmed"


# ----------------------------------------------------------------------------- fusion


def test_fuse_rankings_is_rrf_over_corpora():
    from tools.multi import fuse_rankings

    fused = fuse_rankings([["a1", "a2", "a3"], ["b1"]], k=10, rrf_k=60)
    assert [i for i, _ in fused] == ["a1", "b1", "a2", "a3"]  # equal rank: corpus named first
    assert fused[0][1] == pytest.approx(1 / 61) and fused[3][1] == pytest.approx(1 / 63)
    assert [i for i, _ in fuse_rankings([["a1", "a2"], ["b1", "b2"]], k=3)] == ["a1", "b1", "a2"]


class _Embedder:
    dim = 2

    def encode(self, texts):
        return np.ones((len(texts), 2), dtype=np.float32)


class FakeIndex:
    """The parts of tools.index.Index a MultiIndex reads, over in-memory data."""

    def __init__(self, records):
        from graph_store.citation_graph import CitationGraph
        from tools.bm25 import BM25Index
        from tools.text import tokenize

        self.settings = get_settings()
        self.manifest = {"counts": {}}
        self.papers = {r[0]: Paper(r[0], r[1], r[2], references=tuple(r[3])) for r in records}
        self.paper_ids = list(self.papers)
        self.paper_row = {p: i for i, p in enumerate(self.paper_ids)}
        self.chunks = [Chunk(f"{p.paper_id}#c0", p.paper_id, "title_abstract", f"{p.title} {p.abstract}",
                             Locator(section="Abstract")) for p in self.papers.values()]
        self.chunk_row = {c.chunk_id: i for i, c in enumerate(self.chunks)}
        self.chunks_of = {c.paper_id: [i] for i, c in enumerate(self.chunks)}
        self.chunk_bm25 = BM25Index.fit([tokenize(c.text) for c in self.chunks])
        self.paper_bm25 = BM25Index.fit([tokenize(c.text) for c in self.chunks])
        self.graph = CitationGraph.from_papers(self.papers.values())
        self.paper_embeddings = np.eye(len(self.papers), 4, dtype=np.float32)
        self.embedder = _Embedder()
        self.closed = False

    def dense_chunks_by_vector(self, vec, k):
        return [Passage.from_chunk(c, 1.0 - i / 10, "dense") for i, c in enumerate(self.chunks[:k])]

    def close(self):
        self.closed = True


NLP = [("crf", "Conditional random fields", "sequence labeling with CRF", ["hmm", "memm"]),
       ("hmm", "Hidden Markov models", "tagging with HMM", []),
       ("memm", "Maximum entropy Markov models", "labeling and label bias", ["hmm"]),
       ("lstm", "BiLSTM-CRF", "neural sequence labeling", ["hmm", "memm"])]
MED = [("crf", "Chronic renal failure", "renal failure in elderly patients labeling", []),
       ("p2", "Helicopter intubation", "flight nurses intubation", [])]


@pytest.fixture
def multi():
    from tools.multi import MultiIndex

    return MultiIndex({"nlp": FakeIndex(NLP), "med": FakeIndex(MED)})


def test_multi_index_namespaces_ids_so_corpora_never_collide(multi):
    assert "nlp:crf" in multi.papers and "med:crf" in multi.papers
    assert len(multi.papers) == 6 and len(multi.chunks) == 6
    assert multi.papers["nlp:crf"].references == ("nlp:hmm", "nlp:memm")
    c = multi.chunks[multi.chunk_row["med:crf#c0"]]
    assert c.paper_id == "med:crf" and c.locator == Locator(section="Abstract")
    assert multi.title_abstract("med:p2").text.startswith("Helicopter")


def test_multi_index_fuses_per_corpus_bm25_rankings(multi):
    hits = multi.bm25_chunks("labeling", 10)
    # each corpus's own BM25 ranking, fused by rank: the corpora alternate
    corpora = [h.paper_id.split(":")[0] for h in hits]
    assert corpora[:2] == ["nlp", "med"]
    assert {h.paper_id for h in hits} >= {"nlp:crf", "med:crf"}
    assert all(isinstance(h, Passage) and h.chunk_id in multi.chunk_row for h in hits)
    scores = multi.chunk_bm25.scores(["labeling"])
    assert scores.shape == (6,)


def test_pipeline_runs_unchanged_on_a_multi_index(multi):
    from tools.relate import ranking_b
    from tools.retrieve import fused_with_prf, retrieval_hits
    from tools.search import search

    ranking, _ = fused_with_prf(multi, "sequence labeling", multi.settings.retrieval)
    assert ranking.papers and all(":" in p for p in ranking.papers)
    chunks = retrieval_hits(multi, ranking, 10)
    assert chunks[0]["chunk_id"] in multi.chunk_row
    hits = search(multi, "renal failure", "bm25", 3)
    assert hits[0].paper_id == "med:crf"
    b, why = ranking_b(multi, ["nlp:lstm"], multi.settings.relate)
    assert b[0] == "nlp:lstm"
    # coupling stays inside a corpus: lstm and crf share hmm and memm
    assert "coupling:nlp:lstm" in why["nlp:crf"]


def test_multi_index_closes_every_part(multi):
    multi.close()
    assert all(p.closed for p in multi.parts.values())


def test_the_guide_shows_the_example_module_verbatim():
    doc = (REPO / "docs" / "corpora.md").read_text()
    assert (EXAMPLES / "my_pdfs.py").read_text() in doc
