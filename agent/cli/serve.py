"""`litloop serve`: the agent's graph over the Agent Protocol, on the LangGraph API server.

It writes a langgraph.json for the installed litloop (the graph `litloop` at agent/serve/graph.py:graph,
whose runs take `litloop ask`'s preset unless `--preset` or the run's context names another)
into `data_dir/serve/` and runs `langgraph dev` (langgraph-api's in-memory runtime) on it, with
this process's settings in the environment: the index (`--index` or LITLOOP_INDEX), the model
endpoint and every other LITLOOP_ setting reach the graph's process unchanged. The threads'
checkpoints go to Postgres (LITLOOP_CHECKPOINT__URL) or an SQLite file through agent/serve/checkpoint.py;
the records of threads and runs stay in the runtime's files. docs/serving.md says why this server
and what it does not do yet.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from agent.settings import Settings

GRAPH_ID = "litloop"


def server_config(folder: Path) -> Path:
    """The langgraph.json that serves this litloop's graph: per-user keys and the queue bound
    (agent/serve/auth.py), the threads' checkpoints in Postgres or SQLite (agent/serve/checkpoint.py); its path."""
    here = Path(__file__).resolve().parents[1] / "serve"
    config: dict = {
        "dependencies": ["."],
        "graphs": {GRAPH_ID: f"{here / 'graph.py'}:graph"},
        "auth": {"path": f"{here / 'auth.py'}:auth"},  # keys, ownership and the queue bound
    }
    # langgraph-api's custom checkpointer: each checkpoint written as it is made (Postgres or SQLite)
    config["checkpointer"] = {"path": f"{here / 'checkpoint.py'}:served_checkpointer"}
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "langgraph.json"
    path.write_text(json.dumps(config, indent=2) + "\n")
    return path


def serve_command(config: Path, host: str, port: int, jobs: int) -> list[str]:
    exe = Path(sys.executable).with_name("langgraph")
    langgraph = str(exe) if exe.exists() else shutil.which("langgraph")
    if not langgraph:
        raise typer.BadParameter(
            "the LangGraph API server is not installed: pip install 'litloop[serve]' (or 'langgraph-cli[inmem]')"
        )
    return [
        langgraph,
        "dev",
        "--config",
        str(config),
        "--host",
        host,
        "--port",
        str(port),
        "--no-browser",
        "--no-reload",
        "--n-jobs-per-worker",
        str(jobs),
    ]


def serve(
    index: Annotated[
        Path | None, typer.Option(help="Index directory (default: LITLOOP_INDEX or the demo index).")
    ] = None,
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 2024,
    jobs: Annotated[int, typer.Option(min=1, help="Runs executed at once (the rest wait in the server's queue).")] = 1,
    preset: Annotated[
        str | None,
        typer.Option(
            help="Preset of a run whose context names none (default: LITLOOP_SERVE__PRESET, else what "
            "`litloop ask` uses here: paper with an endpoint, local or local-fast with the embedded model)."
        ),
    ] = None,
) -> None:
    """Serve the agent over the Agent Protocol (threads, runs, streaming) with the LangGraph API server."""
    from agent.api import default_preset
    from agent.context import load_preset
    from agent.settings import default_settings

    settings = default_settings()
    env = dict(os.environ)
    chosen = preset or settings.serve.preset
    if chosen:
        try:
            load_preset(chosen)
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="--preset") from None
        env["LITLOOP_SERVE__PRESET"] = chosen
    typer.echo(
        f"litloop serve: runs use preset {chosen or default_preset()}"
        + ("" if chosen else " (as `litloop ask` here)")
        + " unless their context names another",
        err=True,
    )
    if index is not None:
        env["LITLOOP_INDEX"] = str(index.expanduser().resolve())
    env.setdefault("LANGGRAPH_CLI_NO_ANALYTICS", "1")  # nothing leaves the machine
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    keys_file = settings.serve.keys_file
    if keys_file is not None:
        from agent.serve.keys import load_keys

        keys_file = keys_file.expanduser().resolve()
        try:
            users = sorted(set(load_keys(keys_file).values()))
        except ValueError as exc:
            raise typer.BadParameter(f"LITLOOP_SERVE__KEYS_FILE: {exc}") from exc
        env["LITLOOP_SERVE__KEYS_FILE"] = str(keys_file)
        typer.echo(f"litloop serve: API keys of {len(users)} user(s); each sees only its own threads", err=True)
    elif host not in ("127.0.0.1", "localhost", "::1"):
        typer.echo(
            "litloop serve: warning: no LITLOOP_SERVE__KEYS_FILE, anyone who reaches the port sees every thread",
            err=True,
        )
    env["LITLOOP_SERVE__MAX_QUEUE"] = str(settings.serve.max_queue)
    _check_checkpoints(settings)
    folder = settings.data_dir / "serve"
    cmd = serve_command(server_config(folder), host, port, jobs)
    os.chdir(folder)  # the in-memory runtime keeps its threads in .langgraph_api/ here
    typer.echo(f"litloop serve: graph '{GRAPH_ID}' on http://{host}:{port}", err=True)
    os.execvpe(cmd[0], cmd, env)


def _check_checkpoints(settings: Settings) -> None:
    """With `LITLOOP_CHECKPOINT__URL` set, a bad URL or a Postgres that does not answer stops
    `litloop serve` here, with the reason, rather than in the server's log."""
    if not settings.checkpoint.url:
        typer.echo(
            f"litloop serve: threads' checkpoints in {settings.data_dir / 'serve' / 'checkpoints.sqlite'}", err=True
        )
        return
    from agent.serve.checkpoint import CheckpointProblem, open_checkpointer

    try:
        checkpointer = open_checkpointer(settings)  # creates the tables once, before the server starts
    except CheckpointProblem as exc:
        raise typer.BadParameter(str(exc)) from exc
    typer.echo(f"litloop serve: threads' checkpoints in Postgres ({checkpointer.where})", err=True)
    checkpointer.close()


def register(app: typer.Typer) -> None:
    """Add `litloop serve` to the litloop CLI."""
    app.command("serve")(serve)
