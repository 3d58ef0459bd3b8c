"""Lines to paragraphs: walks the lines in reading order keeping the current section and mode
(front matter, abstract, body, references) and decides where paragraphs, captions and
equations start.
"""

from __future__ import annotations

import re

from tools.base import ChunkKind
from tools.ingest.pdf.model import Line, PageData, Paragraph, Parsed, Style
from tools.ingest.pdf.outline import Entry, outline_headings
from tools.ingest.pdf.references import author_list_starts, bibliography_shape, numbered_list_starts
from tools.ingest.pdf.text import CAPTION_RE, HEADING_RE, match_caption, match_heading

_BULLET_RE = re.compile(r"^[•◦▪‣∙·–]\s")
_LIST_ITEM_RE = re.compile(r"^(?:\(?\d{1,2}[).]|\(?[a-z]\)|\(?[ivx]{1,4}\))\s")
# A line that ends a sentence, a footnote mark glued after the stop included ("paper:5").
_ENDED_RE = re.compile(r"(?:[.!?:]['\")\]”’]*|(?<=[^\W\d])[.!?:]\d{1,2})$")
_ALGORITHM_RE = re.compile(r"^Algorithm \d{1,2}\b")  # an algorithm float opens with its caption
# Lines of one display (a fraction, an aligned system) are this close, in body line pitches.
_DISPLAY_GAP = 2.5


_FLOAT_LABEL = re.compile(r"(?:Table|Figure|Appendix)\s+[A-Z]?\d{0,2}")


_ROMAN = re.compile(r"^[IVX]{1,5}\.\s")
_LETTER = re.compile(r"^[A-Z]\.\s")
_APPENDIX = re.compile(r"^(?:Appendix|APPENDIX)\s")
_ARABIC = re.compile(r"^\d{1,2}\.?\s")


def _levels(levels: list[str], name: str) -> list[str]:
    """The section path after heading `name`: in a roman-lettered scheme (REVTeX's 'II. METHOD',
    'A. Setup', '1. Data') a lettered heading sits under the roman one before it and a numbered
    one under the letter; any other heading (decimal numbers carry their own depth) starts a
    path of its own."""
    top = bool(levels) and bool(_ROMAN.match(levels[0]) or _APPENDIX.match(levels[0]))
    roman = bool(levels) and bool(_ROMAN.match(levels[0]))
    if _ROMAN.match(name) or _APPENDIX.match(name):
        return [name]
    if top and not roman and _ARABIC.match(name):  # '1. A subsection' of an appendix
        return [levels[0], name]
    if roman and _LETTER.match(name):
        return [levels[0], name]
    if roman and len(levels) >= 2 and _ARABIC.match(name):
        return [*levels[:2], name]
    return [name]


def ends_sentence(text: str) -> bool:
    return _ENDED_RE.search(text.rstrip()) is not None


class Assembler:
    """Walks the lines in reading order and keeps the state: current section and mode."""

    def __init__(self, pages: list[PageData], style: Style, outline: list[Entry] | None = None):
        self.lines = [ln for p in pages for ln in p.lines]
        # Headings the PDF's outline names: {first line: (text, line after)}.
        self.outlined = outline_headings(self.lines, outline or [], style.body_size)
        self.style = style
        self.mode = "front"  # front -> abstract -> body <-> references
        self.section: str | None = None
        self.levels: list[str] = []  # the section path (roman, lettered, numbered headings nest)
        self.current: Paragraph | None = None
        self.out = Parsed([], [], [], [], [])
        self.ref_margin: dict[tuple[int, int], float] = {}
        self.located = {(p.number, r.label): r.caption_at for p in pages for r in p.regions}
        self.numbered_seen = False  # a "1 Introduction"-style heading has been passed
        # where lines that name a bibliography stand ('REFERENCES', whatever their face)
        self.bibliography_names = [
            i
            for i, ln in enumerate(self.lines)
            if ln.text.strip().lower().rstrip(":.") in ("references", "bibliography", "literature cited", "works cited")
        ]
        self.captions_seen: set[tuple[int, str]] = set()
        # The text paragraph last cut off mid-sentence (by a column or page end, or a float),
        # which a following unindented line carries on; whether a float came since.
        self.open_text: Paragraph | None = None
        self.float_since = False
        self.note: Paragraph | None = None  # the footnote being read

    def run(self) -> Parsed:
        has_heading = any(self._heading_at(i) for i in range(len(self.lines)))
        if not has_heading:
            self.mode = "body"
        i = 0
        while i < len(self.lines):
            if i in self.outlined and self.outlined[i][1] < 0:  # a run-in heading: its paragraph follows
                text, minus_k = self.outlined.pop(i)
                line = self.lines[i]
                self._start_section(text, line.page, i + 1)
                rest = line.words[-minus_k:]  # the words after the heading's
                self.lines[i] = Line(rest, line.page, line.seg, line.seg_x0, line.seg_x1, line.area)
                self.lines[i].footnote, self.lines[i].mark = line.footnote, line.mark
                if self.mode == "front":
                    self.mode = "body"
            heading = self._heading_at(i)
            if heading is not None:
                text, i = self.outlined[i] if i in self.outlined else self._merge_heading(i, heading)
                self._start_section(text, self.lines[i - 1].page, i)
                if self.mode == "front":  # a heading the outline names ends the front matter
                    self.mode = "body"
                continue
            if self.mode == "body" and self._unheaded_bibliography(i):
                self._flush()
                self.mode = "references"
            self._add_line(i)
            i += 1
        self._flush()
        return self.out

    def _unheaded_bibliography(self, i: int) -> bool:
        """Does a bibliography without a heading start at line i: a numbered list ('[1]', or
        REVTeX's superscript labels), or, in the second half of the paper, an alphabetical list
        of entries that open with a surname and initials?"""
        texts = [ln.text for ln in self.lines[i : i + 16]]
        if numbered_list_starts(texts):
            return True
        # an author-year list is the bibliography only when no line naming one comes after it
        # (a guide's code listing of \bibitem lines before its 'References' is alphabetical and
        # dated too); right after such a line it is, whatever the line's face
        named_later = any(j > i for j in self.bibliography_names)
        return i > len(self.lines) // 2 and not named_later and author_list_starts(texts)

    # headings

    def _heading_at(self, i: int) -> str | None:
        """The heading text when line i is a heading: whole-bold, body size or larger, and
        numbered ('3.2 Results'), a known name ('References'), or larger than the body."""
        line = self.lines[i]
        if i in self.outlined:
            return self.outlined[i][0]
        shape = match_heading(line.text)
        numbered = shape is not None and shape[0] is not None
        # REVTeX sets its headings ('I. INTRODUCTION', 'A. Setup', 'REFERENCES') in bold a point
        # smaller than the body
        smallest = self.style.body_size - (1.6 if shape is not None and line.bold >= 0.85 else 0.6)
        if line.math > 0.3 or line.size < smallest:
            return None
        if numbered and 0.5 <= line.bold < 0.85 and shape is not None and len(shape[1].split()) <= 6:
            pass  # '3. AMSMATH Package': a numbered heading with a word in another face
        elif numbered and shape is not None and self._continues_numbering(shape[0] or "", shape[1]):
            pass  # '2.1 Discarded' in a regular or italic face, under '2. Changes'
        elif line.bold < 0.85:
            # a known name ('References') set larger than the body needs no bold (some
            # templates set their headings in a larger regular face)
            if not (shape is not None and shape[0] is None and line.size >= self.style.body_size + 0.8):
                return None
        if self.outlined and (shape is None or shape[0] is not None):
            return None  # with an outline, only the unlisted known names ('Abstract', 'References')
        if (
            shape is not None
            and shape[0] is not None
            and not shape[0][0].isdigit()
            and not _ROMAN.match(line.text)
            and not _APPENDIX.match(line.text)
        ):
            # 'A Survey of ...' is a title; lettered headings are appendices, after the body,
            # or subsections under a roman numbered one ('II. METHOD', 'A. Setup')
            if not self.numbered_seen:
                return None
        if shape is None:
            bigger = line.size >= self.style.body_size + 0.8
            words = line.text.split()
            if not (
                bigger
                and 1 <= len(words) <= 8
                and line.text[:1].isupper()
                and not line.text.endswith(".")
                and self.mode != "front"
            ):
                return None
        elif shape[0] is not None and line.x0 > line.seg_x0 + 6:
            return None  # numbered headings start at the column edge
        return line.text

    def _continues_numbering(self, number: str, title: str) -> bool:
        """A subsection number under the current section's ('2.1' after '2 Changes', '2.3' after
        '2.2 Fonts'), on a short line of its own: a heading whatever its face."""
        m = re.fullmatch(r"(\d{1,2})\.(\d{1,2})", number)
        current = re.match(r"(\d{1,2})(?:\.(\d{1,2}))?\s", self.section or "")
        if not m or not current or current.group(1) != m.group(1):
            return False
        previous = int(current.group(2) or 0)
        return int(m.group(2)) == previous + 1 and len(title.split()) <= 8 and title[:1].isupper()

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

    def _start_section(self, text: str, page: int, after: int) -> None:
        """Switch section; 'Abstract' and 'References' also switch what lines feed (a
        'References' heading only when entries follow it: a subsection of the body can be
        called so)."""
        self._flush()
        self.numbered_seen = self.numbered_seen or text[:1].isdigit() or bool(re.match(r"[IVX]{1,5}\.\s", text))
        name = re.sub(r"^(\d+(?:\.\d+)*)\.(?=\s)", r"\1", text).strip()
        key = re.sub(r"^(?:\d+|[A-Z]|[IVX]+)(?:\.\d+)*\.?\s+", "", name).lower().rstrip(":.")
        if self.section is None and key == "abstract":
            self.mode = "abstract"
        elif key in ("references", "bibliography") and bibliography_shape(self._until_heading(after, 20)):
            self.mode = "references"
        else:
            self.mode = "body"
        self.levels = _levels(self.levels, name)
        self.section = " › ".join(self.levels)
        self.out.sections.append((self.section, page))

    def _until_heading(self, start: int, n: int) -> list[str]:
        """The texts of up to n lines from `start`, stopping at the next heading (a two-entry
        bibliography followed by an appendix is judged on its own lines)."""
        out: list[str] = []
        for j in range(start, min(len(self.lines), start + n)):
            if j > start and self._heading_at(j) is not None:
                break
            out.append(self.lines[j].text)
        return out

    # lines

    def _add_line(self, i: int) -> None:
        """Feed line i to the front matter, the references, or the current paragraph."""
        line = self.lines[i]
        if self.mode == "front":
            if not self._prose(line):
                self.out.front.append(line)
                return
            self.mode = "body"  # text before the first heading is the paper's, never dropped
        if self.mode == "references":
            if not (match_caption(line.text) and self._caption_at(i)) and not _FLOAT_LABEL.fullmatch(line.text.strip()):
                self._add_reference_line(line)
                return
            # an appendix float after the bibliography is no entry, nor a manuscript's "Table 1"
            # or "Appendix A" alone on its line (APA puts tables and appendices after it)
            self.mode = "body"
        if line.footnote:
            self._add_footnote_line(line)
            return
        caption = self._caption_at(i)
        if caption:
            self._flush()
            self.current = Paragraph(caption[0], [line], self.section, caption[1])
            self.captions_seen.add((line.page, caption[1]))
            return
        kind: ChunkKind = "equation" if self._is_equation(line) else "text"
        cur = self.current
        if cur is not None and cur.label == "algorithm" and self._same_display(cur.lines[-1], line):
            cur.lines.append(line)  # an algorithm's steps are one block, whatever they look like
            return
        if cur is not None and kind == cur.kind == "equation" and self._same_display(cur.lines[-1], line):
            cur.lines.append(line)
            return
        if cur is not None and cur.kind in ("table", "figure") and self._float_note(cur.lines[-1], line):
            cur.lines.append(line)  # the float's notes ("*LaTeX preserves line breaks ...")
            return
        if cur is not None and not self._breaks(i) and not (cur.kind in ("text", "equation") and cur.kind != kind):
            cur.lines.append(line)
            return
        self._flush()
        carried = self._carried(line) if kind == "text" else None
        if carried is not None:
            carried.lines.append(line)
            self.current, self.open_text = carried, None
        elif _ALGORITHM_RE.match(line.text):
            self.current = Paragraph("text", [line], self.section, "algorithm")
        else:
            self.current = Paragraph(kind, [line], self.section)

    def _prose(self, line: Line) -> bool:
        """A line of running text in the front matter: body size, not bold, most of its
        column wide (title, author and affiliation lines are short or larger or bold)."""
        width = line.seg_x1 - line.seg_x0
        return (
            abs(line.size - self.style.body_size) <= 0.6
            and line.bold < 0.5
            and line.x1 - line.x0 >= 0.7 * width
            and len(line.text.split()) >= 6
        )

    def _add_footnote_line(self, line: Line) -> None:
        """A footnote line opens a footnote (it has a mark) or continues the one being read;
        footnotes go straight to the body, leaving the paragraph they interrupt open."""
        note = self.note
        if line.mark is not None or note is None or note.lines[-1].page != line.page:
            note = self.note = Paragraph("text", [line], self.section, line.mark, footnote=True, emitted=True)
            self.out.body.append(note)
        else:
            note.lines.append(line)

    def _float_note(self, prev: Line, line: Line) -> bool:
        """Is this small-type line right under a caption a note of the float?"""
        return (
            (prev.page, prev.seg) == (line.page, line.seg)
            and line.size < self.style.body_size - 0.8
            and 0 <= line.top - prev.bottom < self.style.pitch * 1.5
        )

    def _same_display(self, prev: Line, line: Line) -> bool:
        """Does this equation line belong to the display above it (same column, close below)?"""
        return (
            (prev.page, prev.seg) == (line.page, line.seg)
            and line.top >= prev.top - 1  # a fraction's lines overlap
            and line.top - prev.bottom < self.style.pitch * _DISPLAY_GAP
        )

    def _carried(self, line: Line) -> Paragraph | None:
        """The paragraph this line carries on: the text paragraph last cut off mid-sentence,
        when the line is not indented (a new paragraph would be) and is set like it, and the
        cut was a column or page end or a float in between."""
        cand = self.open_text
        if cand is None or cand.section != self.section:
            return None
        last = cand.lines[-1]
        if abs(line.size - last.size) > 0.3 or line.bold > 0.5:
            return None
        elsewhere = (last.page, last.seg) != (line.page, line.seg)
        if ends_sentence(last.text):
            # A sentence ended with the column: the paragraph goes on only when its last line
            # is full (a paragraph's own last line is short) and the next column's first line
            # is neither indented nor a run-in heading ("Co-Views Our dataset ...").
            full = last.x1 >= last.seg_x1 - 0.04 * (last.seg_x1 - last.seg_x0)
            run_in = line.words[0].n_bold > 0
            if not (elsewhere and full and not run_in and line.x0 <= line.seg_x0 + 3):
                return None
        # A word broken at the end ("cor-" + "pus") carries on whatever the indent (a list
        # item's hanging one); otherwise a new paragraph would be indented.
        broken = last.text.endswith("-") and line.text[:1].islower()
        listing = re.search(r"(?:[,;]|\b(?:and|or))$", last.text) is not None  # "..., 2) b, and" + "3) c"
        item = _LIST_ITEM_RE.match(line.text) is not None
        if line.x0 > line.seg_x0 + 3 and not broken and not (listing and item):
            return None
        if _BULLET_RE.match(line.text) or (item and not listing):
            return None
        if not elsewhere and not self.float_since:
            return None
        return cand

    def _caption_at(self, i: int) -> tuple[ChunkKind, str] | None:
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

    def _previous(self, i: int) -> Line | None:
        """The line before line i in the running text (footnotes skipped)."""
        for k in range(i - 1, -1, -1):
            if not self.lines[k].footnote:
                return self.lines[k]
        return None

    def _breaks(self, i: int) -> bool:
        """Does line i start a new paragraph (rather than continue the one before it)?"""
        line = self.lines[i]
        prev = self._previous(i)
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
        short = prev.x1 < prev.seg_x1 - 0.1 * (prev.seg_x1 - prev.seg_x0)
        if _LIST_ITEM_RE.match(line.text) and re.search(r"[.:;]$", prev.text) and short:
            return True  # an item of a displayed list ("(2)" inside justified text is not one)
        indent = line.x0 - prev.x0
        nxt = next((ln for ln in self.lines[i + 1 : i + 4] if not ln.footnote), None)
        same_column = nxt is not None and (nxt.page, nxt.seg) == (line.page, line.seg)
        nxt_x0 = nxt.x0 if nxt is not None and same_column else None
        item = _BULLET_RE.match(prev.text) or _LIST_ITEM_RE.match(prev.text)
        if 4 < indent < 30 and (nxt_x0 is None or nxt_x0 < line.x0 - 3) and not item:
            return True  # first-line indent (a list item's hanging indent is not one)
        ended = re.search(r"[.!?:]\W*$", prev.text) is not None
        return ended and prev.x1 < prev.seg_x1 - 0.2 * (prev.seg_x1 - prev.seg_x0) and indent > -3

    def _is_equation(self, line: Line) -> bool:
        """Display maths: mostly math-font glyphs, or set off from the margin with some."""
        width = line.seg_x1 - line.seg_x0
        set_off = line.x0 > line.seg_x0 + 15 and line.x1 - line.x0 < width - 20
        numbered = re.search(r"\(\d{1,3}[a-z]?\)$", line.text) is not None
        justified = line.x1 - line.x0 > 0.95 * width and line.x0 < line.seg_x0 + 1.5
        if line.math >= 0.5 and not justified:
            return True  # a justified line with inline maths is still running text
        # a display's numerator or limits ("1", "n = 1") set in the text font: no word in it
        wordless = re.search(r"[^\W\d_]{2,}", line.text) is None and len(line.text) <= 12
        return set_off and (line.math >= 0.25 or (numbered and line.math > 0.05) or wordless)

    def _flush(self) -> None:
        cur, self.current = self.current, None
        if cur is None:
            return
        if cur.kind == "text" and cur.label != "algorithm":
            self.open_text, self.float_since = cur, False
        elif cur.kind == "equation":
            self.open_text = None
        else:
            self.float_since = True
        if cur.emitted:
            return
        cur.emitted = True
        if self.mode == "abstract":
            self.out.abstract.append(cur)
        else:
            self.out.body.append(cur)

    # references

    def _add_reference_line(self, line: Line) -> None:
        key = (line.page, line.seg)
        if key not in self.ref_margin:
            # the column's left edge: its lines, and those of segments of the same column (a
            # segment of indented continuation lines alone must not be its own margin)
            peers = [
                ln.x0
                for ln in self.lines
                if ln.page == line.page
                and (
                    ln.seg == line.seg
                    or (abs(ln.seg_x0 - line.seg_x0) < 40 and ln.seg_x0 < line.seg_x1 and line.seg_x0 < ln.seg_x1)
                )
            ]
            self.ref_margin[key] = min(peers)
        self.out.references.append((line.size, line.x0 - self.ref_margin[key], line.text))
        self.out.reference_pages.append(line.page)
