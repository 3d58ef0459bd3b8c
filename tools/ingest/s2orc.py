"""S2ORC / GROBID JSON ingestion: sections, equations, figure and table captions, bibliography.

SEE: DESIGN.md section 1 (S2ORC/GROBID JSON gives sections, captions and linked bibliographies).

S2ORC comes in several shapes, all accepted here:

- the 2020 release: top-level title/authors/year/abstract plus a `pdf_parse` (or
  `grobid_parse` / `latex_parse`) holding abstract, body_text, back_matter, bib_entries and
  ref_entries;
- `metadata` + `grobid_parse` / `latex_parse` (the "doc2json" output);
- a bare parse at top level (paper_id, abstract, body_text, ...), often without a title;
- any of these one per line in a JSONL file.

S2ORC has no page numbers, so blocks carry the section only (page=None).
"""

from __future__ import annotations

import html
import json
import logging
import re
from collections import Counter
from pathlib import Path
from typing import Any

from tools.base import BibEntry, Block, Document, IngestError, Paper
from tools.jsonl import read_lines

log = logging.getLogger(__name__)

# The parse to read when a record has several: LaTeX parses are the more exact (S2ORC paper
# section 2.2), GROBID's are the more common.
_PARSE_KEYS = ("latex_parse", "grobid_parse", "pdf_parse")
# "Figure 3", "FIG. 2.", "Fig. 1", "FIGURE 1 |", "Table II", "TABLE 2" at the start of a caption
# or inside a reference span such as "(Figure 2a".
_LABEL_RE = re.compile(
    r"\b(?P<label>fig(?:ure)?s?|tab(?:le)?s?)\.?\s*(?P<num>S?\d{1,3}|[IVX]{1,5})(?![\w])",
    re.IGNORECASE,
)
_MAX_TABLE_CHARS = 1800  # keep a table block under the 2,000-character chunk cap


def parse_s2orc(path: Path) -> list[Document]:
    """Parse an S2ORC JSON file (one paper) or JSONL file (one paper per line)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise IngestError(str(path), "file not found; check the path") from exc
    except UnicodeDecodeError as exc:
        raise IngestError(
            str(path), f"not UTF-8 text ({exc.reason}); is this a JSON file?"
        ) from exc
    records = _records(path, text)
    single = len(records) == 1 and records[0][0] is None
    docs = [_document(path, record, line, single) for line, record in records]
    if not docs:
        raise IngestError(str(path), "no records found; the file is empty")
    return docs


# --- reading ----------------------------------------------------------------------------


def _records(path: Path, text: str) -> list[tuple[int | None, Any]]:
    """(line number or None, record) for a JSON document or a JSONL file."""
    if not text.strip():
        return []
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg != "Extra data":  # a JSONL file fails exactly so on its second line
            raise IngestError(
                str(path),
                f"invalid JSON ({exc.msg}, column {exc.colno}); fix or re-export the file",
                line=exc.lineno,
            ) from exc
    else:
        return [(None, item) for item in data] if isinstance(data, list) else [(None, data)]
    records: list[tuple[int | None, Any]] = []
    for line in read_lines(path):
        if line.error is not None:
            raise IngestError(
                str(path),
                f"invalid JSON on this line ({line.error.msg}, column {line.error.colno}); each line of a "
                "JSONL file must be one complete JSON object",
                line=line.number,
            ) from line.error
        records.append((line.number, line.value))
    return records


# --- one record ---------------------------------------------------------------------------


def _document(path: Path, record: Any, line: int | None, single: bool) -> Document:
    if not isinstance(record, dict):
        raise IngestError(
            str(path), f"expected a JSON object per paper, found {type(record).__name__}", line=line
        )
    parse = _parse_of(record)
    meta = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
    paper = Paper(
        paper_id=_paper_id(path, record, parse, line, single),
        title=_text(record.get("title") or meta.get("title")),
        abstract=_abstract(record, meta, parse),
        authors=_authors(record.get("authors") or meta.get("authors")),
        venue=_text(meta.get("venue") or meta.get("journal") or record.get("venue")) or None,
        year=_year(record.get("year")) or _year(meta.get("year")),
        source=str(path),
        bibliography=_bibliography(parse.get("bib_entries")),
    )
    blocks = _body_blocks(parse) + _object_blocks(parse)
    if not blocks:
        log.warning("%s: paper %s has no body text", path, paper.paper_id)
    return Document(paper=paper, blocks=tuple(blocks))


def _parse_of(record: dict[str, Any]) -> dict[str, Any]:
    """The record's full-text parse: a nested one with body text, else the record itself."""
    for key in _PARSE_KEYS:
        parse = record.get(key)
        if isinstance(parse, dict) and parse.get("body_text"):
            return parse
    for key in _PARSE_KEYS:
        if isinstance(record.get(key), dict):
            return record[key]
    return record


def _paper_id(
    path: Path, record: dict[str, Any], parse: dict[str, Any], line: int | None, single: bool
) -> str:
    raw = record.get("paper_id") or parse.get("paper_id")
    if raw in (None, ""):
        raise IngestError(
            str(path),
            "record has no paper_id; add a 'paper_id' field (any unique string) to the record",
            line=line,
        )
    pid = str(raw)
    # S2ORC exports of ACL papers cut ids at the first dot ('2020' for '2020.acl-main.207');
    # for a one-paper file named after the paper the file name is the better id.
    if single and path.stem != pid and path.stem.startswith(pid + "."):
        log.warning("%s: paper_id %r looks truncated; using the file name %r", path, pid, path.stem)
        return path.stem
    return pid


def _text(value: Any) -> str:
    return re.sub(r"\s+", " ", value).strip() if isinstance(value, str) else ""


def _year(value: Any) -> int | None:
    """2017, '2017', '2011-11' -> int; '', None, garbage -> None."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if 1000 <= value <= 2100 else None
    m = re.match(r"\s*(\d{4})", str(value or ""))
    return int(m.group(1)) if m and 1000 <= int(m.group(1)) <= 2100 else None


def _abstract(record: dict[str, Any], meta: dict[str, Any], parse: dict[str, Any]) -> str:
    for value in (record.get("abstract"), meta.get("abstract")):
        if isinstance(value, str) and value.strip():
            return _strip_abstract_label(_text(value))
    paragraphs = [_text(p.get("text")) for p in _paragraphs(parse.get("abstract"))]
    return _strip_abstract_label(" ".join(p for p in paragraphs if p))


def _strip_abstract_label(text: str) -> str:
    """GROBID keeps the heading glued on: 'Abstract:This paper ...', 'Abstract Forensic ...'."""
    return re.sub(r"^Abstract\s*[:.\-–]?\s*(?=[A-Z])", "", text)


def _authors(value: Any) -> tuple[str, ...]:
    names = []
    for author in value if isinstance(value, list) else []:
        if isinstance(author, str):
            name = _text(author)
        elif isinstance(author, dict):
            parts = [author.get("first"), *(author.get("middle") or []), author.get("last"),
                     author.get("suffix")]
            name = " ".join(_text(p) for p in parts if _text(p))
        else:
            continue
        if len(name) >= 2:  # GROBID leaves single-glyph 'authors' from affiliation marks
            names.append(name)
    return tuple(names)


def _paragraphs(value: Any) -> list[dict[str, Any]]:
    return [p for p in value if isinstance(p, dict)] if isinstance(value, list) else []


# --- body -----------------------------------------------------------------------------------


def _section_name(paragraph: dict[str, Any]) -> str | None:
    """'3.1 Results' from sec_num '3.1' and section 'Results'; None when unnamed."""
    section = _text(paragraph.get("section"))
    num = _text(paragraph.get("sec_num")).rstrip(".")
    if num and section and not section.startswith(num):
        return f"{num} {section}"
    return section or num or None


def _body_blocks(parse: dict[str, Any]) -> list[Block]:
    blocks = []
    for paragraph in _paragraphs(parse.get("body_text")) + _paragraphs(parse.get("back_matter")):
        text = _text(paragraph.get("text"))
        section = _section_name(paragraph)
        if _is_equation(paragraph, text):
            equation = _equation_text(paragraph, text)
            if equation:
                blocks.append(Block("equation", equation, section=section))
            continue
        if text:
            blocks.append(Block("text", text, section=section))
    return blocks


def _is_equation(paragraph: dict[str, Any], text: str) -> bool:
    """GROBID's 'EQUATION' placeholder, or a paragraph its equation spans cover almost fully."""
    spans = [s for s in paragraph.get("eq_spans") or [] if isinstance(s, dict)]
    if not spans:
        return False
    if text.upper() == "EQUATION":
        return True
    covered = sum(max(0, int(s.get("end", 0)) - int(s.get("start", 0))) for s in spans)
    return covered >= 0.8 * max(len(text), 1)


def _equation_text(paragraph: dict[str, Any], text: str) -> str:
    parts = []
    for span in paragraph.get("eq_spans") or []:
        raw = _text(span.get("raw_str") or span.get("latex") or "")
        if raw:
            num = _text(span.get("eq_num"))
            parts.append(f"{raw} {num}".strip())
    if parts:
        return " ".join(parts)
    return "" if text.upper() == "EQUATION" else text


# --- figures and tables ---------------------------------------------------------------------


def _object_blocks(parse: dict[str, Any]) -> list[Block]:
    """ref_entries: FIGREF* -> figure blocks, TABREF* -> table blocks (caption + content)."""
    entries = parse.get("ref_entries")
    if not isinstance(entries, dict):
        return []
    mentions, sections = _reference_mentions(parse)
    blocks = []
    for ref_id, entry in entries.items():
        if not isinstance(entry, dict):
            continue
        kind = _object_kind(ref_id, entry)
        if kind is None:
            continue
        caption = _text(entry.get("text"))
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


def _object_kind(ref_id: str, entry: dict[str, Any]) -> str | None:
    declared = str(entry.get("type_str") or entry.get("type") or "").lower()
    if ref_id.upper().startswith("FIGREF") or declared == "figure":
        return "figure"
    if ref_id.upper().startswith("TABREF") or declared == "table":
        return "table"
    return None


def _label_of(text: str, at_start: bool) -> str | None:
    """'Figure 2' at the start of a caption (or anywhere in a reference span).

    'Figure 2 plots the ...' is running text that GROBID took for a caption: a caption label
    is followed by punctuation or a capitalised word, not by a lower-case verb.
    """
    text = text.strip()
    m = _LABEL_RE.match(text) if at_start else _LABEL_RE.search(text)
    if not m:
        return None
    if at_start and re.match(r"\s+[a-z]", text[m.end():]):
        return None
    kind = "Figure" if m.group("label").lower().startswith("fig") else "Table"
    return f"{kind} {m.group('num').upper()}"


def _object_label(ref_id: str, entry: dict[str, Any], caption: str, mentions: Counter[str]) -> str:
    """'Figure 2' from the entry's number, its caption, or how the body text refers to it."""
    kind = "Figure" if _object_kind(ref_id, entry) == "figure" else "Table"
    num = entry.get("num")
    if num not in (None, "", "None"):
        return f"{kind} {num}"
    from_caption = _label_of(caption, at_start=True)
    if from_caption:
        return from_caption
    # Main-text numbers beat supplementary ones ('Figure 1' over 'Figure S1').
    main = [(label, n) for label, n in mentions.most_common() if " S" not in label]
    if main or mentions:
        return (main or mentions.most_common())[0][0]
    return ref_id


def _reference_mentions(
    parse: dict[str, Any],
) -> tuple[dict[str, Counter[str]], dict[str, str | None]]:
    """How the body refers to each ref id ('Figure 2'), and the first section that does."""
    mentions: dict[str, Counter[str]] = {}
    sections: dict[str, str | None] = {}
    for paragraph in _paragraphs(parse.get("body_text")):
        for span in paragraph.get("ref_spans") or []:
            ref_id = span.get("ref_id") if isinstance(span, dict) else None
            if not ref_id:
                continue
            sections.setdefault(ref_id, _section_name(paragraph))
            label = _label_of(_text(span.get("text")), at_start=False)
            if label:
                mentions.setdefault(ref_id, Counter())[label] += 1
    return mentions, sections


def _table_text(entry: dict[str, Any]) -> str:
    """Rows of the table content ('<table><tr><td>..'), or its LaTeX, as plain text."""
    content = entry.get("content")
    text = ""
    if isinstance(content, str) and "<t" in content:
        rows = []
        for row in re.findall(r"<tr>(.*?)</tr>", content, re.S):
            cells = [_text(html.unescape(re.sub(r"<[^>]+>", " ", c)))
                     for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
            if any(cells):
                rows.append(" | ".join(cells))
        text = "\n".join(rows)
    elif isinstance(content, str):
        text = content.strip()
    elif isinstance(entry.get("latex"), str):
        text = entry["latex"].strip()
    return text[:_MAX_TABLE_CHARS]


# --- bibliography ---------------------------------------------------------------------------


def _bibliography(entries: Any) -> tuple[BibEntry, ...]:
    if not isinstance(entries, dict):
        return ()
    out = []
    for key in sorted(entries, key=_bib_order):
        entry = entries[key]
        if not isinstance(entry, dict):
            continue
        title = _text(entry.get("title"))
        year = _year(entry.get("year"))
        raw = _text(entry.get("raw_text")) or _raw_reference(entry, title, year)
        link = entry.get("link", entry.get("links"))
        out.append(BibEntry(
            title=title,
            year=year,
            raw=raw,
            link=str(link) if link not in (None, "", [], {}) else None,
        ))
    return tuple(out)


def _bib_order(key: str) -> tuple[int, str]:
    m = re.search(r"(\d+)$", key)
    return (int(m.group(1)) if m else 1 << 30, key)


def _raw_reference(entry: dict[str, Any], title: str, year: int | None) -> str:
    """'A. Author, B. Author. 2019. Title. Venue.' from the structured fields."""
    authors = ", ".join(_authors(entry.get("authors")))
    parts = [authors, str(year) if year else "", title, _text(entry.get("venue"))]
    return ". ".join(p.rstrip(".") for p in parts if p) + ("." if any(parts) else "")
