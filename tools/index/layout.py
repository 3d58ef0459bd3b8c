"""What every part of the index package shares: file names, the errors, and the small helpers
of writing a folder for good (stamps, fsync, progress bars). The layout itself is described in
`tools/index/__init__.py`."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

FORMAT_VERSION = 2  # 1: whole-index JSONL records and BM25 matrices, one Chroma per version
BM25_K1, BM25_B = 1.5, 0.75  # SEE: docs/design.md section 2 (paper values)
BM25_EPSILON = 0.25  # rank_bm25's floor of negative idfs (times the mean idf)
SEGMENTS = "segments"
MANIFEST_FILE = "manifest.json"
PAPERS_FILE = "papers.sqlite"
CHUNKS_FILE = "chunks.sqlite"
PAPER_EMB_FILE = "paper_emb.npy"
SEGMENT_FILE = "segment.json"
GRAPH_FILE = "graph.json"
LEASE = ".readers"
LEASE_ATTEMPTS = 5  # CURRENT moving this often during one open means builds are looping


class IndexProblem(RuntimeError):
    """An index that is missing, half-made, or does not match this run's settings."""


class IndexFormatOld(IndexProblem):
    """An index of an earlier format that `litloop index upgrade` converts."""


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S") + f"-{os.getpid()}-{time.monotonic_ns() % 10**6}"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_tree(path: Path) -> None:
    for p in path.rglob("*"):
        if p.is_file():
            with open(p, "rb") as fh:
                os.fsync(fh.fileno())


# A build's progress: True for bars on stderr, or a function that gets each stage's state (an
# interface that shows the build its own way: the web chat's first run)
ProgressSink = Callable[[dict[str, Any]], None]
Progress = bool | ProgressSink
REPORT_EVERY_S = 0.5  # a sink hears from a stage at most this often, and once at its end


class _Reported:
    """A bar that tells a sink where a stage stands: `{"stage", "done", "total", "unit",
    "seconds", "left_s", "finished"}`, `left_s` from the rate so far (None without a total)."""

    def __init__(self, sink: ProgressSink, desc: str, total: int | None, unit: str) -> None:
        self.sink, self.desc, self.total, self.unit = sink, desc, total, unit
        self.n = 0
        self.started = self._last = time.monotonic()
        self._report(False)

    def update(self, n: int = 1) -> None:
        self.n += n
        if time.monotonic() - self._last >= REPORT_EVERY_S:
            self._report(False)

    def close(self) -> None:
        self._report(True)

    def _report(self, finished: bool) -> None:
        now = self._last = time.monotonic()
        seconds = now - self.started
        left = None
        if self.total and self.n and not finished:
            left = seconds / self.n * (self.total - self.n)
        self.sink(
            {
                "stage": self.desc,
                "done": self.n,
                "total": self.total,
                "unit": self.unit,
                "seconds": seconds,
                "left_s": left,
                "finished": finished,
            }
        )


@contextmanager
def _progress(enabled: Progress, desc: str, total: int | None = None, unit: str = "it") -> Iterator[Any]:
    if callable(enabled):
        reported = _Reported(enabled, desc, total, unit)
        try:
            yield reported
        finally:
            reported.close()
        return
    from tqdm import tqdm

    bar = tqdm(total=total, desc=desc, unit=unit, disable=not enabled, leave=False)
    try:
        yield bar
    finally:
        bar.close()


def _counting(items: Iterable[Any], bar: Any) -> Iterator[Any]:
    for item in items:
        bar.update(1)
        yield item


def dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
