from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("LITLOOP_SHARED_DATA", REPO.parent / "shared" / "data"))


@pytest.fixture(autouse=True)
def _isolated_data_dir(tmp_path_factory, monkeypatch):
    """Tests never touch the user's data dir or a .env in the working directory."""
    monkeypatch.setenv("LITLOOP_DATA_DIR", str(tmp_path_factory.getbasetemp() / "litloop-data"))
    for var in list(os.environ):
        if var.startswith("LITLOOP_") and var not in ("LITLOOP_DATA_DIR", "LITLOOP_SHARED_DATA", "LITLOOP_UPDATE_SCREENSHOT"):
            monkeypatch.delenv(var)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.exists():
        pytest.skip(f"shared data folder {SHARED_DATA} is absent (set LITLOOP_SHARED_DATA to it)")
    return SHARED_DATA
