"""The `llm` reranker: yes/no next-token scoring by a causal LM, the form Qwen3-Reranker takes,
either in process with transformers (the GPU path, `TransformersYesNoReranker`) or through an
OpenAI-compatible llama.cpp server (the CPU path, which the embedded GGUF chat model can serve,
`ServerYesNoReranker`). The prompt and the yes/no arithmetic are shared by both runtimes.
torch, transformers and httpx are imported only where they are needed."""

from __future__ import annotations

import inspect
import logging
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, TypeGuard

from tools.models.embed import ModelNotAvailable, offline, resolve_device
from tools.models.rerank.base import (
    Precision,
    apply_precision,
    batches,
    cut,
    local_or_hub,
    precision_for,
)
from tools.settings import ENV, RerankSettings

if TYPE_CHECKING:
    import httpx

log = logging.getLogger(__name__)

LLMRuntime = Literal["transformers", "server"]

# SEE: Qwen3-Reranker model card: the system turn it was trained with.
SYSTEM_PROMPT = (
    "Judge whether the Document meets the requirements based on the Query and the Instruct "
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


# ---------------------------------------------------------------------------------------------
# llm: prompt and yes/no arithmetic, shared by both runtimes

_SYSTEM_SLOT = "@@LITLOOP_SYSTEM@@"
_USER_SLOT = "@@LITLOOP_USER@@"
CHATML = (
    f"<|im_start|>system\n{_SYSTEM_SLOT}<|im_end|>\n<|im_start|>user\n{_USER_SLOT}<|im_end|>\n<|im_start|>assistant\n"
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


def _usable(rendered: object) -> TypeGuard[str]:
    return isinstance(rendered, str) and rendered.count(_USER_SLOT) == 1 and (rendered.count(_SYSTEM_SLOT) <= 1)


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


def choose_llm_runtime(runtime: str, device: str, server_url: str | None, model: str | None) -> LLMRuntime:
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
    raise ModelNotAvailable(
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
            raise ModelNotAvailable(
                f"the transformers runtime of the llm reranker needs {ENV}MODEL (a local causal-LM "
                f"directory or a cached hub id); or set {ENV}LLM_RUNTIME=server and {ENV}SERVER_URL"
            )
        self.name = f"llm:transformers:{settings.model}"
        self.device = resolve_device(device)
        self.dtype: Precision = precision_for(self.device)
        self.settings = settings
        self._model, self._tok = _load_causal_lm(local_or_hub(settings.model), self.device)
        self.template = template_from_tokenizer(self._tok)
        self.yes_ids, self.no_ids = yes_no_token_ids(self._tok)
        self._keep_last = "logits_to_keep" in inspect.signature(self._model.forward).parameters

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        s = self.settings
        prompts = [
            self.template.fill(SYSTEM_PROMPT, user_turn(s.instruction, query, cut(t, s.max_chars))) for t in texts
        ]
        # similar lengths share a batch: less padding to compute
        order = sorted(range(len(prompts)), key=lambda i: -len(prompts[i]))
        scores = [0.0] * len(prompts)
        for batch in batches(order, s.batch_size):
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
            raise ModelNotAvailable(
                f"the llm reranker's tokenizer has no single token for {answer!r}; set {ENV}MODEL "
                "to a causal LM whose vocabulary has one (any Qwen, Llama or Mistral model does)"
            )
        found[answer] = ids
    return found["yes"], found["no"]


@lru_cache(maxsize=2)
def _load_causal_lm(path: str, device: str) -> tuple[Any, Any]:
    offline()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        tok = AutoTokenizer.from_pretrained(path, local_files_only=True, padding_side="left")
        model = AutoModelForCausalLM.from_pretrained(
            path, local_files_only=True, dtype=getattr(torch, precision_for(device))
        )
    except Exception as exc:
        raise ModelNotAvailable(
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

    def __init__(self, settings: RerankSettings, *, transport: httpx.BaseTransport | None = None) -> None:
        """`transport` replaces the network (tests pass an `httpx.MockTransport`)."""
        if not settings.server_url:
            raise ModelNotAvailable(
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
            self._score_one(template.fill(SYSTEM_PROMPT, user_turn(s.instruction, query, cut(t, s.max_chars))))
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
            log.info(
                "llm reranker prompt: %s chat template",
                "the server's" if self._template is not CHATML_TEMPLATE else "ChatML",
            )
        return self._template

    def _score_one(self, prompt: str) -> float:
        body: dict[str, Any] = {
            "prompt": prompt,
            "max_tokens": 1,
            "temperature": 0.0,
            "logprobs": SERVER_TOP_LOGPROBS,
        }
        if self.settings.model:
            body["model"] = self.settings.model
        data = self._post(self._completions, body).json()
        top = completion_top_logprobs(data)
        p = yes_probability(top)
        if p is None:
            log.warning(
                "llm reranker: neither 'yes' nor 'no' among the top %d next tokens (%s); scoring 0.5",
                len(top),
                ", ".join(repr(t) for t, _ in top[:5]),
            )
            return 0.5
        return p

    def _post(self, url: str, body: Mapping[str, Any], check: bool = True) -> httpx.Response:
        import httpx

        try:
            resp = self._client.post(url, json=body)
        except httpx.TimeoutException as exc:
            raise ModelNotAvailable(
                f"the llm reranker server at {self.url} did not answer within "
                f"{self.settings.timeout_s:g} s; raise {ENV}TIMEOUT_S or lower {ENV}MAX_CHARS"
            ) from exc
        except httpx.TransportError as exc:
            raise ModelNotAvailable(
                f"cannot reach the llm reranker server at {self.url} ({type(exc).__name__}: {exc}); "
                f"check {ENV}SERVER_URL, or set {ENV}BACKEND=none"
            ) from exc
        if check and resp.status_code != 200:
            raise RuntimeError(
                f"the llm reranker server at {self.url} answered {resp.status_code} to {url}: {resp.text[:300]}"
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
