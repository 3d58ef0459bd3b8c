"""`litloop corpora list|build` and the `--corpus NAME` option of `ask`, `search` and `retrieve`.

Kept apart from agent/cli/main.py so the corpus commands are one self-contained piece: cli.py calls
`register(app)` and uses `CorpusOpt` / `open_named`. Only typer and rich load at import time;
the registry (and with it every corpus module) loads inside the commands.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from agent.cli.common import err, fail, out

CorpusOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--corpus",
        "-c",
        help="A registered corpus to search (repeatable; several are fused, "
        "ids become CORPUS:ID). See `litloop corpora list`. Not with --index.",
    ),
]

corpora_app = typer.Typer(help="Registered corpora: list them, build their indexes.", no_args_is_help=True)


def open_named(names: list[str], index: Path | None = None):
    """The index for `--corpus` names (an Index, or a MultiIndex for several); building a corpus
    on first use. A clear one-line error for an unknown name, or for --index given as well."""
    from agent.settings import get_settings
    from tools.index import BuildFailed, IndexProblem
    from tools.models.embed import ModelNotAvailable
    from tools.registry import CorpusProblem, UnknownCorpus, get_corpus, open_corpora

    if index is not None:
        raise fail("give either --index or --corpus, not both", 2)
    settings = get_settings()
    try:
        for name in names:
            if not get_corpus(name).is_built(settings):
                err.print(f"[dim]Building corpus {escape(name)} (first use)...[/]")
        return open_corpora(names, settings, progress=sys.stderr.isatty())
    except UnknownCorpus as exc:
        raise fail(str(exc), 2) from None
    except (CorpusProblem, IndexProblem, BuildFailed, ModelNotAvailable) as exc:
        raise fail(str(exc)) from None


@corpora_app.command("list")
def corpora_list(
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")] = False,
) -> None:
    """Every registered corpus, whether its index is built, and how big it is."""
    from agent.settings import get_settings
    from tools.registry import REGISTRY

    settings = get_settings()
    rows = [c.info(settings) for c in sorted(REGISTRY.all().values(), key=lambda c: c.name)]
    if as_json:
        out.print_json(json.dumps(rows))
        return
    table = Table(box=None)
    for col in ("corpus", "built", "papers", "chunks", "size", "description"):
        table.add_column(col, justify="right" if col in ("papers", "chunks", "size") else "left")
    for r in rows:
        table.add_row(
            f"[bold]{escape(r['name'])}[/]",
            "[green]yes[/]" if r["built"] else "[dim]no[/]",
            _n(r["papers"]),
            _n(r["chunks"]),
            f"{r['bytes'] / 1e6:.1f} MB" if r["bytes"] else "-",
            escape(r["description"]),
        )
    out.print(table)
    err.print("[dim]Search with `--corpus NAME` (repeatable); build ahead with `litloop corpora build NAME`.[/]")


def _n(v: int | None) -> str:
    return "-" if v is None else f"{v:,}"


@corpora_app.command("build")
def corpora_build(
    name: Annotated[str, typer.Argument(help="A registered corpus (see `litloop corpora list`).")],
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Start its index afresh instead of adding new papers.")
    ] = False,
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit",
            min=1,
            help="A quick trial: only the first N records of each JSONL source and the N smallest files of each folder.",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")] = False,
) -> None:
    """Build (or bring up to date) a corpus's index under the data folder."""
    from agent.settings import get_settings
    from tools.index import BuildFailed, IndexProblem
    from tools.models.embed import ModelNotAvailable
    from tools.registry import CorpusProblem, UnknownCorpus, get_corpus

    settings = get_settings()
    try:
        corpus = get_corpus(name)
        report = corpus.build(settings, rebuild=rebuild, limit=limit, progress=sys.stderr.isatty())
    except UnknownCorpus as exc:
        raise fail(str(exc), 2) from None
    except (CorpusProblem, IndexProblem, BuildFailed, ModelNotAvailable) as exc:
        raise fail(str(exc)) from None
    if as_json:
        out.print_json(json.dumps({"corpus": name, **report.to_dict()}))
        return
    t = report.totals
    out.print(
        f"[green]Corpus {escape(name)}:[/] {report.papers_added} new papers ({report.chunks_added} chunks) "
        f"into {escape(str(report.index))}"
        + (f"; it now holds {t['papers']} papers, {t['chunks']} chunks." if t else ".")
    )


def register(app: typer.Typer) -> None:
    """Add the `corpora` command group to the litloop CLI."""
    app.add_typer(corpora_app, name="corpora")


def check_names(names: list[str] | None, index: Path | None = None) -> list[str] | None:
    """Validate `--corpus` names up front (before any model starts); None when none given."""
    if not names:
        return None
    from tools.registry import UnknownCorpus, get_corpus

    if index is not None:
        raise fail("give either --index or --corpus, not both", 2)
    try:
        for name in names:
            get_corpus(name)
    except UnknownCorpus as exc:
        raise fail(str(exc), 2) from None
    return list(dict.fromkeys(names))
