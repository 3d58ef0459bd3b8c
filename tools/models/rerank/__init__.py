"""Rerankers: one interface, three backends, one module each. SEE: docs/design.md section 3 step 4.

The method reranks up to 200 chunks of each subquery's fused ranking (paper: Qwen3-Reranker-8B).
Which model does that is a setting (`RerankSettings` in `tools.settings`), not code:

- `none` (`base.NoReranker`): keeps the retrieval order and touches no model (LLM-free and fast
  runs);
- `cross-encoder` (`cross_encoder.py`): any sentence-transformers `CrossEncoder`;
- `llm` (`llm.py`): yes/no next-token scoring by a causal LM, in process with transformers or
  through an OpenAI-compatible llama.cpp server.

`base.py` holds the `Reranker` protocol and the plumbing the model backends
share. Everything heavy (torch, transformers, sentence_transformers, httpx) is imported inside
the functions that need it. This package re-exports the public names of its modules.
"""

from __future__ import annotations

from tools.models.embed import resolve_device
from tools.models.rerank.base import (
    NoReranker,
    Precision,
    Reranker,
    apply_precision,
    cut,
    precision_for,
)
from tools.models.rerank.cross_encoder import CrossEncoderReranker
from tools.models.rerank.llm import (
    CHATML,
    CHATML_TEMPLATE,
    SERVER_TOP_LOGPROBS,
    SYSTEM_PROMPT,
    YES_NO_SPELLINGS,
    LLMRuntime,
    PromptTemplate,
    ServerYesNoReranker,
    TransformersYesNoReranker,
    choose_llm_runtime,
    completion_top_logprobs,
    template_from_tokenizer,
    user_turn,
    yes_no_token_ids,
    yes_probability,
)
from tools.settings import RerankSettings

__all__ = [
    "CHATML",
    "CHATML_TEMPLATE",
    "SERVER_TOP_LOGPROBS",
    "SYSTEM_PROMPT",
    "YES_NO_SPELLINGS",
    "CrossEncoderReranker",
    "LLMRuntime",
    "NoReranker",
    "Precision",
    "PromptTemplate",
    "Reranker",
    "ServerYesNoReranker",
    "TransformersYesNoReranker",
    "apply_precision",
    "build_reranker",
    "choose_llm_runtime",
    "completion_top_logprobs",
    "cut",
    "precision_for",
    "template_from_tokenizer",
    "user_turn",
    "yes_no_token_ids",
    "yes_probability",
]


def build_reranker(settings: RerankSettings, device: str = "auto") -> Reranker:
    """The reranker the settings name; `device` is `auto`, `cpu` or `cuda` (`Settings.device`)."""
    return _BUILDERS[settings.backend](settings, device)


def _build_none(settings: RerankSettings, device: str) -> Reranker:
    return NoReranker()


def _build_cross_encoder(settings: RerankSettings, device: str) -> Reranker:
    return CrossEncoderReranker(settings, device)


def _build_llm(settings: RerankSettings, device: str) -> Reranker:
    resolved = device
    if settings.llm_runtime == "auto":
        resolved = resolve_device(device)  # auto needs to know whether there is a GPU
    runtime = choose_llm_runtime(settings.llm_runtime, resolved, settings.server_url, settings.model)
    if runtime == "server":
        return ServerYesNoReranker(settings)
    return TransformersYesNoReranker(settings, resolved)


_BUILDERS = {"none": _build_none, "cross-encoder": _build_cross_encoder, "llm": _build_llm}
