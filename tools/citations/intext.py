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
- Numeric ("[12]", "[3, 5-7]", "[3–5]"): only in a paper whose bibliography is numbered
  ("[12] A. Author ..."), the numbers being the entries' labels.

Not handled: superscript numbers (a PDF gives them as plain digits, indistinguishable from
footnote marks), "Author (Year)" where Author is not the first author, and bibliographies
whose entries do not start with the authors (the surname is then not found).
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
    rf"(?:(?P<etal>\s+et\s+al\.?)|\s+(?:and|&)\s+(?P<second>{_NAME}))?"
    rf"(?:['’]s)?"
    rf"(?:\s*,\s*|\s+|\s*\(\s*)"
    rf"(?P<years>{_YEARS})(?![\d])"
)
_ONE_YEAR = re.compile(rf"(?P<year>{_YEAR})(?P<suffixes>[a-z]?(?:,\s?[a-z](?![\w]))*)")
_NUMERIC = re.compile(r"\[(?P<body>\d{1,3}(?:\s*[-–,;]\s*\d{1,3})*)\]")
_LABEL = re.compile(r"^\s*\[(\d{1,3})\]")
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
    head = re.sub(r"^\s*\[\d{1,3}\]\s*", "", head).strip().rstrip(".,(")
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
                self.labels.setdefault(int(m.group(1)), b.key)
        # numbered: most entries carry a '[n]' label
        self.numbered = len(self.labels) >= max(1, len(self.entries) // 2)

    def find(self, text: str) -> list[Found]:
        """Every citation in `text` that names an entry, in text order."""
        found = self._author_year(text)
        if self.numbered:
            found += self._numeric(text)
        return sorted(found, key=lambda f: (f.start, f.key))

    # --- author-year

    def _author_year(self, text: str) -> list[Found]:
        out: list[Found] = []
        for m in _AUTHOR_YEAR.finditer(text):
            first, second, etal = m.group("first"), m.group("second"), m.group("etal")
            years_at = m.start("years")
            for y in _ONE_YEAR.finditer(m.group("years")):
                suffixes = re.findall(r"[a-z]", y.group("suffixes")) or [""]
                start = m.start() if y.start() == 0 else years_at + y.start()
                for suffix in suffixes:
                    key = self.match(first, second, etal is not None, int(y.group("year")), suffix)
                    if key:
                        out.append(Found(start, years_at + y.end(), key))
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

    def _numeric(self, text: str) -> list[Found]:
        out: list[Found] = []
        for m in _NUMERIC.finditer(text):
            numbers = _numbers(m.group("body"))
            keys = [self.labels.get(n) for n in numbers]
            if not numbers or any(k is None for k in keys):
                continue  # '[0, 1]', '[5, 10, 15]': not all of it names entries
            out.extend(Found(m.start(), m.end(), k) for k in dict.fromkeys(k for k in keys if k))
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
