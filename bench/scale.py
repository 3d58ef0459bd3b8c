"""Scale benchmark of the index on a synthetic corpus.

    python -m bench.scale [--papers 27487] [--chunks-per-paper 93] --out DIR [--json] [--seed 0] [--queries 50]
    python -m bench.scale --probe DIR/index [--queries 50]   # the measurements of a built index only
    python -m bench.scale --probe DIR/index --cold           # chunk BM25 and Relate from a cold page cache

The defaults are the published corpus's size (27,487 papers cut into 2,564,545 chunks).

1. Writes a deterministic synthetic corpus (seeded numpy RNG) as S2ORC-style JSONL (bare parse:
   paper_id, title, abstract, year, venue, `body_text` paragraphs, `bib_entries` linked to corpus
   ids), which `build_index` reads like any S2ORC export. Words are drawn from a Zipf law (s 1.07)
   over the words of the demo CiteSeer abstracts ranked by frequency; body paragraphs have the
   lengths of the demo index's text chunks (a log-normal, median 550 chars, clipped to 400..1,900
   so that the chunker makes one chunk of each), so a paper makes about M chunks (M - 1 paragraphs
   plus its title-and-abstract chunk). References follow preferential attachment: paper i cites
   k ~ Poisson(10) earlier papers chosen in proportion to (in-degree + 1), a heavy-tailed in-degree.
2. The embedder is replaced by synthetic 384-d vectors (real embedding of 50K chunks takes hours on
   2 CPUs; bench/vectors.py): by default (`--vectors clustered`) shaped like the bundled
   embedder's on real chunks (a window near its section's and its paper's other windows), else
   (`--vectors random`) random unit vectors seeded by a hash of the text, which no real embedder
   makes and which slow Chroma's HNSW insertion as the collection grows. The dense index holds
   384-d vectors of the right count; they mean nothing. Embedding throughput on real text is
   measured separately (docs/benchmarks.md, "Index: build throughput").
3. Builds the index, then in a fresh subprocess (no cache of the build helps) times `open_index`,
   the lazy loads, resident memory (VmRSS) after open and after the first hybrid query, and p50/p95
   latency of chunk BM25 top-200, paper BM25 top-200, dense top-200, hybrid (`query_ranking`: the
   three indexes fused by RRF; no PRF pass) over Q random queries, and Relate's ranking B for 5
   random seeds; last, the time to add 100 more papers (a second build on the same index).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from bench.vectors import DIM, Clustered, random_unit
from evals.answers import percentile

VOCAB_SOURCE = Path(__file__).resolve().parents[1] / "tools" / "corpora" / "demo_data" / "citeseer.jsonl"
ZIPF_S = 1.07  # word frequencies of English text fall roughly as 1/rank
# text chunks of the demo index (~/.local/share/litloop/demo-index, 2026-12-01): median 546,
# mean 578 chars; title-and-abstract chunks: median 1,055
PARAGRAPH_MEDIAN, PARAGRAPH_SIGMA = 550.0, 0.35
PARAGRAPH_MIN, PARAGRAPH_MAX = 400, 1900  # >= the chunker's 400-char packing floor, < its 2,000 cap
ABSTRACT_MEDIAN = 900.0
MEAN_REFS = 10
QUERY_SKIP_TOP = 100  # queries leave out the 100 commonest words (stop words make poor queries)
SECTIONS = ("Introduction", "Related work", "Method", "Experiments", "Discussion", "Conclusion")


# ----------------------------------------------------------------------------- corpus (pure)


def load_vocabulary(path: Path = VOCAB_SOURCE, limit: int = 20000) -> list[str]:
    """Lower-case alphabetic words of the abstracts in `path`, commonest first (ties by word)."""
    counts: Counter[str] = Counter()
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            for w in f"{rec.get('title', '')} {rec.get('abstract', '')}".lower().split():
                w = w.strip(".,;:()[]\"'!?")
                if w.isalpha() and len(w) > 1:
                    counts[w] += 1
    return [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]]


def zipf_cdf(n: int, s: float = ZIPF_S) -> np.ndarray:
    w = 1.0 / np.arange(1, n + 1) ** s
    return np.cumsum(w) / w.sum()


class WordSampler:
    def __init__(self, vocab: list[str], rng: np.random.Generator, s: float = ZIPF_S):
        self.vocab = np.array(vocab, dtype=object)
        self.cdf = zipf_cdf(len(vocab), s)
        self.rng = rng
        self.mean_len = float(np.dot(np.diff(self.cdf, prepend=0.0), [len(w) + 1 for w in vocab]))

    def words(self, n: int, skip: int = 0) -> list[str]:
        lo = self.cdf[skip - 1] if skip else 0.0
        u = lo + (1.0 - lo) * self.rng.random(n)
        return list(self.vocab[np.minimum(np.searchsorted(self.cdf, u), len(self.vocab) - 1)])

    def text(self, chars: int) -> str:
        """About `chars` characters of words, cut at a word boundary at or after `chars`."""
        out: list[str] = []
        size = -1  # the length of " ".join(out)
        while size < chars:
            for w in self.words(max(8, int((chars - size) / self.mean_len) + 4)):
                out.append(w)
                size += len(w) + 1
                if size >= chars:
                    break
        return " ".join(out)


def preferential_references(n: int, rng: np.random.Generator, mean_refs: float = MEAN_REFS) -> list[list[int]]:
    """Paper i cites k ~ Poisson(mean_refs) distinct earlier papers, each with probability
    proportional to its in-degree + 1 (preferential attachment: a heavy-tailed in-degree)."""
    indeg = np.zeros(n, dtype=np.float64)
    refs: list[list[int]] = []
    for i in range(n):
        k = min(int(rng.poisson(mean_refs)), i)
        if k == 0:
            refs.append([])
            continue
        w = indeg[:i] + 1.0
        chosen = rng.choice(i, size=k, replace=False, p=w / w.sum())
        indeg[chosen] += 1
        refs.append(sorted(int(c) for c in chosen))
    return refs


def paper_id(i: int) -> str:
    return f"syn{i:07d}"


def synthetic_corpus(papers: int, chunks_per_paper: int, seed: int, vocab: list[str]) -> list[dict[str, Any]]:
    """`papers` S2ORC-style records (bare parse) that the chunker cuts into ~`chunks_per_paper`
    chunks each: the title-and-abstract chunk plus one per body paragraph."""
    rng = np.random.default_rng(seed)
    sampler = WordSampler(vocab, rng)
    refs = preferential_references(papers, rng)
    titles = [sampler.text(int(rng.integers(40, 110))).capitalize() for _ in range(papers)]
    out = []
    for i in range(papers):
        n_par = max(0, chunks_per_paper - 1)
        lengths = np.clip(rng.lognormal(np.log(PARAGRAPH_MEDIAN), PARAGRAPH_SIGMA, n_par), PARAGRAPH_MIN, PARAGRAPH_MAX)
        body = [
            {"text": sampler.text(int(L)), "section": SECTIONS[j * len(SECTIONS) // max(1, n_par)]}
            for j, L in enumerate(lengths)
        ]
        abstract = sampler.text(int(np.clip(rng.lognormal(np.log(ABSTRACT_MEDIAN), 0.3), 300, 1600)))
        out.append(
            {
                "paper_id": paper_id(i),
                "title": titles[i],
                "abstract": abstract,
                "year": 1990 + (30 * i) // max(1, papers),  # citations point back in time
                "venue": f"Synthetic Venue {i % 20}",
                "body_text": body,
                "bib_entries": {f"BIBREF{j}": {"title": titles[r], "link": paper_id(r)} for j, r in enumerate(refs[i])},
            }
        )
    return out


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in records)


def in_degrees(records: list[dict[str, Any]]) -> list[int]:
    deg = Counter(e["link"] for r in records for e in r["bib_entries"].values())
    return [deg.get(r["paper_id"], 0) for r in records]


def make_queries(vocab: list[str], n: int, seed: int, skip: int = QUERY_SKIP_TOP) -> list[str]:
    """`n` queries of 3 to 6 Zipf-drawn words, the `skip` commonest words left out."""
    rng = np.random.default_rng(seed + 1)
    sampler = WordSampler(vocab, rng)
    return [" ".join(sampler.words(int(rng.integers(3, 7)), skip=min(skip, len(vocab) - 1))) for _ in range(n)]


def latency_ms(times_s: list[float]) -> dict[str, float]:
    p50, p95 = percentile(times_s, 50), percentile(times_s, 95)
    assert p50 is not None and p95 is not None, "latencies of at least one query"
    return {"p50_ms": round(1000 * p50, 2), "p95_ms": round(1000 * p95, 2)}


# ----------------------------------------------------------------------------- random vectors


def text_key(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")


class HashEmbedder:
    """Synthetic vectors of dimension 384 for this benchmark only (no model; they carry no meaning).

    `random`: a unit vector seeded by a hash of the text. `clustered` (bench/vectors.py): a
    window the build cut (`register`ed with its paper and place) gets its paper's, section's and
    its own part, shaped like real embeddings; any other text (a query, a paper's title and
    abstract) is a fresh window of a paper chosen by its hash, as a query about that paper is."""

    def __init__(self, name: str, dim: int = DIM, kind: str = "random", papers: int = 1, seed: int = 0):
        self.name, self.dim, self.batch_size, self.device, self.max_tokens = name, dim, 32, "cpu", 256
        self.kind, self.papers = kind, max(1, papers)
        self.shaped = Clustered(seed, dim) if kind == "clustered" else None
        self.known: dict[int, tuple[int, float]] = {}  # text key -> (paper, place in it)

    def register(self, text: str, paper: int, place: float) -> None:
        self.known[text_key(text)] = (paper, place)

    def encode(self, texts, progress: bool = False) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            key = text_key(t)
            if self.shaped is None:
                out[i] = random_unit(np.random.default_rng(key), 1, self.dim)[0]
                continue
            paper, place = self.known.get(key) or (key % self.papers, (key >> 20) % 1000 / 1000)
            out[i] = self.shaped.window(paper, place, key)
        return out


VECTORS_FILE = "vectors.json"  # beside the index: which vectors its build used, for --probe


def patch_embedder(kind: str = "random", papers: int = 1, seed: int = 0, chunks_per_paper: int = 1) -> HashEmbedder:
    """Replace the embedder with `HashEmbedder` (one for every model name); with `clustered`, the
    build's windows are registered as `windows_for` cuts them."""
    import tools.models.embed
    import tools.retrieval.dense

    emb = HashEmbedder("synthetic", kind=kind, papers=papers, seed=seed)
    tools.models.embed.get_embedder = lambda name="", *args, **kwargs: emb  # type: ignore[assignment]  # the benchmark's stand-in embedder, on purpose
    if kind == "clustered":
        cut = tools.retrieval.dense.windows_for
        seen: Counter[str] = Counter()

        def windows_for(chunks, window_chars):
            out = cut(chunks, window_chars)
            for w in out:
                emb.register(
                    w.text, int(w.paper_id.removeprefix("syn")), min(0.999, seen[w.paper_id] / chunks_per_paper)
                )
                seen[w.paper_id] += 1
            return out

        tools.retrieval.dense.windows_for = windows_for  # registers the windows, on purpose
    return emb


def patch_for_probe(root: Path) -> None:
    """The vectors the index at `root` was built with (random for a build that left no record)."""
    record = Path(root).parent / VECTORS_FILE
    spec: dict[str, Any] = json.loads(record.read_text()) if record.is_file() else {"kind": "random"}
    patch_embedder(
        str(spec["kind"]), int(spec.get("papers", 1)), int(spec.get("seed", 0)), int(spec.get("chunks_per_paper", 1))
    )


# ----------------------------------------------------------------------------- measuring


def rss_gb() -> dict[str, float]:
    """VmRSS (now) and VmHWM (peak) of this process, GB."""
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(("VmRSS:", "VmHWM:")):
            key, kb = line.split(":")[0], int(line.split()[1])
            out[key] = round(kb / 1024**2, 3)
    return out


def disk_bytes(root: Path, settings) -> dict[str, int]:
    """Bytes per file of the live version and per kind of segment file (`index info`'s sizes)."""
    from tools.index import index_info

    parts = dict(index_info(root, settings)["sizes_bytes"])
    parts["total"] = sum(parts.values())
    return parts


def probe(root: Path, queries: int, seed: int) -> dict[str, Any]:
    """Run in a fresh process: open the index, load its parts, time the searches."""
    patch_for_probe(root)
    from agent.settings import get_settings
    from tools.index import open_index
    from tools.retrieval.relate import ranking_b
    from tools.retrieval.retrieve import query_ranking

    settings = get_settings(index=root)
    rss_start = rss_gb()
    t = time.perf_counter()
    idx = open_index(root, settings)
    out: dict[str, Any] = {
        "open_s": round(time.perf_counter() - t, 3),
        "rss_before_open": rss_start,
        "rss_after_open": rss_gb(),
    }
    vocab = load_vocabulary()
    qs = make_queries(vocab, queries + 1, seed)
    cfg = settings.retrieval.model_copy(update={"prf": False})  # query_ranking runs no PRF anyway
    t = time.perf_counter()
    query_ranking(idx, qs[0], cfg)  # loads both BM25 indexes and the Chroma collection
    out["first_hybrid_s"] = round(time.perf_counter() - t, 3)
    out["rss_after_query"] = rss_gb()
    t = time.perf_counter()
    idx.graph  # noqa: B018 - lazy parts Relate needs, timed apart from its queries
    out["graph_load_s"] = round(time.perf_counter() - t, 3)
    t = time.perf_counter()
    idx.paper_embeddings  # noqa: B018
    out["paper_emb_load_s"] = round(time.perf_counter() - t, 3)
    k = cfg.per_index_k
    runs = {
        "bm25": lambda q: idx.chunk_bm25.top_k(idx.tokenize(q), k),
        "paper_bm25": lambda q: idx.paper_bm25.top_k(idx.tokenize(q), k),
        "dense": lambda q: idx.dense_chunks(q, k),
        "hybrid": lambda q: query_ranking(idx, q, cfg),
    }
    for name, fn in runs.items():
        times = []
        for q in qs[1:]:
            t = time.perf_counter()
            fn(q)
            times.append(time.perf_counter() - t)
        out[name] = latency_ms(times)
    # the worst case for BM25: queries that may hold the commonest words (the longest postings)
    times = []
    for q in make_queries(vocab, queries, seed + 3, skip=0):
        t = time.perf_counter()
        idx.chunk_bm25.top_k(idx.tokenize(q), k)
        times.append(time.perf_counter() - t)
    out["bm25_common"] = latency_ms(times)
    out.update(pruning(idx, qs[1:], k, settings.relate, seed))
    rng = np.random.default_rng(seed + 2)
    times = []
    for _ in range(max(5, queries // 5)):
        seeds = [idx.paper_ids[int(i)] for i in rng.choice(len(idx.paper_ids), size=5, replace=False)]
        t = time.perf_counter()
        ranking_b(idx, seeds, settings.relate)
        times.append(time.perf_counter() - t)
    out["relate"] = latency_ms(times)
    out["rss_end"] = rss_gb()
    idx.close()
    return out


def pruning(idx, queries: list[str], k: int, relate, seed: int) -> dict[str, Any]:
    """Warm p50/p95 of BM25 top-k scored exhaustively and with MaxScore forced on (the default
    scores every posting; `_PRUNE_FROM_POSTINGS` says when it would prune): chunk BM25 on the
    queries, and paper BM25 on Relate's seed texts (`seed_text_chars` of random papers,
    `neighbours_per_seed` + 1 hits). Both give the same hits, which this checks."""
    rng = np.random.default_rng(seed + 4)
    seeds = [idx.paper_ids[int(i)] for i in rng.choice(len(idx.paper_ids), size=min(50, len(idx.paper_ids)))]
    sets = {
        "bm25": (idx.chunk_bm25, [idx.tokenize(q) for q in queries], k),
        "seed_bm25": (
            idx.paper_bm25,
            [idx.tokenize(idx.paper_text(p)[: relate.seed_text_chars]) for p in seeds],
            relate.neighbours_per_seed + 1,
        ),
    }
    out: dict[str, Any] = {}
    for name, (bm25, tokens, n) in sets.items():
        bm25.top_k(tokens[0], n)  # the first query of a kind pays for the mapped pages it reads
        hits: dict[bool, list] = {}
        for prune in (False, True):
            times = []
            hits[prune] = []
            for q in tokens:
                t = time.perf_counter()
                hits[prune].append(bm25.top_k(q, n, prune=prune))
                times.append(time.perf_counter() - t)
            out[f"{name}_{'pruned' if prune else 'exhaustive'}"] = latency_ms(times)
        assert hits[True] == hits[False], f"{name}: pruned and exhaustive top k differ"
    return out


def evict(root: Path) -> int:
    """Drop the index's files from the page cache (posix_fadvise DONTNEED, no root needed); pages
    a process still maps stay. The number of files."""
    n = 0
    for path in root.rglob("*"):
        if path.is_file():
            fd = os.open(path, os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                n += 1
            finally:
                os.close(fd)
    return n


def cold_probe(root: Path, queries: int, seed: int) -> dict[str, Any]:
    """Chunk BM25 and a Relate call from a cold page cache: before each query the index's files are
    dropped from the cache and the index opened again (so nothing it maps is resident), as for the
    first query after other work has pushed the index out of memory. Run in a fresh process."""
    patch_for_probe(root)
    from agent.settings import get_settings
    from tools.index import open_index
    from tools.retrieval.relate import ranking_b

    settings = get_settings(index=root)
    qs = make_queries(load_vocabulary(), queries, seed)
    k = settings.retrieval.per_index_k
    out: dict[str, Any] = {"files_evicted": 0}
    rng = np.random.default_rng(seed + 2)
    for name in ("bm25", "relate"):
        times = []
        for q in qs if name == "bm25" else qs[: max(5, queries // 5)]:
            out["files_evicted"] = evict(root)
            idx = open_index(root, settings)
            try:
                if name == "bm25":
                    tokens = idx.tokenize(q)
                    t = time.perf_counter()
                    idx.chunk_bm25.top_k(tokens, k)
                else:
                    seeds = [idx.paper_ids[int(i)] for i in rng.choice(len(idx.paper_ids), size=5, replace=False)]
                    idx.graph  # noqa: B018 - the graph's JSON is parsed whole, timed apart ("graph load")
                    t = time.perf_counter()
                    ranking_b(idx, seeds, settings.relate)
                times.append(time.perf_counter() - t)
            finally:
                idx.close()
                del idx
        out[f"{name}_cold"] = latency_ms(times)
    return out


def skip_dense() -> None:
    """Keep no vectors in Chroma (`--no-dense`): for sizes whose Chroma insertion alone would take
    hours; dense and hybrid latencies then measure an empty dense index and mean nothing."""
    import tools.retrieval.dense

    tools.retrieval.dense.ChromaDense.add = lambda self, items, embeddings, progress=None: None  # type: ignore[method-assign]  # keep no vectors, on purpose


def run(
    papers: int,
    chunks_per_paper: int,
    out: Path,
    seed: int,
    queries: int,
    add: int = 100,
    dense: bool = True,
    compact: bool = False,
    vectors: str = "clustered",
) -> dict[str, Any]:
    spec = {"kind": vectors, "papers": papers + add, "seed": seed, "chunks_per_paper": chunks_per_paper}
    patch_embedder(vectors, papers + add, seed, chunks_per_paper)
    if not dense:
        skip_dense()
    from agent.settings import get_settings
    from tools.index import build_index

    vocab = load_vocabulary()
    t = time.perf_counter()
    records = synthetic_corpus(papers + add, chunks_per_paper, seed, vocab)
    write_jsonl(out / "corpus" / "base.jsonl", records[:papers])
    write_jsonl(out / "add" / "add.jsonl", records[papers:])
    gen_s = time.perf_counter() - t
    deg = in_degrees(records[:papers])
    root = out / "index"
    (out / VECTORS_FILE).write_text(json.dumps(spec))
    settings = get_settings(index=root)
    t = time.perf_counter()
    report = build_index([out / "corpus"], root, settings, rebuild=True)
    build_s = time.perf_counter() - t
    result: dict[str, Any] = {
        "papers": report.totals["papers"],
        "chunks": report.totals["chunks"],
        "citation_edges": report.totals["citation_edges"],
        "dense_windows": report.totals["dense_windows"],
        "in_degree": {"median": float(np.median(deg)), "max": int(max(deg))},
        "vectors": (
            f"{vectors} synthetic vectors (bench/vectors.py), not a model's"
            if dense
            else f"none in Chroma (--no-dense); paper embeddings {vectors} synthetic vectors"
        ),
        "generate_s": round(gen_s, 2),
        "build_s": round(build_s, 2),
        "build_stages": {k: round(v, 2) for k, v in report.seconds.items()},
        "disk_bytes": disk_bytes(root, settings),
    }
    proc = subprocess.run(
        [sys.executable, "-m", "bench.scale", "--probe", str(root), "--queries", str(queries), "--seed", str(seed)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    p = json.loads(proc.stdout.strip().splitlines()[-1])
    result.update(
        {
            "open_s": p["open_s"],
            "first_hybrid_s": p["first_hybrid_s"],
            "graph_load_s": p["graph_load_s"],
            "paper_emb_load_s": p["paper_emb_load_s"],
            "rss_gb": p["rss_after_open"]["VmRSS"],
            "rss_after_query_gb": p["rss_after_query"]["VmRSS"],
            "rss_end_gb": p["rss_end"]["VmRSS"],
            "rss_peak_gb": p["rss_end"]["VmHWM"],
            "rss_interpreter_gb": p["rss_before_open"]["VmRSS"],
        }
    )
    names = ["bm25", "bm25_common", "paper_bm25", "dense", "hybrid", "relate"]
    names += ["bm25_exhaustive", "bm25_pruned", "seed_bm25_exhaustive", "seed_bm25_pruned"]
    for name in names:
        result[f"{name}_p50_ms"], result[f"{name}_p95_ms"] = p[name]["p50_ms"], p[name]["p95_ms"]
    proc = subprocess.run(
        [sys.executable, "-m", "bench.scale", "--probe", str(root), "--cold", "--queries", str(queries)]
        + ["--seed", str(seed)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    cold = json.loads(proc.stdout.strip().splitlines()[-1])
    for name in ("bm25_cold", "relate_cold"):
        result[f"{name}_p50_ms"], result[f"{name}_p95_ms"] = cold[name]["p50_ms"], cold[name]["p95_ms"]
    t = time.perf_counter()
    added = build_index([out / "add"], root, settings)
    result["add100_s"] = round(time.perf_counter() - t, 2)
    result["add100_stages"] = {k: round(v, 2) for k, v in added.seconds.items()}
    result["add100_papers"] = added.papers_added
    proc = subprocess.run(
        [sys.executable, "-m", "bench.scale", "--probe", str(root), "--queries", "5", "--seed", str(seed)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    after = json.loads(proc.stdout.strip().splitlines()[-1])
    result["after_add"] = {"segments": 2, "open_s": after["open_s"], "hybrid_p50_ms": after["hybrid"]["p50_ms"]}
    if compact:
        from tools.index import compact_index

        done = compact_index(root, settings)
        result["compact_s"] = round(done.seconds, 2)
    result["queries"] = queries
    result["seed"] = seed
    (out / "result.json").write_text(json.dumps(result, indent=2))
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--papers", type=int, default=27487)
    ap.add_argument("--chunks-per-paper", type=int, default=93)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument(
        "--no-dense",
        action="store_true",
        help="keep no vectors in Chroma (its insertion takes hours at millions of chunks); "
        "dense and hybrid figures then mean nothing",
    )
    ap.add_argument(
        "--vectors",
        choices=("clustered", "random"),
        default="clustered",
        help="synthetic vectors shaped like real embeddings (default), or random unit vectors (the figures before "
        "2026-12-03; the hardest case for HNSW)",
    )
    ap.add_argument("--compact", action="store_true", help="also time `compact_index` after the add (2 segments to 1)")
    ap.add_argument("--probe", type=Path, help="measure the index built in this folder (no build)")
    ap.add_argument(
        "--cold",
        action="store_true",
        help="with --probe: chunk BM25 and Relate with the index's files dropped from the page cache before each query",
    )
    args = ap.parse_args(argv)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if args.probe:
        measure = cold_probe if args.cold else probe
        print(json.dumps(measure(args.probe, args.queries, args.seed)))
        return 0
    if args.out is None:
        ap.error("--out DIR is required")
    result = run(
        args.papers,
        args.chunks_per_paper,
        args.out,
        args.seed,
        args.queries,
        dense=not args.no_dense,
        compact=args.compact,
        vectors=args.vectors,
    )
    if args.json:
        print(json.dumps(result))
    else:
        print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
