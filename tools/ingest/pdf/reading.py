"""Reading a PDF with pdfplumber: words with their font size, bold and math shares and baseline,
the page's graphics, and the document-wide typography (body size and line pitch).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import statistics
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tools.base import IngestError
from tools.ingest.pdf.fonts import FontFacts, font_facts
from tools.ingest.pdf.model import Line, PageData, Style, Word
from tools.ingest.pdf.text import CID_RE, SPACING_ACCENTS, compose

log = logging.getLogger(__name__)


# Layout constants, in points unless said otherwise (A4/Letter, 9-11 pt body text).
_WORD_GAP_RATIO = 0.15  # chars closer than 0.15 em belong to one word (TeX often has no spaces)


@contextlib.contextmanager
def open_pdf(path: Path) -> Iterator[Any]:
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


def read_pdf(path: Path, pdf: Any) -> tuple[dict[str, Any], list[PageData]]:
    """Document info and the words and graphics of every page, as plain data."""
    try:
        info = {k: _decode_meta(v) for k, v in (pdf.metadata or {}).items()}
        raw_pages = list(pdf.pages)
    except Exception as exc:  # encryption and broken trees surface here, not at open
        raise IngestError(str(path), _open_error_message(exc)) from exc
    fonts = font_facts(pdf)
    pages = []
    for number, page in enumerate(raw_pages, start=1):
        try:
            pages.append(_read_page(page, number, fonts))
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


def _fast_objects(page: Any) -> dict[str, list[dict[str, Any]]]:
    """pdfplumber's `page.objects`, with each character made directly from pdfminer's LTChar.

    pdfplumber turns every layout object into a dict by resolving all of its attributes,
    colours and colour spaces included; for characters that is most of the time a page
    takes (about half of all parsing on the demo PDFs). Characters here carry only what
    word grouping and the font checks read, with pdfplumber's own coordinate arithmetic
    (top/bottom from the page height and MediaBox); every other object goes through
    pdfplumber unchanged.
    """
    from pdfminer.layout import LTChar, LTContainer

    height, number = float(page.height), page.page_number
    mb_x0, mb_top = float(page.mediabox[0]), float(page.mediabox[1])
    doctop0 = float(page.initial_doctop)
    objects: dict[str, list[dict[str, Any]]] = {}
    chars: list[dict[str, Any]] = []
    stack = list(reversed(page.layout._objs))
    while stack:
        obj = stack.pop()
        if isinstance(obj, LTChar):
            top = height - obj.y1 + mb_top
            chars.append(
                {
                    "object_type": "char",
                    "page_number": number,
                    "text": obj.get_text(),
                    "fontname": obj.fontname,
                    "size": obj.size,
                    "adv": obj.adv,
                    "upright": obj.upright,
                    "matrix": tuple(obj.matrix),
                    "x0": obj.x0 + mb_x0,
                    "x1": obj.x1 + mb_x0,
                    "y0": obj.y0,
                    "y1": obj.y1,
                    "width": obj.width,
                    "height": obj.height,
                    "top": top,
                    "bottom": height - obj.y0 + mb_top,
                    "doctop": doctop0 + top,
                }
            )
        elif isinstance(obj, LTContainer):
            stack.extend(reversed(obj._objs))  # a figure's own objects, in order
        else:
            found = page.process_object(obj)
            if found["object_type"] != "anno":
                objects.setdefault(found["object_type"], []).append(found)
    if chars:
        objects["char"] = chars
    return objects


def _read_page(page: Any, number: int, fonts: FontFacts) -> PageData:
    """Words (with font facts) and graphic boxes of one page, detached from pdfplumber."""
    height = float(page.height)
    if page.pdf.laparams is None and not hasattr(page, "_objects"):
        page._objects = _fast_objects(page)
    # Unmapped glyphs (big delimiters of display maths, "(cid:16)") would glue words of the
    # text line they overlap; drop them before words are built.
    page = page.filter(lambda o: o.get("object_type") != "char" or not o["text"].startswith("(cid:"))
    raw = page.extract_words(
        x_tolerance_ratio=_WORD_GAP_RATIO,
        y_tolerance=3,
        keep_blank_chars=False,
        use_text_flow=False,
        return_chars=True,
    )
    words = [w for w in (_make_word(r, height, fonts) for r in raw if r.get("upright", True)) if w]
    graphics = []
    for obj in [*page.images, *page.rects, *page.lines, *page.curves]:
        graphics.append((float(obj["x0"]), float(obj["top"]), float(obj["x1"]), float(obj["bottom"])))
    return PageData(number, float(page.width), float(page.height), words, graphics)


def _make_word(raw: dict[str, Any], height: float, fonts: FontFacts) -> Word | None:
    """A Word from pdfplumber's word with its characters; None for an empty one."""
    chars = _without_note_mark([c for c in raw["chars"] if not c["text"].isspace()], height, fonts)
    text = _word_text(chars)
    if not chars or not text:
        return None
    sizes = Counter(round(float(c["size"]), 1) for c in chars)
    tail = _raised_tail(chars, height, fonts)
    return Word(
        text=text,
        x0=float(raw["x0"]),
        x1=max(float(c["x1"]) for c in chars),
        top=float(raw["top"]),
        bottom=float(raw["bottom"]),
        size=sizes.most_common(1)[0][0],
        n_chars=len(chars),
        n_bold=sum(fonts.kind(c.get("fontname", ""))[0] for c in chars),
        n_math=sum(fonts.char_is_math(c["text"], c.get("fontname", "")) for c in chars),
        base=statistics.median(height - float(c["matrix"][5]) for c in chars),
        tail=tail if text.endswith(tail) else "",
    )


def _without_note_mark(chars: list[dict[str, Any]], height: float, fonts: FontFacts) -> list[dict[str, Any]]:
    """The word without a footnote mark glued after its punctuation ("embeddings.15",
    "paper:5"): one or two digits set smaller and raised, not in a math font. The footnote
    itself is read at the foot of the column; in the sentence the mark is noise (and it hid
    the sentence's end). Exponents follow digits or letters, not punctuation, and stay."""
    n = len(chars)
    k = n
    while k > 0 and n - k < 2 and chars[k - 1]["text"].isdigit():
        k -= 1
    if k == n or k == 0 or chars[k - 1]["text"] not in ".,;:)!?":
        return chars
    main = max(float(c["size"]) for c in chars[:k])
    base = statistics.median(height - float(c["matrix"][5]) for c in chars[:k])
    if all(_raised_small(c, main, base, height, fonts) for c in chars[k:]):
        return chars[:k]
    return chars


def _raised_small(c: dict[str, Any], main: float, base: float, height: float, fonts: FontFacts) -> bool:
    """A character set smaller than the word's `main` size and above its baseline `base`, not in
    a math font: how a footnote mark (or an exponent in text type) is set."""
    return (
        float(c["size"]) < 0.8 * main
        and height - float(c["matrix"][5]) < base - 0.2 * main
        and not fonts.kind(c.get("fontname", ""))[1]
    )


def _raised_tail(chars: list[dict[str, Any]], height: float, fonts: FontFacts) -> str:
    """The one or two digits at the word's end set smaller and raised, not in a math font, after
    other characters ("v0.5.5" + "10"): an exponent or a footnote mark, told apart later by the
    page's footnotes (`notes.strip_note_marks`). Empty when there are none."""
    main = max(float(c["size"]) for c in chars)
    full = [height - float(c["matrix"][5]) for c in chars if float(c["size"]) == main]
    base = statistics.median(full)

    n = k = len(chars)
    while (
        k > 1
        and n - k < 2
        and chars[k - 1]["text"].isdigit()
        and _raised_small(chars[k - 1], main, base, height, fonts)
    ):
        k -= 1
    return "".join(c["text"] for c in chars[k:])


def _word_text(chars: list[dict[str, Any]]) -> str:
    """The word's text with TeX's separate accent glyphs put on the letter under them.

    The accent is centred over its letter, so the neighbour with the nearest centre wins:
    'a' + '¨' -> 'ä' (accent after), '´' + 'ı' -> 'í' (accent before, wider than the i).
    """
    texts = [c["text"] for c in chars]
    centre = [(float(c["x0"]) + float(c["x1"])) / 2 for c in chars]
    for i, t in enumerate(texts):
        if t not in SPACING_ACCENTS:
            continue
        options = [j for j in (i - 1, i + 1) if 0 <= j < len(texts) and texts[j][:1].isalpha()]
        if options:
            j = min(options, key=lambda j: abs(centre[j] - centre[i]))
            texts[j], texts[i] = compose(texts[j], t), ""
    return CID_RE.sub("", "".join(texts)).strip()


def document_style(pages: list[PageData], lines_per_page: list[list[Line]]) -> Style:
    """Body font size (most characters) and its line pitch, the yardsticks of the layout."""
    sizes: Counter[float] = Counter()
    for page in pages:
        for w in page.words:
            sizes[w.size] += w.n_chars
    body = sizes.most_common(1)[0][0]
    pitches = []
    for lines in lines_per_page[:6]:
        for a, b in itertools.pairwise(lines):
            if a.seg == b.seg and abs(a.size - body) < 0.3 and abs(b.size - body) < 0.3:
                d = b.top - a.top
                if 0.9 * body < d < 2.0 * body:
                    pitches.append(d)
    pitch = statistics.median(pitches) if pitches else body * 1.25
    return Style(body_size=body, pitch=pitch)
