"""What a collection holds, as a chat's first page describes it: how many papers, how many with
their full text, the years its papers give, and three example questions drawn from its titles."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from agent.answer.titles import title_only
from agent.context import Context

_WORD = re.compile(r"[A-Za-z][A-Za-z-]+")


def _phrases(titles: list[str]) -> list[str]:
    """Two-word phrases of content words, most common first, each counted once per title; a
    phrase that is nearly always the start of a longer one ("world wide" of "world wide web") is
    given whole."""
    from tools.retrieval.text import STOPWORDS

    def content(w: str) -> bool:
        return w not in STOPWORDS and len(w) > 2

    counts: Counter[str] = Counter()
    nexts: dict[str, Counter[str]] = {}
    for title in titles:
        words = [w.lower() for w in _WORD.findall(title)]
        seen = set()
        for i in range(len(words) - 1):
            a, b = words[i], words[i + 1]
            if not (content(a) and content(b)) or f"{a} {b}" in seen:
                continue
            seen.add(f"{a} {b}")
            counts[f"{a} {b}"] += 1
            nexts.setdefault(f"{a} {b}", Counter())[words[i + 2] if i + 2 < len(words) else ""] += 1
    out = []
    for phrase, n in counts.most_common():
        if n < 2:
            break
        after = Counter({w: k for w, k in nexts[phrase].items() if w})  # where a title goes on
        word, k = after.most_common(1)[0] if after else ("", 0)
        longer = f"{phrase} {word}" if word and content(word) and k >= 0.8 * sum(after.values()) else phrase
        if longer not in out:
            out.append(longer)
    return out


def _short_name(title: str) -> str:
    """How a question names a paper: the part of its title before a colon when that is short
    ("SPECTER"), else its first six words."""
    head = title.split(":", 1)[0].strip()
    return head if ":" in title and len(head.split()) <= 4 else " ".join(title.split()[:6])


def collection_summary(ctx: Context) -> dict[str, Any]:
    """The run's collection: `papers`, `full_texts` (papers with more than a title and an
    abstract), `years` (the earliest and latest a paper gives, or None) with `dated` (how many
    give one), and `examples`: a "which papers" question and an overview on the two commonest
    title phrases, and a question about the most recent paper with its full text."""
    from agent.runtime.resources import index_for

    idx = index_for(ctx)
    papers = idx.papers
    full = [pid for pid in papers if any(c.kind != "title_abstract" for c in idx.paper_chunks(pid))]
    years = [p.year for p in papers.values() if p.year]
    titles = [title_only(p.title) for p in papers.values() if p.title]
    phrases = _phrases(titles)
    examples = []
    if phrases:
        examples.append(f"Which papers are about {phrases[0]}?")
    if len(phrases) > 1:
        examples.append(f"Give me an overview of the literature on {phrases[1]}.")
    if full:
        newest = max(full, key=lambda pid: (papers[pid].year or 0, pid))
        examples.append(f"What does {_short_name(title_only(papers[newest].title))} propose, and how is it evaluated?")
    return {
        "papers": len(papers),
        "full_texts": len(full),
        "years": (min(years), max(years)) if years else None,
        "dated": len(years),
        "examples": examples[:3],
    }
