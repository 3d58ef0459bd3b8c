"""The answer to an overview question ("Give me an overview of ...", "What is known about ..."):
the papers that qualify, as a "which papers" answer finds them, grouped into themes with no model
call, each theme named by its key terms and each paper quoted with the sentences that show it
qualifies.

Themes: the bundled embedder's vectors of each paper's title with its quoted sentences, joined
by average-linkage clustering on their cosine into at most `overview_themes` groups (about one
for every `PAPERS_PER_THEME` papers; a group is only joined while its papers are at least
`JOIN_SIMILARITY` alike, so unrelated papers are not forced together). A theme is named by the
terms its papers say more than the other qualifying papers do (a class-based TF-IDF over words
and two-word phrases, the question's own words left out, since every paper shares them). A theme
of one paper is fine; no paper is added to fill one.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from tools.retrieval.text import STOPWORDS, normalize

if TYPE_CHECKING:
    from tools.handle import IndexHandle

PAPERS_PER_THEME = 3
JOIN_SIMILARITY = 0.3
NAME_TERMS = 3
_WORD = re.compile(r"[a-z][a-z0-9-]+")
# words that name no theme: what papers say of themselves
_GENERIC = frozenset(
    str.split(
        "paper papers propose proposed present presents presented approach approaches method methods "
        "results result show shows shown use uses used using based new also two one well work study "
        "describe describes described system systems technique techniques problem problems data set "
        "sets different many several provide provides first however since thus use"
    )
)


def theme_count(n: int, most: int) -> int:
    """How many themes `n` papers may form: about one for every PAPERS_PER_THEME, at most `most`."""
    return max(1, min(most, round(n / PAPERS_PER_THEME)))


def cluster(vectors: Any, k: int, join: float = JOIN_SIMILARITY) -> list[list[int]]:
    """Average-linkage clustering of unit vectors down to `k` groups, joining only groups whose
    mean cosine is at least `join`: the groups as lists of row numbers, each in row order,
    ordered by their first row."""
    import numpy as np

    v = np.asarray(vectors, dtype=float)
    if len(v) == 0:
        return []
    v = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
    sim = v @ v.T
    groups = [[i] for i in range(len(v))]
    while len(groups) > k:
        best, pair = -2.0, None
        for a in range(len(groups)):
            for b in range(a + 1, len(groups)):
                s = float(sim[np.ix_(groups[a], groups[b])].mean())
                if s > best:
                    best, pair = s, (a, b)
        if pair is None or best < join:
            break
        a, b = pair
        groups[a] = sorted(groups[a] + groups[b])
        del groups[b]
    return sorted(groups, key=lambda g: g[0])


def _terms(text: str, drop: frozenset[str]) -> list[str]:
    """Content words and the two-word phrases of adjacent content words (a stopword, a generic
    or a question word breaks a phrase)."""
    words = [
        w if w not in STOPWORDS and w not in _GENERIC and w not in drop else "" for w in _WORD.findall(normalize(text))
    ]
    return [w for w in words if w] + [f"{a} {b}" for a, b in pairwise(words) if a and b]


def theme_names(
    texts: Sequence[str],
    groups: Sequence[Sequence[int]],
    question: str,
    terms: int = NAME_TERMS,
    titles: Sequence[str] | None = None,
) -> list[list[str]]:
    """Each group's key terms: words and two-word phrases frequent in its papers' texts and rare
    in the other groups' (class TF-IDF), a phrase preferred to its words, the question's words
    left out; a term must occur in at least two of the group's papers when the group has more
    than one. With `titles` (each paper's), a term must also stand in a title of the group: titles
    name what a paper is about in noun phrases ("information extraction", "hidden markov"), where
    the sentences' words may be any ("become crucial"); a group none of whose title terms qualify
    is named from its texts alone."""
    drop = frozenset(_WORD.findall(normalize(question)))
    per_paper = [Counter(_terms(t, drop)) for t in texts]
    in_groups: list[Counter[str]] = [Counter() for _ in groups]
    papers_with: list[Counter[str]] = [Counter() for _ in groups]
    for g, rows in enumerate(groups):
        for i in rows:
            in_groups[g].update(per_paper[i])
            papers_with[g].update(set(per_paper[i]))
    groups_with = Counter(t for c in in_groups for t in c)
    mean_len = sum(sum(c.values()) for c in in_groups) / max(1, len(in_groups))
    names: list[list[str]] = []
    for g, rows in enumerate(groups):
        total = sum(in_groups[g].values()) or 1
        need = 2 if len(rows) > 1 else 1
        scored = {
            t: (n / total) * math.log(1 + mean_len / groups_with[t]) * (1.5 if " " in t else 1.0)
            for t, n in in_groups[g].items()
            if papers_with[g][t] >= need
        }
        if titles is not None:
            in_titles = {t for i in rows for t in _terms(titles[i], drop)}
            scored = {t: v for t, v in scored.items() if t in in_titles} or scored
        chosen: list[str] = []
        for t in sorted(scored, key=lambda t: (-scored[t], t)):
            if any(set(t.split()) & set(c.split()) for c in chosen):
                continue
            chosen.append(t)
            if len(chosen) == terms:
                break
        names.append(chosen)
    return names


def theme_heading(n: int, theme: dict[str, Any]) -> str:
    """The line that opens theme `n` (from 1) of an overview answer: "Theme 1: name (3 papers)"."""
    k = len(theme["papers"])
    return f"Theme {n}: {theme['name']} ({k} paper{'s' if k != 1 else ''})"


def themes(
    idx: IndexHandle,
    question: str,
    papers: Sequence[str],
    texts: Sequence[str],
    most: int,
    titles: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """The themes of `papers` (in their order) from `texts` (each paper's title and quoted
    sentences), named from the terms of their `titles` where given (`theme_names`):
    [{"name", "terms", "papers"}], the themes in the order of their best paper."""
    if not papers:
        return []
    k = theme_count(len(papers), most)
    if k == 1:
        groups = [list(range(len(papers)))]
    else:
        groups = cluster(idx.embedder.encode(list(texts)), k)
    names = theme_names(texts, groups, question, titles=titles)
    out = []
    for rows, terms in zip(groups, names, strict=True):
        out.append(
            {
                "name": ", ".join(terms) if terms else "other papers",
                "terms": terms,
                "papers": [papers[i] for i in rows],
            }
        )
    return out


_TABLE = re.compile(r"\b(?:table|tabulate|tabular|as\s+rows|in\s+columns)\b", re.IGNORECASE)


def asks_for_table(question: str) -> bool:
    """True for an overview question that asks for a table ("... as a table", "tabulate ...")."""
    return bool(_TABLE.search(question or ""))
