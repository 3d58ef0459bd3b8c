"""The embedded Chroma store's window count: asked of Chroma once per store and kept right by the
store's own writes (a query needs it; Chroma's count scans the collection)."""

from __future__ import annotations

import numpy as np
import pytest

from tools.retrieval.dense import DenseIndex

pytestmark = pytest.mark.integration


def unit_rows(n: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, 8)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def rows(prefix: str, n: int) -> list[tuple[str, str, str]]:
    return [(f"{prefix}{i}@w0", f"{prefix}{i}", f"p-{prefix}") for i in range(n)]


def test_count_follows_adds_and_copies_and_queries_do_not_recount(tmp_path, monkeypatch):
    store = DenseIndex(tmp_path / "a", create=True)
    assert store.count() == 0
    store.add(rows("a", 5), unit_rows(5, 0))
    assert store.count() == 5
    store.add(rows("b", 3), unit_rows(3, 1))
    assert store.count() == 8
    other = DenseIndex(tmp_path / "b", create=True)
    other.add(rows("c", 4), unit_rows(4, 2))
    store.copy_from(other)
    assert store.count() == 12
    store.close()
    other.close()

    reader = DenseIndex(tmp_path / "a")
    asked = []
    real = reader._col.count
    monkeypatch.setattr(reader._col, "count", lambda: asked.append(1) or real())
    hits = [reader.query(v, 3) for v in unit_rows(4, 3)]
    assert all(len(h) == 3 for h in hits)
    assert reader.count() == 12
    assert len(asked) == 1  # once for the store's life, not once per query
    reader.close()
