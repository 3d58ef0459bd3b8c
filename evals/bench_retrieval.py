"""LLM-free retrieval ablation: candidate recall@k of each stage of Retrieve and Relate.

    python -m evals.bench_retrieval --benchmark ../shared/data/citerec/dev.jsonl \
        --index /path/to/citerec-index [--limit N] [--variants a,b,...] [--out DIR]

Variants (each gives a ranked paper list per question; recall is over the gold papers):
  bm25, dense, paper-bm25   one index alone (papers by best chunk)
  hybrid                    the three fused by RRF k 60 (DESIGN.md section 3 step 2)
  hybrid+prf                plus one pseudo-relevance-feedback pass (step 3)
  rerank                    ranking A with the configured reranker (LITLOOP_RERANK__BACKEND)
  A                         ranking A: the pool of 20 reranked chunks (steps 4-5), no reranker
  B                         ranking B alone (seeds = top of A)
  A+B:paper                 the paper's fusion: three neighbour sources, 3 seeds
  A+B                       litloop's default: all five sources (co-citation and direct links
                            added), 5 seeds (LITLOOP_RELATE__SOURCES, __SEEDS_WITHOUT_LLM)
  A+B:all5                  the same, spelled out (kept so older result tables still read)
  prf+B:all5                like A+B:all5 but fusing B with the whole hybrid+prf ranking
                            instead of the 20-chunk pool (LLM-free mode has one subquery only)
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from agent.settings import Settings, get_settings
from evals.metrics import CANDIDATE_KS, candidate_recall
from tools.fusion import papers_by_best_chunk
from tools.index import Index, open_index
from tools.jsonl import load_jsonl
from tools.relate import fuse_a_b, ranking_b
from tools.retrieve import fused_with_prf, query_ranking

Variant = Callable[[Index, str, Settings, object], list[str]]


def _single(kind: str) -> Variant:
    def run(idx: Index, q: str, s: Settings, _r) -> list[str]:
        k = s.retrieval.per_index_k
        if kind == "paper-bm25":
            return [pid for pid, _ in idx.bm25_papers(q, k)]
        hits = idx.bm25_chunks(q, k) if kind == "bm25" else idx.dense_chunks(q, k)
        return papers_by_best_chunk(p.hit() for p in hits)

    return run


def _hybrid(idx, q, s, _r):
    return query_ranking(idx, q, s.retrieval).papers


def _hybrid_prf(idx, q, s, _r):
    return fused_with_prf(idx, q, s.retrieval)[0].papers


def _pipeline(relate: bool, stage: str, *, sources=None, seeds=None, a_full=False, rerank=False) -> Variant:
    from tools.pipeline import run_retrieval

    def run(idx, q, s: Settings, reranker) -> list[str]:
        if sources or seeds:
            s = s.model_copy(update={"relate": s.relate.model_copy(update={
                k: v for k, v in (("sources", sources), ("seeds_without_llm", seeds)) if v})})
        r = run_retrieval(idx, q, s, relate=relate, reranker=reranker if rerank else None)
        if stage == "a":
            return r.a
        if stage == "b":
            return r.b
        if a_full:
            full = fused_with_prf(idx, q, s.retrieval)[0].papers
            b, _ = ranking_b(idx, full[: s.relate.seeds_without_llm], s.relate)
            return fuse_a_b(full, b, s.relate)
        return r.fused

    return run


ALL5 = ["embedding", "coupling", "bm25", "cocitation", "direct"]
PAPER3 = ["embedding", "coupling", "bm25"]
VARIANTS: dict[str, Variant] = {
    "bm25": _single("bm25"),
    "dense": _single("dense"),
    "paper-bm25": _single("paper-bm25"),
    "hybrid": _hybrid,
    "hybrid+prf": _hybrid_prf,
    "A": _pipeline(False, "a"),
    "rerank": _pipeline(False, "a", rerank=True),
    "B": _pipeline(True, "b"),
    "A+B:paper": _pipeline(True, "fused", sources=PAPER3, seeds=3),
    "A+B": _pipeline(True, "fused"),
    "A+B:all5": _pipeline(True, "fused", sources=ALL5, seeds=5),
    "prf+B:all5": _pipeline(True, "fused", sources=ALL5, seeds=5, a_full=True),
}
DEFAULT_VARIANTS = ["bm25", "dense", "paper-bm25", "hybrid", "hybrid+prf", "A", "B", "A+B:paper", "A+B", "prf+B:all5"]


def evaluate(idx: Index, questions: list[dict], names: list[str], settings: Settings, reranker=None,
             progress: bool = True, variants: dict[str, Variant] | None = None) -> dict[str, dict]:
    from tqdm import tqdm

    variants = VARIANTS if variants is None else variants
    results: dict[str, dict] = {}
    for name in names:
        fn = variants[name]
        recalls: dict[int, list[float]] = {k: [] for k in CANDIDATE_KS}
        times = []
        for q in tqdm(questions, desc=name, disable=not progress, leave=False):
            t = time.perf_counter()
            ranking = fn(idx, q["question"], settings, reranker)
            times.append(time.perf_counter() - t)
            cand = {"candidate_papers": [{"paper_id": p} for p in ranking]}
            for k in CANDIDATE_KS:
                recalls[k].append(candidate_recall(q, cand, k))
        results[name] = {
            **{f"candidate_recall@{k}": statistics.mean(v) for k, v in recalls.items()},
            "latency_p50_s": statistics.median(times),
            "latency_mean_s": statistics.mean(times),
            "questions": len(questions),
        }
    return results


def markdown_table(results: dict[str, dict]) -> str:
    ks = CANDIDATE_KS
    lines = ["| variant | " + " | ".join(f"R@{k}" for k in ks) + " | s/question (p50) |",
             "|---|" + "---:|" * (len(ks) + 1)]
    for name, r in results.items():
        lines.append(f"| {name} | " + " | ".join(f"{r[f'candidate_recall@{k}']:.3f}" for k in ks)
                     + f" | {r['latency_p50_s']:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None, *, variants: dict[str, Variant] | None = None,
         default: list[str] | None = None, stem: str = "retrieval_ablation", doc: str | None = None) -> int:
    """The command line of this benchmark; evals.bench_kadr runs it with its own variants."""
    variants = VARIANTS if variants is None else variants
    ap = argparse.ArgumentParser(description=doc or __doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--benchmark", type=Path, required=True)
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--limit", type=int)
    ap.add_argument("--variants", default=",".join(default or DEFAULT_VARIANTS))
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    settings = get_settings(index=args.index)
    idx = open_index(args.index, settings)
    questions = load_jsonl(args.benchmark)[: args.limit]
    names = [n.strip() for n in args.variants.split(",") if n.strip()]
    unknown = [n for n in names if n not in variants]
    if unknown:
        ap.error(f"unknown variants {unknown}; choose from {list(variants)}")
    reranker = None
    if "rerank" in names:
        from tools.rerank import build_reranker

        reranker = build_reranker(settings.rerank, settings.device)
    idx.embedder  # load once, outside the timings
    results = evaluate(idx, questions, names, settings, reranker, progress=sys.stderr.isatty(), variants=variants)
    table = markdown_table(results)
    print(f"{args.benchmark} ({len(questions)} questions), index {args.index}\n")
    print(table)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / f"{stem}.json").write_text(json.dumps(results, indent=2))
        (args.out / f"{stem}.md").write_text(table + "\n")
    idx.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
