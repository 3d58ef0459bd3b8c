"""The manifest of a version (`manifest.json`), as one pydantic model: what the readers check
against the settings and what build, compact and upgrade write.

The JSON on disk keeps the keys it always had, so an older litloop reads a manifest this one
writes, and this one reads theirs: fields added since (the embedder's `backend`) are optional,
and keys this model does not name are kept as they are (`extra="allow"`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tools.index.layout import (
    FORMAT_VERSION,
    MANIFEST_FILE,
    IndexFormatOld,
    IndexProblem,
    _fsync_tree,
)
from tools.retrieval.text import tokenizer_for
from tools.settings import TOKENIZERS, ToolSettings


class _Record(BaseModel):
    model_config = ConfigDict(extra="allow")


class EmbedderRecord(_Record):
    name: str = Field(description="the embedder's model name, as LITLOOP_EMBEDDER__MODEL gives it")
    dim: int = Field(description="the vectors' dimension")
    window_chars: int | None = Field(default=None, description="characters per embedded window (chunk embedder only)")
    backend: str | None = Field(
        default=None, description="torch or onnx-int8 (chunk embedder; absent in older manifests)"
    )


class SegmentRecord(_Record):
    name: str = Field(description="the segment folder under segments/")
    papers: int
    chunks: int
    windows: int
    dense: dict[str, Any] | None = Field(
        default=None, description="where its vectors are (tools/retrieval/dense.py); none: embedded"
    )
    contexts: int | None = Field(
        default=None,
        description="citation contexts in its contexts.sqlite; none: written before litloop recorded them",
    )


class Manifest(_Record):
    format_version: int | None = None
    created: str = ""
    updated: str = ""
    embedder: EmbedderRecord
    paper_embedder: EmbedderRecord | None = None
    tokenizer: str | None = None
    bm25: dict[str, Any] = Field(default_factory=dict, description="k1, b, epsilon and each index's statistics")
    corpus_fingerprint: str = ""
    ingest_version: int = Field(default=1, description="the oldest ingestion that cut the papers kept here")
    counts: dict[str, Any] = Field(default_factory=dict)
    sources: list[str] = Field(default_factory=list)
    segments: list[SegmentRecord] = Field(default_factory=list)
    dense: dict[str, Any] | None = Field(default=None, description="format 1 only: the version's one dense store")

    def to_dict(self) -> dict[str, Any]:
        """The JSON object written on disk (the keys it always had; no nulls for absent fields)."""
        return self.model_dump(exclude_none=True)


def read_manifest(version: Path) -> Manifest:
    from pydantic import ValidationError

    path = version / MANIFEST_FILE
    try:
        raw = json.loads(path.read_text())
    except ValueError as exc:
        raise IndexProblem(f"{path}: unreadable manifest ({exc}); rebuild the index") from None
    try:
        return Manifest.model_validate(raw)
    except ValidationError as exc:
        if isinstance(raw, dict):
            _check_format(raw, version.parent)  # another format's fields: say so first
        raise IndexProblem(f"{path}: unreadable manifest ({exc}); rebuild the index") from None


def write_manifest(stage: Path, manifest: Manifest) -> None:
    """The version's manifest, written last, then the whole folder fsynced: complete."""
    (stage / MANIFEST_FILE).write_text(json.dumps(manifest.to_dict(), indent=2))
    _fsync_tree(stage)


def _check_format(manifest: Manifest | dict[str, Any], root: Path) -> None:
    fmt = manifest.get("format_version") if isinstance(manifest, dict) else manifest.format_version
    if fmt == 1:
        raise IndexFormatOld(
            f"{root}: index format 1 (records read whole on every open) but this litloop reads format "
            f"{FORMAT_VERSION}; convert it in place with `litloop index upgrade --index {root}` (keeps the "
            f"embeddings, about a minute per 100,000 chunks) or rebuild it with "
            f"`litloop index build PATH... --index {root} --rebuild`"
        )
    if fmt != FORMAT_VERSION:
        raise IndexProblem(
            f"{root}: index format {fmt} but this litloop reads format {FORMAT_VERSION}; "
            f"rebuild it with `litloop index build PATH... --index {root} --rebuild`"
        )


def check_manifest(manifest: Manifest, settings: ToolSettings, root: Path, version: Path | None = None) -> None:
    """The manifest of `root` (its live version `version`, when given, is named in a tokenizer problem)
    against this run's settings and this litloop."""
    _check_format(manifest, root)
    built = manifest.embedder.name
    if built != settings.embedder.model:
        raise IndexProblem(
            f"{root}: index was built with embedder {built!r} but this run uses "
            f"{settings.embedder.model!r}; set LITLOOP_EMBEDDER__MODEL={built} or rebuild the index"
        )
    if manifest.embedder.window_chars != settings.embedder.window_chars:
        raise IndexProblem(
            f"{root}: index embedded {manifest.embedder.window_chars}-character windows but "
            f"LITLOOP_EMBEDDER__WINDOW_CHARS is {settings.embedder.window_chars}; use the built value or rebuild"
        )
    manifest_tokenizer(manifest, root, version)


def manifest_tokenizer(manifest: Manifest, root: Path, version: Path | None = None) -> Callable[[str], list[str]]:
    """The tokenize function the index's BM25 indexes were built with, so queries with: the
    manifest decides, not LITLOOP_RETRIEVAL__TOKENIZER (which only chooses a new index's)."""
    try:
        return tokenizer_for(manifest.tokenizer or "")
    except ValueError:
        where = version / MANIFEST_FILE if version is not None else root
        raise IndexProblem(
            f"{where}: index tokenizer {manifest.tokenizer!r} is not one this litloop knows "
            f"({', '.join(TOKENIZERS)}); use the litloop that built the index, or rebuild it with "
            f"`litloop index build PATH... --index {root} --rebuild` (LITLOOP_RETRIEVAL__TOKENIZER "
            "chooses plain or snowball)"
        ) from None
