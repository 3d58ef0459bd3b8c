"""The ONNX Runtime backends of the chunk embedder (`onnx`, `onnx-int8`).

The sentence-transformers model is exported to ONNX once, from its local files, by torch's own
exporter, and for `onnx-int8` quantised by onnxruntime's dynamic int8 quantiser (int8 weights
per output channel, activations quantised per batch, no calibration data). The result is cached
in `data_dir/embedders/` keyed by the model folder's files, so later processes only load it.
Encoding then needs neither torch nor transformers: the `tokenizers` fast tokenizer, one ONNX
Runtime session, mean (or CLS) pooling and normalisation in numpy.

Not sentence-transformers' `backend="onnx"`: it goes through optimum-onnx, and every optimum-onnx
release pins transformers<4.58 while litloop runs transformers 5, so it cannot be installed beside
it; torch.onnx and onnxruntime.quantization make the same export without it.

onnxruntime, onnx, torch and sentence_transformers are imported inside functions.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tools.errors import ModelNotAvailable

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)

ONNX_BACKENDS = ("onnx", "onnx-int8")
# what to install, named in every error about missing packages (pyproject pins the same)
ONNX_PACKAGES = "'litloop[onnx]'"  # onnxruntime and onnx, pinned in pyproject.toml
# bump when the export recipe changes, so old caches are not reused
EXPORT_VERSION = 2
_FILES = {"onnx": "model.onnx", "onnx-int8": "model_int8.onnx"}
_SUPPORTED_POOLING = ("mean", "cls")


def require(module: str, backend: str) -> None:
    """Import `module` or say exactly what to install."""
    import importlib

    try:
        importlib.import_module(module)
    except ImportError as exc:
        raise ModelNotAvailable(
            f"embedder backend {backend!r} needs the {module} package, which is not installed: "
            f"pip install {ONNX_PACKAGES} (or set LITLOOP_EMBEDDER__BACKEND=torch)"
        ) from exc


def fingerprint(model_path: str) -> str:
    """A key for the model folder's contents (names, sizes, modification times) and the recipe."""
    h = hashlib.sha256(f"v{EXPORT_VERSION}|{Path(model_path).resolve()}".encode())
    for p in sorted(Path(model_path).rglob("*")):
        if p.is_file():
            st = p.stat()
            h.update(f"|{p.relative_to(model_path)}:{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()[:16]


def cache_dir(model_path: str, data_dir: Path) -> Path:
    p = Path(model_path)
    name = f"{p.parent.name}-{p.name}" if p.name == "model" else p.name  # the bundled one is .../model
    slug = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:60]
    return Path(data_dir) / "embedders" / f"{slug}-{fingerprint(model_path)}"


def ensure_exported(
    model_path: str, backend: str, data_dir: Path, load_model: Callable[[str, str], SentenceTransformer]
) -> Path:
    """The cache folder holding `backend`'s ONNX file for `model_path`, exported now if missing.

    Each file appears whole or not at all (written aside, then renamed), so a process that
    stops mid-export, or two that export at once, leave no half-written model behind."""
    folder = cache_dir(model_path, data_dir)
    if not (folder / "meta.json").exists():
        require("onnx", backend)
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
        try:
            _export(load_model(model_path, "cpu"), model_path, tmp)
            tmp.chmod(0o755)  # mkdtemp makes it private; the cache is as readable as the data folder
            try:
                os.replace(tmp, folder)
            except OSError:  # another process finished the same export first: use its files
                if not (folder / "meta.json").exists():
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        log.info("exported embedder %s to %s", model_path, folder)
    target = folder / _FILES[backend]
    if not target.exists():
        require("onnx", backend)
        part = folder / f".{target.name}.{os.getpid()}"
        try:
            _quantize(folder / _FILES["onnx"], part)
            os.replace(part, target)
        finally:
            part.unlink(missing_ok=True)
        log.info("quantised embedder %s to int8 in %s", model_path, target)
    return folder


def _export(st: SentenceTransformer, model_path: str, out: Path) -> None:
    """model.onnx (the transformer's token states), tokenizer.json and meta.json into `out`."""
    import warnings

    import torch

    meta = _pipeline_meta(st, model_path)
    transformer: Any = st[0]  # sentence-transformers' Transformer module (torch types it as a Tensor or Module)
    prepare = getattr(transformer, "preprocess", None) or transformer.tokenize  # renamed in ST 6
    features = prepare(["an example sentence"])
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in features]

    class TokenStates(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, *inputs):
            return self.model(**dict(zip(names, inputs, strict=True))).last_hidden_state

    hf = transformer.auto_model
    model = TokenStates(hf).eval()
    sample = tuple(features[n] for n in names)
    axes = {n: {0: "batch", 1: "tokens"} for n in [*names, "token_states"]}
    # attention traced as plain matmul + softmax rather than the SDPA kernel: the int8 model
    # of that graph ran about 15% faster in interleaved trials (same vectors). The model object
    # is the torch backend's too, so its attention is put back afterwards.
    before = getattr(hf.config, "_attn_implementation", None)
    _set_attention(hf, "eager")
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation notice
            # the TorchScript exporter: the dynamo one needs onnxscript and gains nothing here
            torch.onnx.export(
                model,
                sample,
                str(out / _FILES["onnx"]),
                input_names=names,
                output_names=["token_states"],
                dynamic_axes=axes,
                opset_version=17,
                dynamo=False,
            )
    finally:
        if before is not None:
            _set_attention(hf, before)
    tok = transformer.tokenizer
    if not getattr(tok, "is_fast", False):
        raise ModelNotAvailable(
            f"embedder {model_path!r} has no fast tokenizer; the ONNX backends "
            "need one (set LITLOOP_EMBEDDER__BACKEND=torch)"
        )
    tok.backend_tokenizer.save(str(out / "tokenizer.json"))
    meta["inputs"] = names
    (out / "meta.json").write_text(json.dumps(meta, indent=2))


def _set_attention(model, kind: str) -> None:
    setter = getattr(model, "set_attn_implementation", None)
    if setter is not None:
        setter(kind)
    else:  # transformers before 4.48
        model.config._attn_implementation = kind


def _pipeline_meta(st, model_path: str) -> dict:
    """What encoding needs besides the graph; refuses pipelines other than transformer, pooling,
    normalise (a dense layer or another pooling would silently change the vectors)."""
    kinds = [type(m).__name__ for m in st]
    if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        raise ModelNotAvailable(
            f"embedder {model_path!r} is {' -> '.join(kinds)}; the ONNX backends "
            "support Transformer -> Pooling (-> Normalize) only (set "
            "LITLOOP_EMBEDDER__BACKEND=torch)"
        )
    pooling = st[1]
    mode = getattr(pooling, "pooling_mode", None)
    if mode is None:  # older sentence-transformers: flags instead of a mode name
        mode = "mean" if pooling.get_config_dict().get("pooling_mode_mean_tokens") else "cls"
    if mode not in _SUPPORTED_POOLING:
        raise ModelNotAvailable(
            f"embedder {model_path!r} pools by {mode!r}; the ONNX backends support "
            f"{', '.join(_SUPPORTED_POOLING)} (set LITLOOP_EMBEDDER__BACKEND=torch)"
        )
    dim_of = getattr(st, "get_embedding_dimension", None) or st.get_sentence_embedding_dimension
    return {
        "pooling": mode,
        "dim": int(dim_of()),
        "max_tokens": int(st.max_seq_length or 256),
        "source": str(model_path),
        "export_version": EXPORT_VERSION,
    }


def _quantize(src: Path, dst: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # the quantiser logs a line per tensor to the root logger: quiet for these few seconds
    logging.disable(logging.WARNING)
    try:
        # per-channel int8 weights: per-tensor scales lost too much here (mean cosine with the
        # torch vectors 0.948 against 0.995 per channel on demo windows)
        quantize_dynamic(str(src), str(dst), weight_type=QuantType.QInt8, per_channel=True)
    finally:
        logging.disable(logging.NOTSET)


class OnnxEmbedder:
    """The Embedder interface (name, dim, max_tokens, encode) over an ONNX Runtime session."""

    def __init__(
        self,
        name: str,
        model_path: str,
        backend: str,
        data_dir: Path,
        batch_size: int = 32,
        threads: int | None = None,
        *,
        load_model: Callable[[str, str], SentenceTransformer],
    ):
        """`load_model(path, device)` loads the sentence-transformers model, for the one-time
        export (tools.models.embed passes its offline loader)."""
        if backend not in ONNX_BACKENDS:
            raise ValueError(f"not an ONNX backend: {backend!r}")
        require("onnxruntime", backend)
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.name = name
        self.backend = backend
        self.device = "cpu"
        self.batch_size = batch_size
        self.folder = ensure_exported(model_path, backend, data_dir, load_model)
        meta = json.loads((self.folder / "meta.json").read_text())
        self.dim = int(meta["dim"])
        self.max_tokens = int(meta["max_tokens"])
        self._pooling = meta["pooling"]
        self._inputs = list(meta["inputs"])
        self._tok = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
        self._tok.enable_truncation(self.max_tokens)
        self._tok.no_padding()
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.intra_op_num_threads = threads or len(os.sched_getaffinity(0))
        opts.log_severity_level = 3
        # no busy-waiting between operators: on cores shared with other work, spinning threads
        # lost 10-30% of int8 throughput in interleaved trials (docs/benchmarks.md)
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(
            str(self.folder / _FILES[backend]), opts, providers=["CPUExecutionProvider"]
        )
        log.info("loaded embedder %s as %s from %s", name, backend, self.folder)

    def encode(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        """Unit-length float32 rows, like the torch backend's (cosine is a dot product).

        One text per call, at its own length: nothing is padded, and a text's int8 vector does
        not depend on the texts around it (dynamic quantisation scales the activations of a
        whole call at once, so a batch would tie each vector to its batch). It was also faster
        than batches of 32 here (docs/benchmarks.md), so `batch_size` is not used.
        """
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        bar = _bar(progress, len(texts))
        for row, e in enumerate(self._tok.encode_batch(list(texts))):
            ids = np.asarray([e.ids], dtype=np.int64)
            feeds = {
                "input_ids": ids,
                "attention_mask": np.ones_like(ids),
                "token_type_ids": np.asarray([e.type_ids], dtype=np.int64),
            }
            states = self._session.run(None, {n: feeds[n] for n in self._inputs})[0]
            out[row] = pool(states, feeds["attention_mask"], self._pooling)[0]
            if bar is not None:
                bar.update(1)
        if bar is not None:
            bar.close()
        return out


def pool(states: np.ndarray, mask: np.ndarray, mode: str) -> np.ndarray:
    """Token states (batch, tokens, dim) to unit-length sentence vectors."""
    if mode == "cls":
        vec = states[:, 0, :]
    else:
        m = mask[..., None].astype(states.dtype)
        vec = (states * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
    norms = np.linalg.norm(vec, axis=1, keepdims=True)
    return (vec / np.maximum(norms, 1e-12)).astype(np.float32)


def _bar(progress: bool, total: int):
    if not progress:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc="Batches", unit="text")
