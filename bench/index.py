"""Index build throughput on the demo corpus and search latency on the demo index.

    python -m bench.index [--index DIR] [--queries 50] [--out DIR]

Builds the demo corpus (CiteSeer JSONL + four PDFs) into a fresh directory (default: a temporary
one), reports papers/s and chunks/s with the time per stage, then times `search` for every
retriever on queries made from CiteSeer titles (p50/p95, the embedder already loaded).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

from agent.settings import get_settings
from evals.answers import percentile
from tools.corpora.demo import demo_inputs
from tools.index import build_index, open_index
from tools.index.search import RETRIEVERS, search


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--index", type=Path, help="where to build (default: a temporary directory)")
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    root = args.index or Path(tempfile.mkdtemp()) / "demo-index"
    settings = get_settings(index=root)
    t = time.perf_counter()
    report = build_index(demo_inputs(), root, settings, rebuild=True)
    build_s = time.perf_counter() - t
    build = {
        "papers": report.papers_added,
        "chunks": report.chunks_added,
        "windows": report.windows_embedded,
        "seconds": round(build_s, 1),
        "papers_per_s": round(report.papers_added / build_s, 2),
        "chunks_per_s": round(report.chunks_added / build_s, 2),
        "stage_seconds": report.to_dict()["seconds"],
    }
    idx = open_index(root, settings)
    rng = random.Random(0)
    titles = [p.title for p in idx.papers.values() if len(p.title.split()) >= 4]
    queries = rng.sample(titles, min(args.queries, len(titles)))
    idx.embedder  # noqa: B018 - load the model outside the timings
    search(idx, queries[0], "hybrid", 10)
    latency = {}
    for retriever in RETRIEVERS:
        times = []
        for q in queries:
            t = time.perf_counter()
            search(idx, q, retriever, 10)
            times.append(time.perf_counter() - t)
        p95 = percentile(times, 95)
        assert p95 is not None, "at least one query"
        latency[retriever] = {"p50_ms": round(1000 * statistics.median(times), 1), "p95_ms": round(1000 * p95, 1)}
    idx.close()
    result = {"build": build, "search_latency": latency, "queries": len(queries)}
    print(json.dumps(result, indent=2))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "index_bench.json").write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
