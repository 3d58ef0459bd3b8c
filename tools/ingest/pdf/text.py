"""Pure text helpers of the PDF reader: Unicode and TeX accent repair, line-end hyphenation, and
the shapes of headings and captions.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

# "3 Method", "4.2 Results", "A Appendix", "A.1 Details", "II. RELATED WORK".
# 'Appendix A: Proofs', 'APPENDIX B. DATA', 'Appendix 1'
APPENDIX_RE = re.compile(r"^(?P<num>(?:Appendix|APPENDIX)\s+(?:[A-Z]|\d{1,2}))(?:[.:]\s*|\s+|$)(?P<title>.*)$")
HEADING_RE = re.compile(r"^(?P<num>(?:\d{1,2}|[A-Z])(?:\.\d{1,2}){0,3}\.?|[IVX]{1,5}\.)\s+(?P<title>[A-Za-z].*)$")


# Unnumbered headings accepted at body size; others must be larger than the body text.
KNOWN_HEADINGS = frozenset(
    [
        "abstract",
        "introduction",
        "references",
        "bibliography",
        "acknowledgments",
        "acknowledgements",
        "acknowledgment",
        "acknowledgement",
        "conclusion",
        "conclusions",
        "limitations",
        "appendix",
        "appendices",
        "discussion",
        "background",
        "methods",
        "results",
        "evaluation",
        "experiments",
    ]
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


CID_RE = re.compile(r"\(cid:\d+\)")


# Spacing accents that TeX PDFs emit as their own glyph next to the letter ("Fa¨rber").
SPACING_ACCENTS = {
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


def normalize_text(text: str) -> str:
    """Fix TeX spacing accents, drop unmapped glyphs, NFKC (ligatures 'ﬁ' -> 'fi')."""
    text = CID_RE.sub("", text)
    text = _ACCENT_RE.sub(_attach_accent, text)
    return unicodedata.normalize("NFKC", text)


def _attach_accent(m: re.Match[str]) -> str:
    """Put a stray accent on the letter it belongs to: the vowel side, or a dotless i."""
    before, accent, after = m.groups()
    if after and (after in "ıȷ" or not before):
        return before + compose(after, accent)
    if before and accent in "˘ˇ¸":  # breve, caron, cedilla mostly sit on consonants
        return compose(before, accent) + after
    if before and after and before not in _VOWELS and after in _VOWELS:
        return before + compose(after, accent)
    if before:
        return compose(before, accent) + after
    return accent


def compose(letter: str, accent: str) -> str:
    base = {"ı": "i", "ȷ": "j"}.get(letter, letter)
    return unicodedata.normalize("NFC", base + SPACING_ACCENTS[accent])


def dehyphenate(text: str, vocabulary: frozenset[str] | set[str] = frozenset()) -> str:
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
    a = APPENDIX_RE.match(text)
    if a and len(a.group("title").split()) <= 12 and not a.group("title").endswith("."):
        return a.group("num"), a.group("title") or a.group("num")
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


def match_caption(text: str) -> tuple[Literal["table", "figure"], str] | None:
    """('table', 'Table 2') when a line starts a caption such as 'Table 2: Results ...'."""
    m = CAPTION_RE.match(text.strip())
    if not m:
        return None
    label = m.group("label").lower()
    kind: Literal["table", "figure"] = "table" if label.startswith("tab") else "figure"
    return kind, f"{kind.capitalize()} {m.group('num').upper()}"
