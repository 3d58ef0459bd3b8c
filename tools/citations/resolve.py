"""What each bibliography entry points to: a paper of the corpus where the title resolver finds
one (tools/ingest/resolve.py, the resolver that puts citation edges in the graph), else a
reference record shared by every entry of the corpus that names the same work.

Two entries are one work when their titles are equal after normalisation (letters and digits,
lower case: "GROBID: combining ..." and "Grobid: Combining ..." are one); an entry whose title is
too short to tell works apart is keyed by its whole raw text instead. The record keeps what the
first entry met gives (title, authors, year, venue, raw text).
"""

from __future__ import annotations

from collections.abc import Iterable

from tools.base import Paper
from tools.citations.model import Reference, Target, reference_id, work_key
from tools.ingest.resolve import TitleResolver


def citation_targets(
    papers: Iterable[Paper], corpus: Iterable[Paper] | None = None
) -> tuple[list[Target], list[Reference]]:
    """The target of every keyed bibliography entry of `papers`, and the reference records they
    share; `corpus` is every paper an entry may resolve to (defaults to `papers`)."""
    papers = list(papers)
    resolver = TitleResolver(papers if corpus is None else corpus)
    targets: list[Target] = []
    references: dict[str, Reference] = {}
    for paper in papers:
        seen: set[str] = set()
        for entry in paper.bibliography:
            if not entry.key or entry.key in seen:
                continue
            seen.add(entry.key)
            pid = resolver.resolve(entry, paper.paper_id)
            if pid is not None:
                targets.append(Target(paper.paper_id, entry.key, pid, "paper"))
                continue
            key = work_key(entry)
            if not key:
                continue  # an entry with neither title nor text names no work
            rid = reference_id(key)
            if rid not in references:
                references[rid] = Reference(
                    ref_id=rid,
                    title=entry.title,
                    authors=entry.authors,
                    year=entry.year,
                    venue=entry.venue,
                    raw=entry.raw,
                )
            targets.append(Target(paper.paper_id, entry.key, rid, "reference"))
    return targets, list(references.values())
