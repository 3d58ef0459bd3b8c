"""`litloop mcp`: the MCP server (agent/serve/mcp.py) on stdio or streamable HTTP.

Registered on the main command by `register(app)`. The SDK and the index load inside the command.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from agent.cli.common import IndexOpt, PresetOpt, err, fail, reports_problems
from agent.cli.corpora import CorpusOpt, check_names


def remote_problem(host: str, port: int, allow_remote: bool) -> str | None:
    """Why `--host` is refused: a non-loopback address without `--allow-remote`; None otherwise."""
    from agent.chat.access import is_loopback

    if is_loopback(host) or allow_remote:
        return None
    return (
        f"--host {host} is not a loopback address: anyone who can reach this machine on port {port} could "
        "search your index and ask your model endpoint with its key (without LITLOOP_SERVE__KEYS_FILE the MCP server has no login). Keep the "
        "default 127.0.0.1 (and use an SSH tunnel from elsewhere), or add --allow-remote to do it anyway."
    )


@reports_problems
def mcp(
    transport: Annotated[
        str, typer.Option("--transport", "-t", help="stdio (a client starts the server) | http (streamable HTTP).")
    ] = "stdio",
    host: Annotated[
        str, typer.Option("--host", help="http: the address to bind; any but loopback needs --allow-remote.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="http: the port; the endpoint is /mcp.")] = 8765,
    allow_remote: Annotated[
        bool, typer.Option("--allow-remote", help="Confirm a non-loopback --host: other machines can then call it.")
    ] = False,
    index: IndexOpt = None,
    corpus: CorpusOpt = None,
    preset: PresetOpt = None,
) -> None:
    """Serve litloop's tools over MCP (search, retrieve, ask, show_paper) to other agents: on stdio
    for a client that starts it, or on http://HOST:PORT/mcp. The index is opened once."""
    from agent.context import preset_names

    if transport not in ("stdio", "http"):
        raise fail(f"--transport must be stdio or http, not {transport!r}", 2)
    if preset and preset not in preset_names():
        raise fail(f"unknown preset {preset!r}; choose one of {', '.join(preset_names())}", 2)
    problem = remote_problem(host, port, allow_remote) if transport == "http" else None
    if problem:
        raise fail(problem, 2)
    if transport == "http":
        keys_note()
    corpora = check_names(corpus, index)
    first_build_note(index, corpora)
    from agent.serve.mcp import Library, serve

    def ready(where: str) -> None:  # stderr: on stdio, stdout is the protocol's
        err.print(f"[green]litloop MCP server[/] on {escape(where)}")

    serve(Library(index, corpora, preset), "http" if transport == "http" else "stdio", host, port, on_ready=ready)


def keys_note() -> None:
    """With LITLOOP_SERVE__KEYS_FILE, the HTTP server asks every request for a key of that file
    (agent/serve/mcp.py `KeyRequired`); a malformed file stops it here."""
    from agent.serve.keys import load_keys
    from agent.settings import default_settings

    keys_file = default_settings().serve.keys_file
    if keys_file is None:
        return
    try:
        users = set(load_keys(keys_file.expanduser()).values())
    except ValueError as exc:
        raise fail(f"LITLOOP_SERVE__KEYS_FILE: {exc}", 2) from exc
    err.print(f"litloop mcp: API keys of {len(users)} user(s) (Authorization: Bearer KEY)")


def first_build_note(index, corpora: list[str] | None) -> None:
    """Say so on stderr when the server's start will build the demo index or a corpus first."""
    from agent.settings import get_settings

    settings = get_settings(index=index)
    if corpora:
        from tools.registry import get_corpus

        for name in corpora:
            if not get_corpus(name).is_built(settings):
                err.print(f"[dim]Building corpus {escape(name)} (first use) before serving...[/]")
    elif settings.index is None and not (settings.demo_index / "CURRENT").exists():
        err.print(
            f"[dim]Building the demo index in {settings.demo_index} (first use, a few minutes) before serving...[/]"
        )


def register(app: typer.Typer) -> None:
    """Add `litloop mcp` to the litloop CLI."""
    app.command("mcp")(mcp)
