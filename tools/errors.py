"""Errors shared by the model loaders (tools.embed, tools.embed_onnx, tools.rerank)."""

from __future__ import annotations


class ModelNotAvailable(RuntimeError):
    """A configured model cannot be loaded offline; the message says what to install or set."""
