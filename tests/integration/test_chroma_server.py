"""The dense index as collections on a real Chroma server (`chroma run`, on loopback), the rest of
the index on disk: builds, adds (a new segment, a new collection; the old ones stay in use),
compaction and rebuilds (the old segments' collections dropped once no version names them), a
copy of the index folder that never drops the original's, and a server that is down or has lost
a collection as an `IndexProblem` naming the URL, never zero hits."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli.main import app
from agent.settings import default_settings, get_settings
from tests.conftest import build_papers_index
from tests.served import free_port
from tools.index import (
    SEGMENTS,
    IndexProblem,
    build_index,
    compact_index,
    index_info,
    open_index,
)
from tools.index.search import search
from tools.retrieval.dense import STORE_FILE, collection_name, server_store

pytestmark = pytest.mark.integration

URL_VAR = "LITLOOP_DENSE__URL"
CRF_QUERY = "conditional random fields for sequence labeling"
VITERBI = {
    "paper_id": "viterbi",
    "title": "Viterbi decoding of sequences",
    "abstract": "Dynamic programming finds the best label sequence.",
}
STARTUP_S = 30  # `chroma run` answers within a second or two; a cold disk may take longer


def _answers(port: int) -> bool:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)  # never through a proxy
    try:
        conn.request("GET", "/api/v2/heartbeat")
        return conn.getresponse().status == 200
    except OSError:
        return False
    finally:
        conn.close()


@contextmanager
def _chroma_server(home: Path) -> Iterator[tuple[str, subprocess.Popen]]:
    """`chroma run` on a free loopback port with its data in `home`, once it answers its heartbeat;
    (its URL, the process), stopped on exit."""
    exe = shutil.which("chroma", path=str(Path(sys.executable).parent)) or shutil.which("chroma")
    if exe is None:
        pytest.skip("the `chroma` command (installed with chromadb) is not on PATH or beside this Python")
    port = free_port()
    log = (home / "server.log").open("wb")
    proc = subprocess.Popen(
        [exe, "run", "--host", "127.0.0.1", "--port", str(port), "--path", str(home / "data")],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )
    try:
        deadline = time.monotonic() + STARTUP_S
        while not _answers(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = (home / "server.log").read_text(errors="replace")[-2000:]
                pytest.fail(
                    f"`chroma run` did not answer its heartbeat on port {port} within {STARTUP_S} s "
                    f"(exit code {proc.poll()}):\n{tail}"
                )
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}", proc
    finally:
        _stop(proc)
        log.close()


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[str]:
    """A Chroma server of its own for this module."""
    with _chroma_server(tmp_path_factory.mktemp("chroma-server")) as (url, _):
        yield url


@pytest.fixture(scope="module")
def server_index(server, tmp_path_factory) -> Path:
    """An index of the small test corpus whose dense vectors are on `server`."""
    folder = tmp_path_factory.mktemp("server-corpus")
    with pytest.MonkeyPatch.context() as mp:
        # what tests/conftest.py's autouse fixture does per test, for this module-scoped build
        mp.setenv("LITLOOP_DATA_DIR", str(tmp_path_factory.getbasetemp() / "litloop-data"))
        for var in [
            v for v in os.environ if v.startswith("LITLOOP_") and v not in ("LITLOOP_DATA_DIR", "LITLOOP_SHARED_DATA")
        ]:
            mp.delenv(var)
        mp.setenv(URL_VAR, server)
        default_settings.cache_clear()
        try:
            return build_papers_index(folder)
        finally:
            default_settings.cache_clear()


def _client(url: str):
    import chromadb
    from chromadb.config import Settings

    host, port = url.removeprefix("http://").split(":")
    return chromadb.HttpClient(host=host, port=int(port), settings=Settings(anonymized_telemetry=False))


def _collections(url: str) -> set[str]:
    client = _client(url)
    try:
        return {c.name for c in client.list_collections()}
    finally:
        client.close()


def _live(root: Path) -> Path:
    return root / (root / "CURRENT").read_text().strip()


def _manifest(root: Path) -> dict:
    return json.loads((_live(root) / "manifest.json").read_text())


def _papers_file(tmp_path: Path, name: str, *records: dict) -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _stores(root: Path) -> list[dict]:
    """The live version's segments' dense records, in order."""
    return [seg["dense"] for seg in _manifest(root)["segments"]]


def _set_manifest_store(root: Path, **changes) -> None:
    path = _live(root) / "manifest.json"
    manifest = json.loads(path.read_text())
    for seg in manifest["segments"]:
        seg["dense"] = {**seg["dense"], **changes}
    path.write_text(json.dumps(manifest))


def test_a_build_keeps_the_vectors_on_the_server_and_the_manifest_says_where(server, server_index):
    manifest = _manifest(server_index)
    [segment] = manifest["segments"]
    store = segment["dense"]
    folder = server_index / SEGMENTS / segment["name"]
    assert store == {"kind": "server", "url": server, "collection": collection_name(server_index, segment["name"])}
    assert not (folder / "chroma").exists(), "a server index keeps no embedded store"
    assert json.loads((folder / STORE_FILE).read_text()) == store
    assert store["collection"] in _collections(server)
    assert index_info(server_index, get_settings())["dense"] == store
    shown = CliRunner().invoke(app, ["index", "info", "--index", str(server_index)])
    assert shown.exit_code == 0 and "dense store" in shown.stdout and "Chroma server" in shown.stdout, shown.output
    # no LITLOOP_DENSE__URL here: the manifest says where the vectors are
    idx = open_index(server_index, get_settings())
    try:
        assert idx.dense.count() == manifest["counts"]["dense_windows"] > 0
        assert {c.chunk_id for c in idx.chunks} == idx.dense.chunk_ids()
        for retriever in ("dense", "hybrid"):
            assert search(idx, CRF_QUERY, retriever, k=3)[0].paper_id == "crf", retriever
    finally:
        idx.close()


def test_adds_make_collections_and_compaction_and_rebuilds_drop_the_unused(server, server_index, tmp_path, monkeypatch):
    monkeypatch.setenv(URL_VAR, server)
    root = tmp_path / "idx"
    shutil.copytree(server_index, root)  # a copy: its collections are the original's until it makes its own
    # what a build killed mid-way leaves: a segment's staging folder and the collection it made
    crashed = root / SEGMENTS / ".building-s-20000101T000000-1-1"
    crashed.mkdir()
    leftover = server_store(root, "s-20000101T000000-1-1", server)
    (crashed / STORE_FILE).write_text(json.dumps(leftover))
    client = _client(server)
    client.get_or_create_collection(leftover["collection"], embedding_function=None)
    client.close()

    old = _manifest(root)
    report = build_index([_papers_file(tmp_path, "extra.jsonl", VITERBI)], root, get_settings())
    assert report.papers_added == 1 and report.problems == []
    new = _manifest(root)
    first, added = new["segments"]
    assert first == old["segments"][0], "an add leaves the old segment as it was"
    assert added["dense"] == server_store(root, added["name"], server)
    assert new["counts"]["dense_windows"] == old["counts"]["dense_windows"] + report.windows_embedded
    on_server = _collections(server)
    assert {first["dense"]["collection"], added["dense"]["collection"]} <= on_server
    assert leftover["collection"] not in on_server and not crashed.exists(), "an interrupted build's leftovers go"

    idx = open_index(root, get_settings())
    try:
        assert idx.dense.count() == new["counts"]["dense_windows"]
        assert search(idx, "Viterbi dynamic programming label sequence", "dense", k=1)[0].paper_id == "viterbi"
        assert search(idx, CRF_QUERY, "dense", k=1)[0].paper_id == "crf", "the old segment is still searched"
    finally:
        idx.close()

    compacted = compact_index(root, get_settings())
    assert (compacted.segments_before, compacted.segments_after) == (2, 1)
    [merged] = _manifest(root)["segments"]
    on_server = _collections(server)
    assert merged["dense"]["collection"] in on_server
    assert added["dense"]["collection"] not in on_server, "a segment no version names goes with its collection"
    assert first["dense"]["collection"] in on_server, "the original index's collection is not this copy's to drop"
    idx = open_index(root, get_settings())
    try:
        assert idx.dense.count() == new["counts"]["dense_windows"]
        assert search(idx, "Viterbi dynamic programming label sequence", "dense", k=1)[0].paper_id == "viterbi"
        assert search(idx, CRF_QUERY, "dense", k=1)[0].paper_id == "crf"
    finally:
        idx.close()

    build_index([_papers_file(tmp_path, "again.jsonl", VITERBI)], root, get_settings(), rebuild=True)
    [rebuilt] = _manifest(root)["segments"]
    on_server = _collections(server)
    assert rebuilt["dense"]["collection"] in on_server and merged["dense"]["collection"] not in on_server
    assert [p.name for p in (root / SEGMENTS).iterdir()] == [rebuilt["name"]]


def test_a_copy_of_the_folder_elsewhere_never_drops_the_originals_collection(server, server_index, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(server_index, copy)
    original = _stores(server_index)[0]["collection"]
    # no LITLOOP_DENSE__URL: an add keeps a server index on the server its manifest names
    build_index(
        [_papers_file(tmp_path, "more.jsonl", {**VITERBI, "paper_id": "forward", "title": "The forward algorithm"})],
        copy,
        get_settings(),
    )
    _, mine = _manifest(copy)["segments"]
    assert mine["dense"] == server_store(copy, mine["name"], server)
    compact_index(copy, get_settings())  # no version of the copy names the copied segment now
    assert original in _collections(server)
    idx = open_index(server_index, get_settings())
    try:
        assert search(idx, CRF_QUERY, "dense", k=1)[0].paper_id == "crf"
    finally:
        idx.close()


def test_a_server_that_does_not_answer_is_an_index_problem_naming_it(server, server_index, tmp_path, monkeypatch):
    dead = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    monkeypatch.setenv(URL_VAR, dead)  # the setting's server comes before the manifest's
    idx = open_index(server_index, get_settings())  # the folder's parts open; the server is asked on use
    try:
        with pytest.raises(IndexProblem, match=f"Chroma server {dead} .*cannot be reached.*chroma run"):
            search(idx, CRF_QUERY, "dense", k=3)
        assert search(idx, CRF_QUERY, "bm25", k=1)[0].paper_id == "crf", "BM25 needs no server"
    finally:
        idx.close()

    # the server the manifest records is down (the setting unset): a copy whose manifest says so
    monkeypatch.delenv(URL_VAR)
    copy = tmp_path / "copy"
    shutil.copytree(server_index, copy)
    _set_manifest_store(copy, url=dead)
    idx = open_index(copy, get_settings())
    try:
        with pytest.raises(IndexProblem, match=f"Chroma server {dead} "):
            idx.dense_chunks(CRF_QUERY, 3)
    finally:
        idx.close()

    # a build that cannot reach its server fails, and leaves the live version as it was
    live = _live(copy).name
    with pytest.raises(IndexProblem, match=dead):
        build_index(
            [
                _papers_file(
                    tmp_path, "extra.jsonl", {**VITERBI, "paper_id": "baum-welch", "title": "Baum-Welch training"}
                )
            ],
            copy,
            get_settings(),
        )
    assert _live(copy).name == live
    assert not list(copy.glob(".building-*")), "the failed build's version folder is gone"
    tombstones = list((copy / SEGMENTS).glob(".building-*"))
    assert [sorted(p.name for p in t.iterdir()) for t in tombstones] == [[STORE_FILE]], (
        "what the failed build may have made on the server stays recorded for the next cleanup"
    )


def test_a_collection_the_server_no_longer_holds_is_an_index_problem(server, server_index, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(server_index, copy)
    _set_manifest_store(copy, collection="litloop_0000000000_v-gone")
    idx = open_index(copy, get_settings())
    try:
        with pytest.raises(
            IndexProblem, match=f"Chroma server {server} .*'litloop_0000000000_v-gone'.*no such collection"
        ):
            search(idx, CRF_QUERY, "dense", k=3)
    finally:
        idx.close()


def test_opening_an_index_whose_server_has_stopped_is_an_index_problem_naming_it(tmp_path, monkeypatch):
    with _chroma_server(tmp_path) as (url, proc):
        monkeypatch.setenv(URL_VAR, url)
        root = tmp_path / "idx"
        build_index([_papers_file(tmp_path, "papers.jsonl", VITERBI)], root, get_settings())
        monkeypatch.delenv(URL_VAR)
        _stop(proc)
        idx = open_index(root, get_settings())
        try:
            with pytest.raises(IndexProblem, match=f"Chroma server {url} .*cannot be reached.*chroma run"):
                idx.dense_chunks("Viterbi decoding", 3)
        finally:
            idx.close()


def test_a_format_1_server_index_is_upgraded_with_its_vectors_copied_to_a_segment(server, tmp_path, monkeypatch):
    """A format-1 index kept its vectors in one collection per version, named in its manifest
    and in the version's `dense.json`: made here from the format-1 fixture by moving its embedded
    vectors to the server, as a format-1 build against a server wrote them."""
    import tarfile

    import numpy as np

    from tools.index import upgrade_index
    from tools.retrieval.dense import DenseIndex, ServerDense
    from tools.retrieval.text import tokenize

    fixture = Path(__file__).resolve().parents[1] / "data" / "index-format1"
    with tarfile.open(fixture / "index.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    root = tmp_path / "v1idx"
    version = _live(root)
    store = server_store(root, version.name, server)
    embedded, remote = DenseIndex(version / "chroma"), ServerDense(server, store["collection"], create=True)
    remote.copy_from(embedded)
    embedded.close()
    remote.close()
    shutil.rmtree(version / "chroma")
    manifest = json.loads((version / "manifest.json").read_text())
    (version / "manifest.json").write_text(json.dumps({**manifest, "dense": store}))
    (version / STORE_FILE).write_text(json.dumps(store))

    monkeypatch.delenv(URL_VAR, raising=False)
    monkeypatch.setenv("LITLOOP_EMBEDDER__BACKEND", "torch")  # the fixture's answers are torch's
    assert upgrade_index(root, get_settings())["upgraded"]
    [segment] = _manifest(root)["segments"]
    assert segment["dense"] == server_store(root, segment["name"], server)
    on_server = _collections(server)
    assert segment["dense"]["collection"] in on_server
    assert store["collection"] not in on_server, "the format-1 version's collection goes with its version"
    expected = json.loads((fixture / "expected.json").read_text())
    idx = open_index(root, get_settings())
    try:
        for q, want in expected["queries"].items():
            dense = idx.dense_chunks(q, 8)
            assert [p.chunk_id for p in dense] == [c for c, _ in want["dense"]], q
            assert np.allclose([p.score for p in dense], [s for _, s in want["dense"]], atol=1e-5)
            assert [idx.chunks[r].chunk_id for r, _ in idx.chunk_bm25.top_k(tokenize(q), 8)] == [
                c for c, _ in want["bm25"]
            ]
    finally:
        idx.close()
