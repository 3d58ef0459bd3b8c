"""Versions, leases and clean-up of an index folder: CURRENT and its atomic switch, the readers'
lease on a version, the build lock, staging a version, and removing what nothing uses any more
(superseded versions no reader holds, segments no version names, interrupted builds).

Only a writer removes anything, under the build lock: a build, an add, a compaction, an upgrade,
or `litloop index gc` (`gc_index`). Opening an index (tools/index/view.py) only takes a lease."""

from __future__ import annotations

import fcntl
import json
import logging
import os
import shutil
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tools.index.layout import (
    LEASE,
    LEASE_ATTEMPTS,
    MANIFEST_FILE,
    SEGMENTS,
    IndexProblem,
    _fsync_dir,
    _stamp,
)
from tools.settings import ToolSettings

log = logging.getLogger(__name__)


def current_version(root: Path) -> Path:
    version = _pointed_version(root)
    if not (version / MANIFEST_FILE).exists():
        raise IndexProblem(f"{version}: index version is incomplete (no manifest.json); rebuild the index")
    return version


def _pointed_version(root: Path) -> Path:
    pointer = root / "CURRENT"
    if not root.exists():
        raise IndexProblem(f"{root}: no index here; build one with `litloop index build PATH --index {root}`")
    if not pointer.exists():
        raise IndexProblem(
            f"{root}: not a litloop index (no CURRENT file); build one with "
            f"`litloop index build PATH --index {root}` or point --index at an index folder"
        )
    return root / pointer.read_text().strip()


class VersionLease:
    """A shared flock on one version's `.readers`: while held, no cleanup removes the version."""

    def __init__(self, version: Path, fd: int | None):
        self.version = version
        self._release = weakref.finalize(self, os.close, fd) if fd is not None else None

    @classmethod
    def take(cls, version: Path, create: bool = False) -> VersionLease | None:
        """The lease of `version`, or None when the version is gone (removed meanwhile)."""
        path = version / LEASE
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644) if create else os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            if create or not version.is_dir():
                return None
            return cls.take(version, create=True)  # a version built before leases existed
        except OSError:  # EACCES, EROFS
            log.warning(
                "%s: cannot take a reader lease (read-only index?); a build may remove it while it is open", version
            )
            return cls(version, None)
        # Blocks only while a cleanup holds the exclusive lock, i.e. is renaming the version away.
        fcntl.flock(fd, fcntl.LOCK_SH)
        try:
            here = os.stat(path)
        except FileNotFoundError:
            here = None
        mine = os.fstat(fd)
        if here is None or (here.st_dev, here.st_ino) != (mine.st_dev, mine.st_ino):
            os.close(fd)
            return None
        return cls(version, fd)

    def release(self) -> None:
        if self._release is not None:
            self._release()


def lease_current_version(root: Path) -> VersionLease:
    """Lease the version CURRENT names; read CURRENT again if a cleanup removed it meanwhile."""
    for _ in range(LEASE_ATTEMPTS):
        version = _pointed_version(root)
        lease = VersionLease.take(version)
        if lease is None:
            if _current_name(root) == version.name:  # not removed meanwhile: never there
                raise IndexProblem(f"{version}: CURRENT names a version folder that is not there; rebuild the index")
            continue
        if not (version / MANIFEST_FILE).exists():
            lease.release()
            raise IndexProblem(f"{version}: index version is incomplete (no manifest.json); rebuild the index")
        return lease
    raise IndexProblem(
        f"{root}: the live version changed {LEASE_ATTEMPTS} times while opening it (builds in a "
        "loop?); try again when the builds are done"
    )


def remove_superseded(root: Path, dense_url: str | None = None) -> list[str]:
    """Remove every version CURRENT no longer names and no reader holds, with its server
    collection (on `dense_url`, LITLOOP_DENSE__URL, when given); return their names.

    Best effort: a version some reader holds, or one this process may not delete (a read-only
    index), stays for a later build or `litloop index gc`."""
    for p in root.glob(".removing-*"):
        _dispose(root, p, dense_url)
    removed = []
    for p in sorted(root.glob("v-*")):
        if p.name != _current_name(root) and _remove_if_free(root, p, dense_url):
            removed.append(p.name)
    return removed


def _dispose(root: Path, folder: Path, dense_url: str | None) -> None:
    """Delete a folder no reader may use any more (renamed away, or an interrupted build's), after
    its server collection; when the server cannot be reached, keep its `dense.json` alone, for the
    next cleanup to drop the collection."""
    from tools.retrieval.dense import STORE_FILE, drop_collection

    if drop_collection(root, folder, dense_url):
        shutil.rmtree(folder, ignore_errors=True)
        return
    for p in folder.iterdir():
        if p.name != STORE_FILE:
            shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)


def _current_name(root: Path) -> str | None:
    try:
        return (root / "CURRENT").read_text().strip()
    except FileNotFoundError:
        return None


def _remove_if_free(root: Path, version: Path, dense_url: str | None = None) -> bool:
    try:
        fd = os.open(version / LEASE, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.info("keeping %s: a reader holds it", version)
            return False
        # Under the exclusive lock no build can be between switching to this version and
        # releasing its own lease on it, so CURRENT read now is final for this version.
        if _current_name(root) == version.name:
            return False
        doomed = root / f".removing-{version.name}"
        try:
            os.rename(version, doomed)
        except OSError:
            return False
    finally:
        os.close(fd)
    _dispose(root, doomed, dense_url)
    return True


@contextmanager
def _build_lock(root: Path) -> Iterator[None]:
    """Hold the index's build lock. A build that fails in a folder it made leaves no folder
    behind: an empty index folder holding a `.lock` would look like an index to the next command."""
    made = [p for p in (root, *root.parents) if not p.exists()]  # deepest first
    root.mkdir(parents=True, exist_ok=True)
    try:
        with open(root / ".lock", "w") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise IndexProblem(f"{root}: another build is writing this index; wait for it to finish") from None
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)
    except BaseException:
        if made:
            (root / ".lock").unlink(missing_ok=True)
            for p in made:
                try:
                    p.rmdir()  # only while empty: never anything another process put there
                except OSError:
                    break
        raise


def _stage_version(root: Path, settings: ToolSettings, write: Callable[[Path], None]) -> None:
    """Write a version with `write` into a staging folder, then rename it and point CURRENT at
    it; on any failure remove what was made (the staging folder, segments no version names)."""
    stage = root / f".building-{_stamp()}"
    stage.mkdir(parents=True)
    # The build leases its own version until CURRENT names it, so that no cleanup elsewhere
    # takes it for a leftover between the rename and the switch.
    own = VersionLease.take(stage, create=True)
    try:
        write(stage)
        final = root / _version_name(stage)
        os.replace(stage, final)
        _point_current(root, final.name)
    except BaseException:
        if stage.exists():
            _dispose(root, stage, settings.dense.url)  # with the collection it made, if any
        _collect_segments(root, settings.dense.url)
        raise
    finally:
        if own is not None:
            own.release()


def _collect(root: Path, dense_url: str | None) -> None:
    """After a switch: the superseded versions no reader holds, then the segments none names."""
    remove_superseded(root, dense_url)
    _collect_segments(root, dense_url)


def _collect_segments(root: Path, dense_url: str | None = None) -> list[str]:
    """Remove the segments no version folder names (an interrupted build's, a compacted index's
    old ones once their last version is gone), with their server collections; only under the
    build lock, so no build is between writing a segment and naming it. Return their names."""
    folder = root / SEGMENTS
    if not folder.is_dir():
        return []
    named: set[str] = set()
    for v in root.glob("v-*"):
        try:
            manifest = json.loads((v / MANIFEST_FILE).read_text())
        except FileNotFoundError:
            continue  # removed meanwhile: its readers are gone
        except (OSError, ValueError):
            log.warning("%s: unreadable manifest; keeping every segment", v)
            return []
        named.update(seg["name"] for seg in manifest.get("segments", []))
    removed = []
    for seg in sorted(folder.iterdir()):
        if seg.name not in named and seg.is_dir():
            log.info("removing segment %s: no version names it", seg.name)
            _dispose(root, seg, dense_url)
            removed.append(seg.name)
    return removed


def _version_name(stage: Path) -> str:
    """The version folder a build's staging folder becomes (and names its collection after)."""
    return stage.name.replace(".building-", "v-")


def _point_current(root: Path, name: str) -> None:
    """Atomic switch: write CURRENT.tmp, fsync, rename over CURRENT."""
    tmp = root / "CURRENT.tmp"
    with open(tmp, "w") as fh:
        fh.write(name + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, root / "CURRENT")
    _fsync_dir(root)


def _remove_leftovers(root: Path, dense_url: str | None = None) -> None:
    """What interrupted builds left, with the collections they made (only a build, holding the
    build lock, may remove these), and the superseded versions their readers have let go of
    since the last build."""
    for p in root.glob(".building-*"):
        log.info("removing an interrupted build: %s", p)
        _dispose(root, p, dense_url)
    _collect(root, dense_url)


def gc_index(root: Path, settings: ToolSettings) -> dict[str, Any]:
    """`litloop index gc`: under the build lock, remove what interrupted builds left, the
    superseded versions no reader holds and the segments no version names (with their server
    collections); what a reader still holds stays. Returns what was removed and what was kept."""
    root = Path(root).expanduser()
    if not (root / "CURRENT").exists():
        _pointed_version(root)  # the error that says what is (not) there
    with _build_lock(root):
        url = settings.dense.url
        interrupted = sorted(p.name for p in root.glob(".building-*"))
        for p in root.glob(".building-*"):
            _dispose(root, p, url)
        versions = remove_superseded(root, url)
        segments = _collect_segments(root, url)
    kept = sorted(p.name for p in root.glob("v-*") if p.name != _current_name(root))
    return {
        "index": str(root),
        "versions_removed": versions,
        "segments_removed": segments,
        "interrupted_removed": interrupted,
        "versions_kept": kept,
    }
