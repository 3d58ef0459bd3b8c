"""Rerankers: one interface, three backends. SEE: DESIGN.md section 3 step 4.

The method reranks up to 200 chunks of each subquery's fused ranking (paper: Qwen3-Reranker-8B).
Which model does that is a setting, not code:

- `none`: keeps the retrieval order and touches no model (LLM-free and fast runs);
- `cross-encoder`: any sentence-transformers `CrossEncoder` in a local directory or the local
  Hugging Face cache (batched; fp16 on CUDA). A causal-LM reranker directory such as
  Qwen3-Reranker also loads here: sentence-transformers v6 scores it by its yes/no logits;
- `llm`: yes/no next-token scoring by a causal LM, the form Qwen3-Reranker takes, either in
  process with transformers (the GPU path) or through an OpenAI-compatible llama.cpp server (the
  CPU path, which the embedded GGUF chat model can serve).

Everything heavy (torch, transformers, sentence_transformers, httpx) is imported inside the
functions that need it. The settings model, `RerankSettings`, lives in `tools.settings`.
"""

from __future__ import annotations

import inspect
import logging
import math
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from tools.settings import ENV, RerankSettings

if TYPE_CHECKING:
    import httpx

log = logging.getLogger(__name__)

Precision = Literal["float16", "float32"]
LLMRuntime = Literal["transformers", "server"]

# SEE: Qwen3-Reranker model card: the system turn it was trained with.
SYSTEM_PROMPT = (
    'Judge whether the Document meets the requirements based on the Query and the Instruct '
    'provided. Note that the answer can only be "yes" or "no".'
)
# Qwen3-Reranker is trained on "yes"/"no"; general chat models put mass on the other spellings.
YES_NO_SPELLINGS: dict[str, tuple[str, ...]] = {
    "yes": ("yes", "Yes", "YES", " yes", " Yes"),
    "no": ("no", "No", "NO", " no", " No"),
}
# Top next-token alternatives asked of a server: "yes"/"no" and their spellings fit easily;
# 20 is also the largest vLLM accepts by default.
SERVER_TOP_LOGPROBS = 20

@runtime_checkable
class Reranker(Protocol):
    """Scores passages for one query: higher is more relevant, same length and order as `texts`."""

    name: str

    def score(self, query: str, texts: Sequence[str]) -> list[float]: ...


def rerank_order(scores: Sequence[float]) -> list[int]:
    """Indices by descending score; ties keep the earlier (better retrieved) index first.

    A NaN (a broken model output) sorts last instead of scrambling the order.
    """
    def key(i: int) -> tuple[float, int]:
        s = float(scores[i])
        return (math.inf if math.isnan(s) else -s, i)

    return sorted(range(len(scores)), key=key)


def build_reranker(settings: RerankSettings, device: str = "auto") -> Reranker:
    """The reranker the settings name; `device` is `auto`, `cpu` or `cuda` (`Settings.device`)."""
    return _BUILDERS[settings.backend](settings, device)


# ---------------------------------------------------------------------------------------------
# none


class NoReranker:
    """Keeps the given order: the rerank step then reproduces the retrieval ranking."""

    name = "none"
    device = "none"
    dtype = "none"

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        return [-float(i) for i in range(len(texts))]


# ---------------------------------------------------------------------------------------------
# shared model plumbing


def precision_for(device: str) -> Precision:
    """fp16 on CUDA (half the memory, about twice the throughput); fp32 on CPU, where half
    precision matmuls are slow or unsupported."""
    return "float16" if device.startswith("cuda") else "float32"


def apply_precision(model: Any, device: str) -> Any:
    """Move a torch model to `device` in the precision `precision_for` chooses."""
    import torch

    return model.to(device=device, dtype=getattr(torch, precision_for(device)))


def _resolve_device(device: str) -> str:
    from tools.embed import resolve_device

    return resolve_device(device)


def _not_available(message: str) -> Exception:
    from tools.embed import ModelNotAvailable

    return ModelNotAvailable(message)


def _offline() -> None:
    """Never let a missing model turn into a download attempt on an air-gapped machine."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


def _local_or_hub(name: str) -> str:
    """A local directory when one exists, else the hub id (loaded only from the local cache)."""
    path = Path(name).expanduser()
    return str(path) if path.exists() else name


def cut(text: str, max_chars: int) -> str:
    """The passage as the reranker reads it: the first `max_chars` characters (paper: 1,800)."""
    return text if len(text) <= max_chars else text[:max_chars].rstrip()


def _batches(items: Sequence[int], size: int) -> Iterator[Sequence[int]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


# ---------------------------------------------------------------------------------------------
# cross-encoder


class CrossEncoderReranker:
    """A sentence-transformers CrossEncoder, batched, fp16 on CUDA."""

    def __init__(self, settings: RerankSettings, device: str = "auto") -> None:
        assert settings.model, "validated by RerankSettings"
        self.name = f"cross-encoder:{settings.model}"
        self.device = _resolve_device(device)
        self.dtype: Precision = precision_for(self.device)
        self.batch_size = settings.batch_size
        self.max_chars = settings.max_chars
        self._model = _load_cross_encoder(_local_or_hub(settings.model), self.device)

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        pairs = [(query, cut(t, self.max_chars)) for t in texts]
        out = self._model.predict(
            pairs, batch_size=self.batch_size, show_progress_bar=False, convert_to_numpy=True,
            apply_softmax=True,  # only acts on multi-class heads
        )
        if getattr(out, "ndim", 1) == 2:
            out = out[:, -1]  # multi-class head: the last class is "relevant" by convention
        return [float(s) for s in out]


@lru_cache(maxsize=2)
def _load_cross_encoder(path: str, device: str) -> Any:
    _offline()
    import torch
    from sentence_transformers import CrossEncoder

    try:
        model = CrossEncoder(
            path, device=device, local_files_only=True,
            # transformers 5 loads in the checkpoint's dtype by default (often bf16): say which
            model_kwargs={"dtype": getattr(torch, precision_for(device))},
        )
    except Exception as exc:  # the libraries raise several types for "not found locally"
        raise _not_available(
            f"cannot load cross-encoder {path!r} offline ({type(exc).__name__}: {exc}). Set "
            f"{ENV}MODEL to a local CrossEncoder directory or a hub id already in the local Hugging "
            f"Face cache, or {ENV}BACKEND=none"
        ) from exc
    model = apply_precision(model, device)
    log.info("loaded cross-encoder %s on %s (%s)", path, device, precision_for(device))
    return model


# ---------------------------------------------------------------------------------------------
# llm: prompt and yes/no arithmetic, shared by both runtimes

_SYSTEM_SLOT = "@@LITLOOP_SYSTEM@@"
_USER_SLOT = "@@LITLOOP_USER@@"
CHATML = (
    f"<|im_start|>system\n{_SYSTEM_SLOT}<|im_end|>\n<|im_start|>user\n{_USER_SLOT}<|im_end|>\n"
    "<|im_start|>assistant\n"
)


@dataclass(frozen=True)
class PromptTemplate:
    """A chat prompt rendered once with placeholder turns, filled per passage.

    Rendering the model's own chat template once (rather than per passage) keeps scoring cheap,
    and filling by splitting means a passage that happens to contain a placeholder stays intact.
    """

    rendered: str

    def fill(self, system: str, user: str) -> str:
        if _SYSTEM_SLOT not in self.rendered:  # templates without a system turn
            user = f"{system}\n\n{user}"
        parts = re.split(f"({re.escape(_SYSTEM_SLOT)}|{re.escape(_USER_SLOT)})", self.rendered)
        values = {_SYSTEM_SLOT: system, _USER_SLOT: user}
        return "".join(values.get(p, p) for p in parts)


CHATML_TEMPLATE = PromptTemplate(CHATML)
_SLOT_MESSAGES = [
    {"role": "system", "content": _SYSTEM_SLOT},
    {"role": "user", "content": _USER_SLOT},
]


def _usable(rendered: object) -> bool:
    return isinstance(rendered, str) and rendered.count(_USER_SLOT) == 1 and (
        rendered.count(_SYSTEM_SLOT) <= 1
    )


def user_turn(instruction: str, query: str, passage: str) -> str:
    """The user turn of Qwen3-Reranker; the passage last, so the shared prefix can be cached."""
    return f"<Instruct>: {instruction}\n<Query>: {query}\n<Document>: {passage}"


def yes_probability(top: Iterable[tuple[str, float]]) -> float | None:
    """P(yes) / (P(yes) + P(no)) from next-token (token, logprob) alternatives.

    Every spelling counts (" yes", "Yes", ...); a token that is neither is ignored, so the score
    is the odds between the two answers, as Qwen3-Reranker defines it. None when neither appears.
    """
    by_answer: dict[str, list[float]] = {"yes": [], "no": []}
    for token, logprob in top:
        answer = token.strip().lower()
        if answer in by_answer and logprob is not None and not math.isnan(logprob):
            by_answer[answer].append(float(logprob))
    if not by_answer["yes"] and not by_answer["no"]:
        return None
    yes, no = (_logsumexp(by_answer[a]) for a in ("yes", "no"))
    if yes == -math.inf:
        return 0.0
    if no == -math.inf:
        return 1.0
    return 1.0 / (1.0 + math.exp(no - yes))


def _logsumexp(values: Sequence[float]) -> float:
    if not values:
        return -math.inf
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


def choose_llm_runtime(
    runtime: str, device: str, server_url: str | None, model: str | None
) -> LLMRuntime:
    """`auto`: transformers on CUDA (batched fp16 beats a server), the llama.cpp server on CPU
    (a quantised GGUF beats fp32 torch there); whichever is configured when only one is."""
    if runtime in ("transformers", "server"):
        return runtime  # type: ignore[return-value]
    if device.startswith("cuda") and model:
        return "transformers"
    if server_url:
        return "server"
    if model:
        return "transformers"
    raise _not_available(
        f"rerank backend 'llm' has no model: set {ENV}SERVER_URL to an OpenAI-compatible llama.cpp "
        f"server or {ENV}MODEL to a local causal-LM directory, or {ENV}BACKEND=none"
    )


# ---------------------------------------------------------------------------------------------
# llm runtime 1: transformers in process


class TransformersYesNoReranker:
    """A causal LM scoring each passage by its next-token yes/no logits, batched, left-padded."""

    runtime: LLMRuntime = "transformers"

    def __init__(self, settings: RerankSettings, device: str = "auto") -> None:
        if not settings.model:
            raise _not_available(
                f"the transformers runtime of the llm reranker needs {ENV}MODEL (a local causal-LM "
                f"directory or a cached hub id); or set {ENV}LLM_RUNTIME=server and {ENV}SERVER_URL"
            )
        self.name = f"llm:transformers:{settings.model}"
        self.device = _resolve_device(device)
        self.dtype: Precision = precision_for(self.device)
        self.settings = settings
        self._model, self._tok = _load_causal_lm(_local_or_hub(settings.model), self.device)
        self.template = template_from_tokenizer(self._tok)
        self.yes_ids, self.no_ids = yes_no_token_ids(self._tok)
        self._keep_last = "logits_to_keep" in inspect.signature(self._model.forward).parameters

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        s = self.settings
        prompts = [
            self.template.fill(SYSTEM_PROMPT, user_turn(s.instruction, query, cut(t, s.max_chars)))
            for t in texts
        ]
        # similar lengths share a batch: less padding to compute
        order = sorted(range(len(prompts)), key=lambda i: -len(prompts[i]))
        scores = [0.0] * len(prompts)
        for batch in _batches(order, s.batch_size):
            for i, value in zip(batch, self._score_batch([prompts[i] for i in batch])):
                scores[i] = value
        return scores

    def _score_batch(self, prompts: list[str]) -> list[float]:
        import torch

        enc = self._tok(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
        ids = enc["input_ids"].to(self.device)
        mask = enc["attention_mask"].to(self.device)
        # positions count real tokens only, as generate() does, so left padding changes nothing
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        extra = {"logits_to_keep": 1} if self._keep_last else {}
        with torch.inference_mode():
            out = self._model(input_ids=ids, attention_mask=mask, position_ids=positions, **extra)
        last = out.logits[:, -1, :].float()
        yes = torch.logsumexp(last[:, self.yes_ids], dim=-1)
        no = torch.logsumexp(last[:, self.no_ids], dim=-1)
        return torch.sigmoid(yes - no).tolist()


def template_from_tokenizer(tok: Any) -> PromptTemplate:
    """The model's own chat template (thinking off, as Qwen3-Reranker expects), else ChatML."""
    if getattr(tok, "chat_template", None):
        try:
            rendered = tok.apply_chat_template(
                _SLOT_MESSAGES, tokenize=False, add_generation_prompt=True, enable_thinking=False
            )
            if _usable(rendered):
                return PromptTemplate(rendered)
        except Exception as exc:  # a template may refuse a system turn, for one
            log.warning("chat template unusable for reranking (%s); using ChatML", exc)
    return CHATML_TEMPLATE


def yes_no_token_ids(tok: Any) -> tuple[list[int], list[int]]:
    """Ids of the single-token spellings of "yes" and "no" in this vocabulary."""
    found: dict[str, list[int]] = {}
    for answer, spellings in YES_NO_SPELLINGS.items():
        ids: list[int] = []
        for spelling in spellings:
            encoded = tok.encode(spelling, add_special_tokens=False)
            if len(encoded) == 1 and encoded[0] not in ids:
                if tok.decode(encoded).strip().lower() == answer:
                    ids.append(encoded[0])
        if not ids:
            raise _not_available(
                f"the llm reranker's tokenizer has no single token for {answer!r}; set {ENV}MODEL "
                "to a causal LM whose vocabulary has one (any Qwen, Llama or Mistral model does)"
            )
        found[answer] = ids
    return found["yes"], found["no"]


@lru_cache(maxsize=2)
def _load_causal_lm(path: str, device: str) -> tuple[Any, Any]:
    _offline()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        tok = AutoTokenizer.from_pretrained(path, local_files_only=True, padding_side="left")
        model = AutoModelForCausalLM.from_pretrained(
            path, local_files_only=True, dtype=getattr(torch, precision_for(device))
        )
    except Exception as exc:
        raise _not_available(
            f"cannot load causal LM {path!r} offline ({type(exc).__name__}: {exc}). Set {ENV}MODEL "
            f"to a local causal-LM directory or a hub id already in the local Hugging Face cache, "
            f"or {ENV}LLM_RUNTIME=server with {ENV}SERVER_URL"
        ) from exc
    tok.padding_side = "left"  # the next-token logits are then at position -1 in every row
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token or tok.unk_token
    model = apply_precision(model, device).eval()
    log.info("loaded causal-LM reranker %s on %s (%s)", path, device, precision_for(device))
    return model, tok


# ---------------------------------------------------------------------------------------------
# llm runtime 2: an OpenAI-compatible llama.cpp server


class ServerYesNoReranker:
    """Yes/no scoring through `/v1/completions` with `max_tokens=1` and top logprobs.

    The raw completion endpoint, not chat: the prompt is exactly the one the model is scored on,
    and the shared prefix (system, instruction, query) stays byte-identical across passages, so
    llama.cpp reuses its KV cache and evaluates only each passage.
    """

    runtime: LLMRuntime = "server"
    device = "server"
    dtype = "server"

    def __init__(
        self, settings: RerankSettings, *, transport: httpx.BaseTransport | None = None
    ) -> None:
        """`transport` replaces the network (tests pass an `httpx.MockTransport`)."""
        if not settings.server_url:
            raise _not_available(
                f"the server runtime of the llm reranker needs {ENV}SERVER_URL (an OpenAI-compatible "
                f"llama.cpp server); or set {ENV}LLM_RUNTIME=transformers and {ENV}MODEL"
            )
        import httpx

        self.settings = settings
        self.url = settings.server_url
        self.name = f"llm:server:{self.url}"
        root = self.url[: -len("/v1")] if self.url.endswith("/v1") else self.url
        self._root = root
        self._completions = root + "/v1/completions"
        headers = {}
        if settings.api_key is not None:
            headers["Authorization"] = f"Bearer {settings.api_key.get_secret_value()}"
        self._client = httpx.Client(timeout=settings.timeout_s, headers=headers, transport=transport)
        self._template: PromptTemplate | None = None

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        s = self.settings
        template = self.template()
        return [
            self._score_one(
                template.fill(SYSTEM_PROMPT, user_turn(s.instruction, query, cut(t, s.max_chars)))
            )
            for t in texts
        ]

    def template(self) -> PromptTemplate:
        """The server's chat template via llama.cpp's `/apply-template`; ChatML elsewhere."""
        if self._template is None:
            body = {"messages": _SLOT_MESSAGES, "chat_template_kwargs": {"enable_thinking": False}}
            resp = self._post(self._root + "/apply-template", body, check=False)
            try:
                rendered = resp.json().get("prompt") if resp.status_code == 200 else None
            except ValueError:  # not JSON: some other kind of server
                rendered = None
            self._template = PromptTemplate(rendered) if _usable(rendered) else CHATML_TEMPLATE
            log.info("llm reranker prompt: %s chat template",
                     "the server's" if self._template is not CHATML_TEMPLATE else "ChatML")
        return self._template

    def _score_one(self, prompt: str) -> float:
        body: dict[str, Any] = {
            "prompt": prompt, "max_tokens": 1, "temperature": 0.0,
            "logprobs": SERVER_TOP_LOGPROBS,
        }
        if self.settings.model:
            body["model"] = self.settings.model
        data = self._post(self._completions, body).json()
        top = completion_top_logprobs(data)
        p = yes_probability(top)
        if p is None:
            log.warning(
                "llm reranker: neither 'yes' nor 'no' among the top %d next tokens (%s); scoring "
                "0.5", len(top), ", ".join(repr(t) for t, _ in top[:5]),
            )
            return 0.5
        return p

    def _post(self, url: str, body: Mapping[str, Any], check: bool = True) -> httpx.Response:
        import httpx

        try:
            resp = self._client.post(url, json=body)
        except httpx.TimeoutException as exc:
            raise _not_available(
                f"the llm reranker server at {self.url} did not answer within "
                f"{self.settings.timeout_s:g} s; raise {ENV}TIMEOUT_S or lower {ENV}MAX_CHARS"
            ) from exc
        except httpx.TransportError as exc:
            raise _not_available(
                f"cannot reach the llm reranker server at {self.url} ({type(exc).__name__}: {exc}); "
                f"check {ENV}SERVER_URL, or set {ENV}BACKEND=none"
            ) from exc
        if check and resp.status_code != 200:
            raise RuntimeError(
                f"the llm reranker server at {self.url} answered {resp.status_code} to {url}: "
                f"{resp.text[:300]}"
            )
        return resp


def completion_top_logprobs(data: Mapping[str, Any]) -> list[tuple[str, float]]:
    """(token, logprob) alternatives for the first generated token of a completions response.

    llama.cpp answers `logprobs.content[0].top_logprobs` (a list of {token, logprob}); OpenAI's
    legacy format and vLLM answer `logprobs.top_logprobs[0]` (a {token: logprob} map).
    """
    choices = data.get("choices") or [{}]
    logprobs = choices[0].get("logprobs") or {}
    content = logprobs.get("content")
    if content:
        return [(e["token"], e["logprob"]) for e in content[0].get("top_logprobs", [])]
    legacy = logprobs.get("top_logprobs")
    if legacy and legacy[0]:
        return list(legacy[0].items())
    return []


# ---------------------------------------------------------------------------------------------
# the registry of backends


def _build_none(settings: RerankSettings, device: str) -> Reranker:
    return NoReranker()


def _build_cross_encoder(settings: RerankSettings, device: str) -> Reranker:
    return CrossEncoderReranker(settings, device)


def _build_llm(settings: RerankSettings, device: str) -> Reranker:
    resolved = device
    if settings.llm_runtime == "auto":
        resolved = _resolve_device(device)  # auto needs to know whether there is a GPU
    runtime = choose_llm_runtime(settings.llm_runtime, resolved, settings.server_url, settings.model)
    if runtime == "server":
        return ServerYesNoReranker(settings)
    return TransformersYesNoReranker(settings, resolved)


_BUILDERS = {"none": _build_none, "cross-encoder": _build_cross_encoder, "llm": _build_llm}
