"""Structured calls: a system prompt and one user message, JSON matching a pydantic schema,
validated, with one repair attempt; and the next-token call with its log-probabilities."""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypedDict

from langchain_core.callbacks import BaseCallbackHandler, BaseCallbackManager
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, ValidationError

from agent.llm.errors import bad_reply, describe_error, is_transient
from agent.llm.factory import _METADATA_LEAN, _METADATA_METHOD, StructuredMethod
from agent.llm.health import _run_health
from agent.llm.results import ENDPOINT_KINDS, Attempt, StructuredResult, T
from tools.validation import field_messages

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

log = logging.getLogger(__name__)

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
    on_text: Callable[[str], None] | None = None,
) -> StructuredResult[T]:
    """Ask `model` for a `schema` object; one repair retry on invalid output, then a failure value.

    The repair turn replays the conversation with the model's bad reply and a user message built
    from `repair_prompt` (placeholders `{error}`, `{schema}`). Transient transport errors left
    after the client's own retries (rate limit, timeout, connection, 5xx) and a reply that is not
    a chat completion (an HTML page, a body that is not JSON) also become a failure value;
    anything else (a wrong key, a bad request) is a configuration error and raises.
    `logprobs=n`: ask for each output token's top n log-probabilities (`result.logprobs`), on a
    model whose client has the option (OpenAI-compatible ones); others ignore it.
    `on_text`: the reply is streamed, and `on_text` gets the reply so far (its raw text, the
    JSON as written) after each piece; each attempt starts again from "". A model whose client
    cannot stream gives it nothing more; the result is the same either way.
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
    plain = runnable
    if on_text is not None and "streaming" in type(model).model_fields and _streams(model):
        # streamed; its usage asked for too (OpenAI's client leaves it off for other base URLs)
        extra = {"stream_usage": True} if "stream_usage" in type(model).model_fields else {}
        streamed = model.model_copy(update={"streaming": True, **extra})
        runnable = streamed.with_structured_output(json_schema, method=method, include_raw=True)
    else:
        on_text = None
    messages = build_messages(schema, system, user, method=method, schema_in_prompt=schema_in_prompt)
    attempts: list[Attempt] = []
    value: T | None = None
    health = _run_health.get()
    for turn in range(2):
        if health is not None and health.down:
            attempts.append(health.not_sent())
            break
        try:
            value, attempt = _attempt(runnable, messages, schema, on_text)
        except Exception as exc:
            if on_text is None or not _refuses_streaming(exc):
                raise
            # an endpoint that refuses a streamed request (or its usage) answers unstreamed,
            # and is not asked to stream again by this process
            runnable, on_text = plain, None
            value, attempt = _attempt(runnable, messages, schema)
            log.warning("the endpoint refused a streamed call (%s); answering without streaming", describe_error(exc))
            _NO_STREAMING.add(_endpoint_of(model))
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


_NO_STREAMING: set[str] = set()  # endpoints (base URL and model) that refused a streamed call


def _endpoint_of(model: Any) -> str:
    return f"{getattr(model, 'openai_api_base', '') or ''} {getattr(model, 'model_name', '') or ''}"


def _streams(model: Any) -> bool:
    """Whether a drafting call to this model is streamed: not to an endpoint that refused it."""
    return _endpoint_of(model) not in _NO_STREAMING


def _refuses_streaming(exc: Exception) -> bool:
    """A request the endpoint refused as such (400, 422): a server that cannot stream this call,
    or stream its usage."""
    return getattr(exc, "status_code", None) in (400, 422)


class _ReplySoFar(BaseCallbackHandler):
    """Sends a streamed reply's text so far to `sink` after each piece: the message text, or a
    tool call's arguments (function calling)."""

    def __init__(self, sink: Callable[[str], None]) -> None:
        self.sink = sink
        self.text = ""

    def on_llm_new_token(self, token: str | list[str | dict[str, Any]], *, chunk: Any = None, **kwargs: Any) -> None:
        piece = token if isinstance(token, str) else ""
        message = getattr(chunk, "message", None)
        for call in getattr(message, "tool_call_chunks", None) or []:
            piece += call.get("args") or ""
        if piece:
            self.text += piece
            self.sink(self.text)


def _with_handler(handler: BaseCallbackHandler) -> dict[str, Any]:
    """The config a call inside a run already has (its tracer, its parent run), plus `handler`:
    a config's own `callbacks` would replace the inherited ones."""
    from langchain_core.runnables.config import ensure_config

    config = dict(ensure_config())
    inherited = config.get("callbacks")
    if isinstance(inherited, BaseCallbackManager):
        manager = inherited.copy()
        manager.add_handler(handler, inherit=True)
        config["callbacks"] = manager
    else:
        config["callbacks"] = [*(inherited or []), handler]  # type: ignore[misc]
    return config


def _attempt(
    runnable: Any, messages: list[BaseMessage], schema: type[T], on_text: Callable[[str], None] | None = None
) -> tuple[T | None, Attempt]:
    started = time.perf_counter()
    try:
        if on_text is None:
            out = runnable.invoke(messages)
        else:
            on_text("")
            out = runnable.invoke(messages, config=_with_handler(_ReplySoFar(on_text)))
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
