"""`litloop cites` and `litloop refs`: who cites a work and what they say, what a paper cites and
where. The records come from agent/reading/queries.py (shared with the MCP server); this module opens the
index and prints them with agent/chat/cites_view.py's printers, which the chats use too.

Registered on the main command by `register(app)`. Only typer and rich load at import time.
"""

from __future__ import annotations

from typing import Annotated

import typer

from agent.chat.cites_view import print_cites, print_notes, print_refs
from agent.cli.common import IndexOpt, JsonOpt, err, out, reports_problems
from agent.cli.corpora import CorpusOpt
from agent.cli.index import using_index


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
    from agent.api.papers import cites_record

    with using_index(index, corpus) as idx:
        record = cites_record(idx, work)
    if as_json:
        out.print_json(record.model_dump_json())
        return
    print_cites(out, record.model_dump())
    print_notes(err, record.notes)


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
    from agent.api.papers import refs_record

    with using_index(index, corpus) as idx:
        record = refs_record(idx, paper_id)
    if cited_only:
        record.references = [r for r in record.references if r.contexts]
    if as_json:
        out.print_json(record.model_dump_json())
        return
    print_refs(out, record.model_dump())
    print_notes(err, record.notes)
