"""The `cross-encoder` reranker: any sentence-transformers `CrossEncoder` in a local directory or
the local Hugging Face cache, batched, fp16 on CUDA. A causal-LM reranker directory such as
Qwen3-Reranker also loads here: sentence-transformers v6 scores it by its yes/no logits.
sentence_transformers and torch are imported only when a model loads."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from tools.models.embed import ModelNotAvailable, offline, resolve_device
from tools.models.rerank.base import (
    Precision,
    apply_precision,
    cut,
    local_or_hub,
    precision_for,
)
from tools.settings import ENV, RerankSettings

log = logging.getLogger(__name__)


class CrossEncoderReranker:
    """A sentence-transformers CrossEncoder, batched, fp16 on CUDA."""

    def __init__(self, settings: RerankSettings, device: str = "auto") -> None:
        assert settings.model, "validated by RerankSettings"
        self.name = f"cross-encoder:{settings.model}"
        self.device = resolve_device(device)
        self.dtype: Precision = precision_for(self.device)
        self.batch_size = settings.batch_size
        self.max_chars = settings.max_chars
        self._model = _load_cross_encoder(local_or_hub(settings.model), self.device)

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        pairs = [(query, cut(t, self.max_chars)) for t in texts]
        out = self._model.predict(
            pairs,
            batch_size=self.batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
            apply_softmax=True,  # only acts on multi-class heads
        )
        if getattr(out, "ndim", 1) == 2:
            out = out[:, -1]  # multi-class head: the last class is "relevant" by convention
        return [float(s) for s in out]


@lru_cache(maxsize=2)
def _load_cross_encoder(path: str, device: str) -> Any:
    offline()
    import torch
    from sentence_transformers import CrossEncoder

    try:
        model = CrossEncoder(
            path,
            device=device,
            local_files_only=True,
            # transformers 5 loads in the checkpoint's dtype by default (often bf16): say which
            model_kwargs={"dtype": getattr(torch, precision_for(device))},
        )
    except Exception as exc:  # the libraries raise several types for "not found locally"
        raise ModelNotAvailable(
            f"cannot load cross-encoder {path!r} offline ({type(exc).__name__}: {exc}). Set "
            f"{ENV}MODEL to a local CrossEncoder directory or a hub id already in the local Hugging "
            f"Face cache, or {ENV}BACKEND=none"
        ) from exc
    model = apply_precision(model, device)
    log.info("loaded cross-encoder %s on %s (%s)", path, device, precision_for(device))
    return model
