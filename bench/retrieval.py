"""LLM-free retrieval ablation: candidate recall@k of each stage of Retrieve and Relate.

    python -m bench.retrieval --benchmark ../shared/data/citerec/dev.jsonl \
        --index /path/to/citerec-index [--limit N] [--variants a,b,...] [--out DIR]

Variants: each gives a ranked paper list per question (recall is over the gold papers); they are
defined in evals/variants.py, where `litloop eval --preset NAME` finds them too.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from agent.settings import Settings, get_settings
from evals.metrics import CANDIDATE_KS, candidate_recall
from evals.variants import VARIANTS, Variant
from tools.index import Index, open_index
from tools.jsonl import load_jsonl

DEFAULT_VARIANTS = ["bm25", "dense", "paper-bm25", "hybrid", "hybrid+prf", "A", "B", "A+B:paper", "A+B", "prf+B:all5"]


def evaluate(
    idx: Index,
    questions: list[dict],
    names: list[str],
    settings: Settings,
    reranker=None,
    progress: bool = True,
    variants: dict[str, Variant] | None = None,
) -> dict[str, dict]:
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
    lines = [
        "| variant | " + " | ".join(f"R@{k}" for k in ks) + " | s/question (p50) |",
        "|---|" + "---:|" * (len(ks) + 1),
    ]
    for name, r in results.items():
        lines.append(
            f"| {name} | "
            + " | ".join(f"{r[f'candidate_recall@{k}']:.3f}" for k in ks)
            + f" | {r['latency_p50_s']:.2f} |"
        )
    return "\n".join(lines)


def main(
    argv: list[str] | None = None,
    *,
    variants: dict[str, Variant] | None = None,
    default: list[str] | None = None,
    stem: str = "retrieval_ablation",
    doc: str | None = None,
) -> int:
    """The command line of this benchmark; bench.kadr runs it with its own variants."""
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
        from tools.models.rerank import build_reranker

        reranker = build_reranker(settings.rerank, settings.device)
    _ = idx.embedder  # load once, outside the timings
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
