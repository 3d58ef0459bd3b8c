"""Citation contexts on disk, beside the chunks: written once, read by paper or by target.

- Each segment holds its papers' contexts in `contexts.sqlite` (a build or an add writes its
  papers' with its chunks; compaction copies every segment's into the merged one), keyed by the
  citing paper and the bibliography key: what the text says does not change when the corpus
  grows.
- Each version holds `citations.sqlite`: what every bibliography entry points to (`targets`: a
  paper of the index or a reference record) and the reference records (`refs`, one per distinct
  work). Resolution depends on the whole corpus (an add may bring the paper an old entry names),
  so it is redone by every build and add, as the citation graph is.

An index written before litloop recorded contexts has neither file; `CitationStore.available`
is then False and the commands say how to get them (rebuild the index).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from tools.citations.model import Context, Reference, Target
from tools.record_files import RecordFile, create, insert
from tools.retrieval.text import normalize_title

CONTEXTS_FILE = "contexts.sqlite"
CITATIONS_FILE = "citations.sqlite"

_CONTEXTS = """CREATE TABLE contexts (row INTEGER PRIMARY KEY, paper_id TEXT NOT NULL, key TEXT NOT NULL,
    record TEXT NOT NULL)"""
_TARGETS = """CREATE TABLE targets (paper_id TEXT NOT NULL, key TEXT NOT NULL, target TEXT NOT NULL,
    kind TEXT NOT NULL, PRIMARY KEY (paper_id, key))"""
_REFS = """CREATE TABLE refs (ref_id TEXT PRIMARY KEY, words TEXT NOT NULL, record TEXT NOT NULL)"""


def write_contexts(path: Path, contexts: Iterable[Context]) -> int:
    """A segment's contexts, in the order given; the number written."""
    db = create(Path(path), _CONTEXTS)
    rows = ((i, c.paper_id, c.key, json.dumps(c.to_dict(), ensure_ascii=False)) for i, c in enumerate(contexts))
    n = insert(db, "INSERT INTO contexts VALUES (?, ?, ?, ?)", rows)
    _index(path, "CREATE INDEX by_entry ON contexts (paper_id, key)")
    return n


def write_citations(path: Path, targets: Iterable[Target], references: Iterable[Reference]) -> None:
    """A version's targets and reference records."""
    db = create(Path(path), _TARGETS)
    db.execute(_REFS)
    insert(db, "INSERT INTO targets VALUES (?, ?, ?, ?)", ((t.paper_id, t.key, t.target, t.kind) for t in targets))
    db = sqlite3.connect(path)
    try:
        with db:
            db.executemany(
                "INSERT INTO refs VALUES (?, ?, ?)",
                (
                    (r.ref_id, normalize_title(r.title or r.raw), json.dumps(r.to_dict(), ensure_ascii=False))
                    for r in references
                ),
            )
            db.execute("CREATE INDEX by_target ON targets (target)")
    finally:
        db.close()


def _index(path: Path, sql: str) -> None:
    db = sqlite3.connect(path)
    try:
        with db:
            db.execute(sql)
    finally:
        db.close()


def read_contexts(path: Path) -> Iterator[Context]:
    """Every context of one segment's file, in row order."""
    f = RecordFile(path)
    try:
        for record in f.column("contexts", "record"):
            yield Context.from_dict(json.loads(record))
    finally:
        f.close()


class CitationStore:
    """The contexts and targets of one index version (read on demand, like its records)."""

    def __init__(self, version_dir: Path, segment_dirs: Sequence[Path]):
        path = Path(version_dir) / CITATIONS_FILE
        self.available = path.is_file()
        self._version = RecordFile(path) if self.available else None
        self._segments = [RecordFile(d / CONTEXTS_FILE) for d in segment_dirs if (d / CONTEXTS_FILE).is_file()]

    # --- what entries point to

    def targets_of(self, paper_id: str) -> list[Target]:
        """The entries of `paper_id`'s bibliography that it cites in its text, or that resolve."""
        if self._version is None:
            return []
        rows = self._version.all("SELECT paper_id, key, target, kind FROM targets WHERE paper_id = ?", (paper_id,))
        return [Target(*r) for r in rows]

    def citing(self, target: str) -> list[Target]:
        """Every (paper, entry) that points to `target` (a paper id or a reference id)."""
        if self._version is None:
            return []
        rows = self._version.all("SELECT paper_id, key, target, kind FROM targets WHERE target = ?", (target,))
        return [Target(*r) for r in rows]

    def reference(self, ref_id: str) -> Reference | None:
        if self._version is None:
            return None
        got = self._version.one("SELECT record FROM refs WHERE ref_id = ?", (ref_id,))
        return Reference.from_dict(json.loads(got[0])) if got else None

    def references_with(self, words: Sequence[str]) -> list[Reference]:
        """Reference records whose normalised title (or raw entry) holds every one of `words`."""
        if self._version is None or not words:
            return []
        where = " AND ".join("(' ' || words || ' ') LIKE ?" for _ in words)
        rows = self._version.all(f"SELECT record FROM refs WHERE {where}", tuple(f"% {w} %" for w in words))
        return [Reference.from_dict(json.loads(r[0])) for r in rows]

    def cited_papers(self) -> list[str]:
        """Every paper of the index some entry points to."""
        if self._version is None:
            return []
        return [r[0] for r in self._version.all("SELECT DISTINCT target FROM targets WHERE kind = 'paper'")]

    def counts(self) -> dict[str, int]:
        if self._version is None:
            return {}
        n_refs = self._version.one("SELECT COUNT(*) FROM refs")
        n_targets = self._version.one("SELECT COUNT(*) FROM targets")
        return {"references": n_refs[0] if n_refs else 0, "entries": n_targets[0] if n_targets else 0}

    # --- contexts

    def contexts(self, paper_id: str, key: str | None = None) -> list[Context]:
        """`paper_id`'s contexts (of entry `key` only, when given), in reading order."""
        out: list[Context] = []
        for f in self._segments:
            if key is None:
                rows = f.all("SELECT record FROM contexts WHERE paper_id = ? ORDER BY row", (paper_id,))
            else:
                rows = f.all("SELECT record FROM contexts WHERE paper_id = ? AND key = ? ORDER BY row", (paper_id, key))
            out.extend(Context.from_dict(json.loads(r[0])) for r in rows)
        return out

    def close(self) -> None:
        for f in [*self._segments, *([self._version] if self._version else [])]:
            f.close()
