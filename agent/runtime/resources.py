"""Process-wide resources the nodes share: open indexes, rerankers and chat models.

The graph's context carries only plain values (so `langgraph dev` can pass it as JSON); this
module turns them into objects, once per process. Tests swap the chat-model factory for the
scripted fake with `use_model_factory`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from agent.settings import Settings, default_settings

if TYPE_CHECKING:
    from tools.handle import IndexHandle

ModelFactory = Callable[[str, Settings, str | None], Any]

_lock = threading.Lock()
_factory: ModelFactory | None = None


def _default_factory(role: str, settings: Settings, model: str | None):
    from agent.llm import build_chat_model

    return build_chat_model(role, settings, model=model)  # type: ignore[arg-type]


def chat_model(role: str, settings: Settings, model: str | None = None) -> Any:
    return (_factory or _default_factory)(role, settings, model)


@contextmanager
def use_model_factory(factory: ModelFactory) -> Iterator[None]:
    global _factory
    with _lock:
        previous, _factory = _factory, factory
    try:
        yield
    finally:
        with _lock:
            _factory = previous


def settings_for(context: Any) -> Settings:
    s = default_settings()
    if context.index:
        from pathlib import Path

        s = s.model_copy(update={"index": Path(context.index)})
    return s


_indexes: dict[tuple, Any] = {}
_rerankers: dict[tuple, Any] = {}


def index_for(context: Any) -> IndexHandle:
    """The index this run searches: the context's corpora (one: its Index; several: a
    tools.index.multi.MultiIndex with namespaced ids), else its index, else LITLOOP_INDEX, else the
    demo index."""
    from tools.index import open_index

    settings = settings_for(context)
    corpora = tuple(dict.fromkeys(getattr(context, "corpora", None) or ()))
    if corpora:
        if context.index:
            raise ValueError("give either an index or corpora to search, not both")
        from tools.registry import open_corpora

        key: tuple[Any, ...] = (
            "corpora",
            corpora,
            str(settings.data_dir),
            settings.embedder.model_dump_json(),
            settings.device,
        )
        with _lock:
            if key not in _indexes:
                _indexes[key] = open_corpora(corpora, settings)
            return _indexes[key]
    if settings.index is None:
        from tools.corpora.demo import ensure_demo_index

        path = ensure_demo_index(settings)
    else:
        path = settings.index
    key = (str(path), settings.embedder.model_dump_json(), settings.device)
    with _lock:
        if key not in _indexes:
            _indexes[key] = open_index(path, settings)
        return _indexes[key]


def reranker_for(context: Any) -> Any:
    settings = settings_for(context)
    backend = context.reranker or settings.rerank.backend
    if backend == "none":
        return None
    cfg = settings.rerank.model_copy(update={"backend": backend})
    if backend == "llm" and not cfg.server_url and not cfg.model:
        # no causal LM configured: score with the embedded local model's server
        from agent.llm.local import shared_server

        server = shared_server(settings)
        cfg = cfg.model_copy(update={"server_url": server.base_url, "api_key": server.api_key})
    key = (cfg.model_dump_json(), settings.device)
    with _lock:
        if key not in _rerankers:
            from tools.models.rerank import build_reranker

            _rerankers[key] = build_reranker(cfg, settings.device)
        return _rerankers[key]


def reset() -> None:
    """Forget cached indexes (after a rebuild, in tests)."""
    with _lock:
        for idx in _indexes.values():
            idx.close()
        _indexes.clear()
        _rerankers.clear()
