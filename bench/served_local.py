"""Served is asked: the demo question through `litloop serve` with the embedded model, as the
langgraph-sdk documentation shows a client doing it (`threads.create()`, then `runs.wait` with
the question and no context), against `litloop ask` on the same index and machine. Prints the
two answers' agreement and times. The served run pays for starting the server's own embedded
model, as `ask` pays for its own; what the data folder caches for every process (the embedder's
ONNX export) is made once before either is timed.

    python -m bench.served_local                    # over the small test index (one demo PDF)
    python -m bench.served_local --index ~/litloop-index
    python -m bench.served_local --question "What margin does SPECTER's triplet loss use?"
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

QUESTION = "How does SPECTER use citations to learn document-level representations of papers?"


def served_and_asked(index: Path, data: Path, question: str = QUESTION, preset: str | None = None) -> dict[str, Any]:
    """Ask `question` of a fresh `litloop serve` on `index` (embedded model, no context), then
    of `litloop ask` with the same settings; both records and times."""
    from langgraph_sdk import get_sync_client

    from tests.served import free_port

    env = {k: v for k, v in os.environ.items() if not k.startswith(("LITLOOP_", "LANGSMITH_", "LANGCHAIN_"))}
    env["LITLOOP_DATA_DIR"] = str(data)
    ask = [sys.executable, "-m", "agent.cli.main", "ask", question, "--index", str(index), "--json"]
    ask += ["--preset", preset] if preset else []
    # untimed, once: what the data folder caches for every later process (the embedder exported to
    # ONNX and quantized, about 20 s) would otherwise be paid by whichever of the two ran first
    warm = subprocess.run(ask, env=env, capture_output=True, text=True, timeout=1800)
    if warm.returncode != 0:
        raise RuntimeError(f"litloop ask failed: {warm.stderr[-2000:]}")
    port = free_port()
    cmd = [sys.executable, "-m", "agent.cli.main", "serve", "--index", str(index), "--port", str(port)]
    cmd += ["--preset", preset] if preset else []
    log_path = data / "server.log"
    data.mkdir(parents=True, exist_ok=True)
    with log_path.open("wb") as log:
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ok(url, proc, log_path)
        client = get_sync_client(url=url)
        t0 = time.perf_counter()
        thread = client.threads.create()
        served = client.runs.wait(thread["thread_id"], "litloop", input={"question": question})
        served_s = time.perf_counter() - t0
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
    t0 = time.perf_counter()
    asked = subprocess.run(ask, env=env, capture_output=True, text=True, timeout=1800)
    asked_s = time.perf_counter() - t0
    if asked.returncode != 0:
        raise RuntimeError(f"litloop ask failed: {asked.stderr[-2000:]}")
    record = json.loads(asked.stdout)
    if not isinstance(served, dict) or "answer" not in served:
        raise RuntimeError(f"the served run gave no answer: {str(served)[:2000]}; log: {log_path}")
    return {"served": served, "served_s": served_s, "asked": record, "asked_s": asked_s}


def _wait_ok(url: str, proc: subprocess.Popen, log: Path) -> None:
    import urllib.request

    for _ in range(480):
        if proc.poll() is not None:
            raise RuntimeError(f"litloop serve exited: {log.read_text(errors='replace')[-2000:]}")
        try:
            with urllib.request.urlopen(url + "/ok", timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"litloop serve did not answer /ok: {log.read_text(errors='replace')[-2000:]}")


def summary(run: dict[str, Any]) -> dict[str, Any]:
    """Whether the two answers agree (text, and the chunks cited, in order), and the times."""
    served, asked = run["served"]["answer"], run["asked"]
    cited = [c["chunk_id"] for c in served.get("citations", [])]
    asked_cited = [c["chunk_id"] for c in asked["attribution"]["citations"]]
    return {
        "same_text": served.get("text") == asked["answer"]["freeform"]["text"],
        "same_citations": cited == asked_cited,
        "served_s": round(run["served_s"], 1),
        "asked_s": round(run["asked_s"], 1),
        "ratio": round(run["served_s"] / run["asked_s"], 2),
        "citations": cited,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=Path, help="index directory (default: a small index of one demo PDF)")
    ap.add_argument("--preset", help="litloop serve --preset and ask --preset (default: each one's own)")
    ap.add_argument("--question", default=QUESTION, help="the question asked of both (default: the demo question)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        index = args.index.expanduser() if args.index else _small_index(folder)
        print(
            json.dumps(summary(served_and_asked(index, folder / "data", args.question, preset=args.preset)), indent=2)
        )


def _small_index(folder: Path) -> Path:
    from agent.settings import get_settings
    from tests.conftest import DEMO_PDFS
    from tools.index import build_index

    corpus = folder / "corpus"
    corpus.mkdir()
    for stem in ("2020.acl-main.207",):
        for suffix in (".pdf", ".meta.json"):
            (corpus / f"{stem}{suffix}").write_bytes((DEMO_PDFS / f"{stem}{suffix}").read_bytes())
    root = folder / "idx"
    build_index([corpus], root, get_settings())
    return root


if __name__ == "__main__":
    main()
