"""Embedding backends (LITLOOP_EMBEDDER__BACKEND): speed on the demo corpus's windows and
dense recall@10 on the shared retrieval benchmarks.

    python -m bench.embed speed  [--windows 2000] [--trials 5] [--backends torch,onnx,onnx-int8]
                                       [--pool] [--out DIR]
    python -m bench.embed recall [--benchmarks citerec,pubmedqa] [--papers N] [--out DIR]

speed: windows/s of each backend on a seeded sample of the demo index's dense windows (the
demo index in the data folder; without it, windows cut from the demo corpus's chunks). The
machine is shared, so the backends are timed in interleaved trials in one process (A, B, C,
A, B, C, ...; each trial's slice of texts is the same for every backend) and the report gives
each backend's ratio to torch per trial as well as the absolute figures and the load average.
`--pool` adds torch through sentence-transformers' multi-process pool (one process per core,
one thread each).

recall: every chunk window of a benchmark corpus embedded by torch and by onnx-int8, the
questions embedded by both, and dense-only retrieval (exact cosine over the windows, a chunk
scores by its best window, a paper by its best chunk, the top `per_index_k` chunks, as the
`dense` variant of bench.retrieval) scored by candidate_recall@k for three variants:
torch/torch, int8/int8, and torch index with int8 queries (an index built before the switch).
`--papers N` keeps the gold papers of the first questions and fills up to N papers with a
seeded sample of the rest (a smaller, still non-trivial corpus).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from evals.metrics import candidate_recall
from tools.jsonl import load_jsonl

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
BENCHMARKS = {"citerec": SHARED / "citerec", "pubmedqa": SHARED / "pubmedqa"}
RECALL_KS = (1, 5, 10, 20, 50)


def load(backend: str):
    """An embedder of the bundled model for `backend` (`torch-mp2`: torch over a 2-process pool)."""
    from tools.models.embed import get_embedder
    from tools.settings import tool_settings

    s = tool_settings()
    if backend == "torch-mp2":
        return _PoolEmbedder(get_embedder(s.embedder.model, "cpu", s.embedder.batch_size, "torch"))
    return get_embedder(s.embedder.model, "cpu", s.embedder.batch_size, backend, s.data_dir)


class _PoolEmbedder:
    """sentence-transformers' multi-process pool: one worker per core, one torch thread each."""

    backend = "torch-mp2"

    def __init__(self, emb):
        self._emb = emb
        cores = len(os.sched_getaffinity(0))
        old = os.environ.get("OMP_NUM_THREADS")
        os.environ["OMP_NUM_THREADS"] = "1"  # read by each worker's torch at start-up
        try:
            self._pool = emb._model.start_multi_process_pool(["cpu"] * cores)
        finally:
            os.environ.pop("OMP_NUM_THREADS") if old is None else os.environ.update(OMP_NUM_THREADS=old)

    def encode(self, texts):
        return np.asarray(
            self._emb._model.encode(
                list(texts), pool=self._pool, batch_size=self._emb.batch_size, normalize_embeddings=True
            ),
            dtype=np.float32,
        )

    def close(self):
        self._emb._model.stop_multi_process_pool(self._pool)


# --------------------------------------------------------------------------- speed


def demo_windows() -> tuple[list[str], str]:
    """The demo index's dense windows (their texts) and where they came from."""
    from tools.retrieval.dense import windows_for
    from tools.settings import tool_settings

    s = tool_settings()
    root = s.demo_index
    current = root / "CURRENT"
    if current.exists() and (root / current.read_text().strip() / "chunks.jsonl").exists():
        rows = load_jsonl(root / current.read_text().strip() / "chunks.jsonl")
        where = "the demo index's chunks"
    else:
        from tools.base import IngestError
        from tools.corpora.demo import DEMO_DATA
        from tools.ingest.chunker import chunk_document
        from tools.ingest.jsonl import parse_records

        rows = [
            c.to_dict()
            for d in parse_records(DEMO_DATA / "citeseer.jsonl")
            if not isinstance(d, IngestError)
            for c in chunk_document(d)
        ]
        where = "the demo corpus's CiteSeer records, chunked"
    todo = [(r["chunk_id"], r["paper_id"], r["text"]) for r in rows]
    return [w.text for w in windows_for(todo, s.embedder.window_chars)], where


def speed(backends: list[str], n: int, trials: int, seed: int = 0) -> dict:
    texts, where = demo_windows()
    sample = random.Random(seed).sample(texts, min(n, len(texts)))
    models = {b: load(b) for b in backends}
    for m in models.values():  # first calls allocate and warm caches: not timed
        m.encode(sample[:8])
    slices = np.array_split(np.arange(len(sample)), trials)
    per_trial: dict[str, list[float]] = defaultdict(list)
    seconds: dict[str, float] = defaultdict(float)
    loads = [os.getloadavg()]
    vectors: dict[str, list[np.ndarray]] = defaultdict(list)
    for t, rows in enumerate(slices):
        chunk = [sample[i] for i in rows]
        order = backends[t % len(backends) :] + backends[: t % len(backends)]  # rotate who goes first
        for b in order:
            start = time.perf_counter()
            vec = models[b].encode(chunk)
            took = time.perf_counter() - start
            seconds[b] += took
            per_trial[b].append(len(chunk) / took)
            vectors[b].append(vec)
            print(
                f"trial {t + 1}/{trials} {b:10s} {len(chunk) / took:6.1f} windows/s (load {os.getloadavg()[0]:.2f})",
                flush=True,
            )
        loads.append(os.getloadavg())
    for m in models.values():
        getattr(m, "close", lambda: None)()
    base = backends[0]
    out: dict[str, Any] = {
        "windows": len(sample),
        "trials": trials,
        "source": where,
        "load_avg_1_5_15": loads,
        "backends": {},
    }
    ref = np.vstack(vectors[base])
    for b in backends:
        ratios = [x / y for x, y in zip(per_trial[b], per_trial[base], strict=True)]
        cos = (np.vstack(vectors[b]) * ref).sum(axis=1)
        out["backends"][b] = {
            "windows_per_s": len(sample) / seconds[b],
            "per_trial": per_trial[b],
            f"ratio_to_{base}_median": statistics.median(ratios),
            f"ratio_to_{base}_per_trial": ratios,
            f"cosine_to_{base}": {
                "min": float(cos.min()),
                "p1": float(np.percentile(cos, 1)),
                "mean": float(cos.mean()),
            },
        }
    return out


# --------------------------------------------------------------------------- recall


def corpus(name: str, papers: int | None, seed: int = 0):
    """(questions, windows as (chunk_id, paper_id, text)) of a shared benchmark."""
    from tools.base import IngestError
    from tools.ingest.chunker import chunk_document
    from tools.ingest.jsonl import parse_records
    from tools.retrieval.dense import windows_for
    from tools.settings import tool_settings

    folder = BENCHMARKS[name]
    questions = load_jsonl(folder / "dev.jsonl")
    docs = [d for d in parse_records(folder / "papers.jsonl") if not isinstance(d, IngestError)]
    if papers is not None and papers < len(docs):
        gold: set[str] = set()
        kept = []
        for q in questions:
            ids = {str(g["paper_id"]) for g in q["gold_papers"]}
            if len(gold | ids) > papers // 2:  # at most half the corpus is gold papers
                break
            gold |= ids
            kept.append(q)
        questions = kept
        rest = [d for d in docs if d.paper.paper_id not in gold]
        fill = random.Random(seed).sample(rest, papers - len(gold))
        docs = [d for d in docs if d.paper.paper_id in gold] + fill
    chunks = [(c.chunk_id, c.paper_id, c.text) for d in docs for c in chunk_document(d)]
    return questions, windows_for(chunks, tool_settings().embedder.window_chars)


def dense_papers(
    qvec: np.ndarray, wvec: np.ndarray, win_chunk: np.ndarray, chunk_paper: list[str], k: int
) -> list[list[str]]:
    """Per question, papers ranked by their best chunk among the top-k chunks (a chunk's score
    is its best window's cosine)."""
    scores = qvec @ wvec.T  # questions x windows
    n_chunks = len(chunk_paper)
    out = []
    for row in scores:
        best = np.full(n_chunks, -np.inf, dtype=np.float32)
        np.maximum.at(best, win_chunk, row)
        top = np.argsort(-best, kind="stable")[:k]
        seen: dict[str, None] = {}
        for c in top:
            seen.setdefault(chunk_paper[c], None)
        out.append(list(seen))
    return out


def recall(names: list[str], papers: int | None, backends=("torch", "onnx-int8")) -> dict:
    from tools.settings import tool_settings

    k_chunks = tool_settings().retrieval.per_index_k
    models = {b: load(b) for b in backends}
    out = {}
    for name in names:
        questions, windows = corpus(name, papers)
        chunk_ids = list(dict.fromkeys(w.chunk_id for w in windows))
        row_of = {c: i for i, c in enumerate(chunk_ids)}
        paper_of = {w.chunk_id: w.paper_id for w in windows}
        win_chunk = np.array([row_of[w.chunk_id] for w in windows])
        chunk_paper = [paper_of[c] for c in chunk_ids]
        texts = [w.text for w in windows]
        qtexts = [q["question"] for q in questions]
        wv, qv, took = {}, {}, {}
        for b, m in models.items():
            start = time.perf_counter()
            wv[b] = m.encode(texts)
            took[b] = time.perf_counter() - start
            qv[b] = m.encode(qtexts)
            print(f"{name}: {len(texts)} windows embedded by {b} in {took[b]:.0f} s", flush=True)
        variants = {
            "torch/torch": ("torch", "torch"),
            "int8/int8": ("onnx-int8", "onnx-int8"),
            "torch index, int8 queries": ("torch", "onnx-int8"),
        }
        res: dict[str, Any] = {
            "questions": len(questions),
            "papers": len(set(chunk_paper)),
            "windows": len(texts),
            "embed_seconds": took,
            "variants": {},
        }
        for label, (ib, qb) in variants.items():
            ranked = dense_papers(qv[qb], wv[ib], win_chunk, chunk_paper, k_chunks)
            cand = [{"candidate_papers": [{"paper_id": p} for p in r]} for r in ranked]
            res["variants"][label] = {
                f"recall@{k}": statistics.fmean(candidate_recall(q, c, k) for q, c in zip(questions, cand, strict=True))
                for k in RECALL_KS
            }
        out[name] = res
    return out


# --------------------------------------------------------------------------- report


def _print_speed(r: dict) -> None:
    print(
        f"\n{r['windows']} windows from {r['source']}, {r['trials']} interleaved trials; "
        f"load average (1, 5, 15 min) before {r['load_avg_1_5_15'][0]}, after {r['load_avg_1_5_15'][-1]}"
    )
    for b, v in r["backends"].items():
        ratio = next(x for key, x in v.items() if key.endswith("_median"))
        cos = next(x for key, x in v.items() if key.startswith("cosine"))
        print(
            f"  {b:10s} {v['windows_per_s']:6.1f} windows/s  median ratio {ratio:4.2f}  "
            f"cosine min {cos['min']:.4f} mean {cos['mean']:.4f}"
        )


def _print_recall(r: dict) -> None:
    for name, res in r.items():
        print(f"\n{name}: {res['questions']} questions, {res['papers']} papers, {res['windows']} windows")
        for label, v in res["variants"].items():
            print(f"  {label:28s} " + "  ".join(f"{key} {x:.4f}" for key, x in v.items()))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    sp = sub.add_parser("speed")
    sp.add_argument("--windows", type=int, default=2000)
    sp.add_argument("--trials", type=int, default=5)
    sp.add_argument("--backends", default="torch,onnx,onnx-int8")
    sp.add_argument("--pool", action="store_true", help="add torch over the multi-process pool")
    rp = sub.add_parser("recall")
    rp.add_argument("--benchmarks", default="citerec,pubmedqa")
    rp.add_argument("--papers", type=int, default=None)
    for p in (sp, rp):
        p.add_argument("--out", type=Path, default=None, help="folder for the JSON result")
    a = ap.parse_args(argv)
    from tools.models.embed import offline

    offline()
    if a.what == "speed":
        backends = a.backends.split(",") + (["torch-mp2"] if a.pool else [])
        result = speed(backends, a.windows, a.trials)
        _print_speed(result)
    else:
        result = recall(a.benchmarks.split(","), a.papers)
        _print_recall(result)
    if a.out:
        a.out.mkdir(parents=True, exist_ok=True)
        path = a.out / f"bench_embed_{a.what}.json"
        path.write_text(json.dumps(result, indent=2))
        print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
