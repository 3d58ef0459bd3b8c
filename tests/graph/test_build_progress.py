"""An index build tells an interface where it stands (the web chat's first run shows it): each
stage's count, its total and the time left, from a real build of the small corpus."""

from __future__ import annotations

import json

import pytest

from agent.records.progress import build_line
from tests.conftest import PAPERS

pytestmark = pytest.mark.graph


def test_a_build_reports_each_stage_to_a_sink(tmp_path):
    from agent.settings import get_settings
    from tools.index import build_index

    rows = [{"paper_id": p, "title": t, "abstract": a, "references": r} for p, t, a, r in PAPERS]
    (tmp_path / "papers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    heard: list[dict] = []
    build_index([tmp_path / "papers.jsonl"], tmp_path / "idx", get_settings(), progress=heard.append)
    stages = list(dict.fromkeys(h["stage"] for h in heard))
    assert stages[:1] == ["reading"] and "embedding chunks" in stages
    ends = {h["stage"]: h for h in heard if h["finished"]}
    assert set(ends) == set(stages)  # every stage says when it is over
    embedded = ends["embedding chunks"]
    assert embedded["total"] and embedded["done"] == embedded["total"] and embedded["unit"] == "window"
    assert ends["reading"]["done"] == 1  # one file
    assert all(h["seconds"] >= 0 for h in heard)
    assert "embedding chunks, " in build_line(embedded) and f"{embedded['total']:,} windows" in build_line(embedded)
