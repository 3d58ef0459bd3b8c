"""The runtime benchmark's pure parts: fresh prompts of the asked size, and the rates."""

from __future__ import annotations

import pytest

from bench.llama_runtime import _rates, prompt

pytestmark = pytest.mark.unit


def test_every_prompt_is_fresh_and_about_the_asked_size():
    a, b = prompt(1000), prompt(1000)
    assert a != b and a.split("]")[1] == b.split("]")[1]  # only the nonce differs: no cache can serve it
    assert 3800 <= len(a) <= 4200


def test_rates_split_the_prompt_from_the_output():
    r = _rates(n_prompt=800, first=10.0, made=65, whole=12.0)
    assert r["prompt_tps"] == pytest.approx(80.0) and r["output_tps"] == pytest.approx(32.0)
