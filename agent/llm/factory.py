"""Chat models built for a node's role: Azure OpenAI when `llm.azure_endpoint` is set, any
OpenAI-compatible endpoint when `llm.base_url` is set, and otherwise the embedded local model
(agent/llm/local.py), started once per process and shared."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Literal, get_args

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from agent.settings import LLMSettings, Settings

Role = Literal["decompose", "verify", "read", "synthesize", "judge"]
ROLES: tuple[str, ...] = get_args(Role)
StructuredMethod = Literal["json_schema", "json_mode", "function_calling"]

_METADATA_METHOD = "litloop_structured_output"
_METADATA_ROLE = "litloop_role"
_METADATA_LEAN = "litloop_lean_text_chars"  # set on the embedded model: send a lean schema
# Placeholder for keyless OpenAI-compatible servers (vLLM, llama.cpp, Ollama): the OpenAI client
# refuses to start without some key.
_NO_KEY = "not-needed"


# ---------------------------------------------------------------------------------------------
# Building models


def _role_override(role: Role | str, llm: LLMSettings) -> str | None:
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}; expected one of {', '.join(ROLES)}")
    return {
        "decompose": llm.decompose_model,
        "verify": llm.verify_model,
        "read": llm.read_model,
        "synthesize": llm.synthesize_model,
    }.get(role)


def model_name_for(role: Role | str, llm: LLMSettings, run_value: str | None = None) -> str | None:
    """The model a role uses: this run's value, else its own setting (`verify_model`), else `model`."""
    return run_value or _role_override(role, llm) or llm.model


def backend_of(llm: LLMSettings) -> Literal["azure", "openai", "local"]:
    """Which kind of endpoint the settings select (Azure wins over a base URL)."""
    if llm.azure_endpoint:
        return "azure"
    if llm.base_url:
        return "openai"
    return "local"


def build_chat_model(role: Role, settings: Settings | None = None, *, model: str | None = None) -> BaseChatModel:
    """A chat model for `role`, configured from settings; `model` is this run's choice for it
    (the graph context's per-role model), which beats the settings.

    The embedded local model's server is started on the first call in a process (seconds, and a
    one-time assembly of the GGUF on first use ever) and reused by every later call and role.
    """
    if settings is None:
        from agent.settings import default_settings

        settings = default_settings()
    llm = settings.llm
    backend = backend_of(llm)
    common: dict[str, Any] = {
        "temperature": llm.temperature,
        "timeout": llm.timeout_s,
        "max_retries": llm.max_retries,
        "metadata": {_METADATA_ROLE: role, _METADATA_METHOD: llm.structured_output, "litloop_backend": backend},
    }
    if backend == "azure":
        return _azure_model(role, llm, common, model)
    if backend == "openai":
        return _openai_model(role, llm, common, model)
    return _local_model(settings, common)


def _openai_model(role: Role, llm: LLMSettings, common: dict[str, Any], run_value: str | None) -> BaseChatModel:
    from langchain_openai import ChatOpenAI

    name = model_name_for(role, llm, run_value)
    if not name:
        raise ValueError(
            f"LITLOOP_LLM__BASE_URL is set ({llm.base_url}) but no model is named for role "
            f"{role!r}: set LITLOOP_LLM__MODEL."
        )
    key = llm.api_key.get_secret_value() if llm.api_key else os.environ.get("OPENAI_API_KEY")
    return ChatOpenAI(model=name, base_url=llm.base_url, api_key=key or _NO_KEY, **common)


def _azure_model(role: Role, llm: LLMSettings, common: dict[str, Any], run_value: str | None) -> BaseChatModel:
    from langchain_openai import AzureChatOpenAI

    # on Azure the deployment fixes the model, so per-role settings name deployments
    deployment = run_value or _role_override(role, llm) or llm.azure_deployment or llm.model
    if not deployment:
        raise ValueError(
            "LITLOOP_LLM__AZURE_ENDPOINT is set but no deployment is named: set "
            "LITLOOP_LLM__AZURE_DEPLOYMENT (or LITLOOP_LLM__MODEL)."
        )
    extra: dict[str, Any] = {}
    if llm.api_key:
        extra["api_key"] = llm.api_key.get_secret_value()  # else AZURE_OPENAI_API_KEY
    if llm.api_version:
        extra["api_version"] = llm.api_version  # else OPENAI_API_VERSION
    return AzureChatOpenAI(azure_endpoint=llm.azure_endpoint, azure_deployment=deployment, **extra, **common)


def _local_model(settings: Settings, common: dict[str, Any]) -> BaseChatModel:
    from langchain_openai import ChatOpenAI

    from agent.llm.local import LOCAL_MODEL_NAME, shared_server

    server = shared_server(settings)
    common["metadata"]["litloop_local_model"] = str(server.model_path)
    common["timeout"] = settings.llm.local_timeout_s  # a CPU model: minutes, not seconds
    common["metadata"][_METADATA_LEAN] = settings.llm.local_text_chars
    return ChatOpenAI(
        model=LOCAL_MODEL_NAME,
        base_url=server.base_url,
        api_key=server.api_key,
        max_tokens=settings.llm.local_max_tokens,
        **common,
    )
