"""The evaluation sets of bench/data against what the demo corpus indexes to: every evidence and
gold string is in a chunk of its paper on its page, and every gold paper is in the corpus
(`python -m bench.evalsets check` as a test). The four demo PDFs are indexed here with today's
readers (the pages and texts come from a real build); the CiteSeer papers, which the sets only
name, are read from the shipped records instead of being embedded too."""

from __future__ import annotations

import json

import pytest

from agent.settings import get_settings
from bench import evalsets
from bench.factoid import check_dataset
from tests.conftest import CITESEER, DEMO_PDFS

pytestmark = pytest.mark.integration


class _WithAbstracts:
    """The PDFs' index, with the shipped CiteSeer ids among its papers."""

    def __init__(self, idx, ids: set[str]):
        self.idx, self.papers = idx, {**dict.fromkeys(ids), **dict.fromkeys(idx.papers)}

    def paper_chunks(self, paper_id: str):
        return self.idx.paper_chunks(paper_id)

    @property
    def chunks(self):
        return self.idx.chunks


@pytest.fixture(scope="module")
def demo_index(tmp_path_factory):
    from tools.index import build_index, open_index

    settings = get_settings()
    root = tmp_path_factory.mktemp("pdfs") / "idx"
    build_index([DEMO_PDFS], root, settings)
    idx = open_index(root, settings)
    ids = {json.loads(line)["paper_id"] for line in CITESEER.open()}
    yield _WithAbstracts(idx, ids)
    idx.close()


@pytest.fixture(scope="module")
def sets():
    return evalsets.load_sets()


def test_every_line_checks_out_against_the_demo_index(demo_index, sets):
    assert evalsets.check_index(demo_index, sets) == []


def test_factoid_test_passes_the_factoid_benchmarks_own_check(demo_index, sets):
    items = [it.model_dump() for _, it in sets["factoid_test.jsonl"]]
    assert check_dataset(demo_index, items) == []


def test_a_wrong_page_and_an_unknown_paper_are_reported(demo_index, sets):
    n, first = sets["selector_gold.jsonl"][0]
    moved = first.model_copy(update={"page": first.page + 1})
    ln, multi = sets["multi_paper.jsonl"][0]
    unknown = multi.model_copy(update={"gold_papers": [*multi.gold_papers, "no-such-paper"]})
    problems = evalsets.check_index(
        demo_index, {"selector_gold.jsonl": [(n, moved)], "multi_paper.jsonl": [(ln, unknown)]}
    )
    assert any(p.startswith(f"selector_gold.jsonl:{n}: field 'gold.0': not on page {first.page + 1}") for p in problems)
    assert any(p.startswith(f"multi_paper.jsonl:{ln}: paper 'no-such-paper'") for p in problems)
