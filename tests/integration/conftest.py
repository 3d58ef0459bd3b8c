from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agent.settings import get_settings
from tests.conftest import CITESEER, DEMO_PDFS

CRF_ID = "415056"


@pytest.fixture(scope="session")
def small_corpus(tmp_path_factory) -> Path:
    """250 CiteSeer records (the CRF paper and papers it cites among them) and one ACL PDF, both
    from the bundled demo corpus, so the index tests run on a fresh clone."""
    out = tmp_path_factory.mktemp("corpus")
    records = [json.loads(line) for line in CITESEER.open()]
    by_id = {r["paper_id"]: r for r in records}
    keep = [by_id[CRF_ID]] + [by_id[r] for r in by_id[CRF_ID]["references"] if r in by_id]
    keep += [r for r in records[:250] if r not in keep]
    (out / "citeseer.jsonl").write_text("".join(json.dumps(r) + "\n" for r in keep))
    # the PDF alone, without its .meta.json sidecar: its metadata comes from the PDF itself
    shutil.copy(DEMO_PDFS / "N18-3011.pdf", out / "N18-3011.pdf")
    return out


@pytest.fixture(scope="session")
def built_index(small_corpus, tmp_path_factory) -> Path:
    from tools.index import build_index

    root = tmp_path_factory.mktemp("index") / "idx"
    build_index([small_corpus], root, get_settings())
    return root
