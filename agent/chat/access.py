"""Who may use the web chat, and which key goes to which endpoint. Plain functions, no UI
library imported here; `agent/chat/app.py` and `litloop ui` (agent/cli/chat.py) apply them.

- **Token.** `litloop ui` makes a random token per start, hands it to the app in its
  environment (`LITLOOP_UI_TOKEN`, never on a command line) and prints the URL carrying it
  (`/?token=...`, as Jupyter does). The app answers a browser session only once its URL carried
  the token, so a page elsewhere that scripts the loopback port (DNS rebinding, a local page on
  another port) gets a refusal and nothing else.
- **Host and Origin.** The app refuses a session whose `Host` is not a name of the address the
  server binds (what DNS rebinding cannot fake: the browser sends the attacker's name), or whose
  `Origin` is another site; Streamlit's own `server.allowedHosts` does the same check at the
  WebSocket handshake where the installed Streamlit has it (1.61 and later).
- **Endpoint keys.** The configured API key goes only to the configured endpoint. A base URL
  typed in the sidebar gets the key typed beside it, or a placeholder: never the environment's.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlparse

TOKEN_ENV = "LITLOOP_UI_TOKEN"  # the app's token, passed in its environment by `litloop ui`
MIN_TOKEN_CHARS = 16
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
WILDCARDS = ("", "0.0.0.0", "::")  # bind every interface: the names used to reach it are unknown
NO_KEY = "not-needed"  # what a keyless OpenAI-compatible server gets (agent/llm.py sends the same)

BASE_URL, MODEL, API_KEY, AZURE = (
    "LITLOOP_LLM__BASE_URL",
    "LITLOOP_LLM__MODEL",
    "LITLOOP_LLM__API_KEY",
    "LITLOOP_LLM__AZURE_ENDPOINT",
)


# ----------------------------------------------------------------------------- token


def new_token() -> str:
    return secrets.token_urlsafe(32)


def token_problem(token: str) -> str | None:
    """Why a token given in LITLOOP_UI_TOKEN cannot lock the chat, or None."""
    if len(token) < MIN_TOKEN_CHARS:
        return f"{TOKEN_ENV} is {len(token)} characters; use at least {MIN_TOKEN_CHARS} (or unset it for a random one)"
    if not all(c.isalnum() or c in "-_.~" for c in token):
        return f"{TOKEN_ENV} may hold only letters, digits and - _ . ~ (it travels in the URL)"
    return None


def token_matches(given: str | None, expected: str | None) -> bool:
    """Whether the URL's token is the app's; constant-time, and never true without a token."""
    if not given or not expected:
        return False
    return hmac.compare_digest(given.encode(), expected.encode())


# ----------------------------------------------------------------------------- host


def is_loopback(host: str) -> bool:
    """Whether binding `host` keeps the chat on this machine (a name other than localhost may
    resolve anywhere, so it counts as remote)."""
    name = host.strip().strip("[]").lower().rstrip(".")
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def allowed_hosts(bind: str | None) -> list[str] | None:
    """The names a browser may use to reach a server bound to `bind`; None: any (a wildcard bind,
    where only the token protects the chat)."""
    name = (bind or "").strip().strip("[]").lower()
    if name in WILDCARDS:
        return None
    return list(dict.fromkeys([name, *LOOPBACK_NAMES]))


def _hostname(netloc: str) -> str | None:
    try:
        parsed = urlparse(f"//{netloc}")
        _ = parsed.port  # a port that is not a number is not a Host
    except ValueError:
        return None
    return (parsed.hostname or "").rstrip(".") or None


def host_problem(headers: Mapping[str, str], allowed: list[str] | None) -> str | None:
    """Why the session's handshake headers are refused, or None. No Host header means no browser
    (Streamlit's AppTest); every browser request carries one."""
    host = headers.get("Host") or headers.get("host")
    if not host:
        return None
    name = _hostname(host)
    if allowed is not None and name not in allowed:
        return (
            f"This chat answers only at {', '.join(allowed)}; this page reached it as {host!r}. Open the "
            "URL that `litloop ui` printed."
        )
    origin = headers.get("Origin") or headers.get("origin")
    if origin and urlparse(origin).netloc != host:
        return f"This chat does not answer pages from another site ({origin}). Open the URL that `litloop ui` printed."
    return None


def browse_url(host: str, port: int, token: str) -> str:
    """The URL `litloop ui` prints: the bound address (loopback for a wildcard), with the token."""
    name = host.strip().strip("[]")
    if name in WILDCARDS:
        name = "127.0.0.1"
    if ":" in name:
        name = f"[{name}]"
    return f"http://{name}:{port}/?token={token}"


# ----------------------------------------------------------------------------- endpoint keys


@dataclass(frozen=True)
class Configured:
    """The endpoint the UI process was started with: its settings and the raw environment
    values the sidebar may change (None: unset), to put back when the sidebar returns to it."""

    base_url: str | None
    model: str | None
    azure: bool
    env: Mapping[str, str | None]


@lru_cache(maxsize=1)
def configured_endpoint() -> Configured:
    """Taken once per process, on the app's first run, before the sidebar changes anything
    (tests that change the environment call `configured_endpoint.cache_clear()`)."""
    from agent.settings import Settings

    llm = Settings().llm
    return Configured(
        llm.base_url,
        llm.model,
        bool(llm.azure_endpoint),
        {var: os.environ.get(var) for var in (BASE_URL, MODEL, API_KEY, AZURE)},
    )


def same_endpoint(url: str | None, other: str | None) -> bool:
    return (
        url is not None
        and other is not None
        and bool(url)
        and bool(other)
        and url.strip().rstrip("/") == other.strip().rstrip("/")
    )


def typed_endpoint(base_url: str, configured: Configured) -> bool:
    """Whether the sidebar's base URL is one typed there (not the configured one, not empty)."""
    return bool(base_url.strip()) and not same_endpoint(base_url, configured.base_url)


def endpoint_environment(base_url: str, model: str, api_key: str, configured: Configured) -> dict[str, str | None]:
    """The environment values (None: unset) that make the sidebar's endpoint the one used.

    The configured endpoint, or none (the embedded model), runs on the configured environment's
    key. A typed endpoint gets `api_key` as typed, else the keyless placeholder, set explicitly
    so that neither LITLOOP_LLM__API_KEY nor OPENAI_API_KEY (agent/llm.py's fallback) reaches
    it; a configured Azure endpoint is switched off for it, since Azure wins over a base URL."""
    base, name = base_url.strip(), model.strip()
    env: dict[str, str | None] = {BASE_URL: base or None, MODEL: name or None}
    if typed_endpoint(base, configured):
        env[API_KEY] = api_key.strip() or NO_KEY
        env[AZURE] = "" if configured.azure else configured.env.get(AZURE)
    else:
        env[API_KEY] = configured.env.get(API_KEY)
        env[AZURE] = configured.env.get(AZURE)
    return env
