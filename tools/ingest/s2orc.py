"""S2ORC / GROBID JSON ingestion: sections, equations, figure and table captions, bibliography.

SEE: docs/design.md section 1 (S2ORC/GROBID JSON gives sections, captions and linked bibliographies).

S2ORC comes in several shapes, all accepted here:

- the 2020 release: top-level title/authors/year/abstract plus a `pdf_parse` (or
  `grobid_parse` / `latex_parse`) holding abstract, body_text, back_matter, bib_entries and
  ref_entries;
- `metadata` + `grobid_parse` / `latex_parse` (the "doc2json" output);
- a bare parse at top level (paper_id, abstract, body_text, ...), often without a title;
- any of these one per line in a JSONL file.

S2ORC has no page numbers, so blocks carry the section only (page=None). Each record is
validated as a `records.S2orcRecord` first (tools/ingest/records.py): the code below reads typed
fields and guards none, and a record with a field of the wrong type costs that record only.
"""

from __future__ import annotations

import codecs
import html
import logging
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from tools.base import BibEntry, Block, CiteMark, Document, IngestError, Paper
from tools.ingest.documents import document, each_record, paper_id
from tools.ingest.records import (
    PARSE_KEYS,
    BibRecord,
    Paragraph,
    Parse,
    RefEntry,
    S2orcMetadata,
    S2orcRecord,
    Unreadable,
    parse_json,
    read_json_lines,
    undecodable,
    validate,
)
from tools.tables import render_grid

log = logging.getLogger(__name__)

# "Figure 3", "FIG. 2.", "Fig. 1", "FIGURE 1 |", "Table II", "TABLE 2" at the start of a caption
# or inside a reference span such as "(Figure 2a".
_LABEL_RE = re.compile(
    r"\b(?P<label>fig(?:ure)?s?|tab(?:le)?s?)\.?\s*(?P<num>S?\d{1,3}|[IVX]{1,5})(?![\w])",
    re.IGNORECASE,
)
MAX_TABLE_CHARS = 1800  # keep a table block under the 2,000-character chunk cap

Items = Iterable[tuple[int | None, Any] | IngestError]


def parse_s2orc(path: Path) -> list[Document]:
    """Parse an S2ORC JSON file (one paper, or an array of them) or JSONL file (one paper per
    line); the first bad record raises its IngestError. The loader, which goes on past bad
    records, reads with `read_s2orc`."""
    docs = []
    for item in read_s2orc(Path(path)):
        if isinstance(item, IngestError):
            raise item
        docs.append(item)
    return docs


def read_s2orc(path: Path, items: Items | None = None) -> Iterator[Document | IngestError]:
    """A Document per good record of `path`, an IngestError per bad one (`items`: its JSONL
    lines, when the caller has already started reading them)."""
    path = Path(path)
    single = False
    if items is None:
        items, single = _records(path)
    yield from each_record(path, items, lambda value, line: _document(path, value, line, single))


# --- reading ----------------------------------------------------------------------------


def _records(path: Path) -> tuple[Items, bool]:
    """(line number or None, record) for a JSON document or a JSONL file; whether it is one paper."""
    if path.suffix.lower() == ".jsonl":
        return read_json_lines(path), False
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return [IngestError(str(path), "file not found; check the path")], False
    data = data.removeprefix(codecs.BOM_UTF8)
    if not data.strip():
        return [IngestError(str(path), "the file is empty (no records); fill it or leave it out")], False
    first, _, rest = data.lstrip().partition(b"\n")
    if rest.strip() and _is_object(first):  # JSONL in a .json file: read it line by line
        return read_json_lines(path), False
    try:
        value = parse_json(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        return [
            IngestError(
                str(path),
                f"{undecodable(data[exc.start], exc.start - line_start)}; is this a JSON file?",
                data.count(b"\n", 0, exc.start) + 1,
            )
        ], False
    except Unreadable as exc:
        return [IngestError(str(path), f"{exc.reason}; fix or re-export the file", exc.line)], False
    if value == []:
        return [IngestError(str(path), "the file holds an empty array (no records); fill it or leave it out")], False
    if isinstance(value, list):
        return [(None, item) for item in value], False
    return [(None, value)], True


def _is_object(line: bytes) -> bool:
    try:
        return isinstance(parse_json(line.decode("utf-8")), dict)
    except (UnicodeDecodeError, Unreadable):
        return False


# --- one record ---------------------------------------------------------------------------


def _document(path: Path, value: Any, line: int | None, single: bool) -> Document:
    record = validate(S2orcRecord, value, path, line)
    parse = _parse_of(record)
    meta = record.metadata or S2orcMetadata()
    paper = Paper(
        paper_id=_paper_id(path, record, parse, line, single),
        title=one_line(record.title or meta.title),
        abstract=_abstract(record, meta, parse),
        authors=author_names(record.authors or meta.authors),
        venue=one_line(meta.venue or meta.journal or record.venue) or None,
        year=record.year or meta.year,
        source=str(path),
        bibliography=_bibliography(parse.bib_entries),
    )
    blocks = _body_blocks(parse) + _object_blocks(parse)
    if not blocks:
        log.warning("%s: paper %s has no body text", path, paper.paper_id)
    return document(paper, blocks, path, line)


def _parse_of(record: S2orcRecord) -> Parse:
    """The record's full-text parse: a nested one with body text, else the top level itself."""
    parses = [p for p in (getattr(record, key) for key in PARSE_KEYS) if p is not None]
    return next((p for p in parses if p.body_text), parses[0] if parses else record.bare_parse)


def _paper_id(path: Path, record: S2orcRecord, parse: Parse, line: int | None, single: bool) -> str:
    pid = paper_id(record.paper_id or parse.paper_id, path, line)
    # S2ORC exports of ACL papers cut ids at the first dot ('2020' for '2020.acl-main.207');
    # for a one-paper file named after the paper the file name is the better id.
    if single and path.stem != pid and path.stem.startswith(pid + "."):
        log.warning("%s: paper_id %r looks truncated; using the file name %r", path, pid, path.stem)
        return path.stem
    return pid


def one_line(value: str) -> str:
    """The text on one line: runs of whitespace as one space, none at the ends."""
    return re.sub(r"\s+", " ", value).strip()


def _abstract(record: S2orcRecord, meta: S2orcMetadata, parse: Parse) -> str:
    for value in (record.abstract, meta.abstract):
        if value.strip():
            return strip_abstract_label(one_line(value))
    paragraphs = [one_line(p.text) for p in parse.abstract or record.bare_parse.abstract]
    return strip_abstract_label(" ".join(p for p in paragraphs if p))


def strip_abstract_label(text: str) -> str:
    """GROBID keeps the heading glued on: 'Abstract:This paper ...', 'Abstract Forensic ...'."""
    return re.sub(r"^Abstract\s*[:.\-–]?\s*(?=[A-Z])", "", text)


def author_names(names: tuple[str, ...]) -> tuple[str, ...]:
    # GROBID leaves single-glyph 'authors' from affiliation marks
    return tuple(n for n in names if len(n) >= 2)


# --- body -----------------------------------------------------------------------------------


def _section_name(paragraph: Paragraph) -> str | None:
    return section_name(paragraph.sec_num, paragraph.section)


def section_name(sec_num: str, section: str) -> str | None:
    """'3.1 Results' from sec_num '3.1' and section 'Results'; None when unnamed."""
    section = one_line(section)
    num = one_line(sec_num).rstrip(".")
    if num and section and not section.startswith(num):
        return f"{num} {section}"
    return section or num or None


def _body_blocks(parse: Parse) -> list[Block]:
    blocks = []
    for paragraph in parse.body_text + parse.back_matter:
        text = one_line(paragraph.text)
        section = _section_name(paragraph)
        if _is_equation(paragraph, text):
            equation = _equation_text(paragraph, text)
            if equation:
                blocks.append(Block("equation", equation, section=section))
            continue
        if text:
            blocks.append(Block("text", text, section=section, cites=cite_marks(paragraph)))
    return blocks


def cite_marks(paragraph: Paragraph) -> tuple[CiteMark, ...]:
    """The paragraph's cite spans as marks in its one-line text.

    Offsets are re-counted on the text as `one_line` leaves it (runs of whitespace as one space);
    a span whose offsets do not hold its own text is looked up by that text instead, and left out
    when it is not there (the context would be at a guessed place)."""
    raw = paragraph.text
    text = one_line(raw)
    marks, cursor = [], 0
    for span in sorted(paragraph.cite_spans, key=lambda s: s.start or 0):
        if span.start is None or span.end is None:
            continue
        start = len(re.sub(r"\s+", " ", raw[: span.start]).lstrip())
        surface = one_line(span.text) or one_line(raw[span.start : span.end])
        if not surface:
            continue
        if text[start : start + len(surface)] != surface:
            start = text.find(surface, cursor)
            if start < 0:
                continue
        # a span GROBID could not link keeps an empty key: the context extractor links it by its
        # text ("Liu et al., 2019") when it can, or leaves it out
        marks.append(CiteMark(start, start + len(surface), span.ref_id or ""))
        cursor = start + len(surface)
    return tuple(marks)


def _is_equation(paragraph: Paragraph, text: str) -> bool:
    """GROBID's 'EQUATION' placeholder, or a paragraph its equation spans cover almost fully."""
    spans = paragraph.eq_spans
    if not spans:
        return False
    if text.upper() == "EQUATION":
        return True
    covered = sum(max(0, (s.end or 0) - (s.start or 0)) for s in spans)
    return covered >= 0.8 * max(len(text), 1)


def _equation_text(paragraph: Paragraph, text: str) -> str:
    parts = []
    for span in paragraph.eq_spans:
        raw = one_line(span.raw_str or span.latex)
        if raw:
            parts.append(f"{raw} {one_line(span.eq_num)}".strip())
    if parts:
        return " ".join(parts)
    return "" if text.upper() == "EQUATION" else text


# --- figures and tables ---------------------------------------------------------------------


def _object_blocks(parse: Parse) -> list[Block]:
    """ref_entries: FIGREF* -> figure blocks, TABREF* -> table blocks (caption + content)."""
    mentions, sections = _reference_mentions(parse)
    blocks = []
    for ref_id, entry in parse.ref_entries.items():
        kind = _object_kind(ref_id, entry)
        if kind is None:
            continue
        caption = one_line(entry.text)
        body = _table_text(entry) if kind == "table" else ""
        text = "\n".join(p for p in (caption, body) if p)
        if not text:
            continue
        label = _object_label(ref_id, entry, caption, mentions.get(ref_id, Counter()))
        if label.startswith("Figure"):
            kind = "figure"
        elif label.startswith("Table"):
            kind = "table"
        section = sections.get(ref_id)
        if kind == "table":
            blocks.append(Block("table", text, section=section, table_id=label))
        else:
            blocks.append(Block("figure", text, section=section, figure_id=label))
    return blocks


def _object_kind(ref_id: str, entry: RefEntry) -> str | None:
    declared = (entry.type_str or entry.type).lower()
    if ref_id.upper().startswith("FIGREF") or declared == "figure":
        return "figure"
    if ref_id.upper().startswith("TABREF") or declared == "table":
        return "table"
    return None


def caption_label(text: str, at_start: bool) -> str | None:
    """'Figure 2' at the start of a caption (or anywhere in a reference span).

    'Figure 2 plots the ...' is running text that GROBID took for a caption: a caption label
    is followed by punctuation or a capitalised word, not by a lower-case verb.
    """
    text = text.strip()
    m = _LABEL_RE.match(text) if at_start else _LABEL_RE.search(text)
    if not m:
        return None
    if at_start and re.match(r"\s+[a-z]", text[m.end() :]):
        return None
    kind = "Figure" if m.group("label").lower().startswith("fig") else "Table"
    return f"{kind} {m.group('num').upper()}"


def _object_label(ref_id: str, entry: RefEntry, caption: str, mentions: Counter[str]) -> str:
    """'Figure 2' from the entry's number, its caption, or how the body text refers to it."""
    kind = "Figure" if _object_kind(ref_id, entry) == "figure" else "Table"
    num = one_line(entry.num)
    if num not in ("", "None"):
        return f"{kind} {num}"
    return caption_label(caption, at_start=True) or mentioned_label(mentions) or ref_id


def mentioned_label(mentions: Counter[str]) -> str | None:
    """The label the body uses most for an object; main-text numbers beat supplementary ones
    ('Figure 1' over 'Figure S1')."""
    main = [(label, n) for label, n in mentions.most_common() if " S" not in label]
    if main or mentions:
        return (main or mentions.most_common())[0][0]
    return None


def _reference_mentions(parse: Parse) -> tuple[dict[str, Counter[str]], dict[str, str | None]]:
    """How the body refers to each ref id ('Figure 2'), and the first section that does."""
    mentions: dict[str, Counter[str]] = {}
    sections: dict[str, str | None] = {}
    for paragraph in parse.body_text:
        for span in paragraph.ref_spans:
            if not span.ref_id:
                continue
            sections.setdefault(span.ref_id, _section_name(paragraph))
            label = caption_label(one_line(span.text), at_start=False)
            if label:
                mentions.setdefault(span.ref_id, Counter())[label] += 1
    return mentions, sections


def _table_text(entry: RefEntry) -> str:
    """The table content ('<table><tr><td>..') as a pipe-table grid (tools/tables.py), or its
    LaTeX as plain text."""
    content = entry.content
    if "<t" in content:
        rows = []
        for row in re.findall(r"<tr>(.*?)</tr>", content, re.DOTALL):
            cells = [
                one_line(html.unescape(re.sub(r"<[^>]+>", " ", c)))
                for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.DOTALL)
            ]
            if any(cells):
                rows.append(cells)
        return render_grid(rows, 0)  # GROBID marks no header row; the chunker cuts long tables by rows
    return (content or entry.latex).strip()[:MAX_TABLE_CHARS]


# --- bibliography ---------------------------------------------------------------------------


def _bibliography(entries: dict[str, BibRecord]) -> tuple[BibEntry, ...]:
    out = []
    for key in sorted(entries, key=_bib_order):
        entry = entries[key]
        title = one_line(entry.title)
        raw = one_line(entry.raw_text) or raw_reference(entry.authors, entry.year, title, entry.venue)
        out.append(
            BibEntry(
                title=title,
                year=entry.year,
                raw=raw,
                link=entry.link or entry.links,
                key=key,
                authors=author_names(entry.authors),
                venue=one_line(entry.venue),
            )
        )
    return tuple(out)


def _bib_order(key: str) -> tuple[int, str]:
    m = re.search(r"(\d{1,18})$", key)  # BIBREF12 -> 12 (no 5,000-digit int conversions)
    return (int(m.group(1)) if m else 1 << 62, key)


def raw_reference(authors: tuple[str, ...], year: int | None, title: str, venue: str) -> str:
    """'A. Author, B. Author. 2019. Title. Venue.' from the structured fields."""
    names = ", ".join(author_names(authors))
    parts = [names, str(year) if year else "", title, one_line(venue)]
    return ". ".join(p.rstrip(".") for p in parts if p) + ("." if any(parts) else "")
