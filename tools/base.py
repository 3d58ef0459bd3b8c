"""The data model every part of litloop shares: papers, chunks, locators and passages.

SEE: docs/design.md section 1 (data model); one result type for every retriever (CONTRIBUTING.md, "Adding things").
Plain frozen dataclasses: hundreds of thousands of chunks pass through here, and validation of
untrusted input happens once, in the ingesters.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Literal, TypedDict, get_args

ChunkKind = Literal["title_abstract", "text", "equation", "figure", "table"]
CHUNK_KINDS: tuple[str, ...] = get_args(ChunkKind)

# The chunk cap of the published method (docs/design.md section 1).
MAX_CHUNK_CHARS = 2000


@dataclass(frozen=True)
class Locator:
    """Where in a paper a chunk sits. Every field is optional: keep what the source knows."""

    page: int | None = None
    section: str | None = None
    paragraph: int | None = None
    table_id: str | None = None
    figure_id: str | None = None
    page_end: int | None = None  # the last page, when the chunk runs onto the next one
    page_end_at: int | None = None  # where in the chunk's text that page begins
    footnote: str | None = None  # footnote marks ("2", "3, 4") when the chunk is footnote text

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    def page_of(self, offset: int) -> int | None:
        """The page the chunk's text is on at character `offset` (a chunk may run onto a second page)."""
        if self.page_end is not None and self.page_end_at is not None and offset >= self.page_end_at:
            return self.page_end
        return self.page

    def at(self, start: int, end: int) -> Locator:
        """The locator of the span [start, end) of the chunk's text: its own page (or both)."""
        first, last = self.page_of(start), self.page_of(max(start, end - 1))
        if first == last:
            return replace(self, page=first, page_end=None, page_end_at=None)
        return replace(self, page_end_at=None)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Locator:
        data = data or {}
        return cls(**{f.name: data.get(f.name) for f in fields(cls)})

    def describe(self) -> str:
        """Human-readable form for citations: 'p. 3, §4 Results, Table 2'."""
        parts = []
        if self.page is not None:
            parts.append(f"pp. {self.page}–{self.page_end}" if self.page_end else f"p. {self.page}")
        if self.footnote:
            parts.append(f"footnote {self.footnote}")
        if self.section:
            parts.append(f"§ {self.section}")
        if self.paragraph is not None:
            parts.append(f"¶ {self.paragraph}")
        if self.table_id:
            parts.append(self.table_id)
        if self.figure_id:
            parts.append(self.figure_id)
        return ", ".join(parts) or "title and abstract"


@dataclass(frozen=True)
class BibEntry:
    """An unresolved bibliography entry, as the source gives it."""

    title: str = ""
    year: int | None = None
    raw: str = ""
    link: str | None = None  # an id the source already linked (S2ORC `links`)
    # the id in-text citations use for it: S2ORC's 'BIBREF3', TEI's 'b3', a PDF entry's 'b3'
    # (its position); empty in papers read before citation contexts were recorded
    key: str = ""
    authors: tuple[str, ...] = ()
    venue: str = ""

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> BibEntry:
        return cls(
            title=d.get("title") or "",
            year=d.get("year"),
            raw=d.get("raw") or "",
            link=d.get("link"),
            key=d.get("key") or "",
            authors=tuple(d.get("authors") or ()),
            venue=d.get("venue") or "",
        )


@dataclass(frozen=True)
class CiteMark:
    """An in-text citation the source marked (S2ORC `cite_spans`, TEI `<ref type="bibr">`): the
    characters [start, end) of its block's text and the bibliography key it points to."""

    start: int
    end: int
    key: str


@dataclass(frozen=True)
class Paper:
    paper_id: str
    title: str = ""
    abstract: str = ""
    authors: tuple[str, ...] = ()
    venue: str | None = None
    year: int | None = None
    references: tuple[str, ...] = ()  # corpus paper ids (resolved)
    source: str = ""  # the file it came from
    field: str | None = None
    bibliography: tuple[BibEntry, ...] = ()

    @property
    def venue_year_tag(self) -> str | None:
        """`[VENUE YEAR]`, the tag subqueries can target; only when both are known."""
        if self.venue and self.year:
            return f"[{self.venue} {self.year}]"
        return None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["authors"] = list(self.authors)
        d["references"] = list(self.references)
        d["bibliography"] = [asdict(b) for b in self.bibliography]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Paper:
        return cls(
            paper_id=str(d["paper_id"]),
            title=d.get("title") or "",
            abstract=d.get("abstract") or "",
            authors=tuple(d.get("authors") or ()),
            venue=d.get("venue"),
            year=d.get("year"),
            references=tuple(d.get("references") or ()),
            source=d.get("source") or "",
            field=d.get("field"),
            bibliography=tuple(BibEntry.from_dict(b) for b in d.get("bibliography") or ()),
        )

    def with_references(self, refs: list[str]) -> Paper:
        return replace(self, references=tuple(refs))


@dataclass(frozen=True)
class Chunk:
    chunk_id: str
    paper_id: str
    kind: ChunkKind
    text: str
    locator: Locator = field(default_factory=Locator)

    def to_dict(self) -> dict[str, Any]:
        return {
            "chunk_id": self.chunk_id,
            "paper_id": self.paper_id,
            "kind": self.kind,
            "text": self.text,
            "locator": self.locator.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Chunk:
        return cls(
            chunk_id=d["chunk_id"],
            paper_id=d["paper_id"],
            kind=d["kind"],
            text=d["text"],
            locator=Locator.from_dict(d.get("locator")),
        )


class Hit(TypedDict):
    """A scored chunk as the method's rankings, the evidence pool and the agent's state carry it:
    ids and a score, plain JSON (a checkpointer stores it). The text is read from the index by
    chunk id where a prompt or a reranker needs it (`tools.retrieval.retrieve.chunk_of`)."""

    chunk_id: str
    paper_id: str
    score: float
    source: str  # the subquery (or retriever) that put it there


@dataclass(frozen=True)
class Passage:
    """What every retriever returns: one scored chunk, with where it came from."""

    paper_id: str
    chunk_id: str
    text: str
    score: float
    source: str  # the retriever or tool that produced it: "bm25", "dense", "hybrid", ...
    kind: ChunkKind = "text"
    locator: Locator = field(default_factory=Locator)

    @classmethod
    def from_chunk(cls, chunk: Chunk, score: float, source: str) -> Passage:
        return cls(
            paper_id=chunk.paper_id,
            chunk_id=chunk.chunk_id,
            text=chunk.text,
            score=float(score),
            source=source,
            kind=chunk.kind,
            locator=chunk.locator,
        )

    def hit(self, source: str | None = None) -> Hit:
        """This passage as a `Hit` (ids and score, no text)."""
        return Hit(
            chunk_id=self.chunk_id,
            paper_id=self.paper_id,
            score=self.score,
            source=self.source if source is None else source,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "paper_id": self.paper_id,
            "chunk_id": self.chunk_id,
            "kind": self.kind,
            "text": self.text,
            "score": self.score,
            "source": self.source,
            "locator": self.locator.to_dict(),
        }


@dataclass(frozen=True)
class Block:
    """One unit of parsed text before chunking: a paragraph, caption, equation or the abstract.

    Ingesters produce blocks; the chunker turns them into chunks and never merges across a page
    or section boundary.
    """

    kind: ChunkKind
    text: str
    page: int | None = None
    section: str | None = None
    table_id: str | None = None
    figure_id: str | None = None
    page_end: int | None = None  # a paragraph that runs onto the next page ends there
    page_end_at: int | None = None  # where in `text` the later page begins
    footnote: str | None = None  # the mark of a footnote block ("2")
    cites: tuple[CiteMark, ...] = ()  # the in-text citations the source marked in `text`


@dataclass(frozen=True)
class Dropped:
    """Text a reader saw on a page and left out of the blocks on purpose, with why: a running
    head or foot, a page or line number, the title and author block, a figure's own text. The
    build's accounting counts it as read (kept out for a stated reason), not lost."""

    page: int
    text: str
    reason: str


MIN_SHARE = 0.85  # below this share of its words a paper's build reports it (tools/ingest/pdf/accounting.py)
MIN_PAGE_SHARE = 0.5  # a page that keeps less than this of its own words is reported as lost
_MIN_PAGE_WORDS = 20  # a page with fewer words (a blank or a figure page) is not judged alone


@dataclass(frozen=True)
class PageShare:
    page: int
    words: int  # the reader's words on the page
    kept: int  # of them, in the document or dropped for a stated reason

    @property
    def share(self) -> float:
        return self.kept / self.words if self.words else 1.0


@dataclass(frozen=True)
class TextAccount:
    """A PDF's words against what its build kept, per page."""

    pages: tuple[PageShare, ...]
    against: str = "the reader's own words"  # what the pages' words are: the plain text layer, where it could be read
    put_back: int = 0  # paragraphs the text floor put back from the plain layer (tools/ingest/pdf/floor.py)
    put_back_words: int = 0
    dropped: tuple[tuple[str, int], ...] = ()  # (reason, words) the build left out on purpose

    @property
    def words(self) -> int:
        return sum(p.words for p in self.pages)

    @property
    def share(self) -> float:
        return sum(p.kept for p in self.pages) / self.words if self.words else 1.0

    def lost_pages(self) -> list[PageShare]:
        return [p for p in self.pages if p.words >= _MIN_PAGE_WORDS and p.share < MIN_PAGE_SHARE]

    def problem(self, where: str) -> str | None:
        """The build's warning for this paper, or None when it kept enough of every page."""
        lost = self.lost_pages()
        if self.share >= MIN_SHARE and not lost:
            return None
        pages = ", ".join(f"p. {p.page} kept {p.share:.2f}" for p in lost)
        return (
            f"{where}: the PDF reader kept {self.share:.2f} of the paper's text (against {self.against})"
            + (f" ({pages})" if lost else "")
            + "; the rest is in no chunk, so it cannot be found or cited. `litloop index show` prints what was "
            "kept; please report the file if its layout should be read"
        )

    def to_dict(self) -> dict:
        return {
            "share": round(self.share, 4),
            "words": self.words,
            "lost_pages": [p.page for p in self.lost_pages()],
            "against": self.against,
            "put_back": self.put_back,
            "put_back_words": self.put_back_words,
            "dropped": dict(self.dropped),
        }


@dataclass(frozen=True)
class Document:
    """A parsed paper: its record plus its body blocks (the abstract lives in `paper`), the
    text the reader dropped on purpose (`dropped`, PDF readers only), and how many words of it
    had lost a ligature and were repaired (`ligatures_repaired`, tools/ingest/ligatures.py)."""

    paper: Paper
    blocks: tuple[Block, ...] = ()
    dropped: tuple[Dropped, ...] = ()
    ligatures_repaired: int = 0
    # PDF readers: each page's words against what the build kept (None for other formats)
    text_account: TextAccount | None = None


class IngestError(ValueError):
    """Bad input, with the file (and line) it came from and what to do about it."""

    def __init__(self, path: str, message: str, line: int | None = None):
        self.path = path
        self.line = line
        self.message = message
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {message}")


# Ids across corpora: several corpora searched together (tools.index.multi.MultiIndex) namespace
# their ids `<corpus>:<id>`; the registry (tools.registry) keeps the separator out of corpus
# names, so `a:b:c` splits at the first one.
NAMESPACE_SEP = ":"


def namespaced(corpus: str, local_id: str) -> str:
    return f"{corpus}{NAMESPACE_SEP}{local_id}"


def split_namespaced(ns_id: str) -> tuple[str, str]:
    """`'pubmed:pmid1#c0'` -> `('pubmed', 'pmid1#c0')`; corpus names never hold the separator."""
    corpus, sep, local = ns_id.partition(NAMESPACE_SEP)
    if not sep:
        raise ValueError(f"{ns_id!r} is not a namespaced id (expected '<corpus>{NAMESPACE_SEP}<id>')")
    return corpus, local
