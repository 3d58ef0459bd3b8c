"""The citation intent benchmark (bench/intent.py) and its labelled set (bench/intent_set.py)."""

from __future__ import annotations

import json

import pytest

from bench.intent import accuracy, cohen_kappa, confusion, macro_f1, per_class, scores
from bench.intent_set import DATA, check, load
from tools.citations.intent import INTENTS


def test_metrics_of_a_small_confusion_worked_by_hand():
    gold = ["uses", "uses", "compares", "compares", "background"]
    pred = ["uses", "compares", "compares", "compares", "uses"]
    counts = confusion(gold, pred)
    u, c, b = INTENTS.index("uses"), INTENTS.index("compares"), INTENTS.index("background")
    assert counts[u][u] == 1 and counts[u][c] == 1 and counts[c][c] == 2 and counts[b][u] == 1
    assert sum(map(sum, counts)) == 5
    classes = per_class(counts)
    # uses: 1 right of 2 predicted, 1 of 2 gold; compares: 2 of 3 predicted, 2 of 2 gold
    assert classes["uses"] == {"precision": 0.5, "recall": 0.5, "f1": 0.5, "support": 2, "predicted": 2}
    assert classes["compares"]["precision"] == pytest.approx(2 / 3) and classes["compares"]["recall"] == 1.0
    assert classes["compares"]["f1"] == pytest.approx(0.8)
    assert classes["background"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 1, "predicted": 0}
    # macro over the three labels seen (extends and contrasts occur in neither): (0.5 + 0.8 + 0) / 3
    assert macro_f1(classes) == pytest.approx(1.3 / 3)
    assert accuracy(counts) == pytest.approx(3 / 5)
    assert scores(gold, pred)["macro_f1"] == pytest.approx(1.3 / 3)


def test_cohen_kappa_worked_by_hand():
    a = ["uses", "uses", "background", "background"]
    b = ["uses", "background", "background", "background"]
    # p_o = 3/4; p_e = (2*1 + 2*3) / 16 = 1/2; kappa = (3/4 - 1/2) / (1 - 1/2)
    assert cohen_kappa(a, b) == pytest.approx(0.5)
    assert cohen_kappa(a, a) == pytest.approx(1.0)
    assert cohen_kappa(["uses"] * 3, ["uses"] * 3) == 1.0  # one label only: agreement is total


def test_the_labelled_set_is_well_formed():
    items = load()
    assert len(items) >= 100
    for c in items:
        assert c.pass1 in INTENTS and c.pass2 in INTENTS and c.label in INTENTS, c.id
        assert c.split in ("dev", "test") and c.markers, c.id
        if c.pass1 != c.pass2:
            assert c.note, f"{c.id}: an adjudicated disagreement says why"
    dev, test = load(split="dev"), load(split="test")
    assert len(dev) + len(test) == len(items) and min(len(dev), len(test)) >= 50
    assert not {c.paper_id for c in dev} & {c.paper_id for c in test}  # split by paper
    assert len({c.id for c in items}) == len(items)


def test_every_stored_context_is_found_again_in_its_fixture():
    assert check() == []


def test_a_bad_label_is_refused_naming_the_line(tmp_path):
    row = json.loads(DATA.read_text(encoding="utf-8").splitlines()[0])
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(row) + "\n" + json.dumps(row | {"pass2": "supports"}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.jsonl:2: .*pass2 must be one of background"):
        load(bad)


def test_the_scicite_mapping_merges_uses_with_extends_and_compares_with_contrasts():
    out = scores(["uses", "compares", "background"], ["extends", "contrasts", "background"])
    assert out["accuracy"] == pytest.approx(1 / 3)
    assert out["scicite_macro_f1"] == 1.0  # method = method, result = result
    assert out["macro_f1_no_extends"] == pytest.approx((0 + 0 + 1 + 0) / 4)
