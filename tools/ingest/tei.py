"""GROBID TEI XML ingestion (`NAME.tei.xml`, what GROBID's `processFulltextDocument` returns):
sections, paragraphs, equations, figure and table captions with the tables' rows, back matter,
bibliography.

SEE: docs/design.md section 1 (GROBID's parse gives sections, captions and linked bibliographies).
S2ORC JSON is the same GROBID parse converted (doc2json), so the mapping follows
tools/ingest/s2orc.py and shares its rules: section names ('2.1 Overview' from `<head n="2.1">`),
figure and table ids ('Table 1' from the label, the caption, or how the body refers to it),
abstract clean-up, bibliography entries. What TEI adds:

- `<formula>` elements are equation blocks ("text (label)");
- a table figure's `<table>` is rendered as `cell | cell` lines under its caption;
- pages, when GROBID was asked for coordinates (`teiCoordinates=p`, `head`, `formula`, `figure`):
  the first page of an element's `coords="page,x,y,w,h;..."` (or of the first element inside it
  that has one) is its block's page; without coordinates blocks have page=None, as in S2ORC.

Only the standard library reads the XML: ElementTree's expat resolves no external entities and
(expat 2.4 on) refuses entity-expansion bombs. Any problem with a file is one IngestError naming
it and saying what to do; the loader goes on with the other files.
"""

from __future__ import annotations

import logging
import re
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from tools.base import BibEntry, Block, CiteMark, Document, IngestError, Paper
from tools.ingest.documents import document
from tools.ingest.records import YEAR_RANGE
from tools.ingest.s2orc import (
    author_names,
    caption_label,
    mentioned_label,
    one_line,
    raw_reference,
    section_name,
    strip_abstract_label,
)
from tools.tables import render_grid

log = logging.getLogger(__name__)

TEI_NS = "http://www.tei-c.org/ns/1.0"
SUFFIX = ".tei.xml"
_T = f"{{{TEI_NS}}}"
_XML_ID = "{http://www.w3.org/XML/1998/namespace}id"
# Elements whose text is a word of its own: GROBID writes sentences (<s>), cells and list items
# back to back with no space between them ("First.Second.").
_SPACED = frozenset({"s", "lb", "label", "note", "item", "cell", "row", "p", "head", "figDesc", "div"})
# Deeper nesting of <div>s is no GROBID output (it writes them flat; Pub2TEI nests a few levels).
_MAX_DEPTH = 50
# Section names of back-matter divisions GROBID gives no heading.
_BACK_NAMES = {
    "acknowledgement": "Acknowledgements",
    "annex": "Appendix",
    "funding": "Funding",
    "availability": "Availability",
    "contribution": "Author contributions",
}
_GROBID_HOWTO = "curl -F input=@paper.pdf localhost:8070/api/processFulltextDocument > paper.tei.xml"


def parse_tei(path: Path, paper_id: str | None = None) -> Document:
    """The Document of one GROBID TEI file; an IngestError naming the file for any bad input."""
    path = Path(path)
    root = _root(path)
    header = root.find(f"{_T}teiHeader")
    reader = _Body()
    text = root.find(f"{_T}text")
    if text is not None:
        reader.read(path, text)
    paper = Paper(
        paper_id=paper_id or tei_paper_id(path),
        title=_title(header),
        abstract=_abstract(header),
        authors=_authors(header),
        venue=_venue(header),
        year=_paper_year(header),
        source=str(path),
        bibliography=_bibliography(text),
    )
    blocks = reader.blocks()
    _check_content(path, paper, blocks)
    if not blocks:
        log.warning("%s: paper %s has no body text", path, paper.paper_id)
    return document(paper, blocks, path, None)


def tei_paper_id(path: Path) -> str:
    """'N18-3011' for N18-3011.tei.xml, and for N18-3011.grobid.tei.xml (how GROBID's Python
    client, grobid_client_python, names its output)."""
    name = Path(path).name
    for suffix in (".grobid" + SUFFIX, SUFFIX):
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return Path(path).stem


def is_tei(path: Path) -> bool:
    return Path(path).name.lower().endswith(SUFFIX)


# --- the file -------------------------------------------------------------------------------


def _root(path: Path) -> ET.Element:
    """The <TEI> root element, or an IngestError saying why the file is not GROBID TEI."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise IngestError(str(path), "file not found; check the path") from None
    if not data.strip():
        raise IngestError(
            str(path),
            "the file is empty; GROBID returned nothing for this PDF (run "
            f"it again: {_GROBID_HOWTO}) or leave the file out",
        )
    if _looks_like_html(data):
        raise IngestError(
            str(path),
            "this is an HTML page, not GROBID TEI XML (a saved web page or "
            f"a server's error page?); save GROBID's own reply: {_GROBID_HOWTO}",
        )
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        line, column = exc.position
        reason = re.sub(r":\s*line \d+, column \d+$", "", str(exc))
        # expat's words for a file that stops mid-element: an interrupted download or write
        cut = reason.startswith(("no element found", "unclosed token"))
        advice = "the file is cut short" if cut else "fix the file"
        raise IngestError(
            str(path),
            f"not well-formed XML ({reason} at column {column + 1}); {advice}, or run GROBID on the PDF again",
            line,
        ) from None
    if root.tag != f"{_T}TEI":
        raise IngestError(
            str(path),
            f"not a GROBID TEI file: the root element is <{_describe(root.tag)}>; "
            f"expected <TEI> in the TEI namespace ({TEI_NS}); give GROBID's "
            "processFulltextDocument output, or leave the file out",
        )
    return root


def _looks_like_html(data: bytes) -> bool:
    head = data[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return head.startswith((b"<!doctype html", b"<html"))


def _describe(tag: str) -> str:
    """'html' for a tag without namespace, 'TEI xmlns="..."' for one in another namespace."""
    ns, _, local = tag[1:].partition("}") if tag.startswith("{") else ("", "", tag)
    return f'{local} xmlns="{ns}"' if ns else local


def _check_content(path: Path, paper: Paper, blocks: list[Block]) -> None:
    """A TEI without title and body is a failed parse; without title and abstract it cannot be
    listed (every paper is indexed under its title and abstract)."""
    if paper.title:
        return
    if not blocks:
        raise IngestError(
            str(path),
            "GROBID found neither a title nor any body text in this TEI "
            "(a failed or header-only parse); run processFulltextDocument on the PDF "
            "again (a scanned PDF needs OCR first)",
        )
    if not paper.abstract:
        raise IngestError(
            str(path),
            f"GROBID found neither a title nor an abstract (its {len(blocks)} "
            "body blocks are not indexed); put the title in "
            "teiHeader/fileDesc/titleStmt/title, or run GROBID again with "
            "consolidateHeader=1: every paper is indexed under its title and abstract",
        )


# --- text of an element ---------------------------------------------------------------------


def _local(tag: object) -> str:
    return tag.rpartition("}")[2] if isinstance(tag, str) else ""


def _text_of(el: ET.Element | None, skip: frozenset[str] = frozenset()) -> str:
    """All text inside `el` (inline markup such as <ref>, <hi> kept as its text), whitespace
    normalised; sentences, cells and the like spaced apart; `skip` elements left out.
    Iterative: deep inline nesting cannot exhaust the stack."""
    if el is None:
        return ""
    parts: list[str] = []
    stack: list[ET.Element | str] = [el]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            parts.append(item)
            continue
        name = _local(item.tag)
        if item is not el and name in skip:
            continue
        space = " " if name in _SPACED else ""
        parts.append(space + (item.text or ""))
        todo: list[ET.Element | str] = []
        for child in item:
            todo.append(child)
            if child.tail:
                todo.append(child.tail)
        todo.append(space)
        stack.extend(reversed(todo))
    return one_line("".join(parts))


def _page(el: ET.Element) -> int | None:
    """The first page of the element's `coords` (GROBID's 'page,x,y,w,h;...'), or of the first
    element inside it that has them; None without coordinates."""
    for node in el.iter():
        coords = node.get("coords")
        if coords:
            m = re.match(r"\s*(\d{1,6})\s*,", coords)
            if m and int(m.group(1)) >= 1:
                return int(m.group(1))
    return None


# --- header ---------------------------------------------------------------------------------


def _find(el: ET.Element | None, path: str) -> ET.Element | None:
    return None if el is None else el.find(path.replace("t:", _T))


def _findall(el: ET.Element | None, path: str) -> list[ET.Element]:
    return [] if el is None else el.findall(path.replace("t:", _T))


def _title(header: ET.Element | None) -> str:
    titles = _findall(header, "t:fileDesc/t:titleStmt/t:title")
    main = [t for t in titles if t.get("type") == "main"] + titles
    title = next((_text_of(t) for t in main if _text_of(t)), "")
    return title or _text_of(_find(header, "t:fileDesc/t:sourceDesc/t:biblStruct/t:analytic/t:title"))


def _abstract(header: ET.Element | None) -> str:
    abstract = _find(header, "t:profileDesc/t:abstract")
    return strip_abstract_label(_text_of(abstract))


def _person(pers: ET.Element) -> str:
    """'Matthew E. Peters' from forename(s), surname and any generational name ('Jr.')."""
    parts = [_text_of(f) for f in _findall(pers, "t:forename")]
    parts += [_text_of(s) for s in _findall(pers, "t:surname")]
    parts += [_text_of(g) for g in _findall(pers, "t:genName")]
    return " ".join(p for p in parts if p) or _text_of(pers)


def _names(parent: ET.Element | None) -> tuple[str, ...]:
    names = (_person(p) for p in _findall(parent, "t:author/t:persName"))
    return tuple(dict.fromkeys(n for n in names if n))  # GROBID repeats some authors


def _authors(header: ET.Element | None) -> tuple[str, ...]:
    return author_names(_names(_find(header, "t:fileDesc/t:sourceDesc/t:biblStruct/t:analytic")))


def _venue(header: ET.Element | None) -> str | None:
    # Like S2ORC's metadata: the venue the parse names (the monograph's title), never a guess.
    return _text_of(_find(header, "t:fileDesc/t:sourceDesc/t:biblStruct/t:monogr/t:title")) or None


def _year_of(date: ET.Element | None) -> int | None:
    """2018 from <date when="2018-06-01">, else from the date's text; None when not a year."""
    if date is None:
        return None
    for value in (date.get("when") or "", _text_of(date)):
        m = re.search(r"(?<!\d)(\d{4})(?!\d)", value)
        if m and YEAR_RANGE[0] <= int(m.group(1)) <= YEAR_RANGE[1]:
            return int(m.group(1))
    return None


def _paper_year(header: ET.Element | None) -> int | None:
    for path in (
        "t:fileDesc/t:publicationStmt/t:date",
        "t:fileDesc/t:sourceDesc/t:biblStruct/t:monogr/t:imprint/t:date",
    ):
        year = next((y for d in _findall(header, path) if (y := _year_of(d))), None)
        if year:
            return year
    return None


# --- body and back matter -------------------------------------------------------------------


@dataclass
class _Figure:
    """A <figure> met in reading order; it becomes a block once the body's mentions are known."""

    el: ET.Element
    section: str | None


@dataclass
class _Body:
    """Reads <text>: blocks in reading order, figures placed where they stand."""

    items: list[Block | _Figure] = field(default_factory=list)
    mentions: dict[str, Counter[str]] = field(default_factory=dict)  # xml:id -> 'Table 1' counts
    first_section: dict[str, str | None] = field(default_factory=dict)  # xml:id -> section

    def read(self, path: Path, text: ET.Element) -> None:
        body = text.find(f"{_T}body")
        if body is not None:
            self._division(path, body, None, 0)
        back = text.find(f"{_T}back")
        for div in [] if back is None else back.findall(f"{_T}div"):
            kind = div.get("type") or ""
            if kind in ("references", "bibliography"):
                continue
            self._division(path, div, _BACK_NAMES.get(kind, kind.capitalize() or None), 0)

    def _division(self, path: Path, div: ET.Element, section: str | None, depth: int) -> None:
        if depth > _MAX_DEPTH:
            raise IngestError(
                str(path),
                f"<div> elements nested more than {_MAX_DEPTH} deep: this is "
                "not GROBID output; give GROBID's processFulltextDocument output",
            )
        head = div.find(f"{_T}head")
        if head is not None and div.tag != f"{_T}body":
            section = section_name(head.get("n") or "", _text_of(head)) or section
        for child in div:
            name = _local(child.tag)
            if name == "div":
                self._division(path, child, section, depth + 1)
            elif name in ("p", "note", "item"):
                self._text_block(child, section)
            elif name == "list":
                for item in child.findall(f"{_T}item"):
                    self._text_block(item, section)
            elif name == "formula":
                self._formula(child, section)
            elif name == "figure":
                self.items.append(_Figure(child, section))

    def _text_block(self, el: ET.Element, section: str | None) -> None:
        self._note_mentions(el, section)
        text = _text_of(el)
        if text:
            self.items.append(Block("text", text, page=_page(el), section=section, cites=_cite_marks(el, text)))

    def _formula(self, el: ET.Element, section: str | None) -> None:
        """'f(x) = y (1)': the formula's text, then its label (the equation number)."""
        equation = " ".join(p for p in (_text_of(el, skip=frozenset({"label"})), _text_of(el.find(f"{_T}label"))) if p)
        if equation:
            self.items.append(Block("equation", equation, page=_page(el), section=section))

    def _note_mentions(self, el: ET.Element, section: str | None) -> None:
        """How the paragraph refers to figures and tables (<ref type="table" target="#tab_0">)."""
        for ref in el.iter(f"{_T}ref"):
            if ref.get("type") not in ("figure", "table"):
                continue
            for target in (ref.get("target") or "").split():
                ref_id = target.lstrip("#")
                self.first_section.setdefault(ref_id, section)
                label = caption_label(_text_of(ref), at_start=False)
                if label:
                    self.mentions.setdefault(ref_id, Counter())[label] += 1

    def blocks(self) -> list[Block]:
        out = []
        for item in self.items:
            block = item if isinstance(item, Block) else self._object(item)
            if block is not None:
                out.append(block)
        return out

    def _object(self, figure: _Figure) -> Block | None:
        """A figure block, or a table block (a <figure type="table">): caption, then rows."""
        el = figure.el
        ref_id = el.get(_XML_ID) or ""
        kind: Literal["table", "figure"] = "table" if el.get("type") == "table" else "figure"
        head = _text_of(el.find(f"{_T}head"))
        caption = _caption(head, _text_of(el.find(f"{_T}figDesc")))
        rows = _rows(el.find(f"{_T}table")) if kind == "table" else ""
        notes = " ".join(_text_of(n) for n in el.findall(f"{_T}note"))
        text = "\n".join(p for p in (caption, rows, notes) if p)
        if not text:
            return None
        label = self._label(el, kind, ref_id, head, caption)
        kind = "figure" if label.startswith("Figure") else "table" if label.startswith("Table") else kind
        section = self.first_section.get(ref_id, figure.section) if ref_id else figure.section
        if kind == "table":
            return Block("table", text, page=_page(el), section=section, table_id=label)
        return Block(kind, text, page=_page(el), section=section, figure_id=label)

    def _label(self, el: ET.Element, kind: str, ref_id: str, head: str, caption: str) -> str:
        """'Table 1' from the <label>, the <head>, the caption or the body's mentions, as
        s2orc.py labels ref_entries; the xml:id when nothing names it."""
        number = _text_of(el.find(f"{_T}label"))
        if number:
            return caption_label(number, at_start=True) or f"{kind.capitalize()} {number}"
        return (
            caption_label(head, at_start=True)
            or caption_label(caption, at_start=True)
            or mentioned_label(self.mentions.get(ref_id, Counter()))
            or ref_id
            or kind.capitalize()
        )


def _cite_marks(el: ET.Element, text: str) -> tuple[CiteMark, ...]:
    """The element's `<ref type="bibr" target="#b3">` citations as marks in its `text`, found in
    document order (a ref without a target has an empty key)."""
    marks, cursor = [], 0
    for ref in el.iter(f"{_T}ref"):
        if ref.get("type") != "bibr":
            continue
        surface = _text_of(ref)
        start = text.find(surface, cursor) if surface else -1
        if start < 0:
            continue
        cursor = start + len(surface)
        # GROBID may give several targets; none when it could not link the citation (the context
        # extractor then links it by its text when it can)
        for target in (ref.get("target") or "").split() or [""]:
            marks.append(CiteMark(start, cursor, target.lstrip("#")))
    return tuple(marks)


def _caption(head: str, description: str) -> str:
    """'Table 1: Results ...': the caption with its heading in front, unless it already starts
    with it (GROBID versions differ on whether <figDesc> repeats the label)."""
    head = re.sub(r"\s*[:.|]\s*$", "", head)
    if not head or caption_label(description, at_start=True) or description.startswith(head):
        return description
    return f"{head}: {description}" if description else head


def _rows(table: ET.Element | None) -> str:
    """The rows that have any text as a pipe-table grid (tools/tables.py)."""
    if table is None:
        return ""
    rows = []
    for row in table.iter(f"{_T}row"):
        cells = [_text_of(c) for c in row.findall(f"{_T}cell")]
        if any(cells):
            rows.append(cells)
    return render_grid(rows, 0)  # the chunker cuts a long table by rows


# --- bibliography ---------------------------------------------------------------------------


def _bibliography(text: ET.Element | None) -> tuple[BibEntry, ...]:
    back = _find(text, "t:back")
    if back is None:
        return ()
    return tuple(entry for n, bib in enumerate(back.iter(f"{_T}biblStruct")) if (entry := _bib_entry(bib, n)))


def _bib_entry(bib: ET.Element, n: int) -> BibEntry | None:
    """Title, year, authors, venue and raw reference of one <biblStruct> (the `n`th), keyed by its
    xml:id ('b3', what in-text `<ref target="#b3">` point to; else 'b<n>'); None for an empty one."""
    analytic, monogr = _find(bib, "t:analytic"), _find(bib, "t:monogr")
    article_title = _main_title(analytic)
    title = article_title or _main_title(monogr)
    year = next((y for d in _findall(monogr, "t:imprint/t:date") if (y := _year_of(d))), None)
    raw = next((_text_of(n) for n in _findall(bib, "t:note") if n.get("type") == "raw_reference"), "")
    names = _names(analytic) or _names(monogr)
    venue = _main_title(monogr) if article_title else ""
    if not raw:
        raw = raw_reference(names, year, title, venue)
    if not (title or raw):
        return None
    key = bib.get(_XML_ID) or f"b{n}"
    return BibEntry(title=title, year=year, raw=raw, key=key, authors=author_names(names), venue=venue)


def _main_title(el: ET.Element | None) -> str:
    titles = _findall(el, "t:title")
    main = [t for t in titles if t.get("type") == "main"] + titles
    return next((text for t in main if (text := _text_of(t))), "")
