"""Resolve bibliography entries to corpus paper ids, so full-text papers join the citation graph.

A reference resolves when (in order of trust):
1. the source already linked it to an id that is in the corpus (S2ORC `links`);
2. its parsed title equals a corpus title after normalisation (letters and digits, lower case);
3. a corpus title of at least MIN_SCAN_WORDS words appears inside the entry's raw text
   (PDF bibliographies often get the title boundaries wrong).
A known year on both sides must agree within one year (preprint vs. proceedings). When two
corpus papers fit equally well, the entry stays unresolved rather than guessing.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from tools.base import BibEntry, Paper
from tools.retrieval.text import normalize_title

MIN_TITLE_CHARS = 12
MIN_SCAN_WORDS = 4
MAX_SCAN_WORDS = 40


class TitleResolver:
    def __init__(self, papers: Iterable[Paper]):
        self._by_title: dict[str, list[tuple[str, int | None]]] = defaultdict(list)
        self._ids: set[str] = set()
        self._lengths: set[int] = set()
        for p in papers:
            self._ids.add(p.paper_id)
            key = normalize_title(p.title)
            if len(key) >= MIN_TITLE_CHARS:
                self._by_title[key].append((p.paper_id, p.year))
                self._lengths.add(len(key.split()))

    def resolve(self, entry: BibEntry, citing_id: str | None = None) -> str | None:
        if entry.link and entry.link in self._ids and entry.link != citing_id:
            return entry.link
        key = normalize_title(entry.title)
        if len(key) >= MIN_TITLE_CHARS and key in self._by_title:
            hit = self._pick(self._by_title[key], entry.year, citing_id)
            if hit:
                return hit
        return self._scan(normalize_title(entry.raw), entry.year, citing_id) if entry.raw else None

    def _pick(self, cands: list[tuple[str, int | None]], year: int | None, citing_id: str | None) -> str | None:
        ok = [pid for pid, y in cands if pid != citing_id and (year is None or y is None or abs(y - year) <= 1)]
        return ok[0] if len(ok) == 1 else None

    def _scan(self, raw: str, year: int | None, citing_id: str | None) -> str | None:
        """Find the longest corpus title that occurs as a run of words inside the raw entry."""
        words = raw.split()
        lengths = sorted((n for n in self._lengths if MIN_SCAN_WORDS <= n <= MAX_SCAN_WORDS), reverse=True)
        for n in lengths:
            for start in range(len(words) - n + 1):
                cands = self._by_title.get(" ".join(words[start : start + n]))
                if cands:
                    hit = self._pick(cands, year, citing_id)
                    if hit:
                        return hit
        return None


def resolve_references(papers: list[Paper], corpus: Iterable[Paper] | None = None) -> tuple[list[Paper], int]:
    """Papers with bibliography-derived references added; returns them and the count resolved.

    `corpus` is every paper the references may point to (defaults to `papers`); references the
    source already gave as ids are kept when they name a corpus paper.
    """
    corpus = list(corpus) if corpus is not None else papers
    resolver = TitleResolver(corpus)
    out, resolved = [], 0
    for p in papers:
        refs = list(dict.fromkeys(p.references))
        seen = set(refs)
        for entry in p.bibliography:
            pid = resolver.resolve(entry, p.paper_id)
            if pid and pid not in seen:
                refs.append(pid)
                seen.add(pid)
                resolved += 1
        out.append(p.with_references(refs) if refs != list(p.references) else p)
    return out, resolved
