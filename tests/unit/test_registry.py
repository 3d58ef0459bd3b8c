"""The corpus registry: discovery (package folder and entry points), names, namespacing, slices,
and rank fusion (MultiIndex over real indexes: tests/graph/test_corpora_graph.py)."""

from __future__ import annotations

import json
import logging

import pytest

from agent.settings import get_settings
from tests.conftest import DEMO_PDFS, REPO
from tools.base import namespaced, split_namespaced
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
    (src / "recs.jsonl").write_text(
        "".join(json.dumps({"paper_id": str(i), "title": "t", "abstract": "a"}) + "\n" for i in range(5))
    )
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
    from tools.index.multi import fuse_rankings

    fused = fuse_rankings([["a1", "a2", "a3"], ["b1"]], k=10, rrf_k=60)
    assert [i for i, _ in fused] == ["a1", "b1", "a2", "a3"]  # equal rank: corpus named first
    assert fused[0][1] == pytest.approx(1 / 61) and fused[3][1] == pytest.approx(1 / 63)
    assert [i for i, _ in fuse_rankings([["a1", "a2"], ["b1", "b2"]], k=3)] == ["a1", "b1", "a2"]


def test_the_guide_shows_the_example_module_verbatim():
    doc = (REPO / "docs" / "corpora.md").read_text()
    assert (EXAMPLES / "my_pdfs.py").read_text() in doc
