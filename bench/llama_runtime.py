"""Tokens per second of a llama.cpp runtime on this machine: the prebuilt `xllamacpp` server that
litloop ships with, or `llama-cpp-python` (compiled on install), on the same GGUF model.

    python -m bench.llama_runtime --backend xllamacpp [--model GGUF] [--threads N]
    python bench/llama_runtime.py --backend llama-cpp-python --model GGUF   # its own venv

Each trial streams one completion of `--output-tokens` tokens for a fresh prompt of about
`--prompt-tokens` tokens (a nonce first, so no prompt cache can serve it): prompt tokens/s =
prompt tokens / time to the first token, output tokens/s = the other tokens / the time after
it. The median of `--trials` is printed as JSON.
The llama-cpp-python backend needs only `llama_cpp`, so it runs from any virtual environment.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

MODEL = Path("~/.local/share/litloop/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf").expanduser()
TEXT = (
    "SPECTER learns document-level representations of scientific papers by pretraining a "
    "Transformer language model on a citation graph: a cited paper is the positive example and "
    "an uncited paper the negative one, with a triplet margin loss. "
)


def prompt(tokens: int) -> str:
    """A fresh prompt of about `tokens` tokens (about 4 characters a token for English)."""
    body = TEXT * (tokens * 4 // len(TEXT) + 1)
    return f"[{uuid.uuid4().hex}] Summarise in one word:\n{body[: tokens * 4]}"


def run_llama_cpp_python(model: Path, threads: int, trials: int, n_prompt: int, n_out: int) -> list[dict]:
    from llama_cpp import Llama

    llm = Llama(model_path=str(model), n_threads=threads, n_threads_batch=threads, n_ctx=4096, verbose=False)
    rows = []
    for _ in range(trials):
        text = prompt(n_prompt)
        n = len(llm.tokenize(text.encode()))
        llm.reset()
        t, first, made = time.perf_counter(), None, 0
        for _piece in llm.create_completion(text, max_tokens=n_out, temperature=0, stream=True):
            made += 1
            first = first if first is not None else time.perf_counter() - t
        rows.append(_rates(n, first or 0.0, made, time.perf_counter() - t))
    return rows


def run_xllamacpp(model: Path, threads: int, trials: int, n_prompt: int, n_out: int) -> list[dict]:
    import httpx

    from agent.llm.local import LocalServer

    rows = []
    with LocalServer(model, ctx=4096, threads=threads) as server:
        headers = {"Authorization": f"Bearer {server.api_key}"}
        for _ in range(trials):
            text = prompt(n_prompt)
            body = {
                "prompt": text,
                "max_tokens": n_out,
                "temperature": 0,
                "stream": True,
                "stream_options": {"include_usage": True},
            }
            t, first, made, n = time.perf_counter(), None, 0, 0
            with httpx.stream("POST", f"{server.base_url}/completions", json=body, headers=headers, timeout=600) as r:
                r.raise_for_status()
                for line in r.iter_lines():
                    if not line.startswith("data: ") or line == "data: [DONE]":
                        continue
                    event = json.loads(line[6:])
                    if event.get("usage"):
                        n = event["usage"].get("prompt_tokens", n)
                    if any(c.get("text") for c in event.get("choices") or []):
                        made += 1
                        first = first if first is not None else time.perf_counter() - t
            rows.append(_rates(n, first or 0.0, made, time.perf_counter() - t))
    return rows


def _rates(n_prompt: int, first: float, made: int, whole: float) -> dict:
    return {
        "prompt_tokens": n_prompt,
        "output_tokens": made,
        "prompt_s": round(first, 3),
        "total_s": round(whole, 3),
        "prompt_tps": n_prompt / first,
        "output_tps": (made - 1) / max(1e-9, whole - first),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", choices=["xllamacpp", "llama-cpp-python"], required=True)
    ap.add_argument("--model", type=Path, default=MODEL)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--prompt-tokens", type=int, default=1000)
    ap.add_argument("--output-tokens", type=int, default=64)
    args = ap.parse_args(argv)
    if not args.model.is_file():
        print(
            f"{args.model}: no such model file; run `litloop demo` once to assemble it, or give --model",
            file=sys.stderr,
        )
        return 2
    run = run_xllamacpp if args.backend == "xllamacpp" else run_llama_cpp_python
    rows = run(args.model, args.threads, args.trials, args.prompt_tokens, args.output_tokens)
    print(
        json.dumps(
            {
                "backend": args.backend,
                "threads": args.threads,
                "trials": rows,
                "prompt_tps_median": statistics.median(r["prompt_tps"] for r in rows),
                "output_tps_median": statistics.median(r["output_tps"] for r in rows),
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
