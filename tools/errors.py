"""Errors shared by the model loaders (tools.models.embed, tools.models.embed_onnx, tools.models.rerank)."""

from __future__ import annotations


class ModelNotAvailable(RuntimeError):
    """A configured model cannot be loaded offline; the message says what to install or set."""
