from __future__ import annotations

from pathlib import Path

import pytest

from agent.settings import BUNDLED_EMBEDDER, Settings, get_settings

pytestmark = pytest.mark.unit


def test_defaults(monkeypatch):
    monkeypatch.delenv("LITLOOP_DATA_DIR")
    s = Settings()
    assert s.device == "auto"
    assert s.embedder.model == BUNDLED_EMBEDDER
    assert s.retrieval.rrf_k == 60
    assert s.index is None and s.resolved_index == s.demo_index
    assert s.data_dir.name == "litloop"


def test_environment_beats_default_and_run_value_beats_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("LITLOOP_INDEX", str(tmp_path / "env-index"))
    monkeypatch.setenv("LITLOOP_RETRIEVAL__RRF_K", "30")
    monkeypatch.setenv("LITLOOP_EMBEDDER__BATCH_SIZE", "8")
    s = get_settings()
    assert s.index == tmp_path / "env-index"
    assert s.retrieval.rrf_k == 30 and s.embedder.batch_size == 8
    s = get_settings(index=tmp_path / "flag-index")
    assert s.index == tmp_path / "flag-index"
    # None means "flag not given": the environment still applies
    assert get_settings(index=None).index == tmp_path / "env-index"


def test_dotenv_file_is_below_environment(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    Path(".env").write_text("LITLOOP_DEVICE=cuda\nLITLOOP_RETRIEVAL__PER_INDEX_K=50\n")
    monkeypatch.setenv("LITLOOP_DEVICE", "cpu")
    s = Settings()
    assert s.device == "cpu"
    assert s.retrieval.per_index_k == 50


def test_invalid_value_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("LITLOOP_DEVICE", "tpu")
    with pytest.raises(Exception, match="device"):
        Settings()


def test_every_setting_is_documented():
    from agent.settings import iter_setting_fields

    doc = (Path(__file__).resolve().parents[2] / "docs" / "settings.md").read_text()
    missing = [env for env, _, _ in iter_setting_fields() if f"`{env}`" not in doc]
    assert not missing, f"document these in docs/settings.md: {missing}"


def test_embedded_model_preset_follows_the_cpu(monkeypatch):
    from agent.api import cpu_preset, default_preset
    from agent.settings import default_settings

    assert cpu_preset(2) == cpu_preset(7) == "local-fast" and cpu_preset(8) == cpu_preset(64) == "local"
    monkeypatch.delenv("LITLOOP_LLM__BASE_URL", raising=False)
    monkeypatch.setenv("LITLOOP_LLM__LOCAL_THREADS", "16")
    default_settings.cache_clear()
    try:
        assert default_preset() == "local"
        monkeypatch.setenv("LITLOOP_LLM__LOCAL_THREADS", "2")
        default_settings.cache_clear()
        assert default_preset() == "local-fast"
        monkeypatch.setenv("LITLOOP_LLM__BASE_URL", "http://127.0.0.1:9/v1")
        monkeypatch.setenv("LITLOOP_LLM__MODEL", "m")
        default_settings.cache_clear()
        assert default_preset() == "paper"
    finally:
        default_settings.cache_clear()


def test_every_context_field_is_documented():
    from dataclasses import fields

    from agent.context import Context

    doc = (Path(__file__).resolve().parents[2] / "docs" / "settings.md").read_text()
    missing = [f.name for f in fields(Context) if f.name != "preset" and f"`{f.name}`" not in doc]
    assert not missing, f"document these context fields in docs/settings.md: {missing}"


def test_a_home_relative_index_is_the_users_home(monkeypatch, tmp_path):
    # an MCP client or an env file passes `~/...` with no shell to expand it
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("LITLOOP_DATA_DIR", "~/data")
    s = get_settings(index=Path("~/litloop-index"))
    assert s.index == tmp_path / "litloop-index" and s.data_dir == tmp_path / "data"
