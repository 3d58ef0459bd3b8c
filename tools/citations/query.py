"""Who cites a work, and what a paper cites: the two questions asked of the citation contexts, as
JSON-ready records (`litloop cites` / `litloop refs`, the registry's `Corpus.cites` /
`Corpus.refs`, the MCP tools `cites` / `refs`).

A work is named by a paper id of the index, by a reference record's id ('ref:…'), or by words
of its title ("GROBID"): words find every cited work (a reference record or a cited paper of the
index) whose title holds all of them. Over several corpora (`tools.index.multi.MultiIndex`) every
id is namespaced `corpus:id`, as everywhere else; words are looked up in every corpus.

Citations the graph knows but no text gives (a JSONL corpus's `references`, CiteSeer's) are listed
too, without contexts, so `cites` answers on every corpus.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from tools.base import namespaced, split_namespaced
from tools.citations.model import Context, is_reference_id
from tools.retrieval.text import normalize_title

NO_CONTEXTS = (
    "this index was built before litloop recorded citation contexts, so no citing sentences are "
    "shown; rebuild it to get them (`litloop index build PATH... --index {root} --rebuild`, or "
    "`litloop corpora build NAME --rebuild` for a registered corpus)"
)


# paper-BM25 hits checked for a title holding every word asked for
TITLE_MATCHES = 20


class UnknownWork(ValueError):
    """Nothing in the index is named by what was asked for (the message says what to try)."""


def _parts(idx) -> Iterator[tuple[str | None, Any]]:
    """(corpus name or None, index) of a plain index or of each corpus of a MultiIndex."""
    parts = getattr(idx, "parts", None)
    if parts:
        yield from parts.items()
    else:
        yield None, idx


def _ns(name: str | None, value: str | None) -> str | None:
    return namespaced(name, value) if name and value else value


def _where(idx) -> str:
    return f"index {idx.root}" if getattr(idx, "root", None) is not None else f"corpora {', '.join(idx.names)}"


def context_record(c: Context, name: str | None = None) -> dict[str, Any]:
    d = c.to_dict()
    d["paper_id"], d["chunk_id"] = _ns(name, c.paper_id), _ns(name, c.chunk_id)
    return d


def _notes(idx) -> list[str]:
    out = []
    for name, part in _parts(idx):
        if not part.citations.available:
            what = f"corpus {name}: " if name else ""
            out.append(what + NO_CONTEXTS.format(root=part.root))
    return out


# ----------------------------------------------------------------------------- cites


def cites_record(idx, what: str) -> dict[str, Any]:
    """Who cites `what` (a paper id, a reference id, or title words): each cited work that fits,
    and for each the citing papers with their contexts (sentence, page, section, intent)."""
    what = what.strip()
    if not what:
        raise UnknownWork("name the cited work: a paper id, a reference id (ref:...), or words of its title")
    works = [w for name, part in _parts(idx) for w in _works_in(name, part, what)]
    if not works:
        raise UnknownWork(
            f"nothing in {_where(idx)} is a paper or a cited work named {what!r}; give a paper id "
            '(`litloop search "..."` finds them), a reference id from `litloop refs PAPER`, or '
            "words of the cited work's title"
        )
    return {"query": what, "works": works, "notes": _notes(idx)}


def _works_in(name: str | None, part, what: str) -> list[dict[str, Any]]:
    local = what
    if name:
        try:
            corpus, local = split_namespaced(what)
        except ValueError:
            corpus = None
        if corpus is not None and corpus != name:
            return []
        if corpus is None and (what in part.papers or is_reference_id(what)):
            return []  # over several corpora a paper is named corpus:id
    if local in part.papers:
        return [_work(name, part, local, "paper")]
    if is_reference_id(local):
        return [_work(name, part, local, "reference")] if part.citations.reference(local) else []
    words = normalize_title(what).split()
    if not words:
        return []
    refs = [r.ref_id for r in part.citations.references_with(words)]
    return [_work(name, part, p, "paper") for p in _cited_papers_titled(part, what, words)] + [
        _work(name, part, r, "reference") for r in refs
    ]


def _cited_papers_titled(part, what: str, words: list[str]) -> list[str]:
    """Papers of the index whose title holds every one of `words` and that some paper cites: those
    full-text bibliographies point to, and the best paper-BM25 matches the citation graph says are
    cited (a JSONL corpus's references). When no cited paper fits, the papers that fit, so that
    the answer says nobody here cites them rather than that they are not there."""
    wanted = set(words)
    found = [p for p in part.citations.cited_papers() if wanted <= set(normalize_title(part.papers[p].title).split())]
    uncited: list[str] = []
    for pid, _ in part.bm25_papers(what, TITLE_MATCHES):
        if pid not in found and wanted <= set(normalize_title(part.papers[pid].title).split()):
            (found if pid in part.graph and part.graph.citations(pid) else uncited).append(pid)
    return found or uncited


def _work(name: str | None, part, target: str, kind: str) -> dict[str, Any]:
    """One cited work: what it is, and each paper citing it with that paper's contexts of it."""
    store = part.citations
    citing: list[dict[str, Any]] = []
    seen: set[str] = set()
    for t in store.citing(target):
        contexts = store.contexts(t.paper_id, t.key)
        citing.append(_citing(name, part, t.paper_id, t.key, contexts))
        seen.add(t.paper_id)
    if kind == "paper" and target in part.graph:
        for pid in sorted(part.graph.citations(target) - seen):  # known to the graph, no text
            citing.append(_citing(name, part, pid, None, []))
    return {"target": _ns(name, target), "kind": kind, **_describe(part, target, kind), "citing": citing}


def _citing(name: str | None, part, pid: str, key: str | None, contexts: list[Context]) -> dict[str, Any]:
    paper = part.papers.get(pid)
    return {
        "paper_id": _ns(name, pid),
        "title": paper.title if paper else "",
        "year": paper.year if paper else None,
        "key": key,
        "number": entry_number(paper.bibliography, key) if paper and key else None,
        "contexts": [context_record(c, name) for c in contexts],
    }


def entry_number(bibliography, key: str) -> int | None:
    """The number of entry `key` in its paper's reference list: its printed label ('[12]'), else
    its position from 1."""
    for n, entry in enumerate(bibliography, start=1):
        if entry.key == key:
            m = re.match(r"\s*\[(\d{1,4})\]", entry.raw)
            return int(m.group(1)) if m else n
    return None


def _describe(part, target: str, kind: str) -> dict[str, Any]:
    if kind == "paper":
        p = part.papers[target]
        return {"title": p.title, "authors": list(p.authors), "year": p.year, "venue": p.venue or ""}
    r = part.citations.reference(target)
    if r is None:
        return {"title": "", "authors": [], "year": None, "venue": ""}
    return {"title": r.title or r.raw, "authors": list(r.authors), "year": r.year, "venue": r.venue}


# ----------------------------------------------------------------------------- refs


def refs_record(idx, paper_id: str) -> dict[str, Any]:
    """What `paper_id` cites: each entry of its bibliography (resolved to a paper of the index, or
    a reference record) with the contexts that cite it, in bibliography order; for a paper whose
    source gave references without text, its references in the graph."""
    name, part, local = _part_of(idx, paper_id)
    paper = part.papers.get(local) if local is not None else None
    if paper is None:
        raise UnknownWork(f"no paper {paper_id!r} in {_where(idx)}")
    store = part.citations
    targets = {t.key: t for t in store.targets_of(local)}
    contexts: dict[str, list[Context]] = {}
    for c in store.contexts(local):
        contexts.setdefault(c.key, []).append(c)
    refs: list[dict[str, Any]] = []
    listed: set[str] = set()
    for entry in paper.bibliography:
        t = targets.get(entry.key) if entry.key else None
        if t is not None and t.kind == "paper":
            listed.add(t.target)
        refs.append(
            {
                "key": entry.key or None,
                "title": entry.title,
                "authors": list(entry.authors),
                "year": entry.year,
                "venue": entry.venue,
                "raw": entry.raw,
                "target": _ns(name, t.target) if t else None,
                "kind": t.kind if t else None,
                "contexts": [context_record(c, name) for c in contexts.get(entry.key, [])],
            }
        )
    for pid in sorted(set(paper.references) - listed):  # references given as ids, no bibliography text
        cited = part.papers.get(pid)
        refs.append(
            {
                "key": None,
                "title": cited.title if cited else "",
                "authors": list(cited.authors) if cited else [],
                "year": cited.year if cited else None,
                "venue": (cited.venue or "") if cited else "",
                "raw": "",
                "target": _ns(name, pid),
                "kind": "paper",
                "contexts": [],
            }
        )
    return {
        "paper_id": paper_id,
        "title": paper.title,
        "references": refs,
        "contexts": sum(len(r["contexts"]) for r in refs),
        "notes": _notes_for(name, part),
    }


def _part_of(idx, paper_id: str) -> tuple[str | None, Any, str | None]:
    parts = dict(_parts(idx))
    if None in parts:
        return None, parts[None], paper_id
    try:
        corpus, local = split_namespaced(paper_id)
    except ValueError:
        return None, next(iter(parts.values())), None
    if corpus not in parts:
        return None, next(iter(parts.values())), None
    return corpus, parts[corpus], local


def _notes_for(name: str | None, part) -> list[str]:
    if part.citations.available:
        return []
    return [(f"corpus {name}: " if name else "") + NO_CONTEXTS.format(root=part.root)]
