"""The graph as `litloop serve` (and `langgraph dev` in the repository) serves it: a run whose
context names no preset runs the preset `litloop ask` would use on this machine, not the
context's bare defaults (the paper's values, far too slow for the embedded model on a CPU).

A served run's context arrives as a dict and LangGraph turns it into the graph's context schema.
Here that schema is `Context` with the served preset's values as its defaults: the assistant's
schema (`GET /assistants/{id}/schemas`, LangGraph Studio) shows them, a field the run sets wins,
and a run that names another preset (`{"preset": "paper"}`) gets that preset's values under the
fields it sets, exactly as `litloop ask --preset paper` would.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import MISSING, field, fields, make_dataclass
from typing import Any, get_type_hints

from agent.api import build_graph
from agent.context import Context, load_preset, make_context


def served_preset() -> str:
    """`LITLOOP_SERVE__PRESET` (`litloop serve --preset`), else `litloop ask`'s default here."""
    from agent.api import default_preset
    from agent.settings import default_settings

    name = default_settings().serve.preset
    if name:
        load_preset(name)  # an unknown name is refused here, with the names there are
        return name
    return default_preset()


def served_context(preset: str) -> type[Context]:
    """Context with `preset`'s values as its defaults, whose constructor applies a preset a run
    names (`make_context`): the served graph's context schema."""
    base = make_context(preset)
    hints = get_type_hints(Context, include_extras=True)
    spec: list[Any] = []
    for f in fields(Context):
        value = getattr(base, f.name)
        default = (
            field(default_factory=functools.partial(copy.deepcopy, value))
            if isinstance(value, list | dict | set)
            else field(default=value)
        )
        spec.append((f.name, hints[f.name], default))
    cls = make_dataclass("ServedContext", spec, bases=(Context,), frozen=True)
    cls.__doc__ = f"The context of a served run: preset {preset!r} unless the run names another."
    generated = cls.__dict__["__init__"]

    def __init__(self, **values: Any) -> None:
        named = values.get("preset")
        if named not in (None, preset):
            ctx = make_context(named, **{k: v for k, v in values.items() if k != "preset"})
            values = {f.name: getattr(ctx, f.name) for f in fields(Context)}
        generated(self, **values)

    cls.__init__ = __init__  # type: ignore[misc]
    assert all(f.default is not MISSING or f.default_factory is not MISSING for f in fields(cls))
    return cls


graph = build_graph(context_schema=served_context(served_preset()))
