"""Reranking: the interface every backend implements, the order it gives, and shared plumbing.

A reranker scores passages for one query (`Reranker.score`); `tools.retrieval.fusion.rerank_order` turns the scores
into an order. The backends are one module each: `NoReranker` here (keeps the retrieval order),
`tools.models.rerank.cross_encoder`, `tools.models.rerank.llm`; `tools.models.rerank.build_reranker` picks one from
`RerankSettings` (`tools.settings`). The helpers below are what the model backends share:
precision per device, local paths, the passage cut (offline loading is `tools.models.embed.offline`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

Precision = Literal["float16", "float32"]


@runtime_checkable
class Reranker(Protocol):
    """Scores passages for one query: higher is more relevant, same length and order as `texts`."""

    name: str

    def score(self, query: str, texts: Sequence[str]) -> list[float]: ...


class NoReranker:
    """Keeps the given order: the rerank step then reproduces the retrieval ranking."""

    name = "none"
    device = "none"
    dtype = "none"

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        return [-float(i) for i in range(len(texts))]


def precision_for(device: str) -> Precision:
    """fp16 on CUDA (half the memory, about twice the throughput); fp32 on CPU, where half
    precision matmuls are slow or unsupported."""
    return "float16" if device.startswith("cuda") else "float32"


def apply_precision(model: Any, device: str) -> Any:
    """Move a torch model to `device` in the precision `precision_for` chooses."""
    import torch

    return model.to(device=device, dtype=getattr(torch, precision_for(device)))


def local_or_hub(name: str) -> str:
    """A local directory when one exists, else the hub id (loaded only from the local cache)."""
    path = Path(name).expanduser()
    return str(path) if path.exists() else name


def cut(text: str, max_chars: int) -> str:
    """The passage as the reranker reads it: the first `max_chars` characters (paper: 1,800)."""
    return text if len(text) <= max_chars else text[:max_chars].rstrip()


def batches(items: Sequence[int], size: int) -> Iterator[Sequence[int]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
