"""`litloop ui`, `litloop chat` and `litloop trace list|show`: the chats and the trace commands
(the viewer they print with is `agent.chat.trace_view`).

Registered on the main command by `register(app)`. Everything heavy (streamlit, the graph, the
index) is imported inside the commands, so `litloop --help` stays instant.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from agent.cli.common import IndexOpt, JsonOpt, PresetOpt, err, fail, out
from agent.cli.corpora import CorpusOpt, check_names

APP_PATH = Path(__file__).resolve().parents[1] / "chat" / "app.py"


# ----------------------------------------------------------------------------- ui


def streamlit_command(port: int, host: str, corpora: list[str] | None = None) -> list[str]:
    """`streamlit run` for the chat app: loopback by default, no browser, no usage statistics
    (nothing leaves the machine), no file watcher. Corpora go to the app as its own arguments
    (after `--`) and are preselected in its sidebar.

    Pinned against a user's ~/.streamlit/config.toml: CORS and XSRF protection on; the Host
    allow-list of the bound address at the WebSocket handshake and the agent API off, where this
    Streamlit has those options; Streamlit's own welcome banner off, since its URL lacks the
    token (`litloop ui` prints the one to open)."""
    from agent.chat.access import allowed_hosts

    cmd = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(APP_PATH),
        "--server.address",
        host,
        "--server.port",
        str(port),
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
        "--global.developmentMode",
        "false",
        "--client.toolbarMode",
        "minimal",
        "--server.enableCORS",
        "true",
        "--server.enableXsrfProtection",
        "true",
        "--logger.hideWelcomeMessage",
        "true",
    ]
    known = streamlit_options()
    hosts = allowed_hosts(host)
    if hosts and "server.allowedHosts" in known:
        cmd += [a for name in hosts for a in ("--server.allowedHosts", name)]
    if "server.enableAgentApi" in known:
        cmd += ["--server.enableAgentApi", "false"]
    if corpora:
        cmd += ["--", *(a for name in corpora for a in ("--corpus", name))]
    return cmd


def streamlit_options() -> set[str]:
    """The config options the installed Streamlit knows (`streamlit run` refuses unknown ones)."""
    from streamlit import config

    return set(config.get_config_options())


def remote_host_problem(host: str, port: int, allow_remote: bool) -> str | None:
    """Why `--host` is refused: a non-loopback address without `--allow-remote`; None otherwise."""
    from agent.chat.access import is_loopback

    if is_loopback(host) or allow_remote:
        return None
    return (
        f"--host {host} is not a loopback address: anyone who can reach this machine on port {port} could "
        "reach the chat, which reads your index and asks your model endpoint with its key. Only the "
        "token in the printed URL would stop them, and it travels unencrypted over plain HTTP. Keep "
        "the default 127.0.0.1 (and use an SSH tunnel from elsewhere), or add --allow-remote to do it anyway."
    )


def ui(
    index: IndexOpt = None,
    corpus: CorpusOpt = None,
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port to serve on.")] = 8501,
    host: Annotated[
        str,
        typer.Option(
            "--host", help="Address to bind; 127.0.0.1 keeps the chat on this machine. Any other needs --allow-remote."
        ),
    ] = "127.0.0.1",
    allow_remote: Annotated[
        bool,
        typer.Option(
            "--allow-remote",
            help="Confirm a non-loopback --host: other "
            "machines can then reach the chat (the token in the URL is its only lock).",
        ),
    ] = False,
    server: Annotated[
        str | None,
        typer.Option(
            "--server",
            help="A `litloop serve` server (http://HOST:PORT) to use as a client: questions run there, "
            "on its index and model, and the conversations are its threads. Its key: LITLOOP_SERVE__API_KEY. "
            "Default: LITLOOP_SERVE__URL, else the agent runs here.",
        ),
    ] = None,
) -> None:
    """The web chat (Streamlit) on http://127.0.0.1:PORT/?token=...: live steps, cited answers,
    threads, traces. The token is new at every start (or LITLOOP_UI_TOKEN); the chat refuses a
    browser without it."""
    import importlib.util

    from agent.chat.access import (
        TOKEN_ENV,
        browse_url,
        is_loopback,
        new_token,
        token_problem,
    )

    problem = remote_host_problem(host, port, allow_remote)
    if problem:
        raise fail(problem, 2)
    if importlib.util.find_spec("streamlit") is None:
        raise fail("the web chat needs streamlit, which is not installed: pip install 'litloop[ui]'")
    env = dict(os.environ)
    token = env.get(TOKEN_ENV) or new_token()
    bad_token = token_problem(token)
    if bad_token:
        raise fail(bad_token, 2)
    env[TOKEN_ENV] = token
    if server is not None:
        env["LITLOOP_SERVE__URL"] = server
    if env.get("LITLOOP_SERVE__URL"):
        if index is not None or corpus:
            raise fail("--server uses the server's index: leave out --index and --corpus", 2)
        problem = server_problem(env["LITLOOP_SERVE__URL"])
        if problem:
            raise fail(problem)
        err.print(f"litloop web chat: a client of the server at {escape(env['LITLOOP_SERVE__URL'])}")
    corpora = check_names(corpus, index)
    if index is not None:
        if not (index / "CURRENT").exists():
            raise fail(f"no litloop index at {index}: build one with `litloop index build FILES --index {index}`")
        env["LITLOOP_INDEX"] = str(index.resolve())
    if not is_loopback(host):  # allowed by --allow-remote, said once more
        err.print(
            f"[bold yellow]warning:[/] serving on {escape(host)}: other machines can reach the chat; the token "
            "is its only lock and plain HTTP does not encrypt it"
        )
    err.print(f"litloop web chat on [bold]{escape(browse_url(host, port, token))}[/] (Ctrl-C stops it)")
    raise typer.Exit(serve_until_stopped(streamlit_command(port, host, corpora), env))


def server_problem(url: str) -> str | None:
    """Why the `litloop serve` server at `url` cannot be used, or None (it answers /ok)."""
    import urllib.request

    if not url.startswith(("http://", "https://")):
        return f"--server {url}: give the server's URL, http://HOST:PORT"
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/ok", timeout=10) as r:
            if r.status == 200:
                return None
    except OSError as exc:
        return f"no litloop server answers at {url} ({exc}); start one with `litloop serve` or check the URL"
    return f"the server at {url} did not answer /ok"


def serve_until_stopped(cmd: list[str], env: dict[str, str]) -> int:
    """Run the server and wait; Ctrl-C (SIGINT) or a SIGTERM to litloop stops the server, and
    with it the embedded model it started (a bare subprocess.call would leave it running,
    holding the port, when litloop is terminated). SIGINT gets its handler here even where
    litloop was started with it ignored (`litloop ui &` in a script): Ctrl-C must stop the chat."""
    import signal

    proc = subprocess.Popen(cmd, env=env)

    def stop(_signum, _frame) -> None:
        if proc.poll() is None:
            proc.terminate()

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        code = proc.wait()
        return 0 if code in (-signal.SIGTERM, -signal.SIGINT) else code
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if proc.poll() is None:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


# ----------------------------------------------------------------------------- chat


def chat(
    index: IndexOpt = None,
    preset: PresetOpt = None,
    corpus: CorpusOpt = None,
    thread: Annotated[
        str | None,
        typer.Option("--thread", "-t", help="Continue a conversation (its id or the start of it; see /threads)."),
    ] = None,
) -> None:
    """Chat in the terminal: streaming steps, cited answers, history per thread.
    Commands: /new, /threads, /history, /trace, /dropped, /cites, /refs, /back, /help, /quit."""
    from agent.chat.session import ChatStore, index_problem
    from agent.chat.terminal import TerminalChat
    from agent.context import preset_names

    if preset and preset not in preset_names():
        raise fail(f"unknown preset {preset!r}; choose one of {', '.join(preset_names())}", 2)
    corpora = check_names(corpus, index)
    problem = None if corpora else index_problem(str(index) if index else None)
    if problem:
        raise fail(problem)
    store = ChatStore()
    try:
        session = TerminalChat(store, out, index=str(index) if index else None, preset=preset, corpora=corpora)
        if thread:
            if not session.open(thread):
                raise fail(f"no conversation {thread!r}; /threads in the chat lists them", 2)
        session.loop()
    finally:
        store.close()


# ----------------------------------------------------------------------------- trace

trace_app = typer.Typer(help="Read the run trees of past questions (local traces).", no_args_is_help=True)


@trace_app.command("list")
def trace_list(
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="How many recent traces.")] = 20,
    as_json: JsonOpt = False,
) -> None:
    """Recent runs: question, time, status, tokens, duration."""
    from agent.chat.trace_view import STATUS_STYLE, local_time
    from agent.tracing.store import list_traces, traces_dir

    items = list_traces(limit=limit)
    if as_json:
        out.print_json(json.dumps(items))
        return
    if not items:
        out.print(f"No traces in {traces_dir()} yet: ask a question (litloop ask, chat or ui).")
        return
    table = Table(box=None, pad_edge=False)
    for col in ("id", "time", "status", "tokens", "seconds", "question"):
        table.add_column(
            col,
            justify="right" if col in ("tokens", "seconds") else "left",
            overflow="fold" if col == "question" else "ellipsis",
            no_wrap=col != "question",
        )
    for t in items:
        q = " ".join(str(t["question"] or "(unknown)").split())
        table.add_row(
            t["trace_id"][-12:],
            local_time(t["start_time"]),
            f"[{STATUS_STYLE.get(t['status'], '')}]{t['status']}[/]",
            f"{t['total_tokens']:,}",
            f"{t['duration_s']:.1f}" if t["duration_s"] is not None else "-",
            escape(q[:100] + ("…" if len(q) > 100 else "")),
        )
    out.print(table)
    err.print(f"[dim]{traces_dir()} · `litloop trace show ID` for the run tree[/]")


@trace_app.command("show")
def trace_show(
    trace_id: Annotated[str, typer.Argument(help="A trace id, a unique start or end of one, or `last`.")],
    as_json: JsonOpt = False,
    everything: Annotated[
        bool, typer.Option("--all", help="Also LangChain's plumbing runs (sequences, lambdas, parsers).")
    ] = False,
) -> None:
    """The run tree of one question, indented, with durations, tokens and errors in red;
    `--json` prints the raw records."""
    from agent.chat.trace_view import print_trace
    from agent.tracing.store import TraceNotFound, load_trace

    try:
        records = load_trace(trace_id)
    except TraceNotFound as exc:
        raise fail(str(exc)) from None
    if as_json:
        out.print_json(json.dumps(records))
        return
    print_trace(out, records, everything=everything)


# ----------------------------------------------------------------------------- wiring


def register(app: typer.Typer) -> None:
    """Add `ui`, `chat` and the `trace` sub-app to the main command."""
    app.command("ui")(ui)
    app.command("chat")(chat)
    app.add_typer(trace_app, name="trace")
