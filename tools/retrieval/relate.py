"""Paper-anchored expansion: ranking B, and its fusion with ranking A. SEE: docs/design.md section 4.

For each seed, each neighbour source lists the seed's nearest papers over the whole corpus;
each source's lists are merged across seeds by round robin; the merged lists are fused by RRF
(k 60); the top `b_size` with the seeds first is ranking B. A and B are fused by RRF with k 10
(A at full length), and the top `reader_top` papers go to the reader.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tools.retrieval.fusion import round_robin, rrf, seeds_first
from tools.settings import RelateSettings

NeighbourSource = Callable[[Any, str, RelateSettings], list[str]]  # (index, seed, settings)


def embedding_neighbours(index: Any, seed: str, cfg: RelateSettings) -> list[str]:
    """Papers by cosine similarity of their paper embeddings (unit vectors: a dot product)."""
    emb = index.paper_embeddings
    sims = emb @ emb[index.paper_row[seed]]
    k = min(cfg.neighbours_per_seed + 1, len(sims))
    top = np.argpartition(-sims, k - 1)[:k]
    order = sorted((int(i) for i in top), key=lambda i: (-sims[i], index.paper_ids[i]))
    return [index.paper_ids[i] for i in order if index.paper_ids[i] != seed][: cfg.neighbours_per_seed]


def coupling_neighbours(index: Any, seed: str, cfg: RelateSettings) -> list[str]:
    """Bibliographic coupling: Jaccard of reference sets, at least `coupling_min_shared` shared."""
    hits = index.graph.coupling_neighbours(seed, k=cfg.neighbours_per_seed, min_shared=cfg.coupling_min_shared)
    return [pid for pid, _ in hits]


def bm25_neighbours(index: Any, seed: str, cfg: RelateSettings) -> list[str]:
    """Paper BM25 queried with the first `seed_text_chars` characters of the seed's indexed text."""
    query = index.tokenize(index.paper_text(seed)[: cfg.seed_text_chars])
    hits = index.paper_bm25.top_k(query, cfg.neighbours_per_seed + 1)
    return [index.paper_ids[i] for i, _ in hits if index.paper_ids[i] != seed][: cfg.neighbours_per_seed]


def cocitation_neighbours(index: Any, seed: str, cfg: RelateSettings) -> list[str]:
    """Papers cited together with the seed by the same papers (beyond the paper's method)."""
    return [pid for pid, _ in index.graph.cocitation_neighbours(seed, k=cfg.neighbours_per_seed)]


def direct_neighbours(index: Any, seed: str, cfg: RelateSettings) -> list[str]:
    """The seed's references, then the papers citing it (beyond the paper's method)."""
    neighbours: list[str] = index.graph.direct_neighbours(seed)
    return neighbours[: cfg.neighbours_per_seed]


SOURCES: dict[str, NeighbourSource] = {
    "embedding": embedding_neighbours,
    "coupling": coupling_neighbours,
    "bm25": bm25_neighbours,
    "cocitation": cocitation_neighbours,
    "direct": direct_neighbours,
}


def neighbour_lists(
    index: Any, seeds: Sequence[str], cfg: RelateSettings
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Per source, the seeds' neighbour lists merged by round robin on rank; and, per paper,
    the `source:seed` pairs that listed it (why a paper is in B)."""
    merged: dict[str, list[str]] = {}
    why: dict[str, list[str]] = {}
    for name in cfg.sources:
        source = SOURCES[name]
        per_seed = [source(index, s, cfg) for s in seeds]
        merged[name] = round_robin(per_seed)
        for seed, lst in zip(seeds, per_seed, strict=True):
            for pid in lst:
                why.setdefault(pid, []).append(f"{name}:{seed}")
    return merged, why


def ranking_b(index: Any, seeds: Sequence[str], cfg: RelateSettings) -> tuple[list[str], dict[str, list[str]]]:
    """Ranking B (seeds first) and the provenance of each of its papers."""
    seeds = [s for s in dict.fromkeys(seeds) if s in index.paper_row]
    if not seeds:
        return [], {}
    merged, why = neighbour_lists(index, seeds, cfg)
    lists = [lst for lst in merged.values() if lst]
    fused = rrf(lists, k=cfg.rrf_k) if lists else []
    b = seeds_first(seeds, fused, cfg.b_size)
    for s in seeds:
        why.setdefault(s, []).insert(0, "seed")
    return b, {pid: why.get(pid, []) for pid in b}


def select_seeds(a: Sequence[str], evidence_papers: Sequence[str] | None, cfg: RelateSettings) -> list[str]:
    """Relate's seeds: the top paper of ranking A plus the verifier's evidence papers; with no
    verifier (`evidence_papers` None, the LLM-free pipeline) the top `seeds_without_llm` of A."""
    if evidence_papers is None:
        return list(a[: cfg.seeds_without_llm])
    return list(dict.fromkeys([*a[:1], *evidence_papers]))


def fuse_a_b(a: Sequence[str], b: Sequence[str], cfg: RelateSettings, size: int | None = None) -> list[str]:
    """Equal-weight RRF, k 10, over A (whole length) and B; the top `size` papers (default
    `reader_top`, the papers handed to the reader).

    # k=10 confines the B bonus to the top ranks: a paper at rank r in both beats A's top
    # paper alone exactly when 2/(10+r) > 1/11.
    """
    return rrf([list(a), list(b)] if b else [list(a)], k=cfg.ab_rrf_k)[: size or cfg.reader_top]
