""" "Which papers ..." questions over the demo corpus: does the answer name the papers that
qualify, and only those?

    python -m bench.multi [--split dev|test|all] [--preset P] [--set KEY=VALUE] [--out FILE]
    python -m bench.multi --retrieval [--split ...]    # the fused ranking's top 10 only, no LLM

    python -m bench.multi --data bench/data/overview_test.jsonl --split test   # the same topics asked as overviews

The questions are bench/data/multi_paper.jsonl (`id`, `question`, `gold_papers`, `split`;
bench/data/README.md says how the gold sets were found). Each question goes through
`agent.api.ask`; a row scores
- `recall`: the share of the gold papers (at most 10 of them) that the answer cites;
- `precision`: the share of the cited papers that are gold (0 for an answer that cites none);
- `numbers_outside`: numbers in the answer's claims that occur in none of their cited sentences
  (nor the cited papers' titles): must stay 0.
Each row also lists the candidates as they were read (`readings`: relevant or not, the
embedder's `similarity`, the paper's `coverage` of the question's aspects and their `score`
under `list_reading` `similarity`; the judge's P(yes) under `judge`).
`--retrieval` scores the top 10 of the fused ranking (`litloop retrieve`, ranking A+B) the same
way: what the reading could at best name. Without --index the demo index is used.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.questions import add_set_option, run_knobs, run_rows
from evals.answers import percentile

DATA = Path(__file__).resolve().parent / "data" / "multi_paper.jsonl"
GOLD_CAP = 10  # at most this many gold papers are asked for


def load_items(path: Path = DATA, split: str = "dev") -> list[dict[str, Any]]:
    items = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    return [it for it in items if split == "all" or it.get("split") == split]


def score_papers(gold: Sequence[str], cited: Sequence[str]) -> dict[str, Any]:
    """Recall of the gold papers (at most GOLD_CAP count) among `cited`, and the precision of
    `cited` (0 when nothing is cited)."""
    gold_set, cited_set = set(gold), set(dict.fromkeys(cited))
    hit = len(gold_set & cited_set)
    return {
        "recall": hit / min(len(gold_set), GOLD_CAP) if gold_set else None,
        "precision": hit / len(cited_set) if cited_set else 0.0,
        "cited": len(cited_set),
        "gold": len(gold_set),
        "hits": hit,
    }


def numbers_outside(claims: Sequence[Mapping[str, Any]]) -> int:
    """Numbers of the claims whose value is in none of their cited sentences or titles, read by
    the claim check's own number reader (`agent.reading.figures.numbers`: "81.1M" is 81.1
    million, "CoNLL-2003" holds no number)."""
    from agent.reading.figures import numbers  # pure text logic, no heavy import

    out = 0
    for c in claims:
        have = {value for value, _, _ in numbers(" ".join([*c.get("sentences", []), *c.get("titles", [])]))}
        out += sum(1 for value, _, _ in numbers(c.get("text", "")) if value not in have)
    return out


def summarise(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    secs = [float(r["seconds"]) for r in rows if r.get("seconds") is not None]
    calls = [float(r["llm_calls"]) for r in rows if r.get("llm_calls") is not None]

    def mean(key: str) -> float | None:
        vals = [float(r[key]) for r in rows if r.get(key) is not None]
        return statistics.mean(vals) if vals else None

    return {
        "questions": len(rows),
        "recall": mean("recall"),
        "precision": mean("precision"),
        "papers_cited_mean": mean("cited"),
        "numbers_outside": sum(int(r.get("numbers_outside") or 0) for r in rows),
        "shapes": dict(Counter(str(r.get("shape")) for r in rows if "shape" in r)),
        "themes_mean": mean("themes"),
        "seconds_median": statistics.median(secs) if secs else None,
        "seconds_p95": percentile(secs, 95),
        "llm_calls_mean": statistics.mean(calls) if calls else None,
    }


def run_question(
    item: Mapping[str, Any], preset: str | None, index: str, overrides: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    from agent.api import ask

    r = ask(item["question"], preset=preset, index=index, **dict[str, Any](overrides or {}))
    u, answer = r["usage"], r["answer"]
    cited = [str(c.get("paper_id")) for c in answer.get("citations", [])]
    claims = [
        {
            "text": c["text"],
            "sentences": [s["text"] for s in c["sentences"]],
            "titles": [t["title"] for t in answer.get("citations", []) if t["n"] in c["citations"]],
        }
        for c in answer.get("claims", [])
    ]
    return {
        "id": item["id"],
        "question": item["question"],
        **score_papers(item["gold_papers"], cited),
        "cited_papers": list(dict.fromkeys(cited)),
        "gold_papers": item["gold_papers"],
        "candidates": r.get("candidates", []),
        # each candidate as it was read: relevant or not, and the judge's P(yes) where one was asked
        "readings": [
            {
                "paper_id": x["paper_id"],
                "relevant": x.get("relevant"),
                "p": x.get("relevant_p"),
                "similarity": x.get("similarity"),
                "coverage": x.get("coverage"),
                "score": x.get("score"),
            }
            for x in r.get("readings", [])
        ],
        "numbers_outside": numbers_outside(claims),
        # the shape the answer took (papers, overview, fact, ...) and an overview's theme count
        "shape": answer.get("shape") or "fact",
        "themes": len(answer.get("themes") or []),
        "seconds": u["seconds_total"],
        "llm_calls": u.get("llm_calls", 0),
        "status": r["status"],
        "preset": r["preset"],
        "answer": answer.get("text", ""),
        "claims": claims,
    }


def retrieval_row(item: Mapping[str, Any], idx) -> dict[str, Any]:
    """The fused ranking's top 10 scored as if an answer cited them all (no LLM)."""
    from tools.retrieval.pipeline import run_retrieval

    top = run_retrieval(idx, item["question"], idx.settings).fused[:GOLD_CAP]
    return {"id": item["id"], **score_papers(item["gold_papers"], top), "cited_papers": top}


def _line(row: Mapping[str, Any]) -> str:
    spent = f"{row['seconds']:6.1f} s  {row['llm_calls']:3.0f} calls  " if "seconds" in row else ""
    return f"{spent}recall={row['recall']:.2f}  precision={row['precision']:.2f}  cited={row['cited']}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", choices=["dev", "test", "all"], default="dev")
    ap.add_argument("--preset")
    ap.add_argument("--index", help="index directory (default: the demo index)")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--out", type=Path, help="one JSON line per question")
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--retrieval", action="store_true", help="score the fused ranking's top 10 (no LLM)")
    add_set_option(ap)
    args = ap.parse_args(argv)
    from bench.factoid import demo_index_path

    overrides = run_knobs(ap, args.set)
    items = load_items(args.data, args.split)[: args.limit]
    index = args.index or demo_index_path()
    if args.retrieval:
        from agent.settings import get_settings
        from tools.index import open_index

        idx = open_index(Path(index).expanduser(), get_settings())
        try:
            rows = run_rows(items, lambda item: retrieval_row(item, idx), args.out, _line)
        finally:
            idx.close()
    else:
        rows = run_rows(items, lambda item: run_question(item, args.preset, index, overrides), args.out, _line)
    print(json.dumps(summarise(rows), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
