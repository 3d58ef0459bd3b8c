"""Version leases, cleanup and `index gc` of an index folder (`tools/index/versions.py`), on
hand-made version folders; and a reader's dense store that is not there (`tools/retrieval/dense.py`).

The whole race, with a real build in a subprocess and a real reader, is
tests/integration/test_index_readers.py.
"""

from __future__ import annotations

import fcntl
import json
import os

import pytest

import tools.index.versions as index_mod
from agent.settings import get_settings
from tools.index import (
    IndexProblem,
    VersionLease,
    gc_index,
    lease_current_version,
    remove_superseded,
)
from tools.retrieval.dense import DenseIndex, DenseStoreMissing

pytestmark = pytest.mark.unit


def _versions(root, *names, current):
    root.mkdir()
    for name in names:
        (root / name).mkdir()
        (root / name / "manifest.json").write_text("{}")
    (root / "CURRENT").write_text(current + "\n")
    return [root / n for n in names]


def test_a_held_version_stays_until_its_reader_lets_go(tmp_path):
    root = tmp_path / "idx"
    old, new = _versions(root, "v-1", "v-2", current="v-1")
    lease = lease_current_version(root)
    assert lease.version == old
    (root / "CURRENT").write_text("v-2\n")  # a build switched
    assert remove_superseded(root) == []
    assert old.is_dir(), "a version a reader holds must stay"
    lease.release()
    assert remove_superseded(root) == ["v-1"]
    assert not old.exists() and new.is_dir()
    assert not list(root.glob(".removing-*"))


def test_cleanup_never_removes_the_live_version_and_clears_interrupted_removals(tmp_path):
    root = tmp_path / "idx"
    _versions(root, "v-1", current="v-1")
    (root / ".removing-v-0" / "chroma").mkdir(parents=True)  # a cleanup killed mid-way
    assert remove_superseded(root) == []
    assert (root / "v-1" / "manifest.json").is_file()
    assert not (root / ".removing-v-0").exists()


def test_a_version_without_a_lease_file_is_leased_and_removed_like_any(tmp_path):
    # versions built before leases existed have no `.readers`
    root = tmp_path / "idx"
    old, _ = _versions(root, "v-1", "v-2", current="v-1")
    lease = lease_current_version(root)
    (root / "CURRENT").write_text("v-2\n")
    assert remove_superseded(root) == [] and old.is_dir()
    lease.release()
    assert remove_superseded(root) == ["v-1"]


def test_a_reader_that_loses_the_race_to_a_cleanup_reads_current_again(tmp_path, monkeypatch):
    root = tmp_path / "idx"
    old, new = _versions(root, "v-1", "v-2", current="v-2")
    real_flock, raced = fcntl.flock, []

    def cleanup_first(fd, op):
        # between the reader's open of v-1/.readers and its shared lock, a cleanup takes v-1 away
        if op == fcntl.LOCK_SH and not raced:
            raced.append(True)
            os.rename(old, root / ".removing-v-1")
        real_flock(fd, op)

    monkeypatch.setattr(fcntl, "flock", cleanup_first)
    assert VersionLease.take(old) is None
    assert raced

    # the same race inside lease_current_version: the stale CURRENT named v-1, the next read v-2
    pointed = iter([root / "v-0", new])
    monkeypatch.setattr(index_mod, "_pointed_version", lambda _root: next(pointed))
    lease = lease_current_version(root)
    assert lease.version == new
    lease.release()


def test_current_naming_a_missing_folder_is_a_clear_error(tmp_path):
    root = tmp_path / "idx"
    _versions(root, "v-1", current="v-9")
    with pytest.raises(IndexProblem, match="v-9: CURRENT names a version folder that is not there; rebuild"):
        lease_current_version(root)


def test_opening_a_missing_dense_store_raises_and_creates_nothing(tmp_path):
    gone = tmp_path / "v-1" / "chroma"
    with pytest.raises(DenseStoreMissing) as err:
        DenseIndex(gone)
    message = str(err.value)
    assert str(gone) in message
    assert "Open the index again" in message and "--rebuild" in message
    assert not gone.exists() and not gone.parent.exists()

    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DenseStoreMissing, match="no chroma.sqlite3"):
        DenseIndex(empty)
    assert list(empty.iterdir()) == []


def _segments(root, *names):
    for name in names:
        (root / "segments" / name).mkdir(parents=True)


def test_gc_removes_what_nothing_uses_and_keeps_what_a_reader_holds(tmp_path):
    root = tmp_path / "idx"
    v1, v2, v3 = _versions(root, "v-1", "v-2", "v-3", current="v-1")
    (v1 / "manifest.json").write_text(json.dumps({"segments": [{"name": "s-a"}]}))
    (v3 / "manifest.json").write_text(json.dumps({"segments": [{"name": "s-a"}, {"name": "s-b"}]}))
    _segments(root, "s-a", "s-b", "s-orphan")
    (root / ".building-x").mkdir()  # a build killed mid-way
    held = lease_current_version(root)  # a reader of v-1
    (root / "CURRENT").write_text("v-3\n")  # a build switched
    settings = get_settings()

    got = gc_index(root, settings)
    assert got["versions_removed"] == ["v-2"] and got["versions_kept"] == ["v-1"]
    assert got["segments_removed"] == ["s-orphan"] and got["interrupted_removed"] == [".building-x"]
    assert v1.is_dir() and v3.is_dir() and not v2.exists() and not (root / ".building-x").exists()

    held.release()
    got = gc_index(root, settings)
    assert got["versions_removed"] == ["v-1"] and got["versions_kept"] == []
    assert got["segments_removed"] == []  # s-a: the live version still names it
    assert sorted(p.name for p in (root / "segments").iterdir()) == ["s-a", "s-b"]
    assert (v3 / "manifest.json").is_file()


def test_gc_waits_for_no_build_and_makes_no_index_where_there_is_none(tmp_path):
    root = tmp_path / "idx"
    _versions(root, "v-1", current="v-1")
    with open(root / ".lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a build is writing
        with pytest.raises(IndexProblem, match="another build"):
            gc_index(root, get_settings())
    with pytest.raises(IndexProblem, match="no index here"):
        gc_index(tmp_path / "nothing", get_settings())
    assert not (tmp_path / "nothing").exists()


def test_index_gc_command_reports_what_it_removed(tmp_path):
    from typer.testing import CliRunner

    from agent.cli.main import app

    root = tmp_path / "idx"
    _versions(root, "v-1", "v-2", current="v-2")
    r = CliRunner().invoke(app, ["index", "gc", "--index", str(root), "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["versions_removed"] == ["v-1"]
    assert not (root / "v-1").exists() and (root / "v-2").is_dir()
