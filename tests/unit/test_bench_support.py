"""bench/support.py: AUC, the pipeline's keep rule and the two-fold threshold on fixed rows."""

from __future__ import annotations

import pytest

from bench.support import auc, balanced_accuracy, kept, summarise

pytestmark = pytest.mark.unit


def r(supported, p, det=None, kind="paraphrase"):
    return {"id": "x", "supported": supported, "p_yes": p, "deterministic": det, "kind": kind, "seconds": 1.0}


def test_auc_and_keep_rule():
    rows = [r(True, 0.9), r(True, 0.6), r(False, 0.7), r(False, 0.1), r(False, 0.95, det="the number '2'")]
    assert auc(rows) == pytest.approx(3 / 6)  # 0.9 beats 0.7 and 0.1, 0.6 beats 0.1 only
    assert kept(rows[0], 0.5) and not kept(rows[2], 0.8) and not kept(rows[4], None)
    assert balanced_accuracy(rows, None) == pytest.approx((1 + 1 / 3) / 2)
    assert balanced_accuracy(rows, 0.65) == pytest.approx((0.5 + 2 / 3) / 2)
    s = summarise(rows)
    assert s["claims"] == 5 and s["deterministic_only"]["unsupported_dropped"] == pytest.approx(1 / 3)
    assert set(s["two_fold"]) == {"thresholds", "supported_kept", "unsupported_dropped"}
