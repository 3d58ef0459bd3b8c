"""Methods are plug-ins: one module registers five steps under a mode name; the context picks it
and the nodes dispatch to it (agent/methods/base.py)."""

from __future__ import annotations

import sys
import types

import pytest

from agent.context import Context
from agent.methods import METHODS, method_for, register
from agent.methods.base import STEPS
from agent.nodes import method_steps

pytestmark = pytest.mark.unit


def test_both_methods_are_registered_with_every_step():
    assert set(METHODS) >= {"rra", "kadr"}
    for name in ("rra", "kadr"):
        assert all(callable(getattr(method_for(name), s)) for s in STEPS)


@pytest.fixture
def third_method():
    mod = types.ModuleType("tests_third_method")
    calls = []
    for step in STEPS:
        setattr(mod, step, lambda state, runtime, step=step: calls.append(step) or {"seen": step})
    sys.modules[mod.__name__] = mod
    register("third", mod.__name__)
    yield calls
    METHODS.pop("third", None)
    sys.modules.pop(mod.__name__, None)


def test_a_third_method_is_one_module_and_the_nodes_dispatch_to_it(third_method):
    runtime = types.SimpleNamespace(context=Context(mode="third"))
    for step in STEPS:
        assert getattr(method_steps, step)({"question": "q"}, runtime) == {"seen": step}
    assert third_method == list(STEPS)


def test_a_method_missing_a_step_is_refused():
    mod = types.ModuleType("tests_half_method")
    mod.search = lambda state, runtime: {}
    sys.modules[mod.__name__] = mod
    try:
        with pytest.raises(TypeError, match="lacks the steps"):
            register("half", mod.__name__)
        assert "half" not in METHODS
    finally:
        sys.modules.pop(mod.__name__, None)


def test_unknown_mode_and_unknown_step():
    with pytest.raises(ValueError, match="unknown mode 'nope'; choose one of"):
        method_for("nope")
    with pytest.raises(ValueError, match="not a method step"):
        method_steps.method_step("decompose")
