"""PDF ingestion with pdfplumber: pages, columns, headings, captions, tables and references.

SEE: DESIGN.md section 1 (locators are what answers cite, so page and section must be exact).

pdfplumber (MIT) gives characters with positions and fonts; everything else is reconstructed
here, tuned on two-column ACL-style papers but written so a one-column paper still reads in
order:

1. words per page (rotated words dropped), each with its font size, bold and math share;
2. columns: the page's gutter is the x with the fewest word rows crossing it; rows that run
   across it (titles, full-width captions) form full-width bands, and between them the left
   column is read before the right one;
3. table and figure bodies are located from the caption ("Table 2: ...") and the page's rules
   and graphics next to it, rendered (tables) or dropped (figure text) and removed from the
   running text; the layout is then redone without them;
4. lines become paragraphs (indent, gap, font-size change), headings are whole-bold lines
   that look like "3.2 Results" or a known name ("Abstract", "References"), and each
   paragraph becomes a Block with its page and the current heading;
5. the References section is split into entries by hanging indent and year, each with a
   guessed title for the resolver.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import re
import statistics
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools.base import BibEntry, Block, ChunkKind, Document, IngestError, Paper

log = logging.getLogger(__name__)

# --- patterns (public: unit-tested) -------------------------------------------------------

# "3 Method", "4.2 Results", "A Appendix", "A.1 Details", "II. RELATED WORK".
HEADING_RE = re.compile(
    r"^(?P<num>(?:\d{1,2}|[A-Z])(?:\.\d{1,2}){0,3}\.?|[IVX]{1,5}\.)\s+(?P<title>[A-Za-z].*)$"
)
# Unnumbered headings accepted at body size; others must be larger than the body text.
KNOWN_HEADINGS = frozenset(
    """abstract introduction references bibliography acknowledgments acknowledgements
    acknowledgment acknowledgement conclusion conclusions limitations appendix appendices
    discussion background methods results evaluation experiments
    """.split()
) | frozenset(
    {
        "related work",
        "ethics statement",
        "ethical considerations",
        "broader impact",
        "future work",
        "conclusion and future work",
        "conclusions and future work",
        "supplementary material",
        "impact statement",
    }
)
# "Table 2:", "Table 2.", "Figure 1:", "Fig. 3.", "TABLE IV", "FIGURE 2 |".
CAPTION_RE = re.compile(
    r"^(?P<label>Table|Tab\.|Figure|Fig\.)\s*(?P<num>[A-Z]?\d{1,3}|[IVX]{1,5})\s*(?P<sep>[:.|])\s*",
    re.IGNORECASE,
)
# ACL-style reference: "Authors. 2019a. Title. In Venue." -> the year and what follows it.
_REF_YEAR_RE = re.compile(
    r"(?:^|[\s(,])(?P<year>(?:19|20)\d{2})[a-z]?\)?[.,:]\s+(?P<rest>.*)$", re.S
)
_ANY_YEAR_RE = re.compile(r"(?<![\d–-])((?:19|20)\d{2})(?![\d–-])")
_CID_RE = re.compile(r"\(cid:\d+\)")
_BOLD_FONT_RE = re.compile(r"bold|medi|semibold|black|heavy|demi|cmbx", re.IGNORECASE)
_MATH_FONT_RE = re.compile(
    r"cmmi|cmsy|cmex|msbm|msam|rtxmi|rtxsy|mt2mi|mt2sy|txmi|txsy|pxmi|pxsy|stixmath|lmmath"
    r"|cmr\d|euler|eufm|symbol",
    re.IGNORECASE,
)
# Spacing accents that TeX PDFs emit as their own glyph next to the letter ("Fa¨rber").
_SPACING_ACCENTS = {
    "¨": "\u0308",
    "´": "\u0301",
    "`": "\u0300",
    "ˆ": "\u0302",
    "˜": "\u0303",
    "¸": "\u0327",
    "ˇ": "\u030c",
    "˚": "\u030a",
    "¯": "\u0304",
    "˘": "\u0306",
    "˙": "\u0307",
    "˝": "\u030b",
}
_ACCENT_RE = re.compile(r"([A-Za-zıȷ]?)([¨´`ˆ˜¸ˇ˚¯˘˙˝])([A-Za-zıȷ]?)")
_VOWELS = frozenset("aeiouyAEIOUYıȷ")
_ABBREVIATIONS = ("vs.", "e.g.", "i.e.", "cf.", "etc.", "al.", "Proc.", "Vol.", "No.")
_BULLET_RE = re.compile(r"^[•◦▪‣∙·–]\s")
_LIST_ITEM_RE = re.compile(r"^(?:\(?\d{1,2}[).]|\(?[a-z]\)|\(?[ivx]{1,4}\))\s")

# Layout constants, in points unless said otherwise (A4/Letter, 9-11 pt body text).
_WORD_GAP_RATIO = 0.15  # chars closer than 0.15 em belong to one word (TeX often has no spaces)
_NO_SPACE_RATIO = 0.12  # words closer than this are glued ("(" "§" "6)")
_SPAN_REACH = 20.0  # a full-width row reaches this far past the gutter on both sides
_MIN_GUTTER = 6  # narrowest column gap taken for a gutter (ACL's is about 17 pt)
_MAX_TABLE_CHARS = 1800  # a table block stays under the 2,000-character chunk cap


# --- data ------------------------------------------------------------------------------


@dataclass
class _Word:
    text: str
    x0: float
    x1: float
    top: float
    bottom: float
    size: float
    n_chars: int
    n_bold: int
    n_math: int
    base: float  # baseline (from the text matrix: glyph boxes of math fonts are unreliable)
    # The line box implied by baseline and size, used to group words into lines.
    vtop: float = field(init=False)
    vbottom: float = field(init=False)

    def __post_init__(self) -> None:
        self.vtop = self.base - 0.72 * self.size
        self.vbottom = self.base + 0.22 * self.size

    @property
    def mid(self) -> float:
        return (self.top + self.bottom) / 2


@dataclass
class _Line:
    """One text line of a column, with what the heuristics ask about it."""

    words: list[_Word]
    page: int
    seg: int  # index of its column/band on the page, in reading order
    seg_x0: float  # the column's text edges (indents are measured from seg_x0)
    seg_x1: float
    area: tuple[float, float]  # the column's share of the page (half or whole width)
    text: str = field(init=False)
    x0: float = field(init=False)
    x1: float = field(init=False)
    top: float = field(init=False)
    bottom: float = field(init=False)
    size: float = field(init=False)  # the size most of its characters have
    bold: float = field(init=False)  # share of bold characters
    math: float = field(init=False)  # share of math-font characters

    def __post_init__(self) -> None:
        self.words.sort(key=lambda w: w.x0)
        self.x0 = min(w.x0 for w in self.words)
        self.x1 = max(w.x1 for w in self.words)
        self.top = statistics.median(w.top for w in self.words)
        self.bottom = statistics.median(w.bottom for w in self.words)
        sizes: Counter[float] = Counter()
        for w in self.words:
            sizes[round(w.size, 1)] += w.n_chars
        self.size = sizes.most_common(1)[0][0]
        n = sum(w.n_chars for w in self.words) or 1
        self.bold = sum(w.n_bold for w in self.words) / n
        self.math = sum(w.n_math for w in self.words) / n
        self.text = _line_text(self.words)

    @property
    def max_gap(self) -> float:
        gaps = [b.x0 - a.x1 for a, b in zip(self.words, self.words[1:])]
        return max(gaps, default=0.0)


@dataclass
class _Segment:
    """A column (or full-width band) of one page, read top to bottom."""

    x0: float
    x1: float
    area: tuple[float, float]  # the part of the page width this column owns
    words: list[_Word] = field(default_factory=list)


@dataclass
class _Region:
    """A located table or figure body on a page."""

    kind: str  # "table" | "figure"
    label: str  # "Table 2"
    bbox: tuple[float, float, float, float]  # x0, top, x1, bottom
    caption_at: tuple[float, float]  # (top, x0) of the caption's first line
    text: str = ""  # rendered rows (tables)


@dataclass
class _PageData:
    number: int  # 1-based
    width: float
    height: float
    words: list[_Word]
    graphics: list[tuple[float, float, float, float]]  # x0, top, x1, bottom
    lines: list[_Line] = field(default_factory=list)
    regions: list[_Region] = field(default_factory=list)


@dataclass
class _Style:
    """Document-wide typography the heuristics compare against."""

    body_size: float
    pitch: float  # line-to-line distance of body text


# --- public helpers (pure) ----------------------------------------------------------------


def normalize_text(text: str) -> str:
    """Fix TeX spacing accents, drop unmapped glyphs, NFKC (ligatures 'ﬁ' -> 'fi')."""
    text = _CID_RE.sub("", text)
    text = _ACCENT_RE.sub(_attach_accent, text)
    return unicodedata.normalize("NFKC", text)


def _attach_accent(m: re.Match[str]) -> str:
    """Put a stray accent on the letter it belongs to: the vowel side, or a dotless i."""
    before, accent, after = m.groups()
    if after and (after in "ıȷ" or not before):
        return before + _compose(after, accent)
    if before and accent in "˘ˇ¸":  # breve, caron, cedilla mostly sit on consonants
        return _compose(before, accent) + after
    if before and after and before not in _VOWELS and after in _VOWELS:
        return before + _compose(after, accent)
    if before:
        return _compose(before, accent) + after
    return accent


def _compose(letter: str, accent: str) -> str:
    base = {"ı": "i", "ȷ": "j"}.get(letter, letter)
    return unicodedata.normalize("NFC", base + _SPACING_ACCENTS[accent])


def dehyphenate(
    text: str, vocabulary: frozenset[str] | set[str] = frozenset()
) -> str:
    """Join lines, undoing line-end hyphenation: 'repre-\\nsentation' -> 'representation'.

    A hyphen is kept when the compound is known with its hyphen ('state-of-the-' + 'art'),
    or when the next part starts with a capital and the joined word is not a known word
    ('BERT-\\nBased' stays, 'SciB-\\nERT' becomes 'SciBERT' when 'scibert' is in
    `vocabulary`). `vocabulary` holds lower-cased words (and hyphenated compounds) seen
    elsewhere in the document.
    """

    def join(m: re.Match[str]) -> str:
        a, b, rest = m.group(1), m.group(2), m.group(3)
        joined, compound = (a + b).lower(), f"{a}-{b}".lower()
        if joined in vocabulary and compound not in vocabulary:
            return a + b + rest
        if compound in vocabulary or rest:  # 'state-' + 'of-the-art'
            return f"{a}-{b}{rest}"
        # Two whole words seen on their own ('context-' + 'enhanced'): an explicit compound
        # (TeX breaks a hyphenated word only at its hyphen).
        whole_words = min(len(a), len(b)) >= 4 and {a.lower(), b.lower()} <= vocabulary
        if b[:1].islower() and not a[-1:].isdigit() and not whole_words:
            return a + b
        return f"{a}-{b}"

    text = re.sub(r"(\w+)-[ \t]*\n[ \t]*(\w+)((?:-\w+)*)", join, text)
    return re.sub(r"[ \t]*\n[ \t]*", " ", text).strip()


def match_heading(text: str) -> tuple[str | None, str] | None:
    """('3.2', 'Results') for a numbered heading, (None, 'Introduction') for a known one.

    Only the shape of the text is checked here; font checks (whole line bold) are the
    caller's. Table rows ('2 84.2 88.4') and sentences ('1 We show that ...') are refused.
    """
    text = text.strip()
    if not text or len(text) > 120 or text.endswith((",", ";")):
        return None
    m = HEADING_RE.match(text)
    if m:
        title = m.group("title").strip()
        tokens = title.split()
        numeric = sum(bool(re.fullmatch(r"[\d.,%±()+\-–]+", t)) for t in tokens)
        if numeric * 3 > len(tokens) or len(tokens) > 14 or title.endswith("."):
            return None
        return m.group("num").rstrip("."), title
    if text.lower().rstrip(":.") in KNOWN_HEADINGS:
        return None, text.rstrip(":.")
    return None


def match_caption(text: str) -> tuple[str, str] | None:
    """('table', 'Table 2') when a line starts a caption such as 'Table 2: Results ...'."""
    m = CAPTION_RE.match(text.strip())
    if not m:
        return None
    label = m.group("label").lower()
    kind = "table" if label.startswith("tab") else "figure"
    return kind, f"{kind.capitalize()} {m.group('num').upper()}"


def split_references(lines: Sequence[tuple[float, str]]) -> list[str]:
    """Split a References section into entries; each line is (indent in points, text).

    ACL style uses a hanging indent: an entry's first line sits at the column's left edge,
    its continuation lines are indented. Where no line is indented (other styles), an entry
    starts at a '[12]' / '12.' label, or at a capitalised name after a line that ended an
    entry that already has a year. Lines are joined with newlines; dehyphenate afterwards.
    """
    if not lines:
        return []
    indented = sum(1 for indent, _ in lines if indent >= 3.0)
    hanging = indented >= max(1, len(lines) // 10) and indented < len(lines) * 0.9
    entries: list[list[str]] = []
    for indent, text in lines:
        text = text.strip()
        if not text:
            continue
        if not entries or _starts_reference(indent, text, entries[-1], hanging):
            entries.append([text])
        else:
            entries[-1].append(text)
    return ["\n".join(e) for e in entries]


def _starts_reference(indent: float, text: str, current: list[str], hanging: bool) -> bool:
    """Does this line open a new entry (see split_references)?"""
    if re.match(r"^\[\d{1,3}\]\s", text):
        return True
    if hanging:
        return indent < 2.0
    previous = current[-1]
    has_year = _ANY_YEAR_RE.search(" ".join(current)) is not None
    looks_like_name = re.match(r"^[A-Z][\w'’\-]+,?\s+(?:[A-Z]|and\b)", text) is not None
    return has_year and previous.rstrip().endswith(".") and looks_like_name


def parse_reference(raw: str) -> BibEntry:
    """Best-guess title and year of one reference entry (ACL style first).

    'A. Author and B. Author. 2018. Construction of the literature graph in semantic scholar.
    In NAACL-HLT.' -> title 'Construction of the literature graph in semantic scholar'.
    """
    raw = re.sub(r"\s+", " ", raw).strip()
    title, year = "", None
    quoted = re.search(r"[“\"](?P<t>[^”\"]{8,300})[”\"]", raw)
    m = _REF_YEAR_RE.search(raw)
    if quoted:
        title = quoted.group("t").strip().rstrip(",.")
    elif m:
        title = _first_sentence(m.group("rest"))
    else:
        parts = _sentences(raw)
        title = parts[1] if len(parts) > 1 else ""
    if m:
        year = int(m.group("year"))
    else:
        years = _ANY_YEAR_RE.findall(raw)
        year = int(years[0]) if years else None
    return BibEntry(title=title, year=year, raw=raw)


def _sentences(text: str) -> list[str]:
    # A sentence ends at '.', '?' or '!' after a lower-case letter, digit or ')' - not after
    # an initial such as 'E.' - followed by a space.
    parts = re.split(r"(?<=[a-z0-9)\]}’”'][.?!])\s+|(?<=[A-Z]{2}[.?!])\s+", text)
    merged: list[str] = []
    for part in (p.strip() for p in parts):
        if merged and merged[-1].endswith(_ABBREVIATIONS):  # 'Machine learning vs. rules'
            merged[-1] = f"{merged[-1]} {part}"
        elif part:
            merged.append(part)
    return merged


def _first_sentence(text: str) -> str:
    parts = _sentences(text)
    if not parts:
        return ""
    title = parts[0]
    return title[:-1] if title.endswith(".") else title


def guess_venue_year(text: str) -> tuple[str | None, int | None]:
    """Venue and year from a page-1 footer such as 'Proceedings of the 58th Annual Meeting of
    the Association for Computational Linguistics, pages 2270-2282 July 5 - 10, 2020'.

    Only the main ACL venues are named (ACL, NAACL, EACL, EMNLP, COLING, TACL); workshops,
    Findings and anything else give venue None (the year is still returned).
    """
    flat = re.sub(r"\s+", " ", text)
    m = re.search(r"(Proceedings of .{0,260}|Transactions of the Association for Computational"
                  r" Linguistics.{0,120})", flat)
    if not m:
        return None, None
    line = m.group(1)
    cleaned = re.sub(r"pages? \d+\s*[–-]\s*\d+", " ", line)
    cleaned = re.sub(r"(?:©|\(c\)|Copyright)\s*(?:19|20)\d{2}", " ", cleaned)
    years = _ANY_YEAR_RE.findall(cleaned)
    year = int(years[0]) if years else None
    return _venue_of(line), year


def _venue_of(line: str) -> str | None:
    """The main ACL venue a proceedings line names; satellite events name none."""
    if re.search(r"Workshop|Findings|Student Research|Tutorial|Shared Task|Asian Chapter|\bAACL\b",
                 line, re.IGNORECASE):
        return None
    rules = (
        (r"Transactions of the Association for Computational Linguistics|\bTACL\b", "TACL"),
        (r"North American Chapter|\bNAACL", "NAACL"),
        (r"European Chapter|\bEACL\b", "EACL"),
        (r"Empirical Methods in Natural Language Processing|\bEMNLP\b", "EMNLP"),
        (r"International Conference on Computational Linguistics|\bCOLING\b", "COLING"),
        (r"Annual Meeting of the Association for Computational Linguistics|\bACL\b", "ACL"),
    )
    for pattern, venue in rules:
        if re.search(pattern, line):
            return venue
    return None


# --- entry point ----------------------------------------------------------------------------


def parse_pdf(
    path: Path, paper_id: str | None = None, metadata: dict[str, Any] | None = None
) -> Document:
    """Parse one PDF into a Document (blocks with exact page and section locators).

    `metadata` may hold title, authors, venue, year and paper_id from a trusted source; they
    win over what is guessed from the PDF. Raises IngestError for unreadable, encrypted or
    text-less PDFs.
    """
    path = Path(path)
    metadata = dict(metadata or {})
    with _open_pdf(path) as pdf:
        info, pages = _read_pdf(path, pdf)
        first_pass = [_layout_lines(page, exclude=[]) for page in pages]
        style = _document_style(pages, first_pass)
        for page, lines in zip(pages, first_pass):
            _locate_regions(page, lines, style, pdf.pages[page.number - 1])
            # Redo the layout without table and figure bodies: columns come out cleaner.
            if page.regions:
                page.lines = _layout_lines(page, [r.bbox for r in page.regions])
            else:
                page.lines = lines
    parsed = _Assembler(pages, style).run()
    return _build_document(path, paper_id, metadata, info, pages, parsed)


# --- reading ----------------------------------------------------------------------------------


@contextlib.contextmanager
def _open_pdf(path: Path) -> Iterator[Any]:
    """The open pdfplumber PDF; opening errors become IngestError."""
    import pdfplumber  # heavy import kept off the package import path

    try:
        pdf = pdfplumber.open(path)
    except FileNotFoundError as exc:
        raise IngestError(str(path), "file not found; check the path") from exc
    except Exception as exc:  # pdfminer raises a zoo of types on corrupt input
        raise IngestError(str(path), _open_error_message(exc)) from exc
    with pdf:
        yield pdf


def _read_pdf(path: Path, pdf: Any) -> tuple[dict[str, Any], list[_PageData]]:
    """Document info and the words and graphics of every page, as plain data."""
    try:
        info = {k: _decode_meta(v) for k, v in (pdf.metadata or {}).items()}
        raw_pages = list(pdf.pages)
    except Exception as exc:  # encryption and broken trees surface here, not at open
        raise IngestError(str(path), _open_error_message(exc)) from exc
    pages = []
    for number, page in enumerate(raw_pages, start=1):
        try:
            pages.append(_read_page(page, number))
        except Exception as exc:  # one broken page must not sink the paper
            log.warning("%s: page %d unreadable (%s); skipped", path, number, exc)
    if not pages:
        raise IngestError(str(path), "no readable pages; the PDF is damaged, re-download it")
    if sum(len(p.words) for p in pages) < 20:
        raise IngestError(
            str(path),
            "no extractable text (a scanned or image-only PDF, or fonts without a Unicode "
            "mapping?); run OCR first (e.g. `ocrmypdf --force-ocr in.pdf out.pdf`) and ingest "
            "the result",
        )
    return info, pages


def _open_error_message(exc: Exception) -> str:
    inner = exc.args[0] if exc.args and isinstance(exc.args[0], Exception) else exc
    name = type(inner).__name__
    if "Password" in name or "Encrypt" in name or "password" in str(inner).lower():
        return (
            f"the PDF is encrypted ({name}); remove the password "
            "(e.g. `qpdf --decrypt --password=... in.pdf out.pdf`) and ingest it again"
        )
    return (
        f"not a readable PDF ({name}: {inner}); check that the file is a complete PDF "
        "(re-download it, or repair it with `qpdf in.pdf out.pdf`)"
    )


def _decode_meta(value: Any) -> Any:
    if isinstance(value, bytes):
        for encoding in ("utf-8", "utf-16", "latin-1"):
            try:
                return value.decode(encoding)
            except UnicodeDecodeError:
                continue
    return value


def _read_page(page: Any, number: int) -> _PageData:
    """Words (with font facts) and graphic boxes of one page, detached from pdfplumber."""
    height = float(page.height)
    # Unmapped glyphs (big delimiters of display maths, "(cid:16)") would glue words of the
    # text line they overlap; drop them before words are built.
    page = page.filter(
        lambda o: o.get("object_type") != "char" or not o["text"].startswith("(cid:")
    )
    raw = page.extract_words(
        x_tolerance_ratio=_WORD_GAP_RATIO,
        y_tolerance=3,
        keep_blank_chars=False,
        use_text_flow=False,
        return_chars=True,
    )
    words = [w for w in (_make_word(r, height) for r in raw if r.get("upright", True)) if w]
    graphics = []
    for obj in [*page.images, *page.rects, *page.lines, *page.curves]:
        graphics.append(
            (float(obj["x0"]), float(obj["top"]), float(obj["x1"]), float(obj["bottom"]))
        )
    return _PageData(number, float(page.width), float(page.height), words, graphics)


def _make_word(raw: dict[str, Any], height: float) -> _Word | None:
    """A _Word from pdfplumber's word with its characters; None for an empty one."""
    chars = [c for c in raw["chars"] if not c["text"].isspace()]
    text = _word_text(chars)
    if not chars or not text:
        return None
    sizes = Counter(round(float(c["size"]), 1) for c in chars)
    return _Word(
        text=text,
        x0=float(raw["x0"]),
        x1=float(raw["x1"]),
        top=float(raw["top"]),
        bottom=float(raw["bottom"]),
        size=sizes.most_common(1)[0][0],
        n_chars=len(chars),
        n_bold=sum(_font_kind(c.get("fontname", ""))[0] for c in chars),
        n_math=sum(_font_kind(c.get("fontname", ""))[1] for c in chars),
        base=statistics.median(height - float(c["matrix"][5]) for c in chars),
    )


def _word_text(chars: list[dict[str, Any]]) -> str:
    """The word's text with TeX's separate accent glyphs put on the letter under them.

    The accent is centred over its letter, so the neighbour with the nearest centre wins:
    'a' + '¨' -> 'ä' (accent after), '´' + 'ı' -> 'í' (accent before, wider than the i).
    """
    texts = [c["text"] for c in chars]
    centre = [(float(c["x0"]) + float(c["x1"])) / 2 for c in chars]
    for i, t in enumerate(texts):
        if t not in _SPACING_ACCENTS:
            continue
        options = [j for j in (i - 1, i + 1) if 0 <= j < len(texts) and texts[j][:1].isalpha()]
        if options:
            j = min(options, key=lambda j: abs(centre[j] - centre[i]))
            texts[j], texts[i] = _compose(texts[j], t), ""
    return _CID_RE.sub("", "".join(texts)).strip()


@functools.lru_cache(maxsize=512)
def _font_kind(fontname: str) -> tuple[bool, bool]:
    """(bold, math) for a font name; cached because it is asked once per character."""
    return bool(_BOLD_FONT_RE.search(fontname)), bool(_MATH_FONT_RE.search(fontname))


def _document_style(pages: list[_PageData], lines_per_page: list[list[_Line]]) -> _Style:
    """Body font size (most characters) and its line pitch, the yardsticks of the layout."""
    sizes: Counter[float] = Counter()
    for page in pages:
        for w in page.words:
            sizes[w.size] += w.n_chars
    body = sizes.most_common(1)[0][0]
    pitches = []
    for lines in lines_per_page[:6]:
        for a, b in zip(lines, lines[1:]):
            if a.seg == b.seg and abs(a.size - body) < 0.3 and abs(b.size - body) < 0.3:
                d = b.top - a.top
                if 0.9 * body < d < 2.0 * body:
                    pitches.append(d)
    pitch = statistics.median(pitches) if pitches else body * 1.25
    return _Style(body_size=body, pitch=pitch)


# --- layout: columns and lines ---------------------------------------------------------------


def _group_rows(words: Iterable[_Word]) -> list[list[_Word]]:
    """Words that share a text line, superscripts and subscripts included.

    Rows are compared on boxes derived from the baseline and font size, and a row is
    represented by its largest word, so a superscript that happens to come first does not
    decide which subscripts still belong to the line.
    """
    rows: list[list[_Word]] = []
    cores: list[_Word] = []
    for w in sorted(words, key=lambda w: (w.vtop, w.x0)):
        for k in range(len(rows) - 1, max(len(rows) - 3, -1), -1):
            core = cores[k]
            overlap = min(core.vbottom, w.vbottom) - max(core.vtop, w.vtop)
            if overlap >= 0.4 * min(core.vbottom - core.vtop, w.vbottom - w.vtop):
                rows[k].append(w)
                if w.size > core.size:
                    cores[k] = w
                break
        else:
            rows.append([w])
            cores.append(w)
    return rows


def _find_gutter(
    words: list[_Word], rows: list[list[_Word]], width: float
) -> tuple[float, float] | None:
    """(centre, width) of the column gutter, or None for a one-column page."""
    if len(words) < 40:
        return None
    lo, hi = int(width * 0.38), int(width * 0.62)
    cover = [0] * (hi - lo)
    for row in rows:
        covered = set()
        for w in row:
            covered.update(range(max(lo, int(w.x0) + 1), min(hi, int(w.x1))))
        for x in covered:
            cover[x - lo] += 1
    best = min(cover)
    if best > 0.3 * len(rows):
        return None
    # The gutter is the whole low-coverage run around the minimum: full-width rows (title,
    # captions) cross it, each with its own word gaps, so the exact minimum is arbitrary.
    low = best + max(2, 0.1 * len(rows))
    k = cover.index(best)
    s, e = k, k + 1
    while s > 0 and cover[s - 1] <= low:
        s -= 1
    while e < len(cover) and cover[e] <= low:
        e += 1
    if e - s < _MIN_GUTTER:
        return None  # word gaps that happen to line up, not a gutter
    centre = lo + (s + e) / 2
    left = sum(1 for w in words if w.x1 <= centre)
    right = sum(1 for w in words if w.x0 >= centre)
    if left < 0.2 * len(words) or right < 0.2 * len(words):
        return None
    return centre, float(e - s)


def _spanning_interval(
    row: list[_Word], centre: float, gutter: float, right_edge: float
) -> tuple[float, float] | None:
    """The vertical extent of the part of a row that runs continuously across the gutter.

    Two column lines side by side are told apart from one full-width line by the gap at the
    gutter (a normal word space is much narrower than the gutter) and by the right-hand
    part starting exactly at the right column's edge (an overfull left line can shrink the
    gap, it cannot move the right column).
    """
    row = sorted(row, key=lambda w: w.x0)
    k = next((i for i, w in enumerate(row) if w.x1 >= centre), None)
    if k is None:
        return None

    def joined(a: _Word, b: _Word) -> bool:
        # A word space, not a gutter: under half an em even when the measured gutter is
        # narrow (figures can hide the real one).
        return b.x0 - a.x1 < max(0.35 * gutter, 0.5 * max(a.size, b.size))

    if row[k].x0 > centre - 1 and (
        k == 0 or not joined(row[k - 1], row[k]) or abs(row[k].x0 - right_edge) < 1.5
    ):
        return None
    i = j = k
    while i > 0 and joined(row[i - 1], row[i]):
        i -= 1
    while j < len(row) - 1 and joined(row[j], row[j + 1]):
        j += 1
    run = row[i : j + 1]
    if run[0].x0 < centre - _SPAN_REACH and run[-1].x1 > centre + _SPAN_REACH:
        return min(w.top for w in run), max(w.bottom for w in run)
    return None


def _segments(words: list[_Word], width: float) -> list[_Segment]:
    """Columns and full-width bands in reading order."""
    rows = _group_rows(words)
    gutter = _find_gutter(words, rows, width)
    if gutter is None:
        return [_Segment(0.0, width, (0.0, width), list(words))] if words else []
    centre, gwidth = gutter
    right_edge = Counter(round(w.x0) for w in words if w.x0 > centre).most_common(1)[0][0]
    spans = _merge_intervals(
        s for row in rows if (s := _spanning_interval(row, centre, gwidth, float(right_edge)))
    )
    # Bands top to bottom: (left, right) columns, then a full-width band, and so on.
    bands: list[list[_Segment]] = []
    for k in range(len(spans) + 1):
        bands.append(
            [_Segment(0.0, centre, (0.0, centre)), _Segment(centre, width, (centre, width))]
        )
        if k < len(spans):
            bands.append([_Segment(0.0, width, (0.0, width))])
    for w in words:
        segs = bands[_band_of(w, spans)]
        (segs[0] if len(segs) == 1 or (w.x0 + w.x1) / 2 < centre else segs[1]).words.append(w)
    out: list[_Segment] = []
    for seg in (s for band in bands for s in band if s.words):
        full = seg.area == (0.0, width)
        if out and full and out[-1].area == seg.area:  # nothing in columns between them
            out[-1].words.extend(seg.words)
        else:
            out.append(seg)
    for seg in out:
        seg.x0 = min(w.x0 for w in seg.words)
        seg.x1 = max(w.x1 for w in seg.words)
    return out


def _merge_intervals(intervals: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    merged: list[tuple[float, float]] = []
    for top, bottom in sorted(intervals):
        if merged and top <= merged[-1][1] + 1.0:
            merged[-1] = (merged[-1][0], max(merged[-1][1], bottom))
        else:
            merged.append((top, bottom))
    return merged


def _band_of(word: _Word, spans: list[tuple[float, float]]) -> int:
    """Index of the band holding the word: 2k+1 is full-width band k, 2k its columns above."""
    band = 0
    for k, (top, bottom) in enumerate(spans):
        if top - 1.0 <= word.mid <= bottom + 1.0:
            return 2 * k + 1
        if word.mid > bottom:
            band = 2 * k + 2
    return band


def _layout_lines(page: _PageData, exclude: list[tuple[float, ...]]) -> list[_Line]:
    """The page's lines in reading order, without words inside `exclude` boxes or furniture."""
    words = [w for w in page.words if not any(_inside(w, box) for box in exclude)]
    lines: list[_Line] = []
    for k, seg in enumerate(_segments(words, page.width)):
        rows = _group_rows(seg.words)
        x0 = _left_margin(rows)
        for row in rows:
            lines.append(_Line(row, page.number, k, x0, seg.x1, seg.area))
    return [ln for ln in lines if ln.text and not _is_furniture(ln, page)]


def _left_margin(rows: list[list[_Word]]) -> float:
    """The column's left edge: the most common line start (indented lines are rarer)."""
    starts = Counter(round(min(w.x0 for w in row)) for row in rows)
    common = [x for x, n in starts.most_common(3) if n >= 2]
    return float(min(common)) if common else min(w.x0 for row in rows for w in row)


def _inside(w: _Word, box: tuple[float, ...]) -> bool:
    x0, top, x1, bottom = box
    cx = (w.x0 + w.x1) / 2
    return x0 - 1 <= cx <= x1 + 1 and top - 1 <= w.mid <= bottom + 1


def _line_text(words: list[_Word]) -> str:
    parts: list[str] = []
    for prev, w in zip([None, *words], words):
        if prev is not None and w.x0 - prev.x1 >= _NO_SPACE_RATIO * max(prev.size, w.size):
            parts.append(" ")
        parts.append(w.text)
    return normalize_text("".join(parts)).strip()


def _is_furniture(line: _Line, page: _PageData) -> bool:
    """Page numbers and the proceedings footer: not part of the paper's text."""
    near_edge = line.top > page.height * 0.88 or line.bottom < page.height * 0.07
    if near_edge and re.fullmatch(r"\d{1,5}", line.text):
        return True
    return line.top > page.height * 0.9 and bool(
        re.search(r"Proceedings of|Association for Computational Linguistics|©|Licen[cs]e",
                  line.text)
    )


# --- tables and figures --------------------------------------------------------------------


def _locate_regions(page: _PageData, lines: list[_Line], style: _Style, plumber_page: Any) -> None:
    """Find each captioned table/figure body on the page; render tables to text."""
    for i, line in enumerate(lines):
        found = match_caption(line.text)
        if not found or not _starts_paragraph(lines, i, style):
            continue
        kind, label = found
        if any(r.label == label for r in page.regions):
            continue
        bbox = (
            _table_bbox(page, lines, i, style) if kind == "table" else _figure_bbox(page, line)
        )
        if bbox is None:
            continue
        region = _Region(kind, label, bbox, (line.top, line.x0))
        if kind == "table":
            region.text = _render_table(page, bbox, plumber_page)
        page.regions.append(region)


def _starts_paragraph(lines: list[_Line], i: int, style: _Style) -> bool:
    """Rough paragraph start, good enough to accept a caption line before the full pass."""
    line = lines[i]
    if i == 0 or lines[i - 1].seg != line.seg:
        return True
    prev = lines[i - 1]
    return (
        line.top - prev.top > style.pitch * 1.3
        or abs(line.size - prev.size) > 0.5
        or bool(re.search(r"[.:!?)\]\d]$", prev.text))
        or line.bold > 0.2
    )


def _column_box(line: _Line) -> tuple[float, float]:
    return line.area


def _figure_bbox(page: _PageData, caption: _Line) -> tuple[float, float, float, float] | None:
    """Graphics stacked right above the caption (within the caption's column)."""
    x0, x1 = _column_box(caption)
    boxes = [
        g for g in page.graphics
        if g[0] >= x0 - 5 and g[2] <= x1 + 5 and g[3] <= caption.top + 2
        and (g[2] - g[0]) < 0.98 * page.width
    ]
    boxes.sort(key=lambda g: -g[3])
    top, found = caption.top, False
    for g in boxes:
        if g[3] >= top - 40:
            top = min(top, g[1])
            found = True
    if not found:
        return None
    return x0, top - 2, x1, caption.top - 0.5


def _table_bbox(
    page: _PageData, lines: list[_Line], i: int, style: _Style
) -> tuple[float, float, float, float] | None:
    """Rules (booktabs) or tabular lines right above - or else right below - the caption."""
    caption = lines[i]
    x0, x1 = _column_box(caption)
    width = x1 - x0
    rules = sorted(
        (g for g in page.graphics
         if g[3] - g[1] < 2.5 and g[2] - g[0] > 0.25 * width and g[0] >= x0 - 5 and g[2] <= x1 + 5),
        key=lambda g: g[1],
    )
    above = [g for g in rules if g[3] <= caption.top + 1]
    if above and caption.top - above[-1][3] < 40:
        top = above[-1][1]
        for g in reversed(above[:-1]):
            if _blocked_between(lines, x0, x1, g[3], top, style):
                break
            top = g[1]
        return x0, top - 1, x1, caption.top - 0.5
    end = _caption_end(lines, i, style)
    below = [g for g in rules if g[1] >= end - 1]
    if below and below[0][1] - end < 40:
        bottom = below[0][3]
        for g in below[1:]:
            if _blocked_between(lines, x0, x1, bottom, g[1], style):
                break
            bottom = g[3]
        return x0, end + 0.5, x1, bottom + 1
    return _tabular_lines_bbox(lines, i, style)


def _caption_end(lines: list[_Line], i: int, style: _Style) -> float:
    end = lines[i].bottom
    for prev, line in zip(lines[i:], lines[i + 1 :]):
        if line.seg != prev.seg or line.top - prev.top > style.pitch * 1.4:
            break
        end = line.bottom
    return end


def _is_prose(line: _Line, style: _Style) -> bool:
    """A line of running text: fills its column with word-sized gaps at body size."""
    width = line.seg_x1 - line.seg_x0
    return (
        line.x1 - line.x0 > 0.85 * width
        and line.max_gap < 0.8 * line.size
        and line.size > style.body_size - 0.6
    )


def _blocked_between(
    lines: list[_Line], x0: float, x1: float, top: float, bottom: float, style: _Style
) -> bool:
    """Is there something between two rules that cannot be inside one table?

    Running text, another caption, or a line that sticks out of the table's column (the
    caption of a full-width table above a one-column one).
    """
    for ln in lines:
        if not (top < ln.top and ln.bottom < bottom and ln.x1 > x0 and ln.x0 < x1):
            continue
        if _is_prose(ln, style) or match_caption(ln.text) or ln.x0 < x0 - 5 or ln.x1 > x1 + 5:
            return True
    return False


def _tabular_lines_bbox(
    lines: list[_Line], i: int, style: _Style
) -> tuple[float, float, float, float] | None:
    """No rules: the run of lines with wide cell gaps right above the caption."""
    caption, rows = lines[i], []
    for line in reversed(lines[:i]):
        if line.seg != caption.seg or _is_prose(line, style) or match_heading(line.text):
            break
        if line.max_gap < 1.0 * line.size and len(line.words) > 1:
            break
        rows.append(line)
    if len(rows) < 2:
        return None
    return (
        min(r.x0 for r in rows) - 1,
        min(r.top for r in rows) - 1,
        max(r.x1 for r in rows) + 1,
        caption.top - 0.5,
    )


def _render_table(
    page: _PageData, bbox: tuple[float, float, float, float], plumber_page: Any
) -> str:
    """Rows of the table as 'cell | cell | cell' lines, capped for the chunk size."""
    rows = _ruled_table_rows(plumber_page, bbox) or _word_table_rows(page, bbox)
    return _truncate_rows("\n".join(rows), _MAX_TABLE_CHARS)


def _ruled_table_rows(plumber_page: Any, bbox: tuple[float, float, float, float]) -> list[str]:
    """pdfplumber's own table finder inside the region: exact cells for fully ruled tables.

    Booktabs tables (most ACL papers) have no vertical rules and give nothing here; the
    word-gap rendering below handles them.
    """
    x0, top, x1, bottom = bbox
    clip = (max(0.0, x0), max(0.0, top), min(float(plumber_page.width), x1),
            min(float(plumber_page.height), bottom))
    try:
        tables = plumber_page.crop(clip).find_tables()
    except Exception as exc:  # a table finder failure must not lose the caption
        log.debug("find_tables failed on page %s: %s", plumber_page.page_number, exc)
        return []
    if not tables:
        return []
    table = max(tables, key=lambda t: (t.bbox[2] - t.bbox[0]) * (t.bbox[3] - t.bbox[1]))
    cells = table.extract()
    if len(cells) < 2 or max(len(r) for r in cells) < 2:
        return []
    return [
        " | ".join(normalize_text(re.sub(r"\s+", " ", c or "")).strip() for c in row)
        for row in cells
    ]


def _word_table_rows(page: _PageData, bbox: tuple[float, float, float, float]) -> list[str]:
    """Rows from the words in the region; a gap wider than 0.8 em separates two cells."""
    words = [w for w in page.words if _inside(w, bbox)]
    rows = []
    for row in _group_rows(words):
        row.sort(key=lambda w: w.x0)
        cells: list[list[_Word]] = [[row[0]]]
        for prev, w in zip(row, row[1:]):
            if w.x0 - prev.x1 > 0.8 * max(w.size, prev.size):
                cells.append([w])
            else:
                cells[-1].append(w)
        rows.append(" | ".join(_line_text(c) for c in cells))
    return rows


def _truncate_rows(text: str, budget: int) -> str:
    """Whole rows up to `budget` characters, '...' marking that rows were dropped."""
    if len(text) <= budget:
        return text
    kept, total = [], 0
    for row in text.split("\n"):
        if total + len(row) + 1 > budget - 4:
            break
        kept.append(row)
        total += len(row) + 1
    return "\n".join([*kept, "..."]) if kept else ""


# --- assembling blocks ----------------------------------------------------------------------


@dataclass
class _Paragraph:
    kind: ChunkKind  # "text" | "equation" | "table" | "figure"
    lines: list[_Line]
    section: str | None
    label: str | None = None


@dataclass
class _Parsed:
    front: list[_Line]
    abstract: list[_Paragraph]
    body: list[_Paragraph]
    references: list[tuple[float, float, str]]  # (font size, indent, text)
    sections: list[tuple[str, int]]


class _Assembler:
    """Walks the lines in reading order and keeps the state: current section and mode."""

    def __init__(self, pages: list[_PageData], style: _Style):
        self.lines = [ln for p in pages for ln in p.lines]
        self.style = style
        self.mode = "front"  # front -> abstract -> body <-> references
        self.section: str | None = None
        self.current: _Paragraph | None = None
        self.out = _Parsed([], [], [], [], [])
        self.ref_margin: dict[tuple[int, int], float] = {}
        self.located = {(p.number, r.label): r.caption_at for p in pages for r in p.regions}
        self.numbered_seen = False  # a "1 Introduction"-style heading has been passed
        self.captions_seen: set[tuple[int, str]] = set()

    def run(self) -> _Parsed:
        has_heading = any(self._heading_at(i) for i in range(len(self.lines)))
        if not has_heading:
            self.mode = "body"
        i = 0
        while i < len(self.lines):
            heading = self._heading_at(i)
            if heading is not None:
                text, i = self._merge_heading(i, heading)
                self._start_section(text, self.lines[i - 1].page)
                continue
            self._add_line(i)
            i += 1
        self._flush()
        return self.out

    # headings

    def _heading_at(self, i: int) -> str | None:
        """The heading text when line i is a heading: whole-bold, body size or larger, and
        numbered ('3.2 Results'), a known name ('References'), or larger than the body."""
        line = self.lines[i]
        if line.bold < 0.85 or line.size < self.style.body_size - 0.6 or line.math > 0.3:
            return None
        shape = match_heading(line.text)
        if shape is not None and shape[0] is not None and not shape[0][0].isdigit():
            # 'A Survey of ...' is a title; lettered headings are appendices, after the body.
            if not self.numbered_seen:
                return None
        if shape is None:
            bigger = line.size >= self.style.body_size + 0.8
            words = line.text.split()
            if not (bigger and 1 <= len(words) <= 8 and line.text[:1].isupper()
                    and not line.text.endswith(".") and self.mode != "front"):
                return None
        elif shape[0] is not None and line.x0 > line.seg_x0 + 6:
            return None  # numbered headings start at the column edge
        return line.text

    def _merge_heading(self, i: int, text: str) -> tuple[str, int]:
        """A heading that wraps onto a second bold line of the same size."""
        line, j = self.lines[i], i + 1
        while j < len(self.lines):
            nxt = self.lines[j]
            if (
                (nxt.page, nxt.seg) != (line.page, line.seg)
                or nxt.bold < 0.85
                or abs(nxt.size - line.size) > 0.3
                or nxt.top - line.top > self.style.pitch * 1.5
                or HEADING_RE.match(nxt.text)
                or match_heading(nxt.text)
            ):
                break
            text, line, j = f"{text} {nxt.text}", nxt, j + 1
        return text, j

    def _start_section(self, text: str, page: int) -> None:
        """Switch section; 'Abstract' and 'References' also switch what lines feed."""
        self._flush()
        self.numbered_seen = self.numbered_seen or text[:1].isdigit()
        name = re.sub(r"^(\d+(?:\.\d+)*)\.(?=\s)", r"\1", text).strip()
        key = re.sub(r"^(?:\d+|[A-Z]|[IVX]+)(?:\.\d+)*\.?\s+", "", name).lower().rstrip(":.")
        if self.mode == "front" and key == "abstract":
            self.mode = "abstract"
        elif key in ("references", "bibliography"):
            self.mode = "references"
        else:
            self.mode = "body"
        self.section = name
        self.out.sections.append((name, page))

    # lines

    def _add_line(self, i: int) -> None:
        """Feed line i to the front matter, the references, or the current paragraph."""
        line = self.lines[i]
        if self.mode == "front":
            self.out.front.append(line)
            return
        if self.mode == "references":
            self._add_reference_line(line)
            return
        caption = self._caption_at(i)
        if caption:
            self._flush()
            self.current = _Paragraph(caption[0], [line], self.section, caption[1])
            self.captions_seen.add((line.page, caption[1]))
            return
        kind = "equation" if self._is_equation(line) else "text"
        cur = self.current
        if cur is None or self._breaks(i) or (
            cur.kind in ("text", "equation") and cur.kind != kind
        ):
            self._flush()
            self.current = _Paragraph(kind, [line], self.section)
        else:
            cur.lines.append(line)

    def _caption_at(self, i: int) -> tuple[str, str] | None:
        """A caption starts here: 'Table 2:' opening a paragraph, once per page and label.

        'Table 4. On average ...' at the start of a line is often running text, so a caption
        with a full stop needs a located table/figure body or a smaller font than the body.
        """
        line = self.lines[i]
        found = match_caption(line.text)
        if not found or (line.page, found[1]) in self.captions_seen:
            return None
        at = self.located.get((line.page, found[1]))
        if at is not None:
            same_line = abs(at[0] - line.top) < 1.5 and abs(at[1] - line.x0) < 1.5
            return found if same_line else None
        m = CAPTION_RE.match(line.text)
        opens = self.current is None or self._breaks(i)
        strong = m is not None and m.group("sep") in ":|"
        small = line.size < self.style.body_size - 0.4
        return found if opens and (strong or small or line.bold > 0.1) else None

    def _breaks(self, i: int) -> bool:
        """Does line i start a new paragraph (rather than continue the one before it)?"""
        line = self.lines[i]
        prev = self.lines[i - 1] if i > 0 else None
        if prev is None or prev.page != line.page:
            return True
        pitch = self.style.pitch
        if prev.seg != line.seg:
            # The short last line of a full-width paragraph (caption) lands in the left
            # column below it: same size, same left edge, one line further down.
            return not (
                prev.area[1] - prev.area[0] > line.area[1] - line.area[0]
                and 0 < line.top - prev.top <= pitch * 1.3
                and abs(line.size - prev.size) <= 0.3
                and abs(line.x0 - prev.x0) < 3
            )
        if line.top - prev.top > pitch * 1.3 + 0.5 or line.top < prev.top:
            return True
        if abs(line.size - prev.size) > 0.5:
            return True
        if _BULLET_RE.match(line.text) and line.x0 <= prev.x0 + 2:
            return True
        if _LIST_ITEM_RE.match(line.text) and re.search(r"[.:;]$", prev.text):
            return True
        indent = line.x0 - prev.x0
        nxt = self.lines[i + 1] if i + 1 < len(self.lines) else None
        same_column = nxt is not None and (nxt.page, nxt.seg) == (line.page, line.seg)
        nxt_x0 = nxt.x0 if same_column else None
        if 4 < indent < 30 and (nxt_x0 is None or nxt_x0 < line.x0 - 3):
            return True  # first-line indent
        ended = re.search(r"[.!?:]\W*$", prev.text) is not None
        return ended and prev.x1 < prev.seg_x1 - 0.2 * (prev.seg_x1 - prev.seg_x0) and indent > -3

    def _is_equation(self, line: _Line) -> bool:
        """Display maths: mostly math-font glyphs, or set off from the margin with some."""
        width = line.seg_x1 - line.seg_x0
        set_off = line.x0 > line.seg_x0 + 15 and line.x1 - line.x0 < width - 20
        numbered = re.search(r"\(\d{1,3}[a-z]?\)$", line.text) is not None
        justified = line.x1 - line.x0 > 0.95 * width and line.x0 < line.seg_x0 + 1.5
        if line.math >= 0.5 and not justified:
            return True  # a justified line with inline maths is still running text
        return set_off and (line.math >= 0.25 or (numbered and line.math > 0.05))

    def _flush(self) -> None:
        cur, self.current = self.current, None
        if cur is None:
            return
        if self.mode == "abstract":
            self.out.abstract.append(cur)
        else:
            self.out.body.append(cur)

    # references

    def _add_reference_line(self, line: _Line) -> None:
        key = (line.page, line.seg)
        if key not in self.ref_margin:
            peers = [ln.x0 for ln in self.lines if (ln.page, ln.seg) == key]
            self.ref_margin[key] = min(peers)
        self.out.references.append((line.size, line.x0 - self.ref_margin[key], line.text))


# --- document -------------------------------------------------------------------------------


def _build_document(
    path: Path,
    paper_id: str | None,
    metadata: dict[str, Any],
    info: dict[str, Any],
    pages: list[_PageData],
    parsed: _Parsed,
) -> Document:
    """Paragraphs to blocks, references to entries, and the paper record around them."""
    vocabulary = _vocabulary(ln for p in pages for ln in p.lines)
    regions = {(p.number, r.label): r for p in pages for r in p.regions}
    blocks = [b for para in parsed.body if (b := _to_block(para, vocabulary, regions))]
    abstract = " ".join(
        _join_lines(p.lines, vocabulary) for p in parsed.abstract if p.kind == "text"
    ).strip()
    bibliography = tuple(
        parse_reference(dehyphenate(raw, vocabulary))
        for raw in split_references(_reference_lines(parsed.references))
    )
    venue, year = guess_venue_year(_first_page_margins(pages[0]))
    title = _choose_title(metadata, info, parsed.front or pages[0].lines[:12])
    paper = Paper(
        paper_id=str(paper_id or metadata.get("paper_id") or path.stem),
        title=title,
        abstract=abstract or str(metadata.get("abstract") or ""),
        authors=_authors(metadata, info),
        venue=metadata.get("venue") or venue,
        year=_int_or_none(metadata.get("year")) or year,
        source=str(path),
        bibliography=bibliography,
    )
    if not blocks:
        log.warning("%s: no body text blocks found", path)
    log.info(
        "%s: %d pages, %d blocks, %d sections, %d bibliography entries",
        path, len(pages), len(blocks), len(parsed.sections), len(bibliography),
    )
    return Document(paper=paper, blocks=tuple(blocks))


def _first_page_margins(page: _PageData) -> str:
    """Text of the first page's header and footer, where ACL-style venue lines live.

    Only the margins: a 'Proceedings of ...' in a page-1 reference or sentence says nothing
    about where this paper appeared.
    """
    margin = [
        w for w in page.words if w.top > page.height * 0.85 or w.bottom < page.height * 0.12
    ]
    rows = sorted(_group_rows(margin), key=lambda r: min(w.top for w in r))
    return " ".join(_line_text(sorted(r, key=lambda w: w.x0)) for r in rows)


def _vocabulary(lines: Iterable[_Line]) -> frozenset[str]:
    """Lower-cased words and hyphenated compounds, without the halves of hyphenated words."""
    vocab: set[str] = set()
    broken = False
    for line in lines:
        tokens = re.findall(r"[\w]+(?:-[\w]+)*", line.text)
        if broken and tokens:
            tokens = tokens[1:]
        broken = line.text.endswith("-")
        if broken and tokens:
            tokens = tokens[:-1]
        for t in tokens:
            vocab.add(t.lower())
            vocab.update(p.lower() for p in t.split("-"))
    return frozenset(vocab)


def _join_lines(lines: list[_Line], vocabulary: frozenset[str]) -> str:
    return dehyphenate("\n".join(ln.text for ln in lines), vocabulary)


def _to_block(
    para: _Paragraph, vocabulary: frozenset[str], regions: dict[tuple[int, str], _Region]
) -> Block | None:
    text = _join_lines(para.lines, vocabulary)
    if not text:
        return None
    page = para.lines[0].page
    if para.kind == "table":
        region = regions.get((page, para.label or ""))
        if region and region.text:
            # Caption and rows together stay one chunk (the cap is 2,000 characters).
            budget = min(_MAX_TABLE_CHARS, 1990 - len(text) - 1)
            rows = _truncate_rows(region.text, budget)
            text = f"{text}\n{rows}" if rows else text
        return Block("table", text, page=page, section=para.section, table_id=para.label)
    if para.kind == "figure":
        return Block("figure", text, page=page, section=para.section, figure_id=para.label)
    return Block(para.kind, text, page=page, section=para.section)


def _reference_lines(lines: list[tuple[float, float, str]]) -> list[tuple[float, str]]:
    """The reference list's own lines: footnotes that share its column have another size."""
    if not lines:
        return []
    size = Counter(s for s, _, _ in lines).most_common(1)[0][0]
    return [(indent, text) for s, indent, text in lines if abs(s - size) <= 0.4]


def _choose_title(metadata: dict[str, Any], info: dict[str, Any], front: list[_Line]) -> str:
    """Trusted metadata, else the PDF's Title field when it is a title, else the page-1
    lines set in the largest font (LaTeX often leaves the Title field empty)."""
    if metadata.get("title"):
        return str(metadata["title"]).strip()
    meta_title = str(info.get("Title") or "").strip()
    if _sensible_title(meta_title):
        return normalize_text(meta_title)
    page1 = [ln for ln in front if ln.page == 1]
    if not page1:
        return ""
    biggest = max(ln.size for ln in page1)
    title_lines = [ln for ln in page1 if ln.size >= biggest - 0.3]
    return dehyphenate("\n".join(ln.text for ln in title_lines[:4]))


def _sensible_title(title: str) -> bool:
    """Word processors fill Title with file names ('paper.dvi', 'Microsoft Word - x')."""
    low = title.lower()
    return (
        len(title.split()) >= 2
        and not re.search(r"\.(pdf|dvi|docx?|tex|ps)$|^microsoft word|^untitled|^slide", low)
        and "/" not in title[:3]
    )


def _authors(metadata: dict[str, Any], info: dict[str, Any]) -> tuple[str, ...]:
    """Trusted metadata, else the PDF's Author field (ACL's hyperref writes 'A ; B ; C')."""
    given = metadata.get("authors")
    if isinstance(given, str):
        given = re.split(r"\s*;\s*|\s*,\s*|\s+and\s+", given)
    if given:
        return tuple(str(a).strip() for a in given if str(a).strip())
    raw = str(info.get("Author") or "").strip()
    if not raw:
        return ()
    parts = raw.split(";") if ";" in raw else re.split(r",\s*|\s+and\s+", raw)
    return tuple(normalize_text(p).strip() for p in parts if p.strip())


def _int_or_none(value: Any) -> int | None:
    """2020, '2020', '2020-05' -> 2020; anything else -> None."""
    try:
        return int(str(value)[:4]) if value not in (None, "") else None
    except ValueError:
        return None
