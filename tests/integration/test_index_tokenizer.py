"""The BM25 tokenizer as an index setting (LITLOOP_RETRIEVAL__TOKENIZER): a build records it in the
manifest and tokenises with it, adds keep it, and queries use the manifest's, not the setting's.
Real builds (bundled embedder, Chroma on disk) of a five-paper corpus."""

from __future__ import annotations

import json
import shutil
from contextlib import closing
from pathlib import Path

import pytest

from agent.settings import get_settings
from tools.index import IndexProblem, build_index, index_info, open_index
from tools.index.multi import MultiIndex, PartTokens
from tools.index.search import search
from tools.retrieval.retrieve import query_ranking
from tools.retrieval.text import STEMMED_TOKENIZER, TOKENIZER_VERSION

pytestmark = pytest.mark.integration

PAPERS = [
    ("T1", "Headline generation for news", "We generate a title for each news article with a neural model."),
    ("P2", "Parsing with grammars", "A chart parser for context-free grammars of natural language."),
    ("P3", "Speech recognition", "Acoustic models trained on broadcast audio recordings."),
    ("P4", "Machine translation", "Phrase-based translation between French and English sentences."),
    ("P5", "Topic models", "Latent Dirichlet allocation over a corpus of scientific documents."),
]
ADDED = [("E6", "Vector space", "A learned embedding of every word in a fixed vocabulary.")]


def _write(folder: Path, rows) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "papers.jsonl"
    path.write_text(
        "".join(json.dumps({"paper_id": p, "title": t, "abstract": a, "year": 2010}) + "\n" for p, t, a in rows)
    )
    return path


def _build(folder: Path, tokenizer: str) -> Path:
    settings = get_settings(retrieval={"tokenizer": tokenizer})
    build_index([_write(folder / "corpus", PAPERS)], folder / "idx", settings)
    return folder / "idx"


@pytest.fixture(scope="module")
def stemmed_index(tmp_path_factory) -> Path:
    return _build(tmp_path_factory.mktemp("stemmed"), "snowball")


@pytest.fixture(scope="module")
def plain_index(tmp_path_factory) -> Path:
    return _build(tmp_path_factory.mktemp("plain"), "plain")


def _bm25_papers(idx, query: str) -> list[str]:
    return [h.paper_id for h in search(idx, query, "bm25", k=5) if h.score > 0]


def test_setting_takes_aliases_and_full_names():
    assert get_settings().retrieval.tokenizer == "plain"  # the default: unchanged behaviour
    assert get_settings(retrieval={"tokenizer": STEMMED_TOKENIZER}).retrieval.tokenizer == "snowball"
    assert get_settings(retrieval={"tokenizer": TOKENIZER_VERSION}).retrieval.tokenizer == "plain"
    with pytest.raises(ValueError, match="tokenizer"):
        get_settings(retrieval={"tokenizer": "porter"})


def test_stemmed_index_finds_titles_in_a_chunk_that_says_title(stemmed_index, plain_index):
    with (
        closing(open_index(stemmed_index, get_settings())) as stemmed,
        closing(open_index(plain_index, get_settings())) as plain,
    ):
        assert _bm25_papers(stemmed, "titles") == ["T1"]
        assert _bm25_papers(plain, "titles") == []
        assert [p for p, s in stemmed.bm25_papers("titles", 5) if s > 0] == ["T1"]
        assert [p for p, s in plain.bm25_papers("titles", 5) if s > 0] == []
        # ranking A's BM25 lists (chunk and paper BM25) query with the index's tokenizer too
        per_index = query_ranking(stemmed, "titles", get_settings().retrieval, use_dense=False).per_index
        assert per_index["bm25"] == per_index["paper-bm25"] == ["T1"]


def test_manifest_and_info_record_the_tokenizer(stemmed_index, plain_index):
    assert index_info(stemmed_index, get_settings())["tokenizer"] == STEMMED_TOKENIZER
    assert index_info(plain_index, get_settings())["tokenizer"] == TOKENIZER_VERSION
    with closing(open_index(stemmed_index, get_settings())) as idx:
        assert idx.manifest.tokenizer == STEMMED_TOKENIZER
        assert idx.tokenize("Titles of the papers") == ["titl", "paper"]


def test_the_manifest_not_the_setting_decides_at_query_time(stemmed_index, plain_index, monkeypatch):
    monkeypatch.setenv("LITLOOP_RETRIEVAL__TOKENIZER", "plain")
    with closing(open_index(stemmed_index, get_settings())) as idx:
        assert idx.tokenize("titles") == ["titl"]
        assert _bm25_papers(idx, "titles") == ["T1"]
    monkeypatch.setenv("LITLOOP_RETRIEVAL__TOKENIZER", "snowball")
    with closing(open_index(plain_index, get_settings())) as idx:
        assert idx.tokenize("titles") == ["titles"]
        assert _bm25_papers(idx, "titles") == []
        assert index_info(plain_index, get_settings())["compatible_with_settings"]


def test_adding_papers_to_a_stemmed_index_stems_them(stemmed_index, tmp_path, monkeypatch):
    root = tmp_path / "idx"
    shutil.copytree(stemmed_index, root)
    monkeypatch.setenv("LITLOOP_RETRIEVAL__TOKENIZER", "plain")  # an add keeps the built tokenizer
    report = build_index([_write(tmp_path / "more", ADDED)], root, get_settings())
    assert report.papers_added == 1
    with closing(open_index(root, get_settings())) as idx:
        assert idx.manifest.tokenizer == STEMMED_TOKENIZER
        assert len(idx.manifest.segments) == 2
        assert _bm25_papers(idx, "embeddings") == ["E6"]  # the new segment's postings are stemmed
        assert _bm25_papers(idx, "titles") == ["T1"]


def test_corpora_of_different_tokenizers_each_query_with_their_own(stemmed_index, plain_index):
    with closing(open_index(stemmed_index, get_settings())) as s, closing(open_index(plain_index, get_settings())) as p:
        multi = MultiIndex({"stem": s, "plain": p})
        tokens = multi.tokenize("titles")
        assert isinstance(tokens, PartTokens) and tokens.per_part == [["titl"], ["titles"]]
        assert [multi.paper_ids[i] for i, sc in multi.paper_bm25.top_k(tokens, 5) if sc > 0] == ["stem:T1"]
        hits = [h.paper_id for h in search(multi, "titles", "bm25", k=5)]
        assert hits[0] == "stem:T1"
        scores = multi.chunk_bm25.scores(tokens)
        assert scores[: len(s.chunks)].max() > 0 and scores[len(s.chunks) :].max() == 0


def test_an_unknown_tokenizer_in_the_manifest_is_a_clear_error(plain_index, tmp_path):
    root = tmp_path / "idx"
    shutil.copytree(plain_index, root)
    with closing(open_index(root, get_settings())) as idx:
        manifest = idx.version_dir / "manifest.json"
    data = json.loads(manifest.read_text())
    data["tokenizer"] = "whitespace-v9"
    manifest.write_text(json.dumps(data))
    with pytest.raises(IndexProblem) as err:
        open_index(root, get_settings())
    message = str(err.value)
    assert str(manifest) in message and "'whitespace-v9'" in message
    assert TOKENIZER_VERSION in message and STEMMED_TOKENIZER in message and "--rebuild" in message
    info = index_info(root, get_settings())
    assert not info["compatible_with_settings"] and "whitespace-v9" in info["problem"]
