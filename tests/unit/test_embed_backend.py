"""The embedder backend setting (LITLOOP_EMBEDDER__BACKEND): validation, what `auto` means on
each device, the clear errors when the ONNX packages are missing, and the pooling arithmetic.
No model is loaded here (tests/integration/test_embed_onnx.py loads the real one)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from pydantic import ValidationError

from tools.models import embed
from tools.models.embed import ModelNotAvailable, get_embedder, resolve_backend
from tools.settings import BUNDLED_EMBEDDER, ToolSettings

pytestmark = pytest.mark.unit


def test_backend_setting_is_validated(monkeypatch):
    assert ToolSettings().embedder.backend == "auto"
    for value in ("torch", "onnx", "onnx-int8", "auto"):
        monkeypatch.setenv("LITLOOP_EMBEDDER__BACKEND", value)
        assert ToolSettings().embedder.backend == value
    monkeypatch.setenv("LITLOOP_EMBEDDER__BACKEND", "int8")
    with pytest.raises(ValidationError, match="backend"):
        ToolSettings()


def test_setting_and_code_name_the_same_backends():
    from typing import get_args

    field = ToolSettings.model_fields["embedder"].annotation.model_fields["backend"]
    assert set(get_args(field.annotation)) == set(embed.EMBED_BACKENDS)


def test_auto_is_int8_onnx_on_cpu_and_torch_fp16_on_cuda():
    assert resolve_backend("auto", "cpu") == "onnx-int8"
    assert resolve_backend("auto", "cuda") == "torch"
    for explicit in ("torch", "onnx", "onnx-int8"):
        assert resolve_backend(explicit, "cpu") == explicit


def test_unknown_backend_in_code_is_refused(tmp_path):
    with pytest.raises(ValueError, match="unknown embedder backend 'fast'"):
        get_embedder(BUNDLED_EMBEDDER, "cpu", 32, "fast", tmp_path)


@pytest.mark.parametrize("missing", ["onnxruntime", "onnx"])
def test_missing_onnx_package_is_a_clear_error(monkeypatch, tmp_path, missing):
    # a None entry in sys.modules makes `import name` raise ImportError, as if not installed
    monkeypatch.setitem(sys.modules, missing, None)
    monkeypatch.setattr(embed, "_loaded", {})
    with pytest.raises(ModelNotAvailable) as err:
        # a fresh data folder: nothing exported yet, so `onnx` is needed for the export
        get_embedder(BUNDLED_EMBEDDER, "cpu", 32, "onnx-int8", tmp_path / "fresh")
    msg = str(err.value)
    assert f"needs the {missing} package" in msg
    assert "pip install 'litloop[onnx]'" in msg
    assert "LITLOOP_EMBEDDER__BACKEND=torch" in msg


def test_auto_falls_back_to_torch_when_the_onnx_path_cannot_load(monkeypatch, tmp_path, caplog):
    import tools.models.embed_onnx

    class FakeTorch:
        def __init__(self, name, device, batch_size):
            self.backend = "torch"

    def refuse(*_a, **_k):
        raise ModelNotAvailable("embedder backend 'onnx-int8' needs the onnx package")

    monkeypatch.setattr(embed, "_loaded", {})
    monkeypatch.setattr(embed, "Embedder", FakeTorch)
    monkeypatch.setattr(tools.models.embed_onnx, "OnnxEmbedder", refuse)
    with caplog.at_level("WARNING", logger="tools.models.embed"):
        assert get_embedder(BUNDLED_EMBEDDER, "cpu", 32, "auto", tmp_path).backend == "torch"
    assert "needs the onnx package; using the torch backend" in caplog.text
    with pytest.raises(ModelNotAvailable):  # asked for by name: no fallback
        get_embedder(BUNDLED_EMBEDDER, "cpu", 32, "onnx-int8", tmp_path)


def test_mean_pooling_ignores_padding_and_rows_are_unit_length():
    from tools.models.embed_onnx import pool

    states = np.array(
        [[[1.0, 0.0], [3.0, 0.0], [100.0, 100.0]], [[0.0, 2.0], [0.0, 4.0], [0.0, 6.0]]], dtype=np.float32
    )
    mask = np.array([[1, 1, 0], [1, 1, 1]])
    out = pool(states, mask, "mean")
    np.testing.assert_allclose(out, [[1.0, 0.0], [0.0, 1.0]], atol=1e-6)  # the pad row is not averaged
    np.testing.assert_allclose(pool(states, mask, "cls"), [[1.0, 0.0], [0.0, 1.0]], atol=1e-6)
    assert out.dtype == np.float32


def test_cache_folder_follows_the_model_files(tmp_path):
    from tools.models.embed_onnx import cache_dir

    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    first = cache_dir(str(model), tmp_path / "data")
    assert first.parent == tmp_path / "data" / "embedders"
    assert cache_dir(str(model), tmp_path / "data") == first
    (model / "config.json").write_text('{"changed": true}')
    assert cache_dir(str(model), tmp_path / "data") != first


def test_onnx_module_imports_no_heavy_package():
    code = (
        "import sys, tools.models.embed_onnx, tools.models.embed; "
        "print(','.join(m for m in ('torch', 'onnxruntime', 'onnx', 'sentence_transformers', 'optimum') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
