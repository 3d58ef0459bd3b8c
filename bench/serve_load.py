"""The Agent Protocol server under load: `litloop serve` with 8 concurrent threads x 5 questions,
with the scripted model (tests/openai_stub.py answers at once: the server's own overhead) or the
embedded model (`--embedded`), over the small test index. Prints and writes p50/p95 latency of a
run (runs.wait, client side) and throughput. The threads' checkpoints and records go to the
server's SQLite file, or with `--postgres` to a throwaway PostgreSQL cluster (tests/postgres.py,
Debian's server binaries). `--servers 2` (with `--postgres`) starts two servers on that one
database, as behind a load balancer: thread t is created on server t mod 2 and its questions go
to the servers in turn, so every second question continues a thread on the other server.

    python -m bench.serve_load --threads 8 --questions 5 --jobs 4 --out runs/serve_load.json
    python -m bench.serve_load --threads 8 --questions 5 --jobs 4 --postgres --servers 2
    python -m bench.serve_load --threads 2 --questions 1 --jobs 1 --postgres --servers 2 --embedded
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

QUESTION = "Which sequence labelling models use conditional random fields, and what F1 do they reach?"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p * (len(xs) - 1)))]


async def _load(urls: list[str], threads: int, questions: int) -> tuple[list[float], float]:
    from langgraph_sdk import get_client

    clients = [get_client(url=url, timeout=3600) for url in urls]
    latencies: list[float] = []

    async def one(t: int) -> None:
        thread = await clients[t % len(clients)].threads.create()
        for q in range(questions):
            client = clients[(t + q) % len(clients)]
            t0 = time.perf_counter()
            values = await client.runs.wait(thread["thread_id"], "litloop", input={"question": f"{QUESTION} ({t}.{q})"})
            latencies.append(time.perf_counter() - t0)
            if not (isinstance(values, dict) and values.get("answer", {}).get("text")):
                raise RuntimeError(f"thread {t} question {q}: no answer: {values}")

    t0 = time.perf_counter()
    await asyncio.gather(*(one(t) for t in range(threads)))
    return latencies, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--questions", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=4, help="litloop serve --jobs")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--postgres", action="store_true", help="checkpoints in a throwaway Postgres cluster")
    ap.add_argument("--servers", type=int, default=1, help="servers on one database (more than 1 needs --postgres)")
    ap.add_argument("--embedded", action="store_true", help="the embedded model instead of the scripted one")
    args = ap.parse_args()
    if args.servers > 1 and not args.postgres:
        ap.error("--servers 2 needs --postgres: two servers share threads through one Postgres database")
    from tests.conftest import build_papers_index
    from tests.openai_stub import OpenAIStub

    with tempfile.TemporaryDirectory() as tmp, OpenAIStub() as stub:
        folder = Path(tmp)
        cluster = None
        if args.postgres:
            from tests.postgres import Cluster

            cluster = Cluster(folder / "postgres").start()
        (folder / "corpus").mkdir()
        index = build_papers_index(folder / "corpus")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LITLOOP_", "LANGSMITH_", "LANGCHAIN_"))}
        env["LITLOOP_DATA_DIR"] = str(folder / "data")
        if not args.embedded:
            env.update(
                LITLOOP_LLM__BASE_URL=stub.base_url, LITLOOP_LLM__MODEL="stub-model", LITLOOP_LLM__MAX_RETRIES="0"
            )
        if cluster is not None:
            env["LITLOOP_CHECKPOINT__URL"] = cluster.url
        procs, urls = [], []
        try:
            for n in range(args.servers):
                port = _free_port()
                cmd = [sys.executable, "-m", "agent.cli.main", "serve", "--index", str(index), "--port", str(port)]
                cmd += ["--jobs", str(args.jobs)]
                log = (folder / f"server-{n}.log").open("wb")
                own = {**env, "LITLOOP_DATA_DIR": str(folder / f"data-{n}")}
                procs.append(subprocess.Popen(cmd, env=own, stdout=log, stderr=subprocess.STDOUT))
                urls.append(f"http://127.0.0.1:{port}")
            for n, url in enumerate(urls):
                for _ in range(240):
                    try:
                        with urllib.request.urlopen(url + "/ok", timeout=2):
                            break
                    except OSError:
                        if procs[n].poll() is not None:
                            raise SystemExit((folder / f"server-{n}.log").read_text()[-2000:]) from None
                        time.sleep(0.5)
            for url in urls:
                asyncio.run(_load([url], 1, 1))  # warm: the first run opens the index (and loads the model)
            latencies, wall = asyncio.run(_load(urls, args.threads, args.questions))
        finally:
            for proc in procs:
                proc.terminate()
                proc.wait(timeout=30)
            if cluster is not None:
                cluster.stop()
    result = {
        "checkpoints": "postgres" if args.postgres else "sqlite",
        "servers": args.servers,
        "model": "embedded" if args.embedded else "scripted",
        "threads": args.threads,
        "questions_per_thread": args.questions,
        "jobs": args.jobs,
        "runs": len(latencies),
        "p50_s": round(statistics.median(latencies), 3),
        "p95_s": round(_pct(latencies, 0.95), 3),
        "throughput_runs_per_s": round(len(latencies) / wall, 2),
        "wall_s": round(wall, 2),
    }
    print(json.dumps(result))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
