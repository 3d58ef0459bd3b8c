"""The method plug-in interface: what a method implements, and the one lookup by name.

The graph's seven nodes are the same for every method. `decompose` and `synthesize` are shared;
the other five steps are the method's: each node calls `method_for(context.mode).<step>(state,
runtime)` and returns its partial update. A method is one module in `agent/methods/` that
defines these five steps as functions and ends with `register("name", __name__)`.
"""

from __future__ import annotations

from typing import Any, Protocol

STEPS = ("search", "rerank", "verify", "expand_neighbors", "read_paper")


class Method(Protocol):
    """Five steps, each `(state, runtime) -> partial state update`."""

    def search(self, state: Any, runtime: Any) -> dict[str, Any]: ...

    def rerank(self, state: Any, runtime: Any) -> dict[str, Any]: ...

    def verify(self, state: Any, runtime: Any) -> dict[str, Any]: ...

    def expand_neighbors(self, state: Any, runtime: Any) -> dict[str, Any]: ...

    def read_paper(self, state: Any, runtime: Any) -> dict[str, Any]: ...


METHODS: dict[str, Method] = {}


def register(name: str, module: str) -> Method:
    """Make the module `module` (its five step functions) selectable as `Context(mode=name)`."""
    import sys

    method = sys.modules[module]
    missing = [s for s in STEPS if not callable(getattr(method, s, None))]
    if missing:
        raise TypeError(f"method {name!r} ({module}) lacks the steps {missing}")
    METHODS[name] = method  # a module with the five functions satisfies the protocol
    return method


def method_for(mode: str) -> Method:
    try:
        return METHODS[mode]
    except KeyError:
        raise ValueError(f"unknown mode {mode!r}; choose one of {', '.join(sorted(METHODS))}") from None
