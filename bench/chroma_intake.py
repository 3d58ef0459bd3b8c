"""Embedded Chroma's intake rate and recall under HNSW build settings, on synthetic vectors.

    python -m bench.chroma_intake --windows 250000 [--vectors clustered|random] [--config NAME ...] [--json]

For each named configuration, a fresh `PersistentClient` collection in a temporary folder takes
`--windows` synthetic 384-d vectors (bench/vectors.py: `clustered`, shaped like real embeddings of
papers of 90 windows, or `random` unit vectors) in batches of 5,000 (litloop's batch, with its
`chunk_id`/`paper_id` metadata), timing every batch; then `--queries` vectors of the same kind
(a fresh window of an added paper, or random) are searched for their `--k` nearest and compared
with the exact neighbours (numpy over every vector added), and the collection is reopened in a
fresh client to time the first query.

Random vectors in 384 dimensions are the hardest case for HNSW (no structure to exploit): their
insertion slows as the graph grows and their recall is far below real embeddings'.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.vectors import DIM, Clustered, random_unit

BATCH = 5000
CONFIGS: dict[str, dict[str, Any]] = {
    # Chroma's defaults (ef_construction 100, max_neighbors 16, batch_size 100, sync_threshold 1,000)
    "default": {"space": "cosine"},
    # fewer, larger flushes of the brute-force buffer into the graph and of the graph to disk
    "batched": {"space": "cosine", "batch_size": 5000, "sync_threshold": 100000},
    # the same and a cheaper construction search
    "batched-ef64": {"space": "cosine", "batch_size": 5000, "sync_threshold": 100000, "ef_construction": 64},
    # a smaller graph
    "small": {
        "space": "cosine",
        "batch_size": 5000,
        "sync_threshold": 100000,
        "ef_construction": 50,
        "max_neighbors": 8,
    },
}


PER_PAPER = 90  # windows of one synthetic paper


def make_vectors(kind: str, shaped: Clustered, rng: np.random.Generator, lo: int, hi: int) -> np.ndarray:
    if kind == "random":
        return random_unit(rng, hi - lo)
    i = np.arange(lo, hi)
    return shaped.windows(i // PER_PAPER, (i % PER_PAPER) / PER_PAPER, i)


def make_queries(kind: str, shaped: Clustered, n: int, windows: int, seed: int) -> np.ndarray:
    """Random unit vectors, or a fresh window of a random section of an added paper."""
    rng = np.random.default_rng(seed)
    if kind == "random":
        return random_unit(rng, n)
    papers = rng.integers(0, max(1, windows // PER_PAPER), n)
    return shaped.windows(papers, rng.random(n), windows + np.arange(n))


def measure(
    name: str, config: dict[str, Any], windows: int, queries: int, k: int, seed: int, kind: str = "random"
) -> dict[str, Any]:
    import chromadb

    folder = Path(tempfile.mkdtemp(prefix="chroma-intake-"))
    try:
        client = chromadb.PersistentClient(path=str(folder))
        col = client.create_collection("chunks", embedding_function=None, configuration={"hnsw": config})  # type: ignore[arg-type]  # a plain dict of HNSW keys, as Chroma reads it
        rng = np.random.default_rng(seed)
        shaped = Clustered(seed)
        vectors = np.empty((windows, DIM), dtype=np.float32)
        rates, marks = [], {}
        start = time.perf_counter()
        for lo in range(0, windows, BATCH):
            hi = min(windows, lo + BATCH)
            vectors[lo:hi] = make_vectors(kind, shaped, rng, lo, hi)
            ids = [f"p{i // 90}-c{i}@w0" for i in range(lo, hi)]
            meta = [{"chunk_id": f"p{i // 90}-c{i}", "paper_id": f"p{i // 90}"} for i in range(lo, hi)]
            t = time.perf_counter()
            col.add(ids=ids, embeddings=vectors[lo:hi].tolist(), metadatas=meta)  # type: ignore[arg-type]
            rates.append((hi - lo) / (time.perf_counter() - t))
            for mark in (50_000, 250_000, 500_000, 1_000_000):
                if lo < mark <= hi:
                    marks[f"rate_at_{mark // 1000}k"] = round(float(np.mean(rates[-5:])), 1)
        total = time.perf_counter() - start
        q = make_queries(kind, shaped, queries, windows, seed + 1)
        exact = np.argsort(-(q @ vectors.T), axis=1)[:, :k]
        lat, hits10, hitsk = [], 0, 0
        for i in range(queries):
            t = time.perf_counter()
            res = col.query(query_embeddings=[q[i].tolist()], n_results=k)
            lat.append(time.perf_counter() - t)
            got = [int(x.split("-c")[1].split("@")[0]) for x in res["ids"][0]]
            hits10 += len(set(got[:10]) & set(exact[i, :10].tolist()))
            hitsk += len(set(got) & set(exact[i].tolist()))
        del client, col
        reopened = chromadb.PersistentClient(path=str(folder))
        t = time.perf_counter()
        reopened.get_collection("chunks", embedding_function=None).query(query_embeddings=[q[0].tolist()], n_results=k)
        first = time.perf_counter() - t
        return {
            "config": name,
            "vectors": kind,
            "hnsw": config,
            "windows": windows,
            "windows_per_s": round(windows / total, 1),
            "first_batch_per_s": round(rates[0], 1),
            "last_batches_per_s": round(float(np.mean(rates[-5:])), 1),
            **marks,
            "recall_at_10": round(hits10 / (10 * queries), 3),
            f"recall_at_{k}": round(hitsk / (k * queries), 3),
            "query_p50_ms": round(float(np.median(lat)) * 1000, 2),
            "first_query_after_reopen_s": round(first, 3),
            "disk_mb": round(sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6, 1),
        }
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--windows", type=int, default=250_000)
    ap.add_argument("--config", action="append", choices=sorted(CONFIGS), help="repeatable; default: all")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--k", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--vectors",
        choices=("random", "clustered"),
        default="random",
        help="random unit vectors, or shaped like real ones",
    )
    ap.add_argument("--json", action="store_true", help="one JSON object per configuration")
    args = ap.parse_args(argv)
    for name in args.config or list(CONFIGS):
        result = measure(name, dict(CONFIGS[name]), args.windows, args.queries, args.k, args.seed, args.vectors)
        print(json.dumps(result) if args.json else json.dumps(result, indent=2), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
