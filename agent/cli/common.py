"""What every `litloop` command module shares: the two consoles, the options used everywhere, the
one-line error and the decorator that turns a configuration problem into one.

Only typer and rich load here. The problem types are imported when an exception is being
handled, never at import time, so `litloop --help` stays instant.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from agent.records.problems import user_problems

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)

IndexOpt = Annotated[
    Path | None,
    typer.Option(
        "--index", "-i", help="Index directory (default: LITLOOP_INDEX, else the demo index, built on first use)."
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")]
PresetOpt = Annotated[
    str | None,
    typer.Option(
        "--preset",
        "-p",
        help="paper | local | local-fast | kadr | ... (default: paper with an endpoint; "
        "with the embedded model local-fast below 8 CPU threads, else local)",
    ),
]

P = ParamSpec("P")
R = TypeVar("R")


def fail(message: str, code: int = 1) -> typer.Exit:
    """Print `error: MESSAGE` on stderr and return the exit to raise (`raise fail(...)`)."""
    err.print(f"[bold red]error:[/] {escape(message)}")
    return typer.Exit(code)


def progress() -> bool:
    """Progress bars only where a person watches stderr."""
    return sys.stderr.isatty()


def reports_problems(command: Callable[P, R]) -> Callable[P, R]:
    """Decorate a command (below `@app.command()`) so that a user problem it raises ends it with
    `error: MESSAGE` and exit status 1."""

    @functools.wraps(command)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except Exception as exc:
            if isinstance(exc, user_problems()):
                raise fail(str(exc)) from None
            raise

    return run
