from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"

# Data that ships with the product (tools/corpora/demo_data): tests read it from the checkout, so
# they run on a fresh clone. These files are byte-identical to ../shared/data/citeseer/papers.jsonl
# and ../shared/data/fulltext/*.pdf.
DEMO_DATA = REPO / "tools" / "corpora" / "demo_data"
CITESEER = DEMO_DATA / "citeseer.jsonl"
DEMO_PDFS = DEMO_DATA / "pdfs"

# Per-tier default timeouts in seconds. A test's own @pytest.mark.timeout wins, and so do
# `--timeout` and PYTEST_TIMEOUT; pyproject's `timeout = 600` covers anything outside a tier.
# Measured on 2 shared CPU cores: the slowest unit test (a subprocess import check) 1.5 s; the
# slowest graph test 11 s, its setup building the session index; integration builds an index in
# 35 s and its killed-build test takes 31 s; browser and llm (a CPU chat model) keep the ceiling.
TIER_TIMEOUTS = {"unit": 60, "graph": 180, "integration": 600, "browser": 600, "llm": 600}


def shared_data_dir() -> Path:
    """The shared data folder, read when called: LITLOOP_SHARED_DATA, else ../shared/data beside
    the repository. Only data that does not ship is read from it (LitTraceQA, CC BY-NC; the
    citerec and PubMedQA benchmark questions; the S2ORC/GROBID JSON fixtures)."""
    return Path(os.environ.get("LITLOOP_SHARED_DATA", REPO.parent / "shared" / "data"))


def _absent(path: Path, what: str) -> str:
    return f"{what}: not shipped, and {path} is absent (set LITLOOP_SHARED_DATA to the shared data folder)"


def shared_path(relative: str, what: str) -> Path:
    """`relative` under the shared data folder; skips the calling test or fixture, naming `what`
    and where it looked, when that path is absent."""
    path = shared_data_dir() / relative
    if not path.exists():
        pytest.skip(_absent(path, what))
    return path


def shared_params(relative: str, pattern: str, what: str) -> list:
    """Collection-time parameters: the files matching `pattern` in the shared folder `relative`,
    or one skipped parameter that says why when there are none."""
    folder = shared_data_dir() / relative
    found = sorted(folder.glob(pattern))
    return found or [pytest.param(None, id="absent", marks=pytest.mark.skip(reason=_absent(folder, what)))]


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The whole shared data folder, for tests of the named benchmarks (none of which ship)."""
    return shared_path("", "the named benchmarks' files (citerec, pubmedqa, LitTraceQA)")


@pytest.fixture(scope="session")
def littraceqa() -> Path:
    """The LitTraceQA folder (CC BY-NC: read from the shared data, never copied here)."""
    folder = shared_data_dir() / "littraceqa"
    if not (folder / "validation_a.jsonl").is_file():
        pytest.skip(_absent(folder / "validation_a.jsonl", "the LitTraceQA files (CC BY-NC)"))
    return folder


# The small corpus of the graph tier and the web chat's browser test: three sequence-labelling
# papers that cite each other and two off-topic ones (paper id, title, abstract, references).
PAPERS = [
    ("crf", "Conditional random fields for sequence labeling", "We present conditional random fields, which reach 95.7 F1 on chunking and beat HMMs.", ["hmm", "memm"]),
    ("hmm", "Hidden Markov models for part-of-speech tagging", "An HMM tagger with 96.1 accuracy on the Penn Treebank.", []),
    ("memm", "Maximum entropy Markov models for information extraction", "MEMMs segment FAQs; they suffer from label bias.", ["hmm"]),
    ("lstm", "Bidirectional LSTM-CRF models for sequence tagging", "A BiLSTM with a CRF layer reaches 90.9 F1 on CoNLL-2003 NER.", ["crf", "hmm"]),
    ("cook", "Slow cooking tomato sauce", "Simmer tomatoes with garlic and basil for two hours.", []),
    ("bread", "Sourdough bread baking", "A long fermentation gives sourdough its flavour.", []),
]


def build_papers_index(folder: Path) -> Path:
    """A real index (BM25, Chroma, embedder, citation graph) of PAPERS, built in `folder`."""
    from agent.settings import get_settings
    from tools.index import build_index

    rows = [{"paper_id": p, "title": t, "abstract": a, "references": r, "venue": "ACL", "year": 2005}
            for p, t, a, r in PAPERS]
    (folder / "papers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    build_index([folder / "papers.jsonl"], folder / "idx", get_settings())
    return folder / "idx"


@pytest.fixture(scope="session")
def graph_index(tmp_path_factory) -> Path:
    """The index of PAPERS that the graph tier shares (read only), built once a session."""
    return build_papers_index(tmp_path_factory.mktemp("graph-corpus"))


@pytest.fixture(autouse=True)
def _isolated_data_dir(tmp_path_factory, monkeypatch):
    """Tests never touch the user's data dir or a .env in the working directory."""
    monkeypatch.setenv("LITLOOP_DATA_DIR", str(tmp_path_factory.getbasetemp() / "litloop-data"))
    for var in list(os.environ):
        if var.startswith("LITLOOP_") and var not in ("LITLOOP_DATA_DIR", "LITLOOP_SHARED_DATA", "LITLOOP_UPDATE_SCREENSHOT"):
            monkeypatch.delenv(var)


def tier_timeout(item: pytest.Item) -> int | None:
    """The default timeout of a test's tier: the largest among its tier markers and its folder
    under tests/ (a test marked both integration and llm gets the more generous one)."""
    names = {m.name for m in item.iter_markers()}
    try:
        names.add(item.path.relative_to(TESTS).parts[0])
    except ValueError:  # a test outside tests/ (pytest given another path)
        pass
    limits = [TIER_TIMEOUTS[n] for n in names if n in TIER_TIMEOUTS]
    return max(limits) if limits else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.pluginmanager.hasplugin("timeout"):
        return  # pytest-timeout is not installed: no test has a timeout
    if config.getoption("timeout", None) is not None or os.environ.get("PYTEST_TIMEOUT"):
        return  # the user chose a timeout for this run: tier defaults do not override it
    for item in items:
        if item.get_closest_marker("timeout") is None and (seconds := tier_timeout(item)) is not None:
            item.add_marker(pytest.mark.timeout(seconds))
