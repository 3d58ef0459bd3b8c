"""The evidence selector on its own: is the sentence (or table row) that answers a question among
what the reader is shown?

    python -m bench.selector [--split dev|test|all] [--preset local-fast] [--out FILE]
    python -m bench.selector --loop [--data FILE] [--split dev|test|all]   # round 1 against the loop

For each line of bench/data/selector_gold.jsonl (a question, its paper, and the gold sentences
read off the paper) the question runs through LLM-free Retrieve (the question as its only
subquery), the paper's chunks to read are chosen as the reader chooses them
(`agent.methods.rra.read.chunks_to_read`, `read_chunks_per_paper` of the preset), and each selector
variant ranks those chunks' sentences. Reported per variant:

- `shown`: a gold sentence is among the sentences the selector keeps within the preset's
  `read_sentence_chars` (what the model would see);
- `recall@k` (k = 1, 3, 5, 10): a gold sentence is among the k best-ranked sentences;
- `reachable`: a gold sentence is in the chunks to read at all (the ceiling of every selector).

A gold string matches a sentence when one contains the other after whitespace and case folding,
so a sentence splitter that cuts a row's caption off does not hide a hit.

With `--loop` the question runs through the graph itself up to Relate (decompose, search,
rerank, verify, expand_neighbors; no LLM: the preset's LLM-free decomposition, and the verdict
`verify_without_llm` "coverage" for up to `--rounds` rounds), and the product's reader selector
(`agent.methods.rra.read.sentences_to_read`) is scored after round 1 alone and after the loop:
`shown`, a gold sentence among the gold paper's sentences the reader would be shown; `read`,
that and the gold paper among the candidates read; `candidate`, the gold paper among them. Also
the share of questions where a second round ran and the seconds it took. `--data` takes the
factoid sets too (bench/data/factoid_*.jsonl: their `evidence` is the gold); a line with no
`split` belongs to every split.
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
    quantity (`agent.reading.shape.asks_quantity`): a sentence that holds a figure weighs
    `agent.reading.evidence.FIGURE_WEIGHT` times its match; other questions as `overlap`."""
    from agent.reading.evidence import FIGURE_WEIGHT, holds_figure
    from agent.reading.shape import asks_quantity

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
PAPER_WIDE: dict[str, dict[str, Any]] = {  # keyword arguments of agent.reading.evidence.paper_sentences_ranked
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


def load(split: str, path: Path = DATA) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for r in rows:
        r.setdefault("gold", [r["evidence"]] if r.get("evidence") else [])
    return [r for r in rows if split == "all" or r.get("split", split) == split]


def run(split: str, preset: str, variants: Sequence[str]) -> dict:
    from agent.api import make_run_context
    from agent.methods.rra.read import chunks_to_read, question_chunk_scores
    from agent.reading.evidence import chunk_sentences, paper_sentences_ranked
    from agent.runtime.resources import index_for
    from agent.state import State
    from tools.retrieval.pipeline import run_retrieval

    ctx = make_run_context(preset)
    idx = index_for(ctx)
    rankers = {v: VARIANTS[v](idx.embedder) for v in variants if v in VARIANTS}
    wide = [v for v in variants if v in PAPER_WIDE]
    rows: dict[str, list[dict]] = {v: [] for v in variants}
    seconds: dict[str, float] = dict.fromkeys(variants, 0.0)
    reachable = []
    for item in load(split, DATA):
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
            from agent.reading.evidence import pick_mixed_sentences

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


def loop_scores(state: Any, runtime, item: dict, candidates: Sequence[str]) -> dict:
    """What the reader would be shown of the gold paper in `state` (`shown`), whether the gold
    paper is read (`candidate`), and both (`read`)."""
    from agent.methods.rra.read import sentences_to_read

    shown = any(matches(item["gold"], s["text"]) for s in sentences_to_read(state, runtime, item["paper_id"]))
    candidate = item["paper_id"] in candidates
    return {"shown": shown, "candidate": candidate, "read": shown and candidate}


def run_loop(split: str, preset: str, path: Path, rounds: int) -> dict:
    """Each question through the graph up to Relate with the coverage verdict, scored after the
    first verify (as if the loop ended there: Relate run on that state) and after the loop."""
    from langgraph.runtime import Runtime

    from agent.api import make_run_context
    from agent.graph import build_graph
    from agent.methods.rra.relate import expand_neighbors

    ctx = make_run_context(preset, verify_without_llm="coverage", max_rounds=rounds, verify_with_llm=False)
    runtime = Runtime(context=ctx)
    graph = build_graph()
    rows = []
    for item in load(split, path):
        state: Any = {}  # the graph's state (agent.state.State) as streamed
        first: Any = None
        verifies: list[float] = []
        t0 = time.perf_counter()
        inputs = {"question": item["question"], "query_id": item["id"], "answer_types": ["freeform"]}
        for mode, chunk in graph.stream(inputs, context=ctx, stream_mode=["updates", "values"]):
            if mode == "values":
                state = chunk
                if first is None and verifies:
                    first = dict(state)
                continue
            if "verify" in chunk:
                verifies.append(time.perf_counter() - t0)
            if "expand_neighbors" in chunk or "read_citations" in chunk:
                break  # Read and the synthesis call the LLM
        if first is None:
            continue  # a question about a cited work: no Retrieve loop
        one = loop_scores(first, runtime, item, expand_neighbors(first, runtime)["candidates"])
        state = {**state, **expand_neighbors(state, runtime)} if "candidates" not in state else state
        loop = loop_scores(state, runtime, item, state["candidates"])
        verdict = first.get("verdict") or {}
        rows.append(
            {
                "id": item["id"],
                "round_1": one,
                "loop": loop,
                "rounds": state.get("round", 0),
                "missing_terms": verdict.get("missing_terms", []),
                "subqueries": state.get("subqueries", []),
                "seconds_round_1": round(verifies[0], 3),
                "seconds_more": round(verifies[-1] - verifies[0], 3),
            }
        )
    n = len(rows)
    more = [r["seconds_more"] for r in rows if r["rounds"] > 1]
    summary: dict[str, Any] = {
        "data": path.name,
        "split": split,
        "preset": preset,
        "questions": n,
        "second_round": _mean([r["rounds"] > 1 for r in rows]),
        # medians: the first question's round 1 also loads the index and the models
        "seconds_round_1_median": _median([r["seconds_round_1"] for r in rows]),
        "seconds_second_round_median": _median(more),
        "seconds_more_per_question_mean": _mean([r["seconds_more"] for r in rows]),
        **{
            f"{when}_{key}": _mean([r[when][key] for r in rows])
            for when in ("round_1", "loop")
            for key in ("shown", "candidate", "read")
        },
    }
    return {"summary": summary, "rows": rows}


def _median(values: list) -> float | None:
    return round(statistics.median(values), 3) if values else None


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
    ap.add_argument("--loop", action="store_true", help="round 1 alone against the LLM-free loop")
    ap.add_argument("--rounds", type=int, default=2, help="the loop's max_rounds (with --loop)")
    ap.add_argument("--data", type=Path, default=DATA, help="questions with gold sentences (JSON lines)")
    args = ap.parse_args(argv)
    if args.loop:
        result = run_loop(args.split, args.preset, args.data, args.rounds)
    else:
        result = run(args.split, args.preset, [v.strip() for v in args.variants.split(",") if v.strip()])
    print(json.dumps(result["summary"], indent=2))
    if args.out:
        args.out.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
