"""The contract every registered corpus passes, automatically (parametrized over the registry):
it builds from its declared sources (a small slice here), and searching it returns Passages whose
ids, texts and locators are exactly the index's. Searched together, corpora give namespaced ids;
an unknown name is a clear error before anything is built. The docs' example corpus (a folder of
PDFs, docs/examples/my_pdfs.py) passes the same contract when installed as an entry point."""

from __future__ import annotations

import importlib

import pytest

from agent.settings import get_settings
from tests.conftest import DEMO_PDFS, REPO
from tools.base import CHUNK_KINDS, Locator, Passage
from tools.registry import (
    Registry,
    UnknownCorpus,
    corpus_names,
    get_corpus,
    hits_to_passages,
    open_corpora,
)

pytestmark = pytest.mark.integration

SLICE = 2  # papers per source: the contract is about shapes, not sizes


@pytest.fixture(scope="session")
def contract_settings(tmp_path_factory):
    return get_settings(data_dir=tmp_path_factory.mktemp("contract-data"))


@pytest.fixture(scope="session")
def built(contract_settings):
    """Build each corpus's slice once per session, on first request."""
    done: set[str] = set()

    def build(corpus):
        if corpus.name not in done:
            report = corpus.build(contract_settings, rebuild=True, limit=SLICE)
            assert report.papers_added >= 1, report.problems
            done.add(corpus.name)
        return corpus

    return build


def check_contract(corpus, settings) -> list[Passage]:
    assert corpus.is_built(settings)
    info = corpus.info(settings)
    assert info["built"] and info["papers"] >= 1 and info["chunks"] >= info["papers"] and info["bytes"] > 0
    idx = corpus.open(settings, build=False)
    try:
        first = idx.title_abstract(idx.paper_ids[0])
        query = " ".join(first.text.split()[:12])
        passages = corpus.search(settings, query, k=5)
        assert passages and len(passages) <= 5
        assert first.paper_id in {p.paper_id for p in passages}
        for p in passages:
            assert isinstance(p, Passage) and isinstance(p.locator, Locator)
            chunk = idx.chunks[idx.chunk_row[p.chunk_id]]  # a real chunk of this index
            assert (p.paper_id, p.text, p.kind, p.locator) == (chunk.paper_id, chunk.text, chunk.kind, chunk.locator)
            assert p.paper_id in idx.papers and p.kind in CHUNK_KINDS
            assert p.locator.page is None or p.locator.page >= 1
            assert p.locator.to_dict(), "every chunk knows at least its section"
            assert p.source.startswith(f"{corpus.name}/")
        scores = [p.score for p in passages]
        assert scores == sorted(scores, reverse=True)
    finally:
        idx.close()
    return passages


@pytest.mark.parametrize("name", corpus_names())
def test_every_registered_corpus_passes_the_contract(name, built, contract_settings):
    check_contract(built(get_corpus(name)), contract_settings)


def test_searching_several_corpora_fuses_them_with_namespaced_ids(built, contract_settings):
    names = corpus_names()
    for n in names:
        built(get_corpus(n))
    idx = open_corpora(names, contract_settings, build=False)
    try:
        # words from each corpus's first paper, so every corpus has something to return
        query = " ".join(" ".join(p.title_abstract(p.paper_ids[0]).text.split()[:6]) for p in idx.parts.values())
        passages = hits_to_passages(idx, query, 6, "hybrid", "+".join(names))
        corpora = {p.paper_id.split(":", 1)[0] for p in passages}
        assert corpora == set(names)
        for p in passages:
            assert p.chunk_id.startswith(p.paper_id.split(":", 1)[0] + ":")
            chunk = idx.chunks[idx.chunk_row[p.chunk_id]]
            assert (chunk.paper_id, chunk.locator) == (p.paper_id, p.locator)
    finally:
        idx.close()


def test_unknown_corpus_fails_before_anything_is_built(tmp_path):
    settings = get_settings(data_dir=tmp_path / "fresh")
    with pytest.raises(UnknownCorpus, match="unknown corpus 'nope'; registered: .*pubmed"):
        open_corpora(["pubmed", "nope"], settings)
    assert not get_corpus("pubmed").is_built(settings)


def test_the_docs_example_loads_through_the_registry_and_passes(monkeypatch, contract_settings):
    class EntryPoint:
        name, value = "my_pdfs", "my_pdfs"

        def load(self):
            return importlib.import_module("my_pdfs")

    monkeypatch.syspath_prepend(str(REPO / "docs" / "examples"))
    monkeypatch.setenv("MY_PDFS_DIR", str(DEMO_PDFS))
    monkeypatch.setattr("tools.registry._entry_points", lambda group: [EntryPoint()])
    corpus = Registry().get("my_pdfs")
    assert corpus.origin.startswith("entry point my_pdfs")
    corpus.build(contract_settings, rebuild=True, limit=1)  # the smallest PDF
    passages = check_contract(corpus, contract_settings)
    assert all(p.locator.page is not None for p in passages if p.kind != "title_abstract")
