"""The evaluation sets of bench/data load through their pydantic models, meet their minimums,
keep their splits balanced and repeat no id or question; a bad line is named by file and line."""

from __future__ import annotations

import json
import shutil
from collections import Counter

import pytest

from bench import evalsets
from bench.evalsets import DATA, DataError, FactoidItem, MultiPaperItem, SelectorItem, lint, load, load_sets

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def sets():
    return load_sets()


def test_the_three_sets_validate_and_lint_clean(sets):
    assert lint(sets, evalsets.demo_questions()) == []


def test_counts_meet_the_minimums(sets):
    fact = [it for _, it in sets["factoid_test.jsonl"]]
    sel = [it for _, it in sets["selector_gold.jsonl"]]
    multi = [it for _, it in sets["multi_paper.jsonl"]]
    assert len(fact) >= 32 and len(sel) >= 64 and len(multi) >= 16
    assert min(Counter(it.paper_id for it in fact)[p] for p in evalsets.DEMO_PDFS) >= 6
    assert sum("|" in it.evidence for it in fact) >= 8
    assert sum(it.kind == "table" for it in sel) >= 20
    assert sum(any(p in evalsets.DEMO_PDFS for p in it.gold_papers) for it in multi) >= 2
    assert all(2 <= len(it.gold_papers) <= 10 for it in multi)


def test_splits_are_balanced(sets):
    for name in ("selector_gold.jsonl", "multi_paper.jsonl"):
        splits = Counter(it.split for _, it in sets[name])
        assert set(splits) == {"dev", "test"} and abs(splits["dev"] - splits["test"]) <= 1, name
    per_paper = Counter((it.paper_id, it.split) for _, it in sets["selector_gold.jsonl"])
    for pid in evalsets.DEMO_PDFS:
        assert abs(per_paper[(pid, "dev")] - per_paper[(pid, "test")]) <= 1, pid


def test_no_id_or_question_repeats_across_the_files_and_factoid_demo(sets):
    demo = evalsets.demo_questions()
    assert demo, "factoid_demo.jsonl is read"
    ids = [i for _, i, _ in demo] + [it.id for items in sets.values() for _, it in items]
    questions = [evalsets.norm_question(q) for _, _, q in demo]
    questions += [evalsets.norm_question(it.question) for items in sets.values() for _, it in items]
    assert len(ids) == len(set(ids))
    assert len(questions) == len(set(questions))


def test_a_malformed_line_is_named_by_file_line_and_field(tmp_path):
    path = tmp_path / "selector_gold.jsonl"
    good = {"id": "x1", "question": "q?", "paper_id": "p", "page": 2, "gold": ["a."], "kind": "text", "split": "dev"}
    bad = {**good, "id": "x2", "page": "2", "kind": "figure"}
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(DataError) as err:
        load(path, SelectorItem)
    problems = err.value.problems
    assert any(p.startswith("selector_gold.jsonl:2: field 'page'") for p in problems)
    assert any(p.startswith("selector_gold.jsonl:2: field 'kind'") for p in problems)
    assert any(p.startswith("selector_gold.jsonl:3: not JSON") for p in problems)


@pytest.mark.parametrize(
    "model, line, field",
    [
        (
            FactoidItem,
            {"id": "f", "question": "q?", "answer_contains": [], "paper_id": "p", "page": 1, "evidence": "e"},
            "answer_contains",
        ),
        (
            MultiPaperItem,
            {"id": "m", "question": "q?", "gold_papers": ["a"], "how": "grep", "split": "dev"},
            "gold_papers",
        ),
        (
            MultiPaperItem,
            {"id": "m", "question": "q?", "gold_papers": ["a", "b"], "how": "grep", "split": "train"},
            "split",
        ),
        (
            SelectorItem,
            {"id": "s", "question": "q?", "paper_id": "p", "page": 0, "gold": ["a"], "kind": "text", "split": "dev"},
            "page",
        ),
    ],
)
def test_each_model_refuses_a_bad_field(tmp_path, model, line, field):
    path = tmp_path / "set.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=rf"set\.jsonl:1: field '{field}'"):
        load(path, model)


def test_lint_catches_a_question_repeated_from_factoid_demo_and_a_broken_alternation(tmp_path):
    for name in evalsets.SETS:
        shutil.copy(DATA / name, tmp_path / name)
    demo = evalsets.demo_questions()
    lines = (tmp_path / "multi_paper.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["question"] = demo[0][2].upper()  # the normalised comparison is case-blind
    first["split"] = "test"
    lines[0] = json.dumps(first)
    (tmp_path / "multi_paper.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    problems = lint(load_sets(tmp_path), demo)
    assert any(p.startswith("multi_paper.jsonl:1: field 'question': repeats") for p in problems)
    assert any(p.startswith("multi_paper.jsonl:1: field 'split'") for p in problems)


def test_lint_refuses_a_held_out_fact_that_another_set_asks_for(tmp_path):
    for name in evalsets.SETS:
        shutil.copy(DATA / name, tmp_path / name)
    taken = json.loads((DATA / "factoid_test.jsonl").read_text(encoding="utf-8").splitlines()[3])["evidence"]
    lines = (tmp_path / "factoid_heldout.jsonl").read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[2])
    row["evidence"] = taken
    lines[2] = json.dumps(row)
    (tmp_path / "factoid_heldout.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    problems = lint(load_sets(tmp_path), evalsets.demo_questions())
    assert problems == ["factoid_heldout.jsonl:3: field 'evidence': also the evidence of a line of factoid_test.jsonl"]
