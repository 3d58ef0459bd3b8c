"""The corpus citation graph: who cites whom, and the paper-to-paper neighbours it implies.

SEE: docs/design.md section 2 (a NetworkX DiGraph, edge citing -> cited, persisted without pickle) and
section 4 (Relate: bibliographic coupling as a neighbour source; co-citation and direct links as
sources worth measuring).

The graph is immutable from the outside: `add_papers` returns a new graph, so an index being
served is never changed under a reader while an incremental build runs.

References to ids that are not (yet) papers of the graph are kept aside as *unresolved*; they
are what `dropped_references` counts, and they become edges when the cited paper is added later.
That keeps `g.add_papers(new)` equal to `CitationGraph.from_papers(old + new)`, whatever the order
in which papers arrive.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

import networkx as nx

logger = logging.getLogger(__name__)


class Paper(Protocol):
    """What the graph reads of a paper record (`tools.base.Paper` is one): the graph package
    depends on no other package of litloop."""

    # read-only: a frozen record (tools.base.Paper is a frozen dataclass) is one
    @property
    def paper_id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def year(self) -> int | None: ...
    @property
    def venue(self) -> str | None: ...
    @property
    def references(self) -> Sequence[str]: ...


# Version of the JSON written by `save`; `load` refuses any other, so an old index is rebuilt
# rather than misread.
FORMAT_VERSION = 1
FORMAT_KIND = "litloop-citation-graph"

# The node attributes the Relate step and the verifier listing need (docs/design.md section 4).
NODE_ATTRS: tuple[str, ...] = ("title", "year", "venue")

# SEE: docs/design.md section 2 -- coupling counts only when two papers share at least 2 references.
COUPLING_MIN_SHARED = 2
# One shared citer already says two papers are read together; a higher floor is for ablations.
COCITATION_MIN_SHARED = 1

Scored = list[tuple[str, float]]


class CitationGraph:
    """A directed citation graph over corpus papers (edge citing -> cited)."""

    def __init__(
        self,
        graph: nx.DiGraph | None = None,
        unresolved: Mapping[str, Iterable[str]] | None = None,
    ) -> None:
        self._g: nx.DiGraph = graph if graph is not None else nx.DiGraph()
        # citing paper id -> ids it references that are not papers of the graph
        self._unresolved: dict[str, frozenset[str]] = {
            pid: frozenset(refs) for pid, refs in (unresolved or {}).items() if refs
        }

    # ------------------------------------------------------------------ building

    @classmethod
    def from_papers(cls, papers: Iterable[Paper]) -> CitationGraph:
        """One node per paper, one edge per reference to a paper of the same set."""
        return cls().add_papers(papers)

    def add_papers(self, papers: Iterable[Paper]) -> CitationGraph:
        """A new graph with `papers` added; this one is left unchanged.

        A paper whose id is already in the graph replaces the old record (attributes and
        references); papers citing it keep their edges. Within `papers` the last record of an id
        wins, as it would when re-ingesting a corrected file.
        """
        batch = _dedupe(papers)
        out = CitationGraph(self._g.copy(), self._unresolved)
        for paper in batch:
            out._put_node(paper)
        for paper in batch:
            out._link_references(paper)
        out._resolve_pending({p.paper_id for p in batch})
        logger.debug(
            "citation graph: +%d papers -> %d papers, %d edges, %d unresolved references",
            len(batch),
            out.num_papers,
            out.num_edges,
            out.dropped_references,
        )
        return out

    def _put_node(self, paper: Paper) -> None:
        pid = paper.paper_id
        if pid in self._g:
            # A replaced record brings its own reference list: drop the old one first.
            self._g.remove_edges_from(list(self._g.out_edges(pid)))
            self._unresolved.pop(pid, None)
        self._g.add_node(pid, title=paper.title, year=paper.year, venue=paper.venue)

    def _link_references(self, paper: Paper) -> None:
        pid = paper.paper_id
        missing: set[str] = set()
        for ref in paper.references:
            if ref == pid:
                continue  # a self-citation says nothing about related work
            if ref in self._g:
                self._g.add_edge(pid, ref)
            else:
                missing.add(ref)
        if missing:
            self._unresolved[pid] = frozenset(missing)

    def _resolve_pending(self, new_ids: set[str]) -> None:
        """Turn earlier papers' unresolved references to the papers just added into edges."""
        for citing, missing in list(self._unresolved.items()):
            found = missing & new_ids
            if not found:
                continue
            self._g.add_edges_from((citing, cited) for cited in found)
            rest = missing - found
            if rest:
                self._unresolved[citing] = rest
            else:
                del self._unresolved[citing]

    # ------------------------------------------------------------------ basic queries

    @property
    def graph(self) -> nx.DiGraph:
        """The underlying DiGraph, read-only by convention (copy it before changing it)."""
        return self._g

    @property
    def num_papers(self) -> int:
        return self._g.number_of_nodes()

    @property
    def num_edges(self) -> int:
        return self._g.number_of_edges()

    @property
    def dropped_references(self) -> int:
        """Distinct (citing paper, unknown id) references that are not edges (yet)."""
        return sum(len(refs) for refs in self._unresolved.values())

    def unresolved(self, pid: str) -> frozenset[str]:
        """The ids `pid` references that are not papers of the graph."""
        return self._unresolved.get(pid, frozenset())

    def __contains__(self, pid: object) -> bool:
        return pid in self._g

    def __len__(self) -> int:
        return self.num_papers

    def paper_ids(self) -> list[str]:
        return sorted(self._g.nodes)

    def attributes(self, pid: str) -> dict[str, Any]:
        """title, year, venue of a paper."""
        self._require(pid)
        return dict(self._g.nodes[pid])

    def references(self, pid: str) -> set[str]:
        """Papers of the graph that `pid` cites (out-neighbours)."""
        self._require(pid)
        return set(self._g.successors(pid))

    def citations(self, pid: str) -> set[str]:
        """Papers of the graph that cite `pid` (in-neighbours)."""
        self._require(pid)
        return set(self._g.predecessors(pid))

    def _require(self, pid: str) -> None:
        if pid not in self._g:
            raise KeyError(f"paper {pid!r} is not in the citation graph")

    # ------------------------------------------------------------------ neighbour sources

    def coupling(self, a: str, b: str, min_shared: int = COUPLING_MIN_SHARED) -> float:
        """Bibliographic coupling: Jaccard of the two reference sets.

        min_shared: SEE: docs/design.md section 4 -- 0.0 when fewer references are shared.
        """
        _check_min_shared(min_shared)
        refs_a, refs_b = self.references(a), self.references(b)
        shared = len(refs_a & refs_b)
        if shared < min_shared:
            return 0.0
        return _jaccard(shared, len(refs_a), len(refs_b))

    def coupling_neighbours(self, pid: str, k: int | None = None, min_shared: int = COUPLING_MIN_SHARED) -> Scored:
        """Papers coupled with `pid` (score > 0), best first, ties by paper id.

        Only papers citing one of the seed's references can share one, so the candidates come
        from the citers of its references, never from all pairs.
        k: SEE: docs/design.md section 4 -- None keeps every neighbour (Relate keeps the top 100
        after fusion).
        min_shared: SEE: docs/design.md section 4 -- at least 2 shared references (paper).
        """
        _check_min_shared(min_shared)
        if k is not None and k < 0:
            raise ValueError(f"k must be >= 0 or None, got {k}")
        self._require(pid)
        m = self._matrices
        i = m.row[pid]
        refs = m.refs.indices[m.refs.indptr[i] : m.refs.indptr[i + 1]]
        if not len(refs):
            return []
        import numpy as np

        # the citers of each reference, one run per reference: how often a paper occurs is how
        # many references it shares with the seed
        starts, stops = m.citers.indptr[refs], m.citers.indptr[refs + 1]
        runs = np.concatenate([m.citers.indices[a:b] for a, b in zip(starts.tolist(), stops.tolist(), strict=True)])
        other, shared = np.unique(runs, return_counts=True)
        keep = (shared >= min_shared) & (other != i)
        other, shared = other[keep], shared[keep]
        # the division of two ints, as `_jaccard` does in Python: the same float
        scores = shared.astype(np.float64) / (len(refs) + m.out_degree[other] - shared).astype(np.float64)
        ids = m.ids[other]
        order = np.lexsort((ids, -scores))[:k]  # score descending, then paper id, as `_top`
        return [(str(ids[j]), float(scores[j])) for j in order]

    @cached_property
    def _matrices(self) -> _Matrices:
        """The graph as sparse matrices (built once per graph, which never changes): what
        coupling counts read instead of walking NetworkX's adjacency dicts."""
        return _Matrices.of(self._g)

    def cocitation_neighbours(self, pid: str, k: int | None = None, min_shared: int = COCITATION_MIN_SHARED) -> Scored:
        """Papers cited together with `pid`, scored by the Jaccard of the two citer sets.

        k: SEE: docs/design.md section 4 -- None keeps every neighbour.
        min_shared: SEE: docs/design.md section 4 -- co-citation is a measured extra source; 1 shared
        citer by default.
        """
        return self._shared_neighbours(pid, self.citations(pid), self._g.successors, self._g.in_degree, k, min_shared)

    def _shared_neighbours(
        self, pid: str, hubs: set[str], around: Any, degree: Any, k: int | None, min_shared: int
    ) -> Scored:
        """Papers sharing at least `min_shared` of `pid`'s hubs (its references for coupling,
        its citers for co-citation), by the Jaccard of the two hub sets."""
        _check_min_shared(min_shared)
        shared = _count_around(pid, hubs, around)
        scores = {other: _jaccard(n, len(hubs), degree(other)) for other, n in shared.items() if n >= min_shared}
        return _top(scores, k)

    def direct_neighbours(self, pid: str) -> list[str]:
        """The seed's references, then the papers citing it (each sorted by id, no repeats).

        SEE: docs/design.md section 4 -- direct links as a further neighbour source.
        """
        refs = sorted(self.references(pid))
        seen = set(refs)
        return refs + sorted(c for c in self.citations(pid) if c not in seen)

    def coupling_edge_count(self, min_shared: int = COUPLING_MIN_SHARED) -> int:
        """Unordered paper pairs with coupling > 0 (what `index info` reports).

        The pair counter over the citer lists of each cited paper, written as the sparse product
        R @ R.T of the citing x cited matrix (entry = shared references), a block of citing rows
        at a time so memory stays bounded. A Python Counter over the same lists took 118 s on
        50,000 papers with 1M edges; this takes 12 s.
        min_shared: SEE: docs/design.md section 2 -- at least 2 shared references (paper).
        """
        _check_min_shared(min_shared)
        m = self._matrices
        return _count_coupled_pairs(m.refs, m.citers, min_shared)

    def coupling_edge_count_grown(
        self,
        before: int,
        added: Iterable[str],
        old_references: Mapping[str, Iterable[str]],
        min_shared: int = COUPLING_MIN_SHARED,
    ) -> int:
        """`coupling_edge_count` of this graph, from `before`, the count of the graph it grew from
        (by `add_papers`, or `from_papers` over the same papers and more): `added` the ids that
        are new, `old_references` the earlier reference lists of the earlier papers whose
        references changed (bibliography entries that resolve now).

        Only pairs with a paper whose references changed can change: the new papers, the
        changed ones and the earlier papers that now cite a new paper. Their pairs are counted
        in this graph and in the earlier one (this graph less those edges), and the difference
        added to `before`: work in proportion to those papers' neighbourhoods, not to the graph.
        """
        import numpy as np

        _check_min_shared(min_shared)
        m = self._matrices
        n = len(m.ids)
        is_new = np.zeros(n, dtype=bool)
        is_new[[m.row[p] for p in added if p in m.row]] = True
        refs = m.refs.tocoo()
        gone = is_new[refs.row] | is_new[refs.col]  # edges of the earlier graph: none from or to a new paper
        changed = np.zeros(n, dtype=bool)
        for pid, was in old_references.items():
            i = m.row[pid]
            changed[i] = True
            keep = np.array(sorted({m.row[r] for r in was if r in m.row and r != pid}), dtype=np.int64)
            a, b = m.refs.indptr[i], m.refs.indptr[i + 1]  # row i's edges, in CSR (and so COO) order
            gone[a:b] |= ~np.isin(refs.col[a:b], keep)
        touched = is_new | changed
        touched[refs.row[gone]] = True  # e.g. an earlier paper whose reference id is a new paper
        before_refs = _csr(refs.row[~gone], refs.col[~gone], n)
        rows = np.flatnonzero(touched)
        now = _count_coupled_pairs(m.refs, m.citers, min_shared, rows)
        then = _count_coupled_pairs(before_refs, before_refs.T.tocsr(), min_shared, rows[~is_new[rows]])
        return before + now - then

    # ------------------------------------------------------------------ persistence

    def to_json_dict(self) -> dict[str, Any]:
        """The compact, pickle-free form `save` writes, sorted so equal graphs give equal files."""
        nodes = [{"id": pid, **self.attributes(pid)} for pid in self.paper_ids()]
        return {
            "format": FORMAT_VERSION,
            "kind": FORMAT_KIND,
            "nodes": nodes,
            "edges": sorted([u, v] for u, v in self._g.edges),
            "unresolved": {pid: sorted(refs) for pid, refs in sorted(self._unresolved.items())},
        }

    @classmethod
    def from_json_dict(cls, data: Any, source: str = "<data>") -> CitationGraph:
        """Inverse of `to_json_dict`; ValueError naming `source` for anything else."""
        _check_header(data, source)
        g = nx.DiGraph()
        for node in _list_field(data, "nodes", source):
            if not isinstance(node, dict) or not isinstance(node.get("id"), str):
                raise ValueError(f"{source}: citation graph node without a string id: {node!r}")
            g.add_node(node["id"], **{a: node.get(a) for a in NODE_ATTRS})
        for edge in _list_field(data, "edges", source):
            if not (isinstance(edge, list) and len(edge) == 2 and edge[0] in g and edge[1] in g):
                raise ValueError(f"{source}: citation graph edge not between two nodes: {edge!r}")
            g.add_edge(edge[0], edge[1])
        unresolved = data.get("unresolved", {})
        if not isinstance(unresolved, dict):
            raise ValueError(f"{source}: 'unresolved' must be an object of id lists")
        return cls(g, unresolved)

    def save(self, path: Path) -> None:
        """Write JSON to `path` atomically (a reader never sees half a file)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(self.to_json_dict(), fh, ensure_ascii=False, separators=(",", ":"))
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        logger.info("saved citation graph (%d papers, %d edges) to %s", self.num_papers, self.num_edges, path)

    @classmethod
    def load(cls, path: Path) -> CitationGraph:
        """Read a graph written by `save`; ValueError naming the file when it is not one."""
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"{path}: not a litloop citation graph (invalid JSON: {exc})") from exc
        graph = cls.from_json_dict(data, source=str(path))
        logger.debug("loaded citation graph (%d papers, %d edges) from %s", graph.num_papers, graph.num_edges, path)
        return graph

    # ------------------------------------------------------------------ comparison

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CitationGraph):
            return NotImplemented
        return (
            dict(self._g.nodes(data=True)) == dict(other._g.nodes(data=True))
            and set(self._g.edges) == set(other._g.edges)
            and self._unresolved == other._unresolved
        )

    __hash__ = None  # type: ignore[assignment]  # mutable-looking container: no hashing

    def __repr__(self) -> str:
        return (
            f"CitationGraph(papers={self.num_papers}, edges={self.num_edges}, "
            f"dropped_references={self.dropped_references})"
        )


# ---------------------------------------------------------------------- pure helpers


def _dedupe(papers: Iterable[Paper]) -> list[Paper]:
    """Last record per id wins, in first-seen order."""
    by_id: dict[str, Paper] = {}
    for paper in papers:
        if paper.paper_id in by_id:
            logger.warning("paper %s given twice; keeping the last record", paper.paper_id)
        by_id[paper.paper_id] = paper
    return list(by_id.values())


def _count_around(seed: str, hubs: Iterable[str], around: Any) -> Counter[str]:
    """How many of `hubs` each other paper touches through `around` (the seed excluded).

    Coupling: hubs = the seed's references, around = predecessors (their citers).
    Co-citation: hubs = the seed's citers, around = successors (what they cite).
    """
    counts: Counter[str] = Counter()
    for hub in hubs:
        counts.update(around(hub))
    counts.pop(seed, None)
    return counts


# Upper bound on the entries of one block of the pair-count product (about 12 bytes each).
_PAIR_BLOCK_ENTRIES = 8_000_000


class _Matrices:
    """A graph's citing x cited matrix `refs` (CSR, row i = node i's references) and its
    transpose `citers` (CSR, row j = the citers of node j), node ids by row, and out-degrees."""

    def __init__(self, ids: Any, refs: Any, citers: Any):
        self.ids = ids
        self.row = {pid: i for i, pid in enumerate(ids.tolist())}
        self.refs = refs
        self.citers = citers
        self.out_degree = refs.indptr[1:] - refs.indptr[:-1]

    @classmethod
    def of(cls, g: nx.DiGraph) -> _Matrices:
        import numpy as np  # numpy and scipy stay off the import path of the graph module

        nodes = list(g.nodes)
        index = {pid: i for i, pid in enumerate(nodes)}
        n = len(nodes)
        pairs = np.array([(index[u], index[v]) for u, v in g.edges], dtype=np.int64).reshape(-1, 2)
        refs = _csr(pairs[:, 0], pairs[:, 1], n)
        citers = refs.T.tocsr()
        citers.sort_indices()
        return cls(np.array(nodes, dtype=str) if nodes else np.zeros(0, dtype=str), refs, citers)


def _csr(citing: Any, cited: Any, n: int) -> Any:
    """The n x n citing x cited matrix of these edges (CSR, sorted indices)."""
    import numpy as np
    from scipy import sparse

    refs = sparse.csr_matrix((np.ones(len(citing), dtype=np.int32), (citing, cited)), shape=(n, n))
    refs.sort_indices()
    return refs


def _count_coupled_pairs(refs: Any, citers_of: Any, min_shared: int, rows: Any = None) -> int:
    """Pairs a < b of citing papers sharing >= min_shared cited papers, from the citing x cited
    matrix and its transpose; with `rows` (sorted node rows), only the pairs with a paper of
    `rows` (a pair of two counted once)."""
    import numpy as np

    if refs.nnz == 0 or (rows is not None and not len(rows)):
        return 0
    if rows is None:
        rows = np.arange(refs.shape[0])
    in_rows = np.zeros(refs.shape[0], dtype=bool)
    in_rows[rows] = True
    # Row a of the product has at most sum over its references of their citer counts entries.
    row_work = refs[rows] @ np.diff(citers_of.indptr)
    total = 0
    for start, stop in _blocks(row_work, _PAIR_BLOCK_ENTRIES):
        block = rows[start:stop]
        shared = (refs[block] @ citers_of).tocoo()
        a, b = block[shared.row], shared.col
        # a pair with both papers in `rows` is counted from its lower row only
        keep = (shared.data >= min_shared) & (a != b) & (~in_rows[b] | (b > a))
        total += int(np.count_nonzero(keep))
    return total


def _blocks(work: Any, budget: int) -> list[tuple[int, int]]:
    """Consecutive row ranges whose summed work stays near `budget` (one row may exceed it)."""
    bounds, start, acc = [], 0, 0
    for row, w in enumerate(work.tolist()):
        if acc and acc + w > budget:
            bounds.append((start, row))
            start, acc = row, 0
        acc += w
    bounds.append((start, len(work)))
    return bounds


def _jaccard(shared: int, size_a: int, size_b: int) -> float:
    return shared / (size_a + size_b - shared)


def _top(scores: Mapping[str, float], k: int | None) -> Scored:
    """Score descending, then paper id ascending, so equal scores have a stable order."""
    if k is not None and k < 0:
        raise ValueError(f"k must be >= 0 or None, got {k}")
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    return ranked if k is None else ranked[:k]


def _check_min_shared(min_shared: int) -> None:
    # With 0, two papers sharing nothing would count as neighbours (score 0 over an empty union).
    if min_shared < 1:
        raise ValueError(f"min_shared must be >= 1, got {min_shared}")


def _check_header(data: Any, source: str) -> None:
    if not isinstance(data, dict) or data.get("kind") != FORMAT_KIND:
        raise ValueError(f"{source}: not a litloop citation graph (no kind {FORMAT_KIND!r})")
    if data.get("format") != FORMAT_VERSION:
        raise ValueError(
            f"{source}: citation graph format {data.get('format')!r} is not supported "
            f"(expected {FORMAT_VERSION}); rebuild the index"
        )


def _list_field(data: dict[str, Any], name: str, source: str) -> list[Any]:
    value = data.get(name)
    if not isinstance(value, list):
        raise ValueError(f"{source}: citation graph field {name!r} must be a list")
    return value
