"""The one place chat models are built, and the one way they are asked for structured output.

`build_chat_model(role, settings)` returns a LangChain chat model for a node's role: Azure OpenAI
when `llm.azure_endpoint` is set, any OpenAI-compatible endpoint when `llm.base_url` is set, and
otherwise the embedded local model (agent/local_model.py), started once per process and shared.

`structured_call(model, Schema, system, user)` sends a system prompt and one user message, asks
for JSON matching a pydantic schema, validates it, makes exactly one repair attempt when the output
is not valid, and then returns a failure *value* (never raises for bad output), so the graph can
record what went wrong and carry on with the other papers. `token_call(model, system, user)`
is the other call, for the model's next token with its log-probabilities (option scoring, the
support judge): recorded as an attempt in the same way, with the same endpoint health.

Retries of rate limits and timeouts are not done here: `max_retries` goes to the OpenAI client,
which retries 408/409/429/5xx, timeouts and connection errors with exponential backoff (0.5 s
doubling up to 8 s, 25% jitter, `Retry-After` honoured). Retrying again here would multiply.
Within one run (`endpoint_watch`, which `agent.api.ask` opens), an endpoint whose last
`ENDPOINT_FAILURES_TO_STOP` calls all failed after those retries gets no more calls: the rest
fail at once (kind `not_sent`), so a dead or hanging endpoint costs a run three failed calls,
not one per paper.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, TypedDict, TypeVar, get_args

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, ValidationError

from agent.endpoint_errors import bad_reply, describe_error, is_transient
from agent.endpoint_errors import is_endpoint_error as is_endpoint_error
from tools.validation import field_messages

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from agent.settings import LLMSettings, Settings

log = logging.getLogger(__name__)

Role = Literal["decompose", "verify", "read", "synthesize", "judge"]
ROLES: tuple[str, ...] = get_args(Role)
StructuredMethod = Literal["json_schema", "json_mode", "function_calling"]
# invalid_json / invalid_schema / truncated: the model's output (a repair turn follows); call: the
# request failed after the client's retries (connection, timeout, rate limit, 5xx); reply: the
# endpoint answered with something that is not a chat completion (an HTML page, a body that is
# not JSON); not_sent: not sent, the endpoint had already failed in this run (`endpoint_watch`).
ErrorKind = Literal["invalid_json", "invalid_schema", "truncated", "call", "reply", "not_sent"]
ENDPOINT_KINDS: tuple[str, ...] = ("call", "reply", "not_sent")  # failures of the endpoint, not of the output

T = TypeVar("T", bound=BaseModel)

# `{error}` and `{schema}` are replaced literally (not str.format), so braces in a prompt file's
# JSON examples need no escaping.
DEFAULT_REPAIR_PROMPT = (
    "Your previous reply could not be used: {error}\n\n"
    "Reply again with only the corrected JSON object, no prose and no code fences. "
    "It must match this JSON schema:\n{schema}"
)
JSON_MODE_INSTRUCTION = (
    "\n\nReply with only a JSON object (no prose, no code fences) that matches this JSON schema:\n{schema}"
)
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

    from agent.local_model import LOCAL_MODEL_NAME, shared_server

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


# ---------------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True)
class Attempt:
    """One LLM call of a structured_call: what came back and why it was not accepted."""

    raw: str | None
    error: str | None = None
    error_kind: ErrorKind | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0
    # the reply's tokens with their top alternatives, when the call asked for logprobs
    logprobs: tuple[dict[str, Any], ...] | None = None


@dataclass(frozen=True)
class StructuredResult(Generic[T]):
    """The parsed value, or a failure that records the error, the raw text and every attempt."""

    schema_name: str
    value: T | None
    attempts: tuple[Attempt, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return self.value is not None

    @property
    def calls(self) -> int:
        return len(self.attempts)

    @property
    def repaired(self) -> bool:
        return self.ok and self.calls > 1

    @property
    def error(self) -> str | None:
        return None if self.ok or not self.attempts else self.attempts[-1].error

    @property
    def error_kind(self) -> ErrorKind | None:
        return None if self.ok or not self.attempts else self.attempts[-1].error_kind

    @property
    def raw(self) -> str | None:
        return self.attempts[-1].raw if self.attempts else None

    @property
    def logprobs(self) -> tuple[dict[str, Any], ...] | None:
        """The accepted reply's tokens with their top log-probabilities (when asked for)."""
        return self.attempts[-1].logprobs if self.ok else None

    @property
    def input_tokens(self) -> int:
        return sum(a.input_tokens for a in self.attempts)

    @property
    def output_tokens(self) -> int:
        return sum(a.output_tokens for a in self.attempts)

    def to_record(self) -> dict[str, Any]:
        """JSON-ready summary for graph state and traces."""
        return {
            "schema": self.schema_name,
            "ok": self.ok,
            "value": self.value.model_dump(mode="json") if self.value is not None else None,
            "error": self.error,
            "error_kind": self.error_kind,
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "attempts": [{k: v for k, v in asdict(a).items() if k != "logprobs"} for a in self.attempts],
        }


# ---------------------------------------------------------------------------------------------
# One run's endpoint health

# Endpoint failures in a row (no reply in between) after which a run sends no more calls. Each
# failure already had the client's retries, so one more call to a dead, hanging or rate-limited
# endpoint only adds timeout_s x (max_retries + 1) seconds before the same error (hours for 50
# papers at the defaults). Three in a row, and any reply starts the count again: a few unlucky
# requests of a working endpoint (a long prompt that timed out) must not end a run.
ENDPOINT_FAILURES_TO_STOP = 3


@dataclass
class EndpointHealth:
    """The endpoint failures in a row (kinds `call`, `reply`) of one run, shared by its threads."""

    failures: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record(self, attempt: Attempt) -> None:
        """One attempt's outcome: a failure of the endpoint counts, any reply (even output that
        is not valid) shows it answers and starts the count again."""
        with self._lock:
            self.failures = self.failures + 1 if attempt.error_kind in ("call", "reply") else 0

    @property
    def down(self) -> bool:
        return self.failures >= ENDPOINT_FAILURES_TO_STOP

    def not_sent(self) -> Attempt:
        return Attempt(None, f"not sent: the endpoint failed the run's last {self.failures} calls", "not_sent")


# the run's health; LangGraph and ContextThreadPoolExecutor copy contextvars into their threads
_run_health: ContextVar[EndpointHealth | None] = ContextVar("litloop_endpoint_health", default=None)


@contextmanager
def endpoint_watch() -> Iterator[EndpointHealth]:
    """Count the endpoint failures of the calls made inside (one run); once there are
    `ENDPOINT_FAILURES_TO_STOP`, `structured_call` stops sending and fails at once."""
    health = EndpointHealth()
    token = _run_health.set(health)
    try:
        yield health
    finally:
        _run_health.reset(token)


# ---------------------------------------------------------------------------------------------
# Structured calls


def method_of(model: Any) -> StructuredMethod:
    """The structured-output method `build_chat_model` chose for this model (default json_schema)."""
    metadata = getattr(model, "metadata", None) or {}
    return metadata.get(_METADATA_METHOD, "json_schema")


# Free-text fields the lean schema caps, with the multiple of `local_text_chars` each may use, and
# optional fields it leaves out (a 1.5B model's written-out reasoning or a reader's finding costs
# seconds per token and does not make its answers better; the claims and their ids stay).
_LEAN_CAPS = {"answer": 3, "text": 1, "finding": 1, "missing": 1, "held": 1, "statement_1": 1, "statement_2": 1}
_LEAN_DROP = {"reasoning", "facts", "finding"}


def lean_schema(schema: dict[str, Any], text_chars: int) -> dict[str, Any]:
    """The JSON schema sent to the embedded model: optional `reasoning`/`facts`/`finding` left
    out, and free-text fields capped at a length (`maxLength`, enforced by the server's
    grammar), in nested objects ($defs) too. Generation runs at about 7 tokens/s on 2 cores, so
    the tokens saved are seconds saved. Validation still uses the full pydantic model, whose
    left-out fields have defaults.
    """
    out = json.loads(json.dumps(schema))
    for obj in [out, *out.get("$defs", {}).values()]:
        props = obj.get("properties", {})
        required = set(obj.get("required", []))
        for name in _LEAN_DROP & set(props) - required:
            del props[name]
        for name, mult in _LEAN_CAPS.items():
            if props.get(name, {}).get("type") == "string":
                props[name]["maxLength"] = text_chars * mult
    return out


def schema_text(schema: type[BaseModel]) -> str:
    return json.dumps(schema.model_json_schema(), ensure_ascii=False)


def build_messages(
    schema: type[BaseModel],
    system: str,
    user: str,
    *,
    method: StructuredMethod = "json_schema",
    schema_in_prompt: bool | None = None,
) -> list[BaseMessage]:
    """The exact first-attempt messages (also what a prompt-rendering command should show).

    json_mode sends no schema to the server, so the schema goes into the system prompt; the other
    methods send it as response_format or a tool, and the prompt's own wording describes the fields.
    """
    if schema_in_prompt is None:
        schema_in_prompt = method == "json_mode"
    if schema_in_prompt:
        system = system + JSON_MODE_INSTRUCTION.replace("{schema}", schema_text(schema))
    return [SystemMessage(content=system), HumanMessage(content=user)]


def render_repair(template: str | None, error: str, schema: type[BaseModel]) -> str:
    template = template or DEFAULT_REPAIR_PROMPT
    return template.replace("{error}", error).replace("{schema}", schema_text(schema))


def structured_call(
    model: BaseChatModel,
    schema: type[T],
    system: str,
    user: str,
    *,
    repair_prompt: str | None = None,
    method: StructuredMethod | None = None,
    schema_in_prompt: bool | None = None,
    logprobs: int | None = None,
) -> StructuredResult[T]:
    """Ask `model` for a `schema` object; one repair retry on invalid output, then a failure value.

    The repair turn replays the conversation with the model's bad reply and a user message built
    from `repair_prompt` (placeholders `{error}`, `{schema}`). Transient transport errors left
    after the client's own retries (rate limit, timeout, connection, 5xx) and a reply that is not
    a chat completion (an HTML page, a body that is not JSON) also become a failure value;
    anything else (a wrong key, a bad request) is a configuration error and raises.
    `logprobs=n`: ask for each output token's top n log-probabilities (`result.logprobs`), on a
    model whose client has the option (OpenAI-compatible ones); others ignore it.
    """
    method = method or method_of(model)
    if logprobs and "top_logprobs" in type(model).model_fields:
        model = model.model_copy(update={"logprobs": True, "top_logprobs": logprobs})
    # The schema goes as a plain JSON schema, not the class: given a class, the OpenAI client
    # validates inside the request and raises, losing the raw text the repair turn needs.
    json_schema = schema.model_json_schema()
    lean_chars = (getattr(model, "metadata", None) or {}).get(_METADATA_LEAN)
    if lean_chars and method == "json_schema":
        json_schema = lean_schema(json_schema, int(lean_chars))
    runnable = model.with_structured_output(json_schema, method=method, include_raw=True)
    messages = build_messages(schema, system, user, method=method, schema_in_prompt=schema_in_prompt)
    attempts: list[Attempt] = []
    value: T | None = None
    health = _run_health.get()
    for turn in range(2):
        if health is not None and health.down:
            attempts.append(health.not_sent())
            break
        value, attempt = _attempt(runnable, messages, schema)
        attempts.append(attempt)
        if health is not None:
            health.record(attempt)
        if value is not None or attempt.error_kind in ENDPOINT_KINDS or turn == 1:
            break
        log.info("%s output invalid (%s); asking for a repair", schema.__name__, attempt.error)
        messages = [
            *messages,
            AIMessage(content=attempt.raw or ""),
            HumanMessage(content=render_repair(repair_prompt, attempt.error or "", schema)),
        ]
    result = StructuredResult(schema_name=schema.__name__, value=value, attempts=tuple(attempts))
    if not result.ok:  # a call not sent repeats an endpoint failure already logged
        log.log(
            logging.INFO if result.error_kind == "not_sent" else logging.WARNING,
            "%s failed after %d call(s): %s",
            schema.__name__,
            result.calls,
            result.error,
        )
    return result


def token_call(
    model: BaseChatModel, system: str, user: str, *, top_logprobs: int, max_tokens: int = 1
) -> StructuredResult[Any]:
    """The reply's first `max_tokens` tokens with each one's top `top_logprobs` alternatives
    (`result.logprobs`; `result.value` the text), for the calls that read the model's next token
    (option scoring, the support judge). No schema and no repair turn, but the same record as
    `structured_call`: one `Attempt`, the run's endpoint health counted and obeyed (not sent
    once it is down), a transport failure or a reply that is not a chat completion a failure
    value; anything else (a 400: the endpoint takes no logprobs) raises."""
    health = _run_health.get()
    if health is not None and health.down:
        return StructuredResult(schema_name="next_token", value=None, attempts=(health.not_sent(),))
    bound = model.bind(logprobs=True, top_logprobs=top_logprobs, max_tokens=max_tokens, temperature=0)
    started = time.perf_counter()
    try:
        reply = bound.invoke([SystemMessage(content=system), HumanMessage(content=user)])
    except Exception as exc:
        attempt = _failure(exc, time.perf_counter() - started, truncated=False)
        if health is not None:
            health.record(attempt)
        return StructuredResult(schema_name="next_token", value=None, attempts=(attempt,))
    attempt = Attempt(reply.text, seconds=time.perf_counter() - started, logprobs=_logprobs_of(reply), **_tokens(reply))
    if health is not None:
        health.record(attempt)
    return StructuredResult(schema_name="next_token", value=reply.text, attempts=(attempt,))


def _failure(exc: Exception, elapsed: float, truncated: bool = True) -> Attempt:
    """The attempt a call's exception makes: output cut off at the token limit, a transport
    failure, a reply that is not a chat completion; anything else raises again."""
    cut = _truncated_attempt(exc, elapsed) if truncated else None
    if cut is not None:
        return cut
    if is_transient(exc):
        return Attempt(None, describe_error(exc), "call", seconds=elapsed)
    not_a_reply = bad_reply(exc)
    if not_a_reply is not None:
        return Attempt(None, not_a_reply, "reply", seconds=elapsed)
    raise exc


class Tokens(TypedDict):
    input_tokens: int
    output_tokens: int


def _tokens(message: Any) -> Tokens:
    usage = getattr(message, "usage_metadata", None) or {}
    return {"input_tokens": usage.get("input_tokens", 0), "output_tokens": usage.get("output_tokens", 0)}


def _logprobs_of(message: Any) -> tuple[dict[str, Any], ...] | None:
    content = ((getattr(message, "response_metadata", None) or {}).get("logprobs") or {}).get("content")
    return tuple(content) if content else None


def _attempt(runnable: Any, messages: list[BaseMessage], schema: type[T]) -> tuple[T | None, Attempt]:
    started = time.perf_counter()
    try:
        out = runnable.invoke(messages)
    except Exception as exc:
        return None, _failure(exc, time.perf_counter() - started)
    elapsed = time.perf_counter() - started
    raw_message = out["raw"] if isinstance(out, dict) else out
    raw_text, obj, parse_error = _payload(raw_message)
    tokens = _tokens(raw_message)
    if parse_error is not None:
        return None, Attempt(raw_text, parse_error, "invalid_json", seconds=elapsed, **tokens)
    lp = _logprobs_of(raw_message)
    try:
        return schema.model_validate(obj), Attempt(raw_text, seconds=elapsed, logprobs=lp, **tokens)
    except ValidationError as exc:
        return None, Attempt(raw_text, _describe(exc), "invalid_schema", seconds=elapsed, **tokens)


_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def _payload(message: Any) -> tuple[str, Any, str | None]:
    """(raw text, decoded JSON, error): tool-call arguments first, else the message text.

    Strict `json.loads` on purpose: LangChain's lenient parser closes truncated JSON, which would
    let a cut-off answer through as if it were complete.
    """
    tool_calls = getattr(message, "tool_calls", None) or []
    if tool_calls:
        args = tool_calls[0].get("args", {})
        return json.dumps(args, ensure_ascii=False), args, None
    invalid = getattr(message, "invalid_tool_calls", None) or []
    if invalid:
        bad = invalid[0]
        return str(bad.get("args") or ""), None, f"invalid JSON in tool call: {bad.get('error')}"
    text = message.text if isinstance(message, BaseMessage) else str(message)
    body = text.strip()
    if fenced := _FENCE.match(body):
        body = fenced.group(1)
    if not body:
        return text, None, "empty reply: expected a JSON object"
    try:
        return text, json.loads(body), None
    except json.JSONDecodeError as exc:
        return text, None, f"invalid JSON: {exc}"


def _describe(exc: ValidationError) -> str:
    """Model-readable validation errors, one per line, in the words every validation message of
    litloop uses (`tools.validation`): "field 'claims[0].text' is missing"."""
    return "the JSON does not match the schema:\n" + "\n".join(field_messages(exc))


def _truncated_attempt(exc: Exception, elapsed: float) -> Attempt | None:
    """The OpenAI client raises when generation hit the token limit; that is bad output, not a crash."""
    if type(exc).__name__ != "LengthFinishReasonError":
        return None
    completion = getattr(exc, "completion", None)
    raw, usage = None, None
    if completion is not None and completion.choices:
        raw = completion.choices[0].message.content
        usage = completion.usage
    return Attempt(
        raw,
        "the reply was cut off at the token limit (finish_reason=length); answer more briefly",
        "truncated",
        input_tokens=getattr(usage, "prompt_tokens", 0) or 0,
        output_tokens=getattr(usage, "completion_tokens", 0) or 0,
        seconds=elapsed,
    )
