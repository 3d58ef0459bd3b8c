"""The evaluation sets of bench/data against the demo index: every evidence and gold string is
in a chunk of its paper on its page, and every gold paper is indexed (`python -m bench.evalsets
check` as a test). The demo index is built on first use, as `litloop demo` does."""

from __future__ import annotations

import pytest

from agent.settings import get_settings
from bench import evalsets
from bench.factoid import check_dataset

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def demo_index():
    from tools.corpora.demo import ensure_demo_index
    from tools.index import open_index

    settings = get_settings()
    idx = open_index(ensure_demo_index(settings), settings)
    yield idx
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
