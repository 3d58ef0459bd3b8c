"""Following citations: who cites a paper and what a paper cites, as `litloop cites` / `litloop
refs` print them and as both chats follow them (the terminal chat's /cites, /refs, /back; the web
chat's *Cited by* and *References*, agent/chat/cites_web.py).

The records are agent/reading/queries.py's (`cites_record`, `refs_record`), the ones the CLI and the MCP
server give. A listing numbers its rows: the citing papers of a `cites` record (across all the
works it found), the references of a `refs` record. A row is what a chat follows next: the
citing paper to its own citers or references, the reference to the papers citing it (back to the
sentences) or, when it is a paper of the index, to its references.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from rich.console import Console
from rich.markup import escape

View = Literal["cites", "refs"]


class CannotFollow(ValueError):
    """What was asked names nothing to list (the message says why and what to give)."""


@dataclass(frozen=True)
class Row:
    """One numbered row of a listing: a paper of the index, a cited work outside it (a `ref:` id),
    or a bibliography entry litloop could not resolve (no target)."""

    target: str | None
    kind: str | None  # 'paper', 'reference', or None for an unresolved entry
    title: str


@dataclass
class Listing:
    """What a chat showed: `view` of `what`, the record and its rows."""

    view: View
    what: str
    record: dict[str, Any]
    rows: list[Row] = field(default_factory=list)


def listing(idx, view: View, what: str) -> Listing:
    """The `cites` or `refs` record of `what` (through agent/reading/queries.py) with its rows. An unknown
    paper or work is a `CannotFollow` with the queries' message."""
    from agent.api.papers import UnknownPaper, cites_record, refs_record

    try:
        record = (cites_record(idx, what) if view == "cites" else refs_record(idx, what)).model_dump()
    except UnknownPaper as exc:
        raise CannotFollow(str(exc)) from None
    for c in contexts_of(view, record):
        c["cite_in_sentence"] = cite_in_sentence(idx, c)
    return Listing(view, what, record, rows_of(view, record))


def contexts_of(view: View, record: dict[str, Any]) -> list[dict[str, Any]]:
    if view == "cites":
        return [x for w in record["works"] for c in w["citing"] for x in c["contexts"]]
    return [x for r in record["references"] for x in r["contexts"]]


def cite_in_sentence(idx, c: dict[str, Any]) -> list[int] | None:
    """Where the citation sits in the context's `sentence`: its offsets are the chunk's, and the
    sentence is the chunk's text with its whitespace runs made one space, so past a line break
    or a double space they no longer match (the mark stopped short: "Beltagy et al. (2019").
    None when the chunk or the citation in it is not found."""
    from tools.retrieval.retrieve import chunk_of

    try:
        text = chunk_of(idx, c["chunk_id"]).text
    except (KeyError, LookupError, ValueError):
        return None
    start, a, b = c.get("start", 0), c.get("cite_start", 0), c.get("cite_end", 0)
    if not 0 <= start <= a < b <= len(text):
        return None
    surface = " ".join(text[a:b].split())
    before = " ".join(text[start:a].split())
    at = (c.get("sentence") or "").find(surface, max(0, len(before) - 1))
    return [at, at + len(surface)] if surface and at >= 0 else None


def rows_of(view: View, record: dict[str, Any]) -> list[Row]:
    if view == "cites":
        return [Row(c["paper_id"], "paper", c["title"] or c["paper_id"]) for w in record["works"] for c in w["citing"]]
    return [Row(r["target"], r["kind"], r["title"] or r["raw"][:120] or "(untitled)") for r in record["references"]]


def follow_target(view: View, row: Row) -> str:
    """What `view` of a listed row asks for; a `CannotFollow` saying why when it cannot be asked."""
    if row.target is None:
        raise CannotFollow(
            f"{row.title!r} is a reference litloop could not resolve to a work; look it up by title words (/cites WORDS)"
        )
    if view == "refs" and row.kind != "paper":
        raise CannotFollow(f"{row.title!r} is a work outside the index: its own references are not known")
    return row.target


def citation_paper(answer: dict[str, Any], n: int) -> str:
    """The paper that citation [n] of an answer quotes."""
    citations = answer.get("citations") or []
    for c in citations:
        if c.get("n") == n:
            return str(c["paper_id"])
    if not citations:
        raise CannotFollow("the last answer cites nothing; name a paper id or words of a title instead")
    raise CannotFollow(f"the last answer has citations [1] to [{len(citations)}], not [{n}]")


def open_index(index: str | None, corpora: list[str] | None, preset: str | None = None):
    """The index a chat searches (the agent's own cache, agent/runtime/resources.py): its corpora, else
    its index folder, else LITLOOP_INDEX or the demo index. A missing or unreadable one is a
    `CannotFollow` naming it."""
    from agent.api import make_run_context
    from agent.api.papers import index_for
    from tools.index.layout import IndexProblem

    try:
        return index_for(make_run_context(preset, index=index, corpora=corpora or None))
    except (IndexProblem, ValueError, OSError) as exc:
        raise CannotFollow(f"the citations cannot be read: {exc}") from None


def context_where(c: dict[str, Any]) -> str:
    """`p. 5, § Introduction` (or `no page`)."""
    bits = [f"p. {c['page']}" if c.get("page") else "", f"§ {c['section']}" if c.get("section") else ""]
    return ", ".join(b for b in bits if b) or "no page"


def marked_sentence(c: dict[str, Any]) -> str:
    """A context's sentence as HTML, every character escaped (paper text is data), with the
    citation itself inside <mark> (its offsets are the chunk's; the sentence starts at `start`)."""
    import html

    s = c.get("sentence") or ""
    a, b = c.get("cite_start", 0) - c.get("start", 0), c.get("cite_end", 0) - c.get("start", 0)
    if c.get("cite_in_sentence"):  # the offsets in the sentence itself (`cite_in_sentence`)
        a, b = c["cite_in_sentence"]
    if not 0 <= a < b <= len(s):
        return html.escape(s)
    from agent.chat.chunk_html import close_brackets

    b = close_brackets(s, a, b)  # "Beltagy et al. (2019" + ")": a mark never leaves its bracket open
    return html.escape(s[:a]) + "<mark>" + html.escape(s[a:b]) + "</mark>" + html.escape(s[b:])


# ----------------------------------------------------------------------------- the terminal


def print_cites(console: Console, record: dict[str, Any]) -> None:
    """`litloop cites`: each work, then its citing papers numbered (one count over all works,
    the rows of the listing) with their sentences."""
    n = 0
    for i, w in enumerate(record["works"]):
        if i:
            console.print()
        _print_work(console, w)
        for c in w["citing"]:
            n += 1
            year = f" ({c['year']})" if c["year"] else ""
            console.print(
                f"[bold cyan]{n:>3}.[/] [bold]{escape(c['title'] or '(untitled)')}[/]{year}  "
                f"[dim]{escape(c['paper_id'])}[/]"
            )
            if not c["contexts"]:
                console.print("     [dim](a reference the source gives without text: no citing sentence)[/]")
            for ctx in c["contexts"]:
                print_context(console, ctx, indent=5)


def _print_work(console: Console, w: dict[str, Any]) -> None:
    venue = w["venue"] if len(w["venue"]) <= 60 else w["venue"][:59] + "…"
    meta = " ".join(str(x) for x in (venue, w["year"]) if x)
    kind = "paper in the index" if w["kind"] == "paper" else "cited work outside the index"
    console.print(
        f"[bold]{escape(w['title'] or '(untitled)')}[/]  [dim]{escape(w['target'])} · {kind}"
        f"{' · ' + escape(meta) if meta else ''}[/]"
    )
    n_contexts = sum(len(c["contexts"]) for c in w["citing"])
    console.print(
        f"cited by {len(w['citing'])} paper{'' if len(w['citing']) == 1 else 's'}, "
        f"{n_contexts} sentence{'' if n_contexts == 1 else 's'}\n"
    )


def print_refs(console: Console, record: dict[str, Any]) -> None:
    """`litloop refs`: the citing paper, then its references numbered, each with its sentences."""
    n_refs = len(record["references"])
    console.print(
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
        console.print(f"[bold cyan]{n:>3}.[/] {escape(r['title'] or r['raw'][:120] or '(untitled)')}{year}  {where}")
        for c in r["contexts"]:
            print_context(console, c, indent=5)


def print_context(console: Console, c: dict[str, Any], indent: int) -> None:
    pad = " " * indent
    cue = f" ({escape(c['cue'])})" if c.get("cue") else ""
    console.print(
        f"{pad}[green]{escape(c['intent'])}[/]{cue} · {escape(context_where(c))} · [dim]{escape(c['chunk_id'])}[/]"
    )
    console.print(f'{pad}"{escape(c["sentence"])}"')


def print_notes(console: Console, notes: list[str]) -> None:
    for note in notes:
        console.print(f"[yellow]note:[/] {escape(note)}")
