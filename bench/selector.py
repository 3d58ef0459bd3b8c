"""The evidence selector on its own: is the sentence (or table row) that answers a question among
what the reader is shown?

    python -m bench.selector [--split dev|test|all] [--preset local-fast] [--out FILE]

For each line of bench/data/selector_gold.jsonl (a question, its paper, and the gold sentences
read off the paper) the question runs through LLM-free Retrieve (the question as its only
subquery), the paper's chunks to read are chosen as the reader chooses them
(`agent.methods.rra.chunks_to_read`, `read_chunks_per_paper` of the preset), and each selector
variant ranks those chunks' sentences. Reported per variant:

- `shown`: a gold sentence is among the sentences the selector keeps within the preset's
  `read_sentence_chars` (what the model would see);
- `recall@k` (k = 1, 3, 5, 10): a gold sentence is among the k best-ranked sentences;
- `reachable`: a gold sentence is in the chunks to read at all (the ceiling of every selector).

A gold string matches a sentence when one contains the other after whitespace and case folding,
so a sentence splitter that cuts a row's caption off does not hide a hit.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tools.retrieval.sentences import within_budget

DATA = Path(__file__).resolve().parent / "data" / "selector_gold.jsonl"
KS = (1, 3, 5, 10)

# variant -> (ranker: sentences, queries -> scores)
Ranker = Callable[[Sequence[Any], Sequence[str]], list[float]]


def _overlap(stem: bool) -> Ranker:
    from tools.retrieval.sentences import sentence_scores

    return lambda sentences, queries: sentence_scores(sentences, queries, stem)


def _dense(embedder) -> Ranker:
    import numpy as np

    def rank(sentences, queries):
        if not sentences:
            return []
        q = embedder.encode([" ".join(queries)])[0]
        v = embedder.encode([s["text"] for s in sentences])
        return [float(x) for x in np.asarray(v) @ np.asarray(q)]

    return rank


def _hybrid(embedder, how: str, weight: float = 0.5) -> Ranker:
    """BM25 over stems and the embedder's cosine: by RRF of the two orders, or as a weighted sum
    of the BM25 scores scaled to [0, 1] and the cosines."""
    lexical, dense = _overlap(True), _dense(embedder)

    def rank(sentences, queries):
        a, d = lexical(sentences, queries), dense(sentences, queries)
        if how == "rrf":
            from tools.retrieval.fusion import rrf_scores

            order = lambda xs: sorted(range(len(xs)), key=lambda i: (-xs[i], i))  # noqa: E731
            fused = rrf_scores([order(a), order(d)], k=10)
            return [fused.get(i, 0.0) for i in range(len(sentences))]
        top = max(a) or 1.0
        return [weight * x / top + (1 - weight) * y for x, y in zip(a, d, strict=True)]

    return rank


def _figures() -> Ranker:
    """`overlap` as the product's chunks selector runs it for a question that asks for a
    quantity (`agent.shape.asks_quantity`): a sentence that holds a figure weighs
    `agent.evidence.FIGURE_WEIGHT` times its match; other questions as `overlap`."""
    from agent.evidence import FIGURE_WEIGHT, holds_figure
    from agent.shape import asks_quantity

    lexical = _overlap(False)

    def rank(sentences, queries):
        scores = lexical(sentences, queries)
        if not any(asks_quantity(q) for q in queries):
            return scores
        return [
            sc * (FIGURE_WEIGHT if holds_figure(s["text"]) else 1.0) for sc, s in zip(scores, sentences, strict=True)
        ]

    return rank


# variants that rank every sentence of the paper, not only those of the chunks the reader reads
PAPER_WIDE: dict[str, dict[str, Any]] = {  # keyword arguments of agent.evidence.paper_sentences_ranked
    "paper": {},  # the product's selector as `evidence_selector=paper` runs it (a shortlist of 20)
    "paper-hybrid": {"shortlist": 40},
    "paper-hybrid-nocontext": {"shortlist": 40, "with_table_context": False},
    "paper-bm25": {"dense": False},
}

VARIANTS: dict[str, Callable[[Any], Ranker]] = {
    "overlap": lambda e: _overlap(False),
    "overlap+stem": lambda e: _overlap(True),
    "overlap+figures": lambda e: _figures(),  # the default selector for a quantity question
    "dense": _dense,
    "hybrid-rrf": lambda e: _hybrid(e, "rrf"),
    "hybrid-sum": lambda e: _hybrid(e, "sum"),
}


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def matches(gold: Sequence[str], sentence: str) -> bool:
    s = _norm(sentence)
    return any((g := _norm(x)) and (g in s or (len(s) >= 20 and s in g)) for x in gold)


def score_item(sentences: Sequence[Any], gold: Sequence[str], scores: Sequence[float], budget: int) -> dict:
    order = sorted(range(len(sentences)), key=lambda i: (-scores[i], i))
    hits = [matches(gold, sentences[i]["text"]) for i in order]
    first = next((r for r, h in enumerate(hits, start=1) if h), None)
    kept = within_budget(order, [len(s["text"]) for s in sentences], budget)
    return {
        "rank": first,
        "shown": any(matches(gold, sentences[i]["text"]) for i in kept),
        **{f"recall@{k}": first is not None and first <= k for k in KS},
    }


def load(split: str) -> list[dict]:
    rows = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    return [r for r in rows if split == "all" or r.get("split") == split]


def run(split: str, preset: str, variants: Sequence[str]) -> dict:
    from agent.api import make_run_context
    from agent.evidence import chunk_sentences, paper_sentences_ranked
    from agent.methods.rra import chunks_to_read, question_chunk_scores
    from agent.resources import index_for
    from agent.state import State
    from tools.retrieval.pipeline import run_retrieval

    ctx = make_run_context(preset)
    idx = index_for(ctx)
    rankers = {v: VARIANTS[v](idx.embedder) for v in variants if v in VARIANTS}
    wide = [v for v in variants if v in PAPER_WIDE]
    rows: dict[str, list[dict]] = {v: [] for v in variants}
    seconds: dict[str, float] = dict.fromkeys(variants, 0.0)
    reachable = []
    for item in load(split):
        retrieved = run_retrieval(idx, item["question"], idx.settings, relate=False)
        state = State(question=item["question"], subqueries=[], pool=retrieved.pool)
        chunks = chunks_to_read(
            state, idx, item["paper_id"], ctx.read_chunks_per_paper, question_chunk_scores(state, idx)
        )
        sentences = [s for c in chunks for s in chunk_sentences(idx, c["chunk_id"])]
        reachable.append(any(matches(item["gold"], s["text"]) for s in sentences))
        for v, ranker in rankers.items():
            t = time.perf_counter()
            scores = ranker(sentences, [item["question"]])
            seconds[v] += time.perf_counter() - t
            rows[v].append(
                {
                    "id": item["id"],
                    "kind": item.get("kind"),
                    **score_item(sentences, item["gold"], scores, ctx.read_sentence_chars),
                }
            )
        near = [c["chunk_id"] for c in chunks]
        if "mixed" in variants:
            from agent.evidence import pick_mixed_sentences

            t = time.perf_counter()
            shown = pick_mixed_sentences(idx, item["paper_id"], near, [item["question"]], ctx.read_sentence_chars)
            seconds["mixed"] += time.perf_counter() - t
            hit = any(matches(item["gold"], s["text"]) for s in shown)
            rows["mixed"].append(
                {
                    "id": item["id"],
                    "kind": item.get("kind"),
                    "rank": None,
                    "shown": hit,
                    **{f"recall@{k}": None for k in KS},
                }
            )
        for v in wide:
            t = time.perf_counter()
            ranked = paper_sentences_ranked(idx, item["paper_id"], [item["question"]], near, **PAPER_WIDE[v])
            seconds[v] += time.perf_counter() - t
            by_rank = [float(len(ranked) - r) for r in range(len(ranked))]
            rows[v].append(
                {
                    "id": item["id"],
                    "kind": item.get("kind"),
                    **score_item(ranked, item["gold"], by_rank, ctx.read_sentence_chars),
                }
            )
    n = len(reachable)
    summary: dict[str, Any] = {
        "split": split,
        "preset": preset,
        "questions": n,
        "reachable": round(sum(reachable) / n, 3) if n else None,
        "variants": {},
    }
    for v, rs in rows.items():
        summary["variants"][v] = {
            "shown": round(statistics.fmean(r["shown"] for r in rs), 3) if rs else None,
            # a selector that keeps a set, not a ranking ("mixed"), has no recall@k
            **{f"recall@{k}": _mean([r[f"recall@{k}"] for r in rs]) for k in KS},
            "shown_tables": _share([r for r in rs if r["kind"] == "table"]),
            "ms_per_question": round(1000 * seconds[v] / n, 1) if n else None,
        }
    return {"summary": summary, "rows": rows}


def _mean(values: list) -> float | None:
    known = [v for v in values if v is not None]
    return round(statistics.fmean(known), 3) if known else None


def _share(rs: list[dict]) -> float | None:
    return round(statistics.fmean(r["shown"] for r in rs), 3) if rs else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", default="dev", choices=["dev", "test", "all"])
    ap.add_argument("--preset", default="local-fast")
    ap.add_argument("--variants", default=",".join([*VARIANTS, *PAPER_WIDE, "mixed"]))
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    result = run(args.split, args.preset, [v.strip() for v in args.variants.split(",") if v.strip()])
    print(json.dumps(result["summary"], indent=2))
    if args.out:
        args.out.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
