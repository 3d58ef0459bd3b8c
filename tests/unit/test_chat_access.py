"""Who may use the web chat and which key goes where (agent/chat/access.py), and `litloop ui`'s
start-up: the `--host` check, the token in the printed URL, the pinned Streamlit options. The app
refusing a session without the token, and a typed endpoint getting no configured key, run in
tests/graph/test_chat_app.py; the real server refusing a rebound Host in
tests/integration/test_web_chat_access.py."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from agent.chat import access
from agent.chat.access import Configured

pytestmark = pytest.mark.unit


def test_token_matches_only_the_same_nonempty_token():
    token = access.new_token()
    assert len(token) >= 40 and access.token_problem(token) is None
    assert access.token_matches(token, token)
    assert not access.token_matches(token[:-1] + "x", token)
    assert not access.token_matches(None, token) and not access.token_matches("", "")
    assert not access.token_matches("anything", None)
    assert "at least 16" in access.token_problem("short")
    assert "letters, digits" in access.token_problem("a" * 20 + "&x=1")


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]", "LOCALHOST"])
def test_loopback_hosts(host):
    assert access.is_loopback(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.5", "10.0.0.1", "my-laptop", "example.com", ""])
def test_non_loopback_hosts(host):
    assert not access.is_loopback(host)


def test_host_check_refuses_a_rebound_name_and_another_sites_page():
    allowed = access.allowed_hosts("127.0.0.1")
    assert allowed == ["127.0.0.1", "localhost", "::1"]
    ok = {"Host": "127.0.0.1:8501", "Origin": "http://127.0.0.1:8501"}
    assert access.host_problem(ok, allowed) is None
    assert access.host_problem({"Host": "localhost:8501", "Origin": "http://localhost:8501"}, allowed) is None
    assert access.host_problem({"Host": "[::1]:8501"}, allowed) is None
    rebound = {"Host": "evil.example:8501", "Origin": "http://evil.example:8501"}  # same-origin, by design
    assert "reached it as 'evil.example:8501'" in access.host_problem(rebound, allowed)
    other_page = {"Host": "127.0.0.1:8501", "Origin": "http://localhost:3000"}
    assert "another site (http://localhost:3000)" in access.host_problem(other_page, allowed)
    assert access.host_problem({"Host": "127.0.0.1:8501", "Origin": "null"}, allowed)
    assert access.host_problem({"Host": "127.0.0.1:notaport"}, allowed)
    assert access.host_problem({}, allowed) is None  # no handshake (AppTest): a browser always sends Host
    # a wildcard bind: the names are unknown, so only the Origin is checked (and the token)
    assert access.allowed_hosts("0.0.0.0") is None and access.allowed_hosts(None) is None
    assert access.host_problem(rebound, None) is None
    assert access.allowed_hosts("192.168.1.5") == ["192.168.1.5", "127.0.0.1", "localhost", "::1"]


def test_browse_url_carries_the_token():
    assert access.browse_url("127.0.0.1", 8501, "t0k") == "http://127.0.0.1:8501/?token=t0k"
    assert access.browse_url("::1", 8600, "t") == "http://[::1]:8600/?token=t"
    assert access.browse_url("0.0.0.0", 8501, "t") == "http://127.0.0.1:8501/?token=t"


CONFIGURED = Configured(
    base_url="https://api.example.com/v1",
    model="m",
    azure=False,
    env={
        access.BASE_URL: "https://api.example.com/v1",
        access.MODEL: "m",
        access.API_KEY: "sk-configured",
        access.AZURE: None,
    },
)


def test_the_configured_endpoint_keeps_its_key():
    env = access.endpoint_environment("https://api.example.com/v1/", "m2", "typed", CONFIGURED)
    assert env[access.API_KEY] == "sk-configured" and env[access.MODEL] == "m2"
    assert access.endpoint_environment("", "", "", CONFIGURED)[access.API_KEY] == "sk-configured"


def test_a_typed_endpoint_gets_only_its_typed_key_or_the_placeholder():
    env = access.endpoint_environment("http://attacker.example/v1", "m", "", CONFIGURED)
    assert env[access.BASE_URL] == "http://attacker.example/v1"
    assert env[access.API_KEY] == access.NO_KEY  # set, so OPENAI_API_KEY is not the fallback either
    assert (
        access.endpoint_environment("http://localhost:11434/v1", "m", " sk-mine ", CONFIGURED)[access.API_KEY]
        == "sk-mine"
    )
    # with no endpoint configured at all, any typed one is typed
    none = Configured(
        None, None, False, {access.BASE_URL: None, access.MODEL: None, access.API_KEY: "sk-env", access.AZURE: None}
    )
    assert access.endpoint_environment("http://x.example/v1", "m", "", none)[access.API_KEY] == access.NO_KEY


def test_a_typed_endpoint_switches_a_configured_azure_off():
    azure = Configured(
        None,
        "dep",
        True,
        {
            access.BASE_URL: None,
            access.MODEL: "dep",
            access.API_KEY: "azure-key",
            access.AZURE: "https://r.openai.azure.com",
        },
    )
    env = access.endpoint_environment("http://x.example/v1", "m", "", azure)
    assert env[access.AZURE] == "" and env[access.API_KEY] == access.NO_KEY
    back = access.endpoint_environment("", "dep", "", azure)
    assert back[access.AZURE] == "https://r.openai.azure.com" and back[access.API_KEY] == "azure-key"


# ----------------------------------------------------------------------------- litloop ui


def _ui(monkeypatch, *args):
    from agent.cli import chat as cli_chat
    from agent.cli.main import app

    started = {}

    def serve(cmd, env):
        started.update(cmd=cmd, env=env)
        return 0

    monkeypatch.setattr(cli_chat, "serve_until_stopped", serve)
    return CliRunner().invoke(app, ["ui", *args]), started


def test_ui_refuses_a_public_host_without_allow_remote(monkeypatch):
    r, started = _ui(monkeypatch, "--host", "0.0.0.0")
    assert r.exit_code == 2 and not started
    assert "--host 0.0.0.0 is not a loopback address" in r.output and "--allow-remote" in r.output


def test_ui_with_allow_remote_warns_and_serves(monkeypatch):
    r, started = _ui(monkeypatch, "--host", "0.0.0.0", "--allow-remote", "--port", "8600")
    assert r.exit_code == 0, r.output
    assert "warning:" in r.output and "other machines can reach the chat" in r.output
    assert started["cmd"][started["cmd"].index("--server.address") + 1] == "0.0.0.0"


def test_ui_prints_the_url_with_a_new_token_passed_in_the_environment(monkeypatch):
    r, started = _ui(monkeypatch, "--port", "8600")
    assert r.exit_code == 0, r.output
    token = started["env"][access.TOKEN_ENV]
    assert f"http://127.0.0.1:8600/?token={token}" in r.output
    assert token not in " ".join(started["cmd"])  # never on a command line (`ps` shows those)
    assert "warning" not in r.output
    _, again = _ui(monkeypatch)
    assert again["env"][access.TOKEN_ENV] != token  # new at every start

    monkeypatch.setenv(access.TOKEN_ENV, "short")
    r3, none = _ui(monkeypatch)
    assert r3.exit_code == 2 and "at least 16" in r3.output and not none


def test_streamlit_command_pins_the_protections():
    from agent.cli.chat import streamlit_command, streamlit_options

    cmd = streamlit_command(8600, "127.0.0.1")
    pairs = list(zip(cmd[5::2], cmd[6::2]))
    flags = dict(pairs)
    assert flags["--server.enableCORS"] == "true" and flags["--server.enableXsrfProtection"] == "true"
    assert flags["--logger.hideWelcomeMessage"] == "true"  # Streamlit's banner shows a URL without the token
    if "server.allowedHosts" in streamlit_options():
        assert [v for f, v in pairs if f == "--server.allowedHosts"] == ["127.0.0.1", "localhost", "::1"]
        assert flags["--server.enableAgentApi"] == "false"
    assert "--server.allowedHosts" not in streamlit_command(8600, "0.0.0.0")
