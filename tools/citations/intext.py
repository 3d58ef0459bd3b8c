"""In-text citations in plain text ("(Lo et al., 2020)", "Lo et al. (2020)", "[3, 5-7]"), each
linked to the entry of the paper's own bibliography it names.

A PDF marks none of its citations, so they are found here from the text and the bibliography
together: a citation counts only when it names an entry of the paper's bibliography, which is
what keeps the patterns from firing on "Table 2, 2019" or "[0, 1]".

- Author-year (ACL, APA, Chicago styles): a surname group ("Lo", "Lo and Wang", "Lo et al.")
  followed by one or more years, parenthetical ("(Lo et al., 2020; Ammar et al., 2018)", each
  citation of the group found on its own) or narrative ("Lo et al. (2020, 2021)"); a year
  suffix ("2019a,b") picks among one author's entries of the year. An entry matches when its
  first author's name ends with the surname, its year is the year (and its suffix, when the
  raw entry has one), and a second surname ("Lo and Wang") is its second author's.
- Numeric ("[12]", "[3, 5-7]", "[3–5]"): only in a paper whose bibliography is numbered, the
  numbers being the entries' labels.

- In words ("Ref. 8", "Refs. 3 and 5"), in a numbered paper.
- Superscript numbers, which a PDF's text gives glued to the word or punctuation before them
  ("books1, 2, 5", "details.2, 3)"): only in a numbered paper whose labels are not bracketed and
  whose text holds no bracketed citation (`Linker.prepare`), and never after a word a number
  follows as its own ("Fig.1", "version2").

Entries are labelled "[12]", "12." or "12)". An author list of three or more names ("Brown,
Durbin, and Evans (1975)") is matched by its first and second names.

Not handled: "Author (Year)" where Author is not the first author, and bibliographies whose
entries do not start with the authors (the surname is then not found).
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from tools.base import BibEntry

# A surname: a capital, then letters, hyphens or apostrophes ("Demner-Fushman", "O'Connor",
# "Řehůřek"), after any particles ("van den Oord", "De Cao").
_PARTICLES = r"(?:(?:[Vv]an|[Vv]on|[Dd]er|[Dd]en|[Dd]e|[Dd]el|[Dd]ella|[Dd]a|[Dd]i|[Dd]u|[Ll]e|[Ll]a|[Dd]os)\s+)*"
_UPPER = "A-ZÀ-ÖØ-ÞĀ-Ž"
_NAME = rf"{_PARTICLES}[{_UPPER}][^\W\d_]*(?:['’\-][^\W\d_]+)*"
_YEAR = r"(?:19|20)\d\d"
# '2017', '2017a', '2017a,b', several of them: '2020, 2021'
_YEARS = rf"{_YEAR}[a-z]?(?:,\s?[a-z](?![\w]))*(?:\s*,\s*{_YEAR}[a-z]?(?:,\s?[a-z](?![\w]))*)*"
_AUTHOR_YEAR = re.compile(
    rf"(?<![\w-])(?P<first>{_NAME})"
    rf"(?:(?P<etal>\s+et\s+al\.?)"
    rf"|(?P<middle>(?:,\s+{_NAME}){{1,6}}),?\s+(?:and|&)\s+(?P<last>{_NAME})"  # 'Brown, Durbin, and Evans'
    rf"|\s+(?:and|&)\s+(?P<second>{_NAME}))?"
    rf"(?:['’]s)?"
    rf"(?:\s*,\s*|\s+|\s*\(\s*)"
    rf"(?P<years>{_YEARS})(?![\d])"
)
_ONE_YEAR = re.compile(rf"(?P<year>{_YEAR})(?P<suffixes>[a-z]?(?:,\s?[a-z](?![\w]))*)")
_NUMERIC = re.compile(r"\[(?P<body>\d{1,3}(?:\s*[-–,;]\s*\d{1,3})*)\]")
# 'Ref. 8', 'Refs. 3 and 5', 'Refs. 3-5': a numbered paper's citation in words
_REF_WORD = re.compile(r"\bRefs?\.\s*(?P<body>\d{1,3}(?:\s*(?:[-–,]|and)\s*\d{1,3})*)(?![\d.]\d)")
# a superscript number as a PDF's text gives it, glued to the word or the punctuation before it:
# 'books1, 2, 5', 'article6', 'convention,1', 'details.2, 3)'
_GLUED = re.compile(
    r"(?<![\w-])(?P<word>[^\W\d_]{2,}[a-z])(?P<punct>[.,;:]?)"
    r"(?P<body>\d{1,3}(?:(?:,\s?|[-–])\d{1,3})*)\)?(?=[\s.,;:]|$)"
)
# words a number follows as its own ('Fig.1', 'version2'), not as a citation
_NOT_CITING = frozenset(
    [
        "fig",
        "figs",
        "figure",
        "figures",
        "eq",
        "eqs",
        "equation",
        "equations",
        "tab",
        "table",
        "tables",
        "sec",
        "section",
        "sections",
        "chap",
        "chapter",
        "app",
        "appendix",
        "page",
        "pages",
        "pp",
        "vol",
        "no",
        "step",
        "steps",
        "version",
        "layer",
        "layers",
        "stage",
        "phase",
        "type",
        "case",
        "item",
        "round",
        "part",
        "parts",
        "model",
        "models",
        "level",
        "group",
    ]
)
# an entry's label: '[12]', '12.' or '12)' opening it
_LABEL = re.compile(
    r"^\s*(?:\[(\d{1,3})\]|(\d{1,3})[.)](?=\s)|(\d{1,3})(?=(?:[A-ZÀ-Þ]\.\s?)+[A-ZÀ-Þ]|[A-ZÀ-Þ][a-zà-ÿ]+,))"
)
# a year with a letter in a raw entry: 'Hamilton et al. 2017a.' -> '2017a'
_RAW_YEAR = re.compile(rf"(?<![\d])({_YEAR})([a-z])?(?![\w])")
# a numeric range longer than this is not a citation group ("[1-2000]")
MAX_RANGE = 30


@dataclass(frozen=True)
class Found:
    """One in-text citation of one bibliography entry: text[start:end] names entry `key`."""

    start: int
    end: int
    key: str


def fold(name: str) -> str:
    """A name compared across spellings: accents, case, hyphens and spaces folded ('Daumé III'
    and 'daume iii' are one)."""
    text = unicodedata.normalize("NFKD", name)
    text = "".join(c for c in text if not unicodedata.combining(c))
    return " ".join(re.sub(r"[-'’.]", " ", text).casefold().split())


_GENERATION = re.compile(r"(?:,?\s+(?:jr|sr|ii|iii|iv))+$")


def _ends_with(full: str, surname: str) -> bool:
    """Whether the author's `full` name ends with `surname` (a generation, 'III', 'Jr.', aside)."""
    full, surname = fold(full), fold(surname)
    bare = _GENERATION.sub("", full)
    return bool(surname) and any(f == surname or f.endswith(" " + surname) for f in (full, bare))


def _names_of(entry: BibEntry) -> tuple[str, ...]:
    if entry.authors:
        return entry.authors
    m = _RAW_YEAR.search(entry.raw)
    head = entry.raw[: m.start()] if m else ""
    head = re.sub(r"^\s*(?:\[\d{1,3}\]|\d{1,3}[.)]\s|\d{1,3}(?=[A-ZÀ-Þ]))\s*", "", head).strip().rstrip(".,(")
    return tuple(n.strip() for n in re.split(r",\s*(?:and\s+)?|\s+and\s+|\s*&\s*", head) if len(n.strip()) >= 2)


def _year_of(entry: BibEntry) -> tuple[int | None, str]:
    """The entry's year and its letter ('2019b' -> (2019, 'b')); the letter only when the raw
    entry shows one."""
    m = _RAW_YEAR.search(entry.raw)
    if m and (entry.year is None or int(m.group(1)) == entry.year):
        return int(m.group(1)), m.group(2) or ""
    return entry.year, ""


@dataclass(frozen=True)
class _Entry:
    key: str
    names: tuple[str, ...]
    year: int | None
    suffix: str


class Linker:
    """Finds in-text citations of one paper's bibliography in its text."""

    def __init__(self, bibliography: Sequence[BibEntry]):
        self.entries = [_Entry(e.key, _names_of(e), *_year_of(e)) for e in bibliography if e.key]
        self._by_year: dict[int, list[_Entry]] = defaultdict(list)
        for e in self.entries:
            if e.year is not None and e.names:
                self._by_year[e.year].append(e)
        self.labels: dict[int, str] = {}
        for b in bibliography:
            m = _LABEL.match(b.raw)
            if m and b.key:
                self.labels.setdefault(int(m.group(1) or m.group(2) or m.group(3)), b.key)
        # numbered: most entries carry a label; bracketed when the labels are '[n]'
        self.numbered = len(self.labels) >= max(1, len(self.entries) // 2)
        self.bracketed = sum(bool(re.match(r"^\s*\[", b.raw)) for b in bibliography) >= len(self.labels) // 2 > 0
        self.superscripts = False  # set by `prepare`: the paper cites by superscript numbers

    def prepare(self, texts: Sequence[str]) -> None:
        """Look at the whole paper once: a numbered paper whose labels are not bracketed cites by
        superscript numbers (SPIE, JPSJ), which a PDF's text gives glued to the word before them,
        when such numbers name its entries more often than bracketed ones do (a "[1]" in a code
        listing does not make a paper bracketed)."""
        if not self.numbered or self.bracketed:
            self.superscripts = False
            return
        brackets = sum(bool(self._keys(m.group("body"))) for t in texts for m in _NUMERIC.finditer(t))
        glued = sum(len(self._superscript(t)) for t in texts)
        self.superscripts = glued > brackets

    def find(self, text: str) -> list[Found]:
        """Every citation in `text` that names an entry, in text order."""
        found = self._author_year(text)
        if self.numbered:
            found += self._numeric(text)
            found += self._in_words(text)
        if self.superscripts:
            found += self._superscript(text)
        return sorted(found, key=lambda f: (f.start, f.key))

    # --- author-year

    def _author_year(self, text: str) -> list[Found]:
        out: list[Found] = []
        pos = 0
        while m := _AUTHOR_YEAR.search(text, pos):
            first, second, etal = m.group("first"), m.group("second"), m.group("etal")
            if m.group("middle"):  # a list of three or more names: the first, then the second named
                names = [n.strip() for n in m.group("middle").split(",") if n.strip()]
                second, etal = names[0], None
            years_at = m.start("years")
            found = []
            for y in _ONE_YEAR.finditer(m.group("years")):
                suffixes = re.findall(r"[a-z]", y.group("suffixes")) or [""]
                start = m.start() if y.start() == 0 else years_at + y.start()
                for suffix in suffixes:
                    key = self.match(first, second, etal is not None, int(y.group("year")), suffix)
                    if key:
                        found.append(Found(start, years_at + y.end(), key))
            if not found and m.group("middle"):
                # '(Long Short-Term Memory, Hochreiter and Schmidhuber, 1997)': the list began
                # with words that are not names; try again from its second name
                pos = m.start("middle") + 1
                continue
            out += found
            pos = m.end()
        return out

    def match(self, first: str, second: str | None, etal: bool, year: int, suffix: str = "") -> str | None:
        """The key of the one entry that `first` [and `second` | et al.] (`year``suffix`) names."""
        cands = [e for e in self._by_year.get(year, []) if _ends_with(e.names[0], first)]
        if second:
            cands = [e for e in cands if len(e.names) > 1 and _ends_with(e.names[1], second)]
        if suffix:
            lettered = [e for e in cands if e.suffix == suffix]
            cands = lettered or [e for e in cands if not e.suffix]
        if len(cands) > 1:  # prefer the entry whose author count fits the form
            fits = [e for e in cands if (len(e.names) >= 3) == etal and (second is None or len(e.names) == 2)]
            cands = fits or cands
        return cands[0].key if len(cands) == 1 else None

    # --- numeric

    def _keys(self, body: str) -> list[str]:
        """The entries a group of numbers names ('3, 5-7'), or [] when any of it names none."""
        numbers = _numbers(body.replace("and", ","))
        keys = [self.labels.get(n) for n in numbers]
        if not numbers or any(k is None for k in keys):
            return []  # '[0, 1]', '[5, 10, 15]': not all of it names entries
        return list(dict.fromkeys(k for k in keys if k))

    def _numeric(self, text: str) -> list[Found]:
        return [Found(m.start(), m.end(), k) for m in _NUMERIC.finditer(text) for k in self._keys(m.group("body"))]

    def _in_words(self, text: str) -> list[Found]:
        return [Found(m.start(), m.end(), k) for m in _REF_WORD.finditer(text) for k in self._keys(m.group("body"))]

    def _superscript(self, text: str) -> list[Found]:
        out: list[Found] = []
        for m in _GLUED.finditer(text):
            if m.group("word").lower() in _NOT_CITING:
                continue
            start = m.start("punct") if m.group("punct") else m.start("body")
            out.extend(Found(start, m.end(), k) for k in self._keys(m.group("body")))
        return out


def _numbers(body: str) -> list[int]:
    """'3, 5-7' -> [3, 5, 6, 7]; [] for a range that is not one ('7-5', '1-2000')."""
    out: list[int] = []
    for part in re.split(r"\s*[,;]\s*", body.strip()):
        lo, _, hi = (
            (p.strip() for p in re.split(r"([-–])", part, maxsplit=1)) if re.search(r"[-–]", part) else (part, "", "")
        )
        if hi:
            a, b = int(lo), int(hi)
            if not 0 < b - a <= MAX_RANGE:
                return []
            out.extend(range(a, b + 1))
        elif lo:
            out.append(int(lo))
    return out
