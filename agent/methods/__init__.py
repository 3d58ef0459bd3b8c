"""Methods as plug-ins (agent/methods/base.py): every module of this package other than `base`
and `common` is a method and registers itself on import.

- `rra`: Retrieve-Relate-Read, the paper's method (docs/design.md sections 3-5);
- `kadr`: knowledge-aware diverse reranking (docs/design.md section 6).
"""

from __future__ import annotations

import importlib
import pkgutil

from agent.methods.base import METHODS, Method, method_for, register

for _mod in pkgutil.iter_modules(__path__):
    if _mod.name not in ("base", "common"):
        importlib.import_module(f"{__name__}.{_mod.name}")

MODES = tuple(METHODS)

__all__ = ["METHODS", "MODES", "Method", "method_for", "register"]
