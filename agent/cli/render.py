"""How the `litloop` commands print what they found: papers and their chunks, search hits, the
Retrieve/Relate rankings, the index's summary, the agent's progress and its cited answer.

Rich colour and wrapping on a terminal, plain text when piped. The commands (agent/cli/main.py) decide
what to run; this module only writes it out.
"""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from agent.chat.render import FLAGGED_NOTE, flagged_lines, table_rows_shown
from agent.cli.common import err, out
from agent.records.progress import named

COMPACT_HINT = 8  # segments from which `index info` suggests `index compact`


def print_paper(paper, chunks, text_loss: dict | None = None) -> None:
    """A paper's record and every chunk's full text: word-wrapped and indented on a terminal,
    exactly as indexed when piped (so it can be diffed or grepped)."""
    from collections import Counter

    from rich.padding import Padding
    from rich.text import Text

    meta = " ".join(str(x) for x in (paper.venue, paper.year) if x)
    out.print(f"[bold]{escape(paper.title or '(untitled)')}[/]")
    out.print(f"[dim]{escape(paper.paper_id)}{' · ' + escape(meta) if meta else ''}[/]")
    if paper.authors:
        out.print(escape(", ".join(paper.authors)))
    out.print(f"source: {escape(paper.source or '(unknown)')}")
    if text_loss:
        lost = text_loss.get("lost_pages") or []
        out.print(
            f"[yellow]text kept: {text_loss['share']:.2f} of the PDF's words[/]"
            + (f" (pages {', '.join(map(str, lost))} kept under half)" if lost else "")
            + "; the rest is in no chunk"
        )
    kinds = ", ".join(f"{k} {n}" for k, n in Counter(c.kind for c in chunks).items())
    out.print(f"[bold]{len(chunks)} chunk{'' if len(chunks) == 1 else 's'}[/]" + (f": {kinds}" if kinds else ""))
    for n, c in enumerate(chunks, start=1):
        out.print(f"\n[bold cyan]{n:>3}.[/] {escape(c.chunk_id)}  [green]{c.kind}[/] · {escape(c.locator.describe())}")
        if out.is_terminal:  # Text, not a string: a chunk's [brackets] and :colons: are no markup
            out.print(Padding(Text(c.text), (0, 0, 0, 5)), soft_wrap=False)
        else:  # past rich, which would expand tabs and drop form feeds
            out.file.write(c.text + "\n")


def print_hits(query: str, retriever: str, hits, idx) -> None:
    if not hits:
        out.print(f"No papers match {query!r}.")
        return
    out.print(f"[bold]{len(hits)} papers[/] for [italic]{escape(query)}[/] ({retriever})\n")
    for n, h in enumerate(hits, start=1):
        paper = idx.papers[h.paper_id]
        meta = " ".join(str(x) for x in (paper.venue, paper.year) if x)
        out.print(
            f"[bold cyan]{n:>2}.[/] [bold]{escape(h.title or '(untitled)')}[/]  "
            f"[dim]{escape(h.paper_id)}{' · ' + escape(meta) if meta else ''} · score {h.score:.4f}[/]"
        )
        c = h.chunk
        out.print(f"    [green]{c.kind}[/] · {escape(c.locator.describe())}")
        snippet = " ".join(c.text.split())
        out.print(f'    [dim]"{escape(snippet[:300])}{"…" if len(snippet) > 300 else ""}"[/]\n')


def print_retrieval(question: str, stage: str, run, papers: list[dict]) -> None:
    """`litloop retrieve`: each paper of the stage with its score, the neighbour links that put it
    in ranking B, and its two best chunks."""
    from tools.base import Locator

    out.print(f"[bold]{len(papers)} papers[/] (stage {stage}) for [italic]{escape(question)}[/]")
    out.print(
        f"[dim]subqueries: {escape('; '.join(run.subqueries))} · seeds: {escape(', '.join(run.seeds))} · "
        f"{run.seconds['total']:.1f} s[/]\n"
    )
    for p in papers:
        out.print(
            f"[bold cyan]{p['rank']:>2}.[/] [bold]{escape(p['title'] or '(untitled)')}[/]  "
            f"[dim]{escape(p['paper_id'])} · score {p['score']:.4f}[/]"
        )
        if p["via"]:
            out.print(f"    [magenta]via {escape(', '.join(p['via'][:4]))}[/]")
        for c in p["chunks"][:2]:
            snippet = " ".join(c["text"].split())[:200]
            out.print(
                f"    [green]{c['kind']}[/] · {escape(Locator.from_dict(c['locator']).describe())} · "
                f'{c["score"]:.4f}  [dim]"{escape(snippet)}…"[/]'
            )
        out.print()


def context_summary(info: dict) -> str:
    """`index info`'s line on citation contexts: how many, and how to get them where missing."""
    c = info["counts"]
    if "contexts" not in c:
        return "not recorded (the index was built before litloop recorded them; rebuild it with --rebuild)"
    line = f"{c['contexts']} in the text, {c.get('references', 0)} cited works outside the index"
    missing = c.get("papers_without_contexts", 0)
    if missing:
        line += f"; {missing} papers indexed before contexts were recorded have none (rebuild to add them)"
    return line


def ligature_summary(counts: dict) -> str:
    """The index's note on words repaired at ingest ("speci c" -> "specific")."""
    lig = counts.get("ligatures_repaired")
    if lig is None:
        return "not recorded (built before litloop repaired lost ligatures)"
    if not lig.get("words"):
        return "no word had lost a ligature"
    return f"{lig['words']} words that had lost a ligature in extraction, in {lig['papers']} papers ('speci c' -> 'specific')"


def text_loss_summary(counts: dict) -> str:
    """The index's note on PDFs whose reader kept too little of their text."""
    losses = counts.get("text_losses")
    if losses is None:
        return "not recorded (built before litloop accounted for each page's text)"
    if not losses:
        return "every PDF's reader kept enough of its text"
    shown = "; ".join(
        f"{x['paper_id']} {x['share']:.2f}"
        + (f" (lost p. {', '.join(map(str, x['lost_pages']))})" if x["lost_pages"] else "")
        for x in losses[:5]
    )
    more = f"; {len(losses) - 5} more (--json)" if len(losses) > 5 else ""
    return f"{len(losses)} PDF(s) kept too little of their text: {shown}{more}"


def print_index_info(root, info: dict) -> None:
    """`litloop index info`: one row per fact, and a warning when the index does not match the
    settings it is opened with."""
    c = info["counts"]
    table = Table(title=f"index {root}", show_header=False, box=None)
    table.add_column(style="bold")
    table.add_column()
    rows = [
        ("version", f"{info['version']} (format {info['format_version']}, updated {info['updated']})"),
        ("papers", str(c["papers"])),
        ("chunks", f"{c['chunks']}  " + ", ".join(f"{k} {v}" for k, v in c["chunks_by_kind"].items())),
        ("citation edges", str(c["citation_edges"])),
        ("coupling pairs", f"{c['coupling_pairs']} (>= 2 shared references)"),
        ("dense windows", str(c["dense_windows"])),
        ("citation contexts", context_summary(info)),
        ("repaired text", ligature_summary(c)),
        ("text kept", text_loss_summary(c)),
        (
            "dense store",
            "embedded (chroma/ in each segment)"
            if info["dense"]["kind"] == "embedded"
            else f"Chroma server {info['dense']['url']}, collection {info['dense']['collection']}",
        ),
        (
            "segments",
            f"{len(info['segments'])}"
            + (
                ""
                if len(info["segments"]) < COMPACT_HINT
                else " (searches ask each one; `litloop index compact` merges them)"
            ),
        ),
        ("embedder", f"{info['embedder']['name']} ({info['embedder']['dim']}-d)"),
        ("paper embedder", f"{info['paper_embedder']['name']} ({info['paper_embedder']['dim']}-d)"),
        ("tokenizer / BM25", f"{info['tokenizer']} / k1 {info['bm25']['k1']}, b {info['bm25']['b']}"),
        ("size", f"{info['total_bytes'] / 1e6:.1f} MB"),
        ("fingerprint", info["corpus_fingerprint"]),
        (
            "ingest version",
            f"{info['ingest_version']}"
            + (
                ""
                if info["ingest_current"]
                else " (older parsers cut these papers; `litloop index build PATH... --rebuild` re-cuts them)"
            ),
        ),
    ]
    for k, v in rows:
        table.add_row(k, escape(v))
    out.print(table)
    if not info["compatible_with_settings"]:
        err.print(f"[yellow]warning:[/] {escape(info['problem'])}")


def progress_printer(ev: dict) -> None:
    """Node-by-node progress on stderr (quiet when stderr is not a terminal unless -v)."""
    node = ev["node"]
    if node == "decompose":
        err.print(
            f"[bold]round {ev['round']}/{ev['max_rounds']}[/] subqueries: "
            + ("; ".join(escape(q) for q in ev["subqueries"]) or "[dim](none new)[/]")
        )
    elif node == "search":
        err.print(f"  papers found: {ev['papers_found']}")
    elif node == "verify" and ev.get("llm") is False:
        err.print(
            f"  no LLM verdict (this preset): evidence papers are the top {len(ev.get('evidence_papers') or [])}: "
            + escape(named(ev.get("evidence_papers"), ev.get("titles")))
        )
    elif node == "verify":
        verdict = "[green]sufficient[/]" if ev.get("sufficient") else "[yellow]not yet sufficient[/]"
        err.print(
            f"  verdict: {verdict}; evidence papers: {escape(named(ev.get('evidence_papers'), ev.get('titles')))}"
            + (f"; missing: {escape(ev['missing'])}" if ev.get("missing") else "")
        )
    elif node == "expand_neighbors":
        err.print(
            f"  related papers: {ev['candidates']} candidates from seeds {escape(named(ev['seeds'], ev.get('titles')))}"
        )
    elif node == "read_paper":
        err.print(f"  papers read: {ev['papers_read']}, relevant: {escape(named(ev['relevant'], ev.get('titles')))}")


def print_answer(result: dict) -> None:
    ans = result["answer"]
    out.print()
    if ans.get("choice"):
        out.print(f"[bold]Answer:[/] {ans['choice']}")
    out.print(escape(ans.get("text", "")))
    rows = table_rows_shown(ans)  # the chats' rule: no table the text already shows
    if rows:
        table = Table(show_lines=False)
        for col in rows[0]:
            table.add_column(col)
        for row in rows:
            table.add_row(*(escape(str(v)) for v in row.values()))
        out.print(table)
    if ans.get("citations"):
        out.print("\n[bold]Evidence[/]")
        from tools.base import Locator

        for c in ans["citations"]:
            meta = " ".join(str(x) for x in (c.get("venue"), c.get("year")) if x)
            out.print(
                f"[bold cyan][{c['n']}][/] {escape(c['title'] or c['paper_id'])} "
                f"[dim]({escape(c['paper_id'])}{'; ' + escape(meta) if meta else ''})[/] · "
                f"{c['kind']} · {escape(Locator.from_dict(c['locator']).describe())}"
            )
            out.print(f'    [dim]"{escape(c["quote"])}"[/]')
    if flagged := flagged_lines(ans):
        out.print(f"\n[bold yellow]Flagged[/] [dim]({FLAGGED_NOTE})[/]")
        for line in flagged:
            out.print(f"  [dim]{escape(line)}[/]")
    if ans.get("rejected_claims"):
        from agent.chat.render import dropped_lines

        out.print("\n[bold]Dropped[/] [dim](claims not supported by the sentences they cite)[/]")
        for line in dropped_lines(ans):
            out.print(f"  [dim]{escape(line)}[/]")
    u = result.get("usage", {})
    err.print(
        f"[dim]{result['rounds']} round(s), {int(u.get('llm_calls', 0))} LLM calls, "
        f"{int(u.get('input_tokens', 0))}+{int(u.get('output_tokens', 0))} tokens, "
        f"{u.get('seconds_total', 0):.1f} s, preset {result['preset']}[/]"
    )
