"""What counts as a failure of the endpoint, and how one is described: the classification
`agent.llm` applies to every call's exception (a transport failure and a reply that is not a
chat completion become recorded failures; anything else is a configuration error or a bug and
raises). Pure: no client is imported until an exception is classified."""

from __future__ import annotations

import json


def is_endpoint_error(exc: BaseException) -> bool:
    """An error of the OpenAI-compatible endpoint that `structured_call` raises rather than
    records (a wrong key, an unknown model, a refused request): the run fails, and says so."""
    try:
        import openai
    except ImportError:  # pragma: no cover - langchain-openai depends on it
        return False
    return isinstance(exc, openai.OpenAIError)


def describe_error(exc: BaseException) -> str:
    """`Type: message`, with the root cause when it says more (the client's "Connection error."
    hides `ConnectError: [Errno 111] Connection refused`)."""
    text = f"{type(exc).__name__}: {exc}"
    root, seen = exc, {id(exc)}
    while (nxt := root.__cause__ or root.__context__) is not None and id(nxt) not in seen:
        seen.add(id(nxt))
        root = nxt
    cause = str(root).splitlines()[0] if str(root) else ""
    # a status error's root (httpx's HTTPStatusError) only repeats the status with a link
    if root is not exc and cause and cause not in text and type(root).__name__ != "HTTPStatusError":
        text += f" ({type(root).__name__}: {cause})"
    return text


_CLIENT_PACKAGES = ("openai", "langchain_openai", "httpx", "httpx2")  # where the client parses a reply
_NOT_AN_API = "is the base URL an OpenAI-compatible API (usually ending in /v1)?"


def bad_reply(exc: Exception) -> str | None:
    """What is wrong when the endpoint answered 2xx with something that is not a chat completion.

    The OpenAI client hands a body that is not JSON (an HTML page, a proxy's text) on as a str,
    and langchain-openai then fails on it with AttributeError; a JSON content type with a body
    that does not parse raises JSONDecodeError. Only these raised inside the client libraries
    count: the same errors from anywhere else are bugs and propagate.
    """
    if not isinstance(exc, (AttributeError, json.JSONDecodeError)) or _raised_in(exc) not in _CLIENT_PACKAGES:
        return None
    if isinstance(exc, json.JSONDecodeError):
        return (
            f"the endpoint's reply is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}): {_NOT_AN_API}"
        )
    return f"the endpoint's reply is not a chat completion (a text or HTML page, not JSON): {_NOT_AN_API}"


def _raised_in(exc: BaseException) -> str:
    """The top-level package of the innermost frame that raised `exc`, past the json module."""
    package, tb = "", exc.__traceback__
    while tb is not None:
        module = str(tb.tb_frame.f_globals.get("__name__", ""))
        if module != "json" and not module.startswith("json."):
            package = module.split(".")[0]
        tb = tb.tb_next
    return package


def is_transient(exc: Exception) -> bool:
    """Rate limits, timeouts, connection and server errors that survived the client's retries."""
    if isinstance(exc, (TimeoutError, ConnectionError)):
        return True
    try:
        import openai
    except ImportError:  # pragma: no cover - langchain-openai depends on it
        return False
    return isinstance(
        exc,
        (openai.RateLimitError, openai.APITimeoutError, openai.APIConnectionError, openai.InternalServerError),
    )
