"""`litloop cites` and `litloop refs`: who cites a work and what they say, what a paper cites and
where. The records come from agent/queries.py (shared with the MCP server); this module opens the
index and prints them.

Registered on the main command by `register(app)`. Only typer and rich load at import time.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.markup import escape

from agent.cli_common import IndexOpt, JsonOpt, err, fail, out, reports_problems
from agent.cli_corpora import CorpusOpt
from agent.cli_index import using_index


def register(app: typer.Typer) -> None:
    app.command("cites")(cites)
    app.command("refs")(refs)


@reports_problems
def cites(
    work: Annotated[
        str,
        typer.Argument(
            help="The cited work: a paper id (CORPUS:ID over several corpora), a reference id from "
            '`litloop refs`, or words of its title ("GROBID") to find cited works outside the index.'
        ),
    ],
    index: IndexOpt = None,
    corpus: CorpusOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Who cites a work: each citing paper with the sentences that cite it (page, section, intent)."""
    from agent.queries import UnknownPaper, cites_record

    with using_index(index, corpus) as idx:
        try:
            record = cites_record(idx, work)
        except UnknownPaper as exc:
            raise fail(str(exc), 2) from None
    if as_json:
        out.print_json(json.dumps(record))
        return
    for n, w in enumerate(record["works"]):
        if n:
            out.print()
        _print_work(w)
    _print_notes(record["notes"])


@reports_problems
def refs(
    paper_id: Annotated[str, typer.Argument(help="The citing paper's id (CORPUS:ID over several corpora).")],
    index: IndexOpt = None,
    corpus: CorpusOpt = None,
    cited_only: Annotated[
        bool, typer.Option("--cited-only", help="Only the references the text cites (with contexts).")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """What a paper cites: each reference (a paper of the index or a work outside it) with the
    sentences that cite it."""
    from agent.queries import UnknownPaper, refs_record

    with using_index(index, corpus) as idx:
        try:
            record = refs_record(idx, paper_id)
        except UnknownPaper as exc:
            raise fail(str(exc), 2) from None
    if cited_only:
        record["references"] = [r for r in record["references"] if r["contexts"]]
    if as_json:
        out.print_json(json.dumps(record))
        return
    n_refs = len(record["references"])
    out.print(
        f"[bold]{escape(record['title'] or record['paper_id'])}[/]  [dim]{escape(record['paper_id'])}[/]\n"
        f"{n_refs} reference{'' if n_refs == 1 else 's'}, {record['contexts']} citing sentence"
        f"{'' if record['contexts'] == 1 else 's'}\n"
    )
    for n, r in enumerate(record["references"], start=1):
        where = (
            f"[green]{escape(r['target'])}[/]"
            if r["kind"] == "paper"
            else f"[dim]{escape(r['target'] or 'unresolved')}[/]"
        )
        year = f" ({r['year']})" if r["year"] else ""
        out.print(f"[bold cyan]{n:>3}.[/] {escape(r['title'] or r['raw'][:120] or '(untitled)')}{year}  {where}")
        for c in r["contexts"]:
            _print_context(c, indent=5)
    _print_notes(record["notes"])


def _print_work(w: dict[str, Any]) -> None:
    venue = w["venue"] if len(w["venue"]) <= 60 else w["venue"][:59] + "…"
    meta = " ".join(str(x) for x in (venue, w["year"]) if x)
    kind = "paper in the index" if w["kind"] == "paper" else "cited work outside the index"
    out.print(
        f"[bold]{escape(w['title'] or '(untitled)')}[/]  [dim]{escape(w['target'])} · {kind}"
        f"{' · ' + escape(meta) if meta else ''}[/]"
    )
    n_contexts = sum(len(c["contexts"]) for c in w["citing"])
    out.print(
        f"cited by {len(w['citing'])} paper{'' if len(w['citing']) == 1 else 's'}, "
        f"{n_contexts} sentence{'' if n_contexts == 1 else 's'}\n"
    )
    for n, c in enumerate(w["citing"], start=1):
        year = f" ({c['year']})" if c["year"] else ""
        out.print(
            f"[bold cyan]{n:>3}.[/] [bold]{escape(c['title'] or '(untitled)')}[/]{year}  [dim]{escape(c['paper_id'])}[/]"
        )
        if not c["contexts"]:
            out.print("     [dim](a reference the source gives without text: no citing sentence)[/]")
        for ctx in c["contexts"]:
            _print_context(ctx, indent=5)


def _print_context(c: dict[str, Any], indent: int) -> None:
    pad = " " * indent
    where = ", ".join(
        x for x in (f"p. {c['page']}" if c["page"] else "", f"§ {c['section']}" if c["section"] else "") if x
    )
    cue = f" ({escape(c['cue'])})" if c.get("cue") else ""
    out.print(
        f"{pad}[green]{escape(c['intent'])}[/]{cue} · {escape(where or 'no page')} · [dim]{escape(c['chunk_id'])}[/]"
    )
    out.print(f'{pad}"{escape(c["sentence"])}"')


def _print_notes(notes: list[str]) -> None:
    for note in notes:
        err.print(f"[yellow]note:[/] {escape(note)}")
