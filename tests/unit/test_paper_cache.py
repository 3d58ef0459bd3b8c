"""The agent's per-paper caches keep the papers used last, per open index, within the setting."""

from __future__ import annotations

import gc
import threading

import pytest

from agent.reading.evidence import PaperCache


class _Index:  # an open index as the cache sees it: an object it may hold weakly
    pass


@pytest.fixture
def bound(monkeypatch):
    from agent.settings import default_settings

    monkeypatch.setenv("LITLOOP_EVIDENCE__CACHE_PAPERS", "3")
    default_settings.cache_clear()
    yield 3
    default_settings.cache_clear()


def test_the_least_recently_used_paper_goes_first_and_values_stay_right(bound):
    cache: PaperCache[str] = PaperCache()
    idx = _Index()
    made: list[str] = []

    def get(pid: str) -> str:
        return cache.get(idx, pid, lambda: made.append(pid) or f"value of {pid}")

    for pid in ("a", "b", "c"):
        assert get(pid) == f"value of {pid}"
    assert get("a") == "value of a" and made == ["a", "b", "c"]  # a cached, and now the most recent
    assert get("d") == "value of d" and cache.size(idx) == bound  # b, the least recent, dropped
    assert get("b") == "value of b" and made == ["a", "b", "c", "d", "b"]
    assert get("a") == "value of a" and made[-1] == "b"  # a survived both evictions


def test_each_index_has_its_own_papers_and_they_go_with_it(bound):
    cache: PaperCache[int] = PaperCache()
    one, two = _Index(), _Index()
    cache.get(one, "p", lambda: 1)
    assert cache.get(two, "p", lambda: 2) == 2 and cache.get(one, "p", lambda: 99) == 1
    del one
    gc.collect()
    assert len(cache._by_index) == 1


def test_threads_asking_at_once_get_one_value_and_the_bound_holds(bound):
    cache: PaperCache[object] = PaperCache()
    idx = _Index()
    seen: list[object] = []

    def work(n: int) -> None:
        for i in range(200):
            seen.append(cache.get(idx, str(i % 5), object))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert cache.size(idx) <= bound and len(seen) == 800


def test_two_threads_that_both_compute_a_paper_get_the_one_copy_kept(bound):
    # both threads miss and compute at the same time (they meet at the barrier inside `make`),
    # then both store: the cache keeps the first value stored and hands it to both, so callers
    # never hold two different values for one paper
    cache: PaperCache[object] = PaperCache()
    idx = _Index()
    barrier = threading.Barrier(2, timeout=10)
    got: list[object] = []

    def make() -> object:
        barrier.wait()  # neither stores before both have computed
        return object()

    def work() -> None:
        got.append(cache.get(idx, "p", make))

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 2 and got[0] is got[1]
    assert cache.get(idx, "p", object) is got[0]  # and that copy is the one cached
