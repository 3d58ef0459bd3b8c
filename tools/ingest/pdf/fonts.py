"""What a glyph is, from the document's own fonts: bold from the font's stem width (its
descriptor's StemV against the document's other fonts), maths from what the glyph is (a
mathematical symbol, a Greek letter) or from a font that holds only mathematics (math italic,
symbols, extensions).

Font families are no evidence of maths: Computer Modern and Latin Modern text fonts (`cmr10`,
`lmroman10`), the default of every LaTeX paper, set prose; their math italic (`cmmi10`) and
symbol fonts (`cmsy10`) set the letters and operators of formulas.
"""

from __future__ import annotations

import logging
import re
import statistics
import unicodedata
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

# Names that say bold; fonts named otherwise are bold when their stems are much wider.
_BOLD_NAME_RE = re.compile(r"bold|medi|semibold|black|heavy|demi|cmbx|cmb\d|cmssbx|lmroman\d*-bold|bx\d", re.IGNORECASE)
# Fonts that hold only mathematics: Computer/Latin Modern math italic, symbols and extensions,
# the AMS fonts, and the math fonts of the Times (tx, newtx), Palatino (px), Libertine,
# MathTime, STIX and Euler families.
_MATH_FONT_RE = re.compile(
    r"cmmi|cmsy|cmex|cmbsy|cmmib|msbm|msam|rsfs|eufm|euler|eurm|eusm|rtxmi|rtxsy|mt2mi|mt2sy"
    r"|txmi|txsy|txex|pxmi|pxsy|pxex|ntxmi|ntxsy|ntxex|zxmi|stixmath|stix-math|lmmath|math(?:mi|sy|ex|it)"
    r"|libertinemath|xitsmath|cambriamath|\bsymbol\b|^symbol|mathematicalpi|mtmi|mtsy|mtex|esint|wasy",
    re.IGNORECASE,
)
# A font whose stems are this much wider than the document's typical text font is bold.
_BOLD_STEM_RATIO = 1.35
_FORCE_BOLD = 1 << 18  # the font descriptor's ForceBold flag (bit 19)
_PAGES_SCANNED = 60  # fonts are declared per page; later pages rarely bring new ones


def _base_name(name: str) -> str:
    """The font name without its subset prefix ('ABCDEF+CMR10' -> 'CMR10')."""
    return name.split("+", 1)[1] if "+" in name[:8] else name


@dataclass
class FontFacts:
    """Bold and math facts of the fonts of one document, by pdfminer font name."""

    bold_names: set[str] = field(default_factory=set)
    math_names: set[str] = field(default_factory=set)
    _cache: dict[str, tuple[bool, bool]] = field(default_factory=dict)

    def kind(self, fontname: str) -> tuple[bool, bool]:
        """(bold, math font) for a font name."""
        hit = self._cache.get(fontname)
        if hit is None:
            base = _base_name(fontname)
            bold = fontname in self.bold_names or bool(_BOLD_NAME_RE.search(base))
            math = fontname in self.math_names or bool(_MATH_FONT_RE.search(base))
            hit = self._cache[fontname] = (bold and not math, math)
        return hit

    def char_is_math(self, text: str, fontname: str) -> bool:
        """A glyph of a formula: set in a math font, or a mathematical symbol or Greek letter
        in any font (an '=' or '+' set in the text font is still an operator)."""
        return self.kind(fontname)[1] or is_math_glyph(text)


def is_math_glyph(text: str) -> bool:
    if len(text) != 1:
        return False
    if text in "=+<>^|~":
        return True
    cat = unicodedata.category(text)
    if cat == "Sm":
        return True
    return "\u0391" <= text <= "\u03c9" or "\U0001d400" <= text <= "\U0001d7ff"


def font_facts(pdf: Any) -> FontFacts:
    """The bold fonts of the document: named bold, flagged ForceBold or with a FontWeight of
    600 or more, or with stems `_BOLD_STEM_RATIO` times those of its typical text font (the
    median StemV of the text fonts), which is how Linux Libertine's 'LinLibertineTB' or a
    Type 3 font shows its weight."""
    from pdfminer.pdftypes import resolve1

    stems: dict[str, float] = {}
    facts = FontFacts()
    try:
        pages = pdf.pages[:_PAGES_SCANNED]
    except Exception:  # a broken page tree is reported by the page reader
        return facts
    for page in pages:
        try:
            fonts = resolve1(page.page_obj.resources.get("Font")) or {}
            for ref in fonts.values():
                font = resolve1(ref)
                name = _decode(font.get("BaseFont"))
                if not name or name in stems:
                    continue
                desc = resolve1(font.get("FontDescriptor")) or {}
                stem = float(resolve1(desc.get("StemV")) or 0)
                weight = float(resolve1(desc.get("FontWeight")) or 0)
                flags = int(resolve1(desc.get("Flags")) or 0)
                stems[name] = stem
                if weight >= 600 or flags & _FORCE_BOLD:
                    facts.bold_names.add(name)
        except Exception as exc:  # font facts are a refinement; names still decide
            log.debug("fonts of page %s unreadable: %s", getattr(page, "page_number", "?"), exc)
    text_stems = [s for n, s in stems.items() if s > 0 and not _MATH_FONT_RE.search(_base_name(n))]
    if text_stems:
        typical = statistics.median(text_stems)
        regular = [s for n, s in stems.items() if s > 0 and not _BOLD_NAME_RE.search(_base_name(n))]
        typical = statistics.median(regular) if regular else typical
        for name, stem in stems.items():
            if stem >= _BOLD_STEM_RATIO * typical and not _MATH_FONT_RE.search(_base_name(name)):
                facts.bold_names.add(name)
    return facts


def _decode(value: Any) -> str:
    name = getattr(value, "name", value)
    if isinstance(name, bytes):
        name = name.decode("latin-1")
    return str(name or "")
