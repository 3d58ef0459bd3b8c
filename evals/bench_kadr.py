"""KADR's retrieval against the default ranking, LLM-free: candidate recall@k per question.

    python -m evals.bench_kadr --benchmark ../shared/data/pubmedqa/dev.jsonl \
        --index /path/to/pubmedqa-index [--limit N] [--variants hybrid+prf,kadr,A+B] [--out DIR]

Variants (ranked paper lists; the question is the only query, as in LLM-free mode):
  hybrid+prf  the default question-anchored ranking: three indexes fused by RRF k 60, one PRF
              pass (DESIGN.md section 3 steps 2-3; what the rra mode reranks)
  A+B         the default pipeline's reader list: pool of 20 reranked chunks, Relate, A/B fusion
  kadr        DESIGN.md section 6 steps 1, 2 and 5 with reranker `none`: the chunk BM25 and dense
              rankings interleaved (sparse first, keep order, drop duplicates); with no reranker
              the two statement rerankings keep that order, so this isolates the interleaving.
              Papers in the order of their first chunk; the reader gets the papers of the first
              N_ans = 10 chunks (so R@10 here bounds what kadr answers from)
  interleave-prf  like kadr, but the dense and sparse lists of the PRF-expanded query too
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from agent.settings import Settings, get_settings
from evals.bench_retrieval import VARIANTS as RETRIEVAL_VARIANTS
from evals.bench_retrieval import markdown_table
from evals.metrics import CANDIDATE_KS, candidate_recall
from evals.scoring import load_jsonl
from tools.index import Index, open_index
from tools.kadr import candidates, interleave, papers_in_order
from tools.retrieve import prf_query


def _kadr(idx: Index, q: str, s: Settings, _r) -> list[str]:
    return papers_in_order(candidates(idx, q, s.retrieval.per_index_k, s.retrieval.rerank_depth))


def _interleave_prf(idx: Index, q: str, s: Settings, _r) -> list[str]:
    first = _kadr(idx, q, s, None)
    if not first:
        return first
    second = _kadr(idx, prf_query(idx, q, first[0], s.retrieval.prf_chars), s, None)
    return interleave(first, second)


VARIANTS = {
    "hybrid+prf": RETRIEVAL_VARIANTS["hybrid+prf"],
    "A+B": RETRIEVAL_VARIANTS["A+B"],
    "kadr": _kadr,
    "interleave-prf": _interleave_prf,
}


def evaluate(idx: Index, questions: list[dict], names: list[str], settings: Settings) -> dict[str, dict]:
    results: dict[str, dict] = {}
    for name in names:
        recalls: dict[int, list[float]] = {k: [] for k in CANDIDATE_KS}
        times = []
        for q in questions:
            t = time.perf_counter()
            ranking = VARIANTS[name](idx, q["question"], settings, None)
            times.append(time.perf_counter() - t)
            cand = {"candidate_papers": [{"paper_id": p} for p in ranking]}
            for k in CANDIDATE_KS:
                recalls[k].append(candidate_recall(q, cand, k))
        results[name] = {**{f"candidate_recall@{k}": statistics.mean(v) for k, v in recalls.items()},
                         "latency_p50_s": statistics.median(times), "questions": len(questions)}
        print(f"{name}: " + ", ".join(f"R@{k} {results[name][f'candidate_recall@{k}']:.3f}" for k in CANDIDATE_KS),
              file=sys.stderr)
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--benchmark", type=Path, required=True)
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--limit", type=int)
    ap.add_argument("--variants", default="hybrid+prf,A+B,kadr,interleave-prf")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    names = [n.strip() for n in args.variants.split(",") if n.strip()]
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        ap.error(f"unknown variants {unknown}; choose from {list(VARIANTS)}")
    settings = get_settings(index=args.index)
    idx = open_index(args.index, settings)
    idx.embedder  # load once, outside the timings
    questions = load_jsonl(args.benchmark)[: args.limit]
    results = evaluate(idx, questions, names, settings)
    table = markdown_table(results)
    print(f"{args.benchmark} ({len(questions)} questions), index {args.index}\n")
    print(table)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "kadr_retrieval.json").write_text(json.dumps(results, indent=2))
        (args.out / "kadr_retrieval.md").write_text(table + "\n")
    idx.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
