"""What an attributed answer did, from a `litloop eval` run folder: multiple-choice accuracy per
step of the decision (the synthesis's own choice, options scored from the evidence, calibrated,
calibrated with an abstention margin), the reader's precision against the gold papers, the
share of answers explained by checked claims, claims dropped per answer, extractive fallbacks,
time and LLM calls.

    python -m evals.attribution RUN_DIR --benchmark pubmedqa/dev.jsonl [--json]

The abstention margin is chosen on one half of the questions and scored on the other (two-fold,
both ways), so the figure is not fitted to the questions it is reported on. Pure: no index, no model.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evals.answers import percentile

MARGINS = [round(0.05 * i, 2) for i in range(13)]  # 0.00 .. 0.60


def _load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


def gold_of(benchmark: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """query id -> gold option, options, gold paper ids."""
    out = {}
    for q in benchmark:
        mc = (q.get("answer") or {}).get("multiple_choice") or {}
        out[q["query_id"]] = {
            "gold": mc.get("gold"),
            "options": mc.get("options") or {},
            "papers": {p["paper_id"] for p in q.get("gold_papers") or []},
        }
    return out


def _decide(probs: Mapping[str, float], abstain: str | None, margin: float) -> str:
    from agent.answer.choice import (
        decide,  # pure arithmetic; agent.answer.choice imports no heavy module
    )

    return decide(probs, abstain, margin)[0]


def choices(row: Mapping[str, Any], margin: float = 0.0) -> dict[str, str]:
    """The option each decision rule picks for one answered question."""
    from agent.answer.choice import calibrated

    out = {"model": row.get("model_choice") or row.get("choice") or ""}
    scores = row.get("choice_scores")
    if scores and scores.get("with_evidence"):
        out["scored"] = _decide(calibrated(scores["with_evidence"], None), None, 0.0)
        if scores.get("prior"):
            probs = calibrated(scores["with_evidence"], scores["prior"])
            out["calibrated"] = _decide(probs, None, 0.0)
            out["calibrated+margin"] = _decide(probs, scores.get("abstain"), margin)
    return out


def _accuracy(rows, gold, rule: str, margin: float = 0.0) -> float | None:
    hits = [_pick(r, rule, margin) == gold[r["query_id"]]["gold"] for r in rows]
    return round(sum(hits) / len(hits), 3) if hits else None


def _pick(row, rule: str, margin: float = 0.0) -> str:
    """The option `rule` picks, or the synthesis's own when the row has no scores for it."""
    picked = choices(row, margin)
    return picked.get(rule, picked["model"])


def two_fold_margin(rows, gold) -> dict[str, Any]:
    """The abstention margin chosen on each half (best accuracy, smallest margin on ties) and
    the accuracy it gives on the other half, pooled over both halves."""
    halves = [rows[::2], rows[1::2]]
    correct, chosen = 0, []
    for fit, held in ((halves[0], halves[1]), (halves[1], halves[0])):
        best = max(MARGINS, key=lambda m: (_accuracy(fit, gold, "calibrated+margin", m) or 0, -m))
        chosen.append(best)
        correct += sum(_pick(r, "calibrated+margin", best) == gold[r["query_id"]]["gold"] for r in held)
    return {"margins": chosen, "accuracy": round(correct / len(rows), 3) if rows else None}


def reader_precision(rows, gold) -> dict[str, Any]:
    """Among the readings of answered questions: accepted-relevant readings that are the gold
    paper (precision) and gold papers read and accepted (recall); the same for what the model
    itself said, before the acceptance rule."""
    acc = [(r["query_id"], x) for r in rows for x in r.get("readings") or [] if not x.get("failed")]

    def pr(key):
        said = [(q, x) for q, x in acc if x.get(key)]
        tp = sum(x["paper_id"] in gold[q]["papers"] for q, x in said)
        read_gold = [(q, x) for q, x in acc if x["paper_id"] in gold[q]["papers"]]
        return {
            "precision": round(tp / len(said), 3) if said else None,
            "recall": round(sum(bool(x.get(key)) for _, x in read_gold) / len(read_gold), 3) if read_gold else None,
            "relevant": len(said),
        }

    return {"readings": len(acc), "accepted": pr("relevant"), "model_said": pr("model_relevant")}


RELEVANCE_THRESHOLDS = [round(0.05 * i, 2) for i in range(20)]


def relevance_threshold(rows, gold) -> dict[str, Any] | None:
    """The reader with its P(true) threshold (`read_relevance_threshold`): chosen on one half of
    the questions for the best F1 of "accepted = gold paper", scored on the other (two-fold);
    None when the run recorded no P(true)."""

    def readings(part):
        return [
            (r["query_id"], x)
            for r in part
            for x in r.get("readings") or []
            if not x.get("failed") and x.get("relevant_p") is not None
        ]

    def f1(part, t):
        acc = [
            (q, x)
            for q, x in readings(part)
            if (x.get("relevant") or (x.get("note", "") and "P(true)" in x["note"])) and x["relevant_p"] >= t
        ]
        tp = sum(x["paper_id"] in gold[q]["papers"] for q, x in acc)
        pos = sum(x["paper_id"] in gold[q]["papers"] for q, x in readings(part))
        p = tp / len(acc) if acc else 0.0
        rc = tp / pos if pos else 0.0
        return (2 * p * rc / (p + rc) if p + rc else 0.0), p, rc

    if not readings(rows):
        return None
    halves = [rows[::2], rows[1::2]]
    chosen, tp_p, tp_r = [], [], []
    for fit, held in ((halves[0], halves[1]), (halves[1], halves[0])):
        best = max(RELEVANCE_THRESHOLDS, key=lambda t: (f1(fit, t)[0], -t))
        chosen.append(best)
        _, p, rc = f1(held, best)
        tp_p.append(p)
        tp_r.append(rc)
    return {
        "thresholds": chosen,
        "precision": round(sum(tp_p) / 2, 3),
        "recall": round(sum(tp_r) / 2, 3),
        "at_0": {"precision": round(f1(rows, 0.0)[1], 3), "recall": round(f1(rows, 0.0)[2], 3)},
    }


def report(run: Path, benchmark: Path) -> dict[str, Any]:
    gold = gold_of(_load(benchmark))
    rows = [r for r in _load(run / "results.jsonl") if r["query_id"] in gold]
    latest = {r["query_id"]: r for r in rows}  # a resumed run: the latest line per question
    rows = list(latest.values())
    mc = [r for r in rows if gold[r["query_id"]]["gold"]]
    yes = [gold[r["query_id"]]["gold"] == "A" for r in mc]
    secs = [r["seconds"] for r in rows]
    out: dict[str, Any] = {
        "questions": len(rows),
        "always_A": round(sum(yes) / len(yes), 3) if yes else None,
        "accuracy": {rule: _accuracy(mc, gold, rule) for rule in ("model", "scored", "calibrated")},
        "calibrated+margin (two-fold)": two_fold_margin(mc, gold),
        "choices_made": {
            rule: _count([choices(r).get(rule, "") for r in mc]) for rule in ("model", "scored", "calibrated")
        },
        "reader": reader_precision(rows, gold),
        "reader_with_relevance_threshold (two-fold)": relevance_threshold(rows, gold),
        "explained": round(sum(bool(r.get("claims")) for r in rows) / len(rows), 3) if rows else None,
        "extractive": round(sum(r.get("fallback") == "extractive" for r in rows) / len(rows), 3) if rows else None,
        "rejected_claims_per_answer": round(statistics.mean(len(r.get("rejected_claims") or []) for r in rows), 2)
        if rows
        else None,
        "seconds_median": round(statistics.median(secs), 1) if secs else None,
        "seconds_p95": round(p95, 1) if (p95 := percentile(secs, 95)) is not None else None,
        "llm_calls_mean": round(statistics.mean(r["usage"].get("llm_calls", 0) for r in rows), 2) if rows else None,
    }
    return out


def _count(values: Sequence[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[v or "-"] = out.get(v or "-", 0) + 1
    return dict(sorted(out.items()))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", type=Path, help="a `litloop eval --out` folder")
    ap.add_argument("--benchmark", type=Path, required=True, help="the benchmark's questions (JSONL with gold)")
    args = ap.parse_args(argv)
    json.dump(report(args.run, args.benchmark), sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
