"""The bounded queue of `litloop serve` counts its places from the server's run records."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agent.serve import queue as serve_queue

pytestmark = pytest.mark.unit
T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _fresh_settings():
    """The bound is read through the cached settings: each test sees its own environment."""
    from agent.settings import default_settings

    default_settings.cache_clear()
    yield
    default_settings.cache_clear()


def run(rid: str, status: str, seconds: float = 0.0) -> dict:
    return {"run_id": rid, "status": status, "created_at": T0, "updated_at": T0 + timedelta(seconds=seconds)}


def test_waiting_and_running_runs_take_places_finished_and_cancelled_ones_do_not():
    runs = [run("a", "running"), run("b", "pending"), run("c", "interrupted"), run("d", "success"), run("e", "error")]
    assert serve_queue.places_taken(runs, {}, now=100.0) == 2


def test_an_admitted_run_not_yet_stored_takes_a_place_for_a_while():
    runs = [run("a", "running")]
    assert serve_queue.places_taken(runs, {"new": 99.0}, now=100.0) == 2
    assert serve_queue.places_taken(runs, {"a": 99.0}, now=100.0) == 1  # stored: counted once
    assert serve_queue.places_taken(runs, {"new": 80.0}, now=100.0) == 1  # never stored: refused later


def test_retry_after_is_the_mean_of_the_finished_runs_rounded_up():
    runs = [run("a", "success", 3.0), run("b", "success", 4.5), run("c", "interrupted", 100.0)]
    assert serve_queue.retry_after(runs) == 4
    assert serve_queue.retry_after([]) == 10
    assert serve_queue.retry_after([run("a", "success", 0.1)]) == 1


def test_the_bound_is_the_settings_with_its_one_default(monkeypatch):
    from agent.settings import ServeSettings, default_settings

    monkeypatch.delenv("LITLOOP_SERVE__MAX_QUEUE", raising=False)
    default_settings.cache_clear()
    assert serve_queue.max_queue() == ServeSettings().max_queue == 32
    monkeypatch.setenv("LITLOOP_SERVE__MAX_QUEUE", "0")
    default_settings.cache_clear()
    assert serve_queue.max_queue() == 0
    default_settings.cache_clear()


def test_admit_refuses_at_the_bound_and_admits_again_when_a_place_comes_back(monkeypatch):
    from agent.settings import default_settings

    monkeypatch.setenv("LITLOOP_SERVE__MAX_QUEUE", "2")
    default_settings.cache_clear()
    monkeypatch.setattr(serve_queue, "_admitted", {})
    assert serve_queue.admit("r1", [], now=0.0) is None
    assert serve_queue.admit("r2", [], now=0.1) is None  # two admitted, not yet stored
    assert serve_queue.admit("r3", [], now=0.2) == 10
    stored = [run("r1", "running"), run("r2", "interrupted")]  # r2 cancelled before it started
    assert serve_queue.admit("r3", stored, now=0.3) is None
    assert serve_queue.admit("r4", [*stored, run("r3", "pending")], now=0.4) == 10
