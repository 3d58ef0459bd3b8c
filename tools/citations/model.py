"""The records of citation contexts: a `Context` (where one paper cites one bibliography entry),
a `Reference` (a cited work that is not a corpus paper, one per distinct work across the corpus)
and a `Target` (what one bibliography entry of one paper points to).

Plain frozen dataclasses, like tools/base.py's: they are built by litloop's own extractor from
records the ingest layer already validated, and read back from files litloop wrote.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from typing import Any, Literal

from tools.base import BibEntry
from tools.retrieval.text import normalize_title

# What a context's `target` is: a paper of the index, or a reference record.
TargetKind = Literal["paper", "reference"]
REFERENCE_PREFIX = "ref:"
# A title shorter than this (normalised) is no key for a work: the raw entry is used instead.
# The same floor as the title resolver's (tools/ingest/resolve.py).
MIN_TITLE_CHARS = 12


@dataclass(frozen=True)
class Context:
    """One in-text citation: paper `paper_id` cites its bibliography entry `key` in `sentence`,
    the characters [start, end) of chunk `chunk_id`; the citation itself is [cite_start,
    cite_end) of the same chunk."""

    paper_id: str
    key: str
    chunk_id: str
    start: int
    end: int
    cite_start: int
    cite_end: int
    sentence: str
    page: int | None = None
    section: str | None = None
    intent: str = "background"
    cue: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Context:
        return cls(**d)


@dataclass(frozen=True)
class Reference:
    """A cited work the index does not hold, as its first citing paper's bibliography gives it."""

    ref_id: str
    title: str
    authors: tuple[str, ...] = ()
    year: int | None = None
    venue: str = ""
    raw: str = ""

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["authors"] = list(self.authors)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Reference:
        return cls(**{**d, "authors": tuple(d.get("authors") or ())})


@dataclass(frozen=True)
class Target:
    """What bibliography entry `key` of paper `paper_id` points to: `target` is a paper id of the
    index (kind 'paper') or a reference record's id (kind 'reference')."""

    paper_id: str
    key: str
    target: str
    kind: TargetKind


def work_key(entry: BibEntry) -> str:
    """What makes two bibliography entries one work: the title, normalised (letters and digits,
    lower case); the raw entry when the title is too short to tell works apart."""
    title = normalize_title(entry.title)
    return title if len(title) >= MIN_TITLE_CHARS else normalize_title(entry.raw)


def reference_id(key: str) -> str:
    """A reference record's id: 'ref:' and 12 hex digits of the work key's SHA-1 (stable across
    builds and corpora, so two corpora's records of one work have one id)."""
    return REFERENCE_PREFIX + hashlib.sha1(key.encode()).hexdigest()[:12]


def is_reference_id(value: str) -> bool:
    return value.startswith(REFERENCE_PREFIX)
