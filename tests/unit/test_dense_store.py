"""Where an index's dense vectors live (`tools/retrieval/dense.py`): the LITLOOP_DENSE__URL setting, the
collection names, which collections an index folder may drop. A real server:
tests/integration/test_chroma_server.py."""

from __future__ import annotations

import json
import re

import pytest

from tools.index import _stamp, remove_superseded
from tools.retrieval.dense import (
    STORE_FILE,
    DenseStoreProblem,
    collection_name,
    open_dense,
    owned,
    server_store,
)
from tools.settings import DenseSettings, ToolSettings

pytestmark = pytest.mark.unit

# what every Chroma version accepts (its Python client's check, the strictest)
CHROMA_NAME = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9._-]{1,61}[a-zA-Z0-9]$")


@pytest.mark.parametrize(
    ("given", "canonical"),
    [
        ("http://chroma.lab:9000", "http://chroma.lab:9000"),
        ("http://chroma.lab:9000/", "http://chroma.lab:9000"),
        ("http://chroma.lab", "http://chroma.lab:8000"),
        ("https://chroma.lab", "https://chroma.lab:443"),
        ("http://[::1]:8000", "http://[::1]:8000"),
        ("", None),
        (None, None),
    ],
)
def test_the_server_url_has_one_spelling(given, canonical):
    assert DenseSettings(url=given).url == canonical


@pytest.mark.parametrize("bad", ["chroma.lab:8000", "ftp://chroma.lab", "http://chroma.lab:8000/api", "http://:8000"])
def test_a_url_that_is_not_a_server_address_fails_when_read(bad):
    with pytest.raises(ValueError, match="http://HOST:PORT"):
        DenseSettings(url=bad)


def test_the_url_comes_from_the_environment(monkeypatch):
    assert ToolSettings().dense.url is None
    monkeypatch.setenv("LITLOOP_DENSE__URL", "http://10.0.0.5:8000/")
    assert ToolSettings().dense.url == "http://10.0.0.5:8000"


def test_collection_names_are_valid_and_differ_by_folder_and_version(tmp_path):
    version = "v-" + _stamp()
    names = {
        collection_name(tmp_path / "a", version),
        collection_name(tmp_path / "b", version),
        collection_name(tmp_path / "a", version + "1"),
    }
    assert len(names) == 3
    assert all(CHROMA_NAME.match(n) and ".." not in n for n in names), names
    # the longest a version name gets: a 7-digit pid and a 6-digit clock fraction
    assert CHROMA_NAME.match(collection_name(tmp_path, "v-20250101T000000-4194304-999999"))


def test_an_index_folder_drops_only_the_collections_it_made(tmp_path):
    mine = server_store(tmp_path / "idx", "v-1", "http://h:8000")
    assert owned(tmp_path / "idx", mine)
    assert not owned(tmp_path / "copy", mine), "a copy elsewhere reads the collection, never drops it"
    assert not owned(tmp_path / "idx", {"kind": "embedded"})


def test_a_copy_removes_a_superseded_version_of_the_original_without_asking_its_server(tmp_path):
    root = tmp_path / "copy"
    (root / "v-2").mkdir(parents=True)
    (root / "CURRENT").write_text("v-2\n")
    for name in ("v-1", ".removing-v-0"):  # the original's versions, copied with the folder
        (root / name).mkdir()
        (root / name / STORE_FILE).write_text(json.dumps(server_store(tmp_path / "idx", name, "http://127.0.0.1:9")))
    assert remove_superseded(root) == ["v-1"]
    assert sorted(p.name for p in root.iterdir()) == ["CURRENT", "v-2"]


def test_an_unknown_store_in_the_manifest_is_a_clear_error(tmp_path):
    with pytest.raises(DenseStoreProblem, match="unknown dense store.*--rebuild"):
        open_dense(tmp_path, {"kind": "s3"})
