"""The support check on hand-labelled claims: how often the deterministic check and the model's
yes/no judgement (P(yes) as its next token) keep supported claims and drop unsupported ones, and
which threshold on P(yes) to use.

    python -m bench.support [--data FILE] [--out FILE] [--limit N]

bench/data/support_dev.jsonl holds claims with 1-3 verbatim sentences and a label. The unsupported
ones keep the sentences' numbers and names (negations, overclaims, wrong relations, unrelated
claims), which is what the deterministic check cannot see. The model is the one the synthesis
uses (the embedded model unless an endpoint is configured). The threshold is chosen on one half
and scored on the other (two-fold, both ways).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "support_dev.jsonl"
THRESHOLDS = [round(0.05 * i, 2) for i in range(1, 20)]


def auc(rows: Sequence[Mapping[str, Any]]) -> float | None:
    """Probability that a supported claim gets a higher P(yes) than an unsupported one (ties half)."""
    pos = [r["p_yes"] for r in rows if r["supported"] and r["p_yes"] is not None]
    neg = [r["p_yes"] for r in rows if not r["supported"] and r["p_yes"] is not None]
    if not pos or not neg:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def kept(row: Mapping[str, Any], threshold: float | None) -> bool:
    """Whether the pipeline keeps this claim: the deterministic check, then P(yes) >= threshold."""
    if row["deterministic"] is not None:
        return False
    return threshold is None or row["p_yes"] is None or row["p_yes"] >= threshold


def balanced_accuracy(rows: Sequence[Mapping[str, Any]], threshold: float | None) -> float | None:
    pos = [r for r in rows if r["supported"]]
    neg = [r for r in rows if not r["supported"]]
    if not pos or not neg:
        return None
    return (sum(kept(r, threshold) for r in pos) / len(pos) + sum(not kept(r, threshold) for r in neg) / len(neg)) / 2


def two_fold_threshold(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    halves = [list(rows[::2]), list(rows[1::2])]
    chosen, held_rows = [], []
    for fit, held in ((halves[0], halves[1]), (halves[1], halves[0])):
        best = max(THRESHOLDS, key=lambda t: (balanced_accuracy(fit, t) or 0, -abs(t - 0.5)))
        chosen.append(best)
        held_rows += [{**r, "_t": best} for r in held]
    pos = [r for r in held_rows if r["supported"]]
    neg = [r for r in held_rows if not r["supported"]]
    return {
        "thresholds": chosen,
        "supported_kept": sum(kept(r, r["_t"]) for r in pos) / len(pos) if pos else None,
        "unsupported_dropped": sum(not kept(r, r["_t"]) for r in neg) / len(neg) if neg else None,
    }


def summarise(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    pos = [r for r in rows if r["supported"]]
    neg = [r for r in rows if not r["supported"]]
    by_kind: dict[str, list] = {}
    for r in rows:
        by_kind.setdefault(r.get("kind", "?"), []).append(r)

    def rates(t):
        return {
            "supported_kept": sum(kept(r, t) for r in pos) / len(pos) if pos else None,
            "unsupported_dropped": sum(not kept(r, t) for r in neg) / len(neg) if neg else None,
            "balanced_accuracy": balanced_accuracy(rows, t),
        }

    return {
        "claims": len(rows),
        "supported": len(pos),
        "unsupported": len(neg),
        "deterministic_only": rates(None),
        "with_judge_at_0.5": rates(0.5),
        "two_fold": two_fold_threshold(rows),
        "auc": auc(rows),
        "by_kind": {
            k: {
                "n": len(v),
                "mean_p_yes": (
                    sum(r["p_yes"] for r in v if r["p_yes"] is not None)
                    / max(1, sum(r["p_yes"] is not None for r in v))
                ),
                "deterministic_dropped": sum(r["deterministic"] is not None for r in v),
            }
            for k, v in sorted(by_kind.items())
        },
        "seconds_per_claim": (sum(r["seconds"] for r in rows) / len(rows)) if rows else None,
    }


def main(argv: list[str] | None = None) -> int:
    from agent.answer import choice
    from agent.answer.support import check_claim
    from agent.llm import build_chat_model
    from agent.settings import get_settings

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--limit", type=int)
    args = ap.parse_args(argv)
    items = [json.loads(line) for line in args.data.read_text(encoding="utf-8").split("\n") if line.strip()][
        : args.limit
    ]
    model = build_chat_model("synthesize", get_settings())
    rows = []
    for item in items:
        t = time.perf_counter()
        p = choice.support_probability(model, item["claim"], item["sentences"])
        rows.append(
            {
                "id": item["id"],
                "kind": item.get("kind"),
                "supported": bool(item["supported"]),
                "deterministic": check_claim(item["claim"], item["sentences"]),
                "p_yes": p,
                "seconds": time.perf_counter() - t,
            }
        )
        print(
            f"{rows[-1]['p_yes'] if p is None else round(p, 3)}  {item['supported']!s:5}  {item['id']}", file=sys.stderr
        )
    if args.out:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    json.dump(summarise(rows), sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
