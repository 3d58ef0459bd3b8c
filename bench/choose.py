"""Choosing the sentence that answers a fact, on its own: is the answering sentence among the
sentences offered, and which way of choosing puts it first?

    python -m bench.choose --data bench/data/factoid_demo.jsonl [--limit N] [--choosers a,b]

Each question goes through the graph up to Read (LLM-free with `local-fast`: a fact answered by
choose-then-copy is read jointly); the sentences offered are those choose-then-copy ranks
(`agent.answer.copy.offered_sentences`, at most `choose_pool`), and each chooser ranks them: `bm25` (the product's `ranked_offered`: the question's stems over the sentences, a table
row with its caption and column names, a sentence holding a figure weighing `FIGURE_WEIGHT` times
more for a quantity question: no model), `hybrid` (that fused with the embedder's cosine), and the
model re-ranking bm25's best `choose_sentences` as `choose_by` does: `letter` (the sentences
lettered in one prompt, each letter's probability as the model's next token) and `yesno` (each
sentence's P(yes) that it states the answer, one token a sentence). Reported: `offered` (the gold
sentence among them), and per chooser the share with the gold sentence first and within the
first three, and seconds a question.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from bench.factoid import _holds, load_items
from bench.questions import add_set_option, run_knobs

CHOOSERS = ("bm25", "hybrid", "letter", "yesno")


def pool_for(item: dict[str, Any], ctx: Any, graph: Any) -> list[Any]:
    """The sentences a chooser is offered for the question: `graph` run up to Read, then the
    product's `agent.answer.copy.offered_sentences` on that state."""
    from agent.answer.copy import offered_sentences
    from agent.runtime.resources import index_for

    state: Any = {}
    inputs = {"question": item["question"], "query_id": item["id"], "answer_types": ["freeform"]}
    for mode, chunk in graph.stream(inputs, context=ctx, stream_mode=["updates", "values"]):
        if mode == "values":
            state = chunk
            continue
        if "read_paper" in chunk:
            state = {**state, **chunk["read_paper"]}
            break
    return offered_sentences(state, index_for(ctx), ctx)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parent / "data" / "factoid_demo.jsonl")
    ap.add_argument("--preset", default="local-fast")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--choosers", default=",".join(CHOOSERS))
    ap.add_argument("--out", type=Path)
    add_set_option(ap)
    args = ap.parse_args(argv)
    knobs = {"fact_answer": "choose", **run_knobs(ap, args.set)}
    from agent.answer.choice import synthesis_model
    from agent.answer.copy import answer_probabilities, ranked_offered, sentence_probabilities
    from agent.api import make_run_context
    from agent.graph import build_graph
    from agent.runtime.resources import index_for
    from bench.factoid import demo_index_path

    ctx = make_run_context(args.preset, index=demo_index_path(), **knobs)
    idx = index_for(ctx)
    model = synthesis_model(ctx)
    graph = build_graph()
    choosers = [c for c in args.choosers.split(",") if c]
    rows = []
    for item in load_items(args.data)[: args.limit]:
        shown = pool_for(item, ctx, graph)
        gold = [i for i, s in enumerate(shown) if _holds(s["text"], item["evidence"])]
        row: dict[str, Any] = {"id": item["id"], "offered": len(shown), "gold_at": gold}
        words = ranked_offered(idx, item["question"], shown)
        by_words = sorted(range(len(shown)), key=lambda i: (-words[i], i))
        top = by_words[: ctx.choose_sentences]
        for name in choosers:
            t = time.perf_counter()
            usage: dict[str, Any] = {}
            if name in ("bm25", "hybrid"):
                scores = words if name == "bm25" else ranked_offered(idx, item["question"], shown, name)
                order = sorted(range(len(shown)), key=lambda i: (-scores[i], i))
            else:  # the model re-ranks the words' best `choose_sentences`, as `choose_by` does
                pick = sentence_probabilities if name == "letter" else answer_probabilities
                probs = pick(model, item["question"], idx, [shown[i] for i in top], usage) or [0.0] * len(top)
                order = [top[j] for j in sorted(range(len(top)), key=lambda j: (-probs[j], j))] + by_words[len(top) :]
            rank = next((r for r, i in enumerate(order, 1) if i in gold), None)
            row[name] = {"rank": rank, "seconds": round(time.perf_counter() - t, 2)}
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    if args.out:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    n = len(rows)
    summary: dict[str, Any] = {
        "data": args.data.name,
        "questions": n,
        "offered": sum(bool(r["gold_at"]) for r in rows) / n,
    }
    for name in choosers:
        ranks = [r[name]["rank"] for r in rows]
        summary[name] = {
            "first": sum(r == 1 for r in ranks) / n,
            "top3": sum(r is not None and r <= 3 for r in ranks) / n,
            "seconds_median": statistics.median(r[name]["seconds"] for r in rows),
        }
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
