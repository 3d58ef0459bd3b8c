"""CitationGraph: hand-worked coupling, co-citation and direct-link examples, persistence, and the
real CiteSeer graph. SEE: docs/design.md sections 2 and 4."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import pytest

from graph_store import citation_graph
from graph_store.citation_graph import CitationGraph
from tests.conftest import CITESEER
from tools.base import Paper

pytestmark = pytest.mark.unit


def paper(pid: str, *refs: str, **attrs: object) -> Paper:
    return Paper(paper_id=pid, title=f"Title {pid}", references=tuple(refs), **attrs)


def leaves(*pids: str) -> list[Paper]:
    return [paper(p) for p in pids]


@pytest.fixture
def abc() -> CitationGraph:
    """A cites {x,y,z}, B cites {x,y,w}, C cites {x,q}."""
    return CitationGraph.from_papers(
        [paper("A", "x", "y", "z"), paper("B", "x", "y", "w"), paper("C", "x", "q")] + leaves("x", "y", "z", "w", "q")
    )


def random_papers(n: int, seed: int) -> list[Paper]:
    rng = random.Random(seed)
    ids = [f"p{i:03d}" for i in range(n)]
    return [paper(pid, *rng.sample(ids, rng.randint(0, 6))) for pid in ids]


# ---------------------------------------------------------------------- building


def test_counts_and_neighbour_sets(abc: CitationGraph) -> None:
    assert abc.num_papers == 8
    assert abc.num_edges == 8
    assert abc.references("A") == {"x", "y", "z"}
    assert abc.citations("x") == {"A", "B", "C"}
    assert abc.citations("A") == set()
    assert abc.dropped_references == 0


def test_node_attributes() -> None:
    g = CitationGraph.from_papers([paper("A", venue="ACL", year=2020)])
    assert g.attributes("A") == {"title": "Title A", "year": 2020, "venue": "ACL"}


def test_unknown_references_dropped_and_counted_self_citation_ignored() -> None:
    g = CitationGraph.from_papers([paper("A", "x", "nope", "nope", "A", "gone"), paper("x")])
    assert g.references("A") == {"x"}
    assert not g.graph.has_edge("A", "A")
    assert g.dropped_references == 2  # "nope" (twice in the list, one reference) and "gone"
    assert g.unresolved("A") == {"nope", "gone"}


def test_unknown_paper_is_a_key_error(abc: CitationGraph) -> None:
    with pytest.raises(KeyError, match="nope"):
        abc.references("nope")
    with pytest.raises(KeyError):
        abc.coupling_neighbours("nope")


def test_add_papers_returns_new_graph_and_keeps_old(abc: CitationGraph) -> None:
    before = abc.to_json_dict()
    bigger = abc.add_papers([paper("D", "A", "x")])
    assert abc.to_json_dict() == before
    assert "D" not in abc
    assert bigger.references("D") == {"A", "x"}
    assert bigger.citations("A") == {"D"}
    assert bigger.num_edges == abc.num_edges + 2


def test_add_papers_resolves_earlier_references_to_new_papers() -> None:
    g = CitationGraph.from_papers([paper("A", "x", "later")] + leaves("x"))
    assert g.dropped_references == 1
    g2 = g.add_papers(leaves("later"))
    assert g2.references("A") == {"x", "later"}
    assert g2.dropped_references == 0


def test_add_papers_equals_from_papers_on_union() -> None:
    papers = random_papers(60, seed=7)
    whole = CitationGraph.from_papers(papers)
    for cut in (0, 1, 17, 30, 59, 60):
        assert CitationGraph.from_papers(papers[:cut]).add_papers(papers[cut:]) == whole
    shuffled = papers[:]
    random.Random(1).shuffle(shuffled)
    assert CitationGraph.from_papers(shuffled[:25]).add_papers(shuffled[25:]) == whole


def test_readded_paper_replaces_its_record() -> None:
    g = CitationGraph.from_papers([paper("A", "x"), paper("B", "A")] + leaves("x", "y"))
    g2 = g.add_papers([paper("A", "y")])
    assert g2.references("A") == {"y"}
    assert g2.citations("A") == {"B"}  # citers keep their edges


# ---------------------------------------------------------------------- bibliographic coupling


def test_coupling_hand_worked(abc: CitationGraph) -> None:
    assert abc.coupling("A", "B") == pytest.approx(2 / 4)  # shared {x,y}, union {x,y,z,w}
    assert abc.coupling("A", "C") == 0.0  # shares only x: below the 2-reference floor
    assert abc.coupling("A", "C", min_shared=1) == pytest.approx(1 / 4)  # union {x,y,z,q}
    assert abc.coupling("A", "x") == 0.0


def test_coupling_is_symmetric() -> None:
    g = CitationGraph.from_papers(random_papers(40, seed=3))
    for a, b in itertools.combinations(g.paper_ids(), 2):
        for m in (1, 2):
            assert g.coupling(a, b, min_shared=m) == g.coupling(b, a, min_shared=m)


def test_coupling_neighbours_hand_worked(abc: CitationGraph) -> None:
    assert abc.coupling_neighbours("A") == [("B", pytest.approx(0.5))]
    assert abc.coupling_neighbours("A", min_shared=1) == [
        ("B", pytest.approx(0.5)),
        ("C", pytest.approx(0.25)),
    ]
    assert abc.coupling_neighbours("x") == []  # cites nothing


def test_coupling_neighbours_ties_by_id_and_k() -> None:
    # s cites {r1,r2,r3}; m the same (1.0); inserted b before a, both 2/3.
    g = CitationGraph.from_papers(
        [paper("s", "r1", "r2", "r3"), paper("m", "r1", "r2", "r3"), paper("b", "r1", "r2"), paper("a", "r2", "r3")]
        + leaves("r1", "r2", "r3")
    )
    expected = [("m", 1.0), ("a", pytest.approx(2 / 3)), ("b", pytest.approx(2 / 3))]
    assert g.coupling_neighbours("s") == expected
    assert g.coupling_neighbours("s", k=2) == expected[:2]
    assert g.coupling_neighbours("s", k=0) == []


def test_coupling_neighbours_match_pairwise_coupling_and_skip_seed() -> None:
    g = CitationGraph.from_papers(random_papers(50, seed=11))
    for pid in g.paper_ids():
        for m in (1, 2):
            got = dict(g.coupling_neighbours(pid, min_shared=m))
            assert pid not in got
            brute = {o: g.coupling(pid, o, min_shared=m) for o in g.paper_ids() if o != pid}
            assert got == {o: s for o, s in brute.items() if s > 0}


def test_coupling_edge_count(abc: CitationGraph) -> None:
    assert abc.coupling_edge_count() == 1  # (A, B)
    assert abc.coupling_edge_count(min_shared=1) == 3  # (A,B), (A,C), (B,C)


@pytest.mark.parametrize("block_entries", [8_000_000, 1, 37])
def test_coupling_edge_count_matches_all_pairs(monkeypatch: pytest.MonkeyPatch, block_entries: int) -> None:
    # tiny budgets force one row per block and uneven blocks
    monkeypatch.setattr(citation_graph, "_PAIR_BLOCK_ENTRIES", block_entries)
    g = CitationGraph.from_papers(random_papers(50, seed=5))
    for m in (1, 2, 3):
        brute = sum(1 for a, b in itertools.combinations(g.paper_ids(), 2) if g.coupling(a, b, m) > 0)
        assert g.coupling_edge_count(min_shared=m) == brute


def test_coupling_edge_count_without_edges() -> None:
    assert CitationGraph.from_papers(leaves("a", "b")).coupling_edge_count() == 0
    assert CitationGraph().coupling_edge_count() == 0


def test_min_shared_below_one_is_rejected(abc: CitationGraph) -> None:
    with pytest.raises(ValueError, match="min_shared"):
        abc.coupling("A", "B", min_shared=0)


# ---------------------------------------------------------------------- co-citation, direct links


def test_cocitation_hand_worked(abc: CitationGraph) -> None:
    # citers: x {A,B,C}, y {A,B}, z {A}, w {B}, q {C}
    # x with y: 2 shared / union 3 = 2/3; x with z, w, q: 1 / 3 each, ordered by id.
    third = pytest.approx(1 / 3)
    assert abc.cocitation_neighbours("x") == [("y", pytest.approx(2 / 3)), ("q", third), ("w", third), ("z", third)]
    # y with x: 2 / 3; y with w, z: 1 shared / union 2.
    assert abc.cocitation_neighbours("y") == [("x", pytest.approx(2 / 3)), ("w", 0.5), ("z", 0.5)]
    assert abc.cocitation_neighbours("x", min_shared=2) == [("y", pytest.approx(2 / 3))]
    assert abc.cocitation_neighbours("x", k=1) == [("y", pytest.approx(2 / 3))]
    assert abc.cocitation_neighbours("A") == []  # nobody cites A


def test_direct_neighbours_references_then_citers_no_repeats() -> None:
    # s cites {c, b}; a and b cite s (b both ways).
    g = CitationGraph.from_papers([paper("s", "c", "b"), paper("a", "s"), paper("b", "s"), paper("c")])
    assert g.direct_neighbours("s") == ["b", "c", "a"]
    assert g.direct_neighbours("a") == ["s"]
    assert g.direct_neighbours("c") == ["s"]


# ---------------------------------------------------------------------- persistence


def test_save_load_round_trip(tmp_path: Path) -> None:
    papers = random_papers(30, seed=2) + [
        paper("attrs", "p001", "unknown-id", venue="SIGIR", year=1999),
    ]
    g = CitationGraph.from_papers(papers)
    path = tmp_path / "sub" / "graph.json"
    g.save(path)
    loaded = CitationGraph.load(path)
    assert loaded == g
    assert dict(loaded.graph.nodes(data=True)) == dict(g.graph.nodes(data=True))
    assert set(loaded.graph.edges) == set(g.graph.edges)
    assert loaded.attributes("attrs") == {"title": "Title attrs", "year": 1999, "venue": "SIGIR"}
    assert (
        loaded.dropped_references
        == g.dropped_references
        == 1 + sum(len(g.unresolved(p)) for p in g.paper_ids() if p != "attrs")
    )
    # what was unresolved before saving still resolves after loading
    assert loaded.add_papers(leaves("unknown-id")).references("attrs") == {"p001", "unknown-id"}
    assert list(tmp_path.joinpath("sub").iterdir()) == [path]  # no temporary file left


def test_save_is_plain_json(tmp_path: Path, abc: CitationGraph) -> None:
    path = tmp_path / "graph.json"
    abc.save(path)
    data = json.loads(path.read_text())
    assert data["format"] == 1
    assert ["A", "x"] in data["edges"]


def test_broken_json_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "graph.json"
    path.write_text('{"format": 1, "nodes": [')
    with pytest.raises(ValueError, match="graph.json"):
        CitationGraph.load(path)


@pytest.mark.parametrize(
    "content",
    [
        "[]",
        '{"nodes": [], "edges": []}',
        '{"format": 2, "kind": "litloop-citation-graph", "nodes": [], "edges": []}',
        '{"format": 1, "kind": "litloop-citation-graph", "nodes": [{"id": "a"}], "edges": [["a", "b"]]}',
        '{"format": 1, "kind": "litloop-citation-graph", "nodes": {}, "edges": []}',
    ],
)
def test_wrong_format_names_the_file(tmp_path: Path, content: str) -> None:
    path = tmp_path / "wrong.json"
    path.write_text(content)
    with pytest.raises(ValueError, match="wrong.json"):
        CitationGraph.load(path)


# ---------------------------------------------------------------------- real data


def test_citeseer_graph() -> None:
    """The bundled CiteSeer corpus (tools/corpora/demo_data/citeseer.jsonl)."""
    records = [json.loads(line) for line in CITESEER.read_text().splitlines() if line.strip()]
    papers = [
        Paper(paper_id=r["paper_id"], title=r["title"], references=tuple(r.get("references") or ())) for r in records
    ]
    ids = {r["paper_id"] for r in records}
    pairs = {
        (r["paper_id"], ref)
        for r in records
        for ref in r.get("references") or ()
        if ref in ids and ref != r["paper_id"]
    }
    g = CitationGraph.from_papers(papers)
    assert g.num_papers == 3186
    assert g.num_edges == len(pairs)
    assert set(g.graph.edges) == pairs


def citeseer_graph() -> CitationGraph:
    records = [json.loads(line) for line in CITESEER.read_text().splitlines() if line.strip()]
    return CitationGraph.from_papers(
        Paper(paper_id=r["paper_id"], title=r["title"], references=tuple(r.get("references") or ())) for r in records
    )


def test_coupling_from_sparse_matrices_equals_walking_the_graph() -> None:
    # the reference: the citers of each reference counted over NetworkX's adjacency, as coupling
    # was computed before the sparse matrices (co-citation still is)
    g = citeseer_graph()
    walked = 0
    for pid in g.paper_ids():
        for m, k in ((2, 100), (1, None), (3, 5)):
            want = g._shared_neighbours(pid, g.references(pid), g.graph.predecessors, g.graph.out_degree, k, m)
            assert g.coupling_neighbours(pid, k=k, min_shared=m) == want
            walked += bool(want)
    assert walked > 1000  # most papers have coupled neighbours at some setting
    with pytest.raises(ValueError, match="k must be"):
        g.coupling_neighbours(g.paper_ids()[0], k=-1)


@pytest.mark.parametrize("seed", range(6))
def test_coupling_count_grown_equals_counting_the_grown_graph(seed: int) -> None:
    # papers arrive in two batches; some earlier papers cite ids that only arrive later (they
    # become edges then) and some have their reference lists grown (bibliography entries that
    # resolve against the new papers, as an add re-resolves them)
    rng = random.Random(seed)
    papers = random_papers(80, seed=seed)
    ids = [p.paper_id for p in papers]
    first, later = papers[:50], papers[50:]
    before = CitationGraph.from_papers(first)
    grown_refs = {}
    for p in rng.sample(first, 8):
        extra = rng.sample(ids, 3)
        grown_refs[p.paper_id] = (p.references, tuple(dict.fromkeys(p.references + tuple(extra))))
    updated = [p.with_references(grown_refs[p.paper_id][1]) if p.paper_id in grown_refs else p for p in first]
    after = CitationGraph.from_papers(updated + later)
    for m in (1, 2, 3):
        got = after.coupling_edge_count_grown(
            before.coupling_edge_count(m), [p.paper_id for p in later], {k: v[0] for k, v in grown_refs.items()}, m
        )
        assert got == after.coupling_edge_count(m)
    assert after.coupling_edge_count_grown(after.coupling_edge_count(), [], {}) == after.coupling_edge_count()
