"""The `litloop` command line.

Heavy libraries (torch, chromadb, sentence-transformers) load inside the commands that need them,
so `litloop --help` is instant. Output: rich colour on a terminal, plain text when piped, and
`--json` for scripts (the contract in DESIGN.md section 11). Progress bars go to stderr and only
when stderr is a terminal.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from agent import cli_corpora
from agent.cli_corpora import CorpusOpt, check_names, open_named
from agent.settings import Settings, get_settings
from agent.submission import attribution

app = typer.Typer(
    help="litloop: answers about the scientific literature, with the evidence for each claim.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
index_app = typer.Typer(help="Build and inspect indexes.", no_args_is_help=True)
app.add_typer(index_app, name="index")

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)
log = logging.getLogger("litloop")
COMPACT_HINT = 8  # segments from which `index info` suggests `index compact`

IndexOpt = Annotated[
    Optional[Path],
    typer.Option("--index", "-i", help="Index directory (default: LITLOOP_INDEX, else the demo index, built on first use)."),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")]


@app.callback()
def _root(
    verbose: Annotated[int, typer.Option("--verbose", "-v", count=True, help="More log output (-vv for debug).")] = 0,
) -> None:
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    # Third-party chatter stays at WARNING unless -vv.
    for noisy in ("chromadb", "httpx", "sentence_transformers", "transformers", "pdfminer"):
        logging.getLogger(noisy).setLevel(logging.WARNING if verbose < 2 else logging.DEBUG)


def _progress() -> bool:
    return sys.stderr.isatty()


def _fail(message: str, code: int = 1) -> typer.Exit:
    err.print(f"[bold red]error:[/] {escape(message)}")
    return typer.Exit(code)


def _settings(index: Path | None = None) -> Settings:
    return get_settings(index=index)


@contextmanager
def _using_index(index: Path | None, corpus: list[str] | None = None) -> Iterator:
    """`_open`'s index for one command: a problem with it or its models is a one-line error,
    and the index is closed whatever happens."""
    from tools.embed import ModelNotAvailable
    from tools.index import IndexProblem

    idx = _open(index, corpus)
    try:
        yield idx
    except (IndexProblem, ModelNotAvailable, ValueError) as exc:
        raise _fail(str(exc)) from None
    finally:
        idx.close()


def _open(index: Path | None, corpus: list[str] | None = None):
    """Open the named corpora, or the given index, or the configured one, or the demo index
    (built on first use)."""
    from tools.index import IndexProblem, open_index

    if corpus:
        return open_named(corpus, index)

    settings = _settings(index)
    try:
        if settings.index is None:
            from tools.corpora.demo import ensure_demo_index

            if not (settings.demo_index / "CURRENT").exists():
                err.print(f"[dim]Building the demo index in {settings.demo_index} (first use, a few minutes)...[/]")
            ensure_demo_index(settings, progress=_progress())
            return open_index(settings.demo_index, settings)
        return open_index(settings.index, settings)
    except IndexProblem as exc:
        raise _fail(str(exc)) from None


# ----------------------------------------------------------------------------- index


@index_app.command("build")
def index_build(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders of JSONL records, S2ORC JSON, GROBID TEI XML (.tei.xml) and PDFs.")],
    index: Annotated[Path, typer.Option("--index", "-i", help="Index directory to create or add to.")],
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Start a new index instead of adding to the existing one.")] = False,
    strict: Annotated[bool, typer.Option("--strict", help="Fail (writing nothing) on any bad input instead of skipping it.")] = False,
    embeddings: Annotated[Optional[Path], typer.Option(
        "--embeddings", help="Window vectors computed elsewhere (.npz: ids, vectors, model; or .jsonl), "
        "imported instead of embedding those windows (see `index export-windows`).")] = None,
    ray: Annotated[bool, typer.Option(
        "--ray", help="Parse, chunk and embed on Ray (pip install 'litloop[ray]'): a local Ray instance "
        "started for the build, or the cluster of --ray-address; GPU workers are used when present.")] = False,
    ray_address: Annotated[str | None, typer.Option(
        "--ray-address", metavar="ADDRESS", help="Build on this Ray cluster (implies --ray): `auto` for the one "
        "`ray start --head` began on this machine, or HOST:6379 (its GCS address).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Index papers; an existing index gets only the new papers (nothing is re-embedded)."""
    from tools.embed import ModelNotAvailable
    from tools.index import BuildFailed, IndexProblem, build_index

    settings = _settings(index)
    on_ray = ray or ray_address is not None
    loader, ray_problem = None, ()
    if on_ray:
        from tools.ray_build import RayProblem, ray_loader

        ray_problem = (RayProblem,)
        if embeddings is not None:
            raise _fail("--embeddings and --ray: give one (Ray computes every window's vector itself)")
        try:
            loader = ray_loader(settings, ray_address, progress=_progress())
        except RayProblem as exc:
            raise _fail(str(exc)) from None
    try:
        report = build_index(paths, index, settings, rebuild=rebuild, strict=strict, progress=_progress(),
                             embeddings=embeddings, loader=loader)
    except BuildFailed as exc:
        for p in exc.problems:
            err.print(f"[yellow]problem:[/] {escape(p)}")
        raise _fail(str(exc)) from None
    except (IndexProblem, ModelNotAvailable, *ray_problem) as exc:
        raise _fail(str(exc)) from None
    if as_json:
        out.print_json(json.dumps(report.to_dict()))
        return
    for p in report.problems:
        err.print(f"[yellow]skipped:[/] {escape(p)}")
    t = report.totals
    out.print(
        f"[green]Indexed[/] {report.papers_added} new papers ({report.chunks_added} chunks, "
        f"{report.windows_embedded} embedded windows, {report.references_resolved} references resolved) "
        f"into {index}"
    )
    if on_ray:
        out.print(f"{report.windows_imported} windows embedded on Ray"
                  + (f", {report.windows_embedded} here" if report.windows_embedded else ""))
    if embeddings is not None:
        out.print(f"{report.windows_imported} windows imported from {escape(str(embeddings))}, "
                  f"{report.windows_embedded} embedded here"
                  + (f"; {report.vectors_ignored} vectors for unknown ids ignored" if report.vectors_ignored else ""))
    if report.already_indexed:
        out.print(f"{report.already_indexed} papers of the input were already in the index (skipped).")
    if t:
        out.print(f"Index now holds {t['papers']} papers, {t['chunks']} chunks, {t['citation_edges']} citation edges.")


@index_app.command("export-windows")
def index_export_windows(
    out_file: Annotated[Path, typer.Option("--out", "-o", help="The JSONL file to write.")],
    paths: Annotated[Optional[list[Path]], typer.Argument(
        help="Papers to cut into windows without building an index (as `index build` reads them). "
        "Without: the windows of the index's chunks.")] = None,
    index: IndexOpt = None,
) -> None:
    """Write the windows a build embeds ({"id", "chunk_id", "text"} a line), of the given papers or
    of the index's chunks, for a job elsewhere to embed and `index build --embeddings` to import."""
    from tools.vector_file import export_input_windows, export_windows

    if paths:
        settings = _settings(index)
        n, problems = export_input_windows(paths, settings, out_file)
        for p in problems:
            err.print(f"[yellow]problem:[/] {escape(p)}")
        if not n:
            raise _fail("no papers could be read from the input; nothing to embed")
        out.print(f"Wrote {n} windows to {escape(str(out_file))}; embed them with "
                  f"{escape(settings.embedder.model)} and save ids, vectors and "
                  f"model={escape(settings.embedder.model)} in an .npz")
        return
    with _using_index(index) as idx:
        n = export_windows(idx, out_file)
        e = idx.manifest["embedder"]
    out.print(f"Wrote {n} windows to {escape(str(out_file))}; embed them with {escape(e['name'])} "
              f"({e['dim']}-d) and save ids, vectors and model={escape(e['name'])} in an .npz")


@index_app.command("info")
def index_info_cmd(index: IndexOpt = None, as_json: JsonOpt = False) -> None:
    """Counts per chunk kind, papers, citation edges, embedder and sizes."""
    from tools.index import IndexProblem, index_info

    settings = _settings(index)
    root = settings.resolved_index
    try:
        info = index_info(root, settings)
    except IndexProblem as exc:
        raise _fail(str(exc)) from None
    if as_json:
        out.print_json(json.dumps(info))
        return
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
        ("dense store", "embedded (chroma/ in each segment)" if info["dense"]["kind"] == "embedded" else
                        f"Chroma server {info['dense']['url']}, collection {info['dense']['collection']}"),
        ("segments", f"{len(info['segments'])}" + ("" if len(info["segments"]) < COMPACT_HINT else
                     " (searches ask each one; `litloop index compact` merges them)")),
        ("embedder", f"{info['embedder']['name']} ({info['embedder']['dim']}-d)"),
        ("paper embedder", f"{info['paper_embedder']['name']} ({info['paper_embedder']['dim']}-d)"),
        ("tokenizer / BM25", f"{info['tokenizer']} / k1 {info['bm25']['k1']}, b {info['bm25']['b']}"),
        ("size", f"{info['total_bytes'] / 1e6:.1f} MB"),
        ("fingerprint", info["corpus_fingerprint"]),
        ("ingest version", f"{info['ingest_version']}" + ("" if info["ingest_current"] else
                           " (older parsers cut these papers; `litloop index build PATH... --rebuild` re-cuts them)")),
    ]
    for k, v in rows:
        table.add_row(k, escape(v))
    out.print(table)
    if not info["compatible_with_settings"]:
        err.print(f"[yellow]warning:[/] {escape(info['problem'])}")


@index_app.command("compact")
def index_compact(index: IndexOpt = None, as_json: JsonOpt = False) -> None:
    """Merge the index's segments (one per build or add) into one; searches then ask one of each
    store. Rewrites every chunk and vector, so it takes about as long as the build did without
    the embedding; readers keep the version they opened meanwhile."""
    from tools.index import IndexProblem, compact_index

    settings = _settings(index)
    try:
        report = compact_index(settings.resolved_index, settings, progress=_progress())
    except IndexProblem as exc:
        raise _fail(str(exc)) from None
    if as_json:
        out.print_json(json.dumps(report.to_dict()))
    elif report.segments_before <= 1:
        out.print(f"Nothing to compact: the index is {report.segments_before} segment.")
    else:
        out.print(f"Merged {report.segments_before} segments into 1 ({report.chunks} chunks, {report.windows} "
                  f"vectors) in {report.seconds:.1f} s.")


@index_app.command("upgrade")
def index_upgrade(index: IndexOpt = None, as_json: JsonOpt = False) -> None:
    """Convert an index written by an earlier litloop (format 1) to this format in place, keeping
    its embeddings (nothing is re-embedded); readers keep the old version until they reopen."""
    from tools.index import IndexProblem, upgrade_index

    settings = _settings(index)
    try:
        result = upgrade_index(settings.resolved_index, settings, progress=_progress())
    except IndexProblem as exc:
        raise _fail(str(exc)) from None
    if as_json:
        out.print_json(json.dumps(result))
    elif not result["upgraded"]:
        out.print(f"Nothing to do: the index is already format {result['format_version']}.")
    else:
        out.print(f"Upgraded to format {result['format_version']} ({result['chunks']} chunks) in {result['seconds']:.1f} s.")


@index_app.command("show")
def index_show(
    paper_id: Annotated[str, typer.Argument(help="The paper's id (as `litloop search` shows it; CORPUS:ID over several corpora).")],
    index: IndexOpt = None,
    corpus: CorpusOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """What the index holds for one paper: its record and its chunks in order (kind, locator, text)."""
    with _using_index(index, corpus) as idx:
        paper = idx.papers.get(paper_id)
        if paper is None:
            raise _fail(_unknown_paper(idx, paper_id), 2)
        chunks = idx.paper_chunks(paper_id)
    if as_json:
        out.print_json(json.dumps({
            "paper": paper.to_dict(),
            "chunks": [{"chunk_id": c.chunk_id, "kind": c.kind, "text": c.text, "locator": c.locator.to_dict()}
                       for c in chunks],
        }))
        return
    print_paper(paper, chunks)


def _unknown_paper(idx, paper_id: str) -> str:
    where = f"index {idx.root}" if idx.root is not None else f"corpora {', '.join(idx.names)}"
    message = f"no paper {paper_id!r} in {where}; find paper ids with `litloop search \"...\"`"
    like = idx.ids_like(paper_id)
    return message + (f"; did you mean {', '.join(like)}?" if like else "")


def print_paper(paper, chunks) -> None:
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
    kinds = ", ".join(f"{k} {n}" for k, n in Counter(c.kind for c in chunks).items())
    out.print(f"[bold]{len(chunks)} chunk{'' if len(chunks) == 1 else 's'}[/]" + (f": {kinds}" if kinds else ""))
    for n, c in enumerate(chunks, start=1):
        out.print(f"\n[bold cyan]{n:>3}.[/] {escape(c.chunk_id)}  [green]{c.kind}[/] · {escape(c.locator.describe())}")
        if out.is_terminal:  # Text, not a string: a chunk's [brackets] and :colons: are no markup
            out.print(Padding(Text(c.text), (0, 0, 0, 5)), soft_wrap=False)
        else:  # past rich, which would expand tabs and drop form feeds
            out.file.write(c.text + "\n")


# ----------------------------------------------------------------------------- search


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    index: IndexOpt = None,
    corpus: CorpusOpt = None,
    retriever: Annotated[str, typer.Option("--retriever", "-r", help="bm25 | paper-bm25 | dense | hybrid")] = "hybrid",
    k: Annotated[int, typer.Option("--k", "-k", min=1, help="Number of papers.")] = 10,
    as_json: JsonOpt = False,
) -> None:
    """Top papers for a query, each with its best evidence chunk and locator."""
    from tools.search import RETRIEVERS
    from tools.search import search as run_search

    if retriever not in RETRIEVERS:
        raise _fail(f"--retriever must be one of {', '.join(RETRIEVERS)}, not {retriever!r}", 2)
    with _using_index(index, corpus) as idx:  # open while printing: records are read on demand
        hits = run_search(idx, query, retriever, k)  # type: ignore[arg-type]
        if as_json:
            out.print_json(json.dumps({"query": query, "retriever": retriever, "hits": [h.to_dict() for h in hits]}))
            return
        print_hits(query, retriever, hits, idx)


def print_hits(query: str, retriever: str, hits, idx) -> None:
    if not hits:
        out.print(f"No papers match {query!r}.")
        return
    out.print(f"[bold]{len(hits)} papers[/] for [italic]{escape(query)}[/] ({retriever})\n")
    for n, h in enumerate(hits, start=1):
        paper = idx.papers[h.paper_id]
        meta = " ".join(str(x) for x in (paper.venue, paper.year) if x)
        out.print(f"[bold cyan]{n:>2}.[/] [bold]{escape(h.title or '(untitled)')}[/]  "
                  f"[dim]{escape(h.paper_id)}{' · ' + escape(meta) if meta else ''} · score {h.score:.4f}[/]")
        c = h.chunk
        out.print(f"    [green]{c.kind}[/] · {escape(c.locator.describe())}")
        snippet = " ".join(c.text.split())
        out.print(f"    [dim]\"{escape(snippet[:300])}{'…' if len(snippet) > 300 else ''}\"[/]\n")


@app.command()
def retrieve(
    question: Annotated[str, typer.Argument(help="The question.")],
    index: IndexOpt = None,
    corpus: CorpusOpt = None,
    subquery: Annotated[Optional[list[str]], typer.Option("--subquery", "-q", help="A subquery (repeatable). Default: the question itself.")] = None,
    seed: Annotated[Optional[list[str]], typer.Option("--seed", "-s", help="A seed paper id for Relate (repeatable), added to A's top paper. Default: the top papers of A.")] = None,
    stage: Annotated[str, typer.Option("--stage", help="a (question-anchored) | b (paper-anchored) | fused (A+B, what the reader gets)")] = "fused",
    k: Annotated[int, typer.Option("--k", "-k", min=1, help="Papers to show.")] = 20,
    as_json: JsonOpt = False,
) -> None:
    """Retrieve and Relate without an LLM: ranking A, ranking B or their fusion, with the chunks
    (or neighbour links) that put each paper there."""
    from tools.pipeline import run_retrieval

    if stage not in ("a", "b", "fused"):
        raise _fail(f"--stage must be a, b or fused, not {stage!r}", 2)
    with _using_index(index, corpus) as idx:
        unknown = [s for s in seed or [] if s not in idx.papers]
        if unknown:
            raise _fail(f"unknown seed paper id(s): {', '.join(unknown)}; use ids from `litloop search`", 2)
        run = run_retrieval(idx, question, idx.settings, subqueries=subquery, seeds=seed,
                            relate=stage != "a")
        ranking = {"a": run.a, "b": run.b, "fused": run.fused}[stage][:k]
        papers = [_retrieved_paper(idx, run, pid, rank, stage) for rank, pid in enumerate(ranking, start=1)]
    if as_json:
        out.print_json(json.dumps({"question": question, "stage": stage, "subqueries": run.subqueries,
                                   "seeds": run.seeds, "papers": papers, "seconds": run.seconds}))
        return
    out.print(f"[bold]{len(papers)} papers[/] (stage {stage}) for [italic]{escape(question)}[/]")
    out.print(f"[dim]subqueries: {escape('; '.join(run.subqueries))} · seeds: {escape(', '.join(run.seeds))} · "
              f"{run.seconds['total']:.1f} s[/]\n")
    for p in papers:
        out.print(f"[bold cyan]{p['rank']:>2}.[/] [bold]{escape(p['title'] or '(untitled)')}[/]  "
                  f"[dim]{escape(p['paper_id'])} · score {p['score']:.4f}[/]")
        if p["via"]:
            out.print(f"    [magenta]via {escape(', '.join(p['via'][:4]))}[/]")
        for c in p["chunks"][:2]:
            from tools.base import Locator

            snippet = " ".join(c["text"].split())[:200]
            out.print(f"    [green]{c['kind']}[/] · {escape(Locator.from_dict(c['locator']).describe())} · "
                      f"{c['score']:.4f}  [dim]\"{escape(snippet)}…\"[/]")
        out.print()


def _retrieved_paper(idx, run, pid: str, rank: int, stage: str) -> dict:
    from tools.fusion import rrf_scores
    from tools.retrieve import passage_of

    scores = {
        "a": run.best_scores(),
        "b": rrf_scores([run.b], k=idx.settings.relate.rrf_k),
        "fused": rrf_scores([run.a, run.b] if run.b else [run.a], k=idx.settings.relate.ab_rrf_k),
    }[stage]
    chunks = [passage_of(idx, h).to_dict() for h in run.evidence(pid)]
    return {"paper_id": pid, "title": idx.papers[pid].title, "score": scores.get(pid, 0.0), "rank": rank,
            "chunks": chunks, "via": run.b_why.get(pid, [])}


# ----------------------------------------------------------------------------- agent


def _progress_printer(ev: dict) -> None:
    """Node-by-node progress on stderr (quiet when stderr is not a terminal unless -v)."""
    node = ev["node"]
    if node == "decompose":
        err.print(f"[bold]round {ev['round']}/{ev['max_rounds']}[/] subqueries: " +
                  ("; ".join(escape(q) for q in ev["subqueries"]) or "[dim](none new)[/]"))
    elif node == "search":
        err.print(f"  papers found: {ev['papers_found']}")
    elif node == "verify" and ev.get("llm") is False:
        err.print(f"  no LLM verdict (this preset): evidence papers are the top {len(ev.get('evidence_papers') or [])}: "
                  f"{', '.join(ev.get('evidence_papers') or []) or '-'}")
    elif node == "verify":
        verdict = "[green]sufficient[/]" if ev.get("sufficient") else "[yellow]not yet sufficient[/]"
        err.print(f"  verdict: {verdict}; evidence papers: {', '.join(ev.get('evidence_papers') or []) or '-'}"
                  + (f"; missing: {escape(ev['missing'])}" if ev.get("missing") else ""))
    elif node == "expand_neighbors":
        err.print(f"  related papers: {ev['candidates']} candidates from seeds {', '.join(ev['seeds'])}")
    elif node == "read_paper":
        err.print(f"  papers read: {ev['papers_read']}, relevant: {', '.join(ev['relevant']) or '-'}")


def print_answer(result: dict) -> None:
    ans = result["answer"]
    out.print()
    if ans.get("choice"):
        out.print(f"[bold]Answer:[/] {ans['choice']}")
    out.print(escape(ans.get("text", "")))
    if ans.get("table_rows"):
        table = Table(show_lines=False)
        for col in ans["table_rows"][0]:
            table.add_column(col)
        for row in ans["table_rows"]:
            table.add_row(*(escape(str(v)) for v in row.values()))
        out.print(table)
    if ans.get("citations"):
        out.print("\n[bold]Evidence[/]")
        from tools.base import Locator

        for c in ans["citations"]:
            meta = " ".join(str(x) for x in (c.get("venue"), c.get("year")) if x)
            out.print(f"[bold cyan][{c['n']}][/] {escape(c['title'] or c['paper_id'])} "
                      f"[dim]({escape(c['paper_id'])}{'; ' + escape(meta) if meta else ''})[/] · "
                      f"{c['kind']} · {escape(Locator.from_dict(c['locator']).describe())}")
            out.print(f"    [dim]\"{escape(c['quote'])}\"[/]")
    if ans.get("rejected_claims"):
        from agent.chat.render import dropped_lines

        out.print("\n[bold]Dropped[/] [dim](claims not supported by the sentences they cite)[/]")
        for line in dropped_lines(ans):
            out.print(f"  [dim]{escape(line)}[/]")
    u = result.get("usage", {})
    err.print(f"[dim]{result['rounds']} round(s), {int(u.get('llm_calls', 0))} LLM calls, "
              f"{int(u.get('input_tokens', 0))}+{int(u.get('output_tokens', 0))} tokens, "
              f"{u.get('seconds_total', 0):.1f} s, preset {result['preset']}[/]")


def report_status(result: dict) -> None:
    """A failed or partial answer on stderr: what failed, grouped, and the trace to look into;
    a failed one ends the command with exit status 1."""
    from agent.chat.render import error_lines, short_id, status_line

    status = result.get("status", "ok")
    line = status_line(status, result.get("answer") or {}, result.get("errors", []))
    if line is None:
        return
    for e in error_lines(result.get("errors", [])):
        err.print(f"[red]failed call in[/] {escape(e)}")
    trace = result.get("trace_id")
    where = f" (trace {short_id(trace)}: `litloop trace show {short_id(trace)}` shows where)" if trace else ""
    if status == "failed":
        raise _fail(line + where)
    err.print(f"[yellow]warning:[/] {escape(line + where)}")


def json_errors(errors: list[dict]) -> list[dict]:
    """`errors` as `--json` carries them: node, kind, message, and the start of the raw reply."""
    return [{"node": e.get("node"), "kind": e.get("kind"), "error": e.get("error"), "raw": (e.get("raw") or "")[:300]}
            for e in errors]


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="The question.")],
    index: IndexOpt = None,
    corpus: CorpusOpt = None,
    preset: Annotated[Optional[str], typer.Option("--preset", "-p", help="paper | local | local-fast | kadr | ... (default: paper with an endpoint; with the embedded model local-fast below 8 CPU threads, else local)")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Answer a question with cited evidence (decompose, search, verify, relate, read, synthesize).
    Exit status 1 when there is no answer (the model endpoint failed: the errors and the trace id
    go to stderr); a partial answer (some calls failed) is printed with a warning."""
    from agent.api import ask as run_ask
    from agent.context import preset_names

    if preset and preset not in preset_names():
        raise _fail(f"unknown preset {preset!r}; choose one of {', '.join(preset_names())}", 2)
    corpora = check_names(corpus, index)
    try:
        result = run_ask(question, preset=preset, index=str(index) if index else None, corpora=corpora,
                         on_event=None if as_json and not sys.stderr.isatty() else _progress_printer)
    except Exception as exc:  # configuration problems (model, index) reach the user as one line
        from agent.local_model import LocalModelError
        from tools.embed import ModelNotAvailable
        from tools.index import IndexProblem

        if isinstance(exc, (IndexProblem, ModelNotAvailable, LocalModelError, ValueError)):
            raise _fail(str(exc)) from None
        raise
    if as_json:
        record = dict(result["submission"])
        record.update(attribution=attribution(result["answer"]), trace_id=result.get("trace_id"),
                      status=result["status"], errors=json_errors(result["errors"]))
        out.print_json(json.dumps(record))
    elif result["status"] != "failed":
        print_answer(result)
    report_status(result)  # a failed answer: its errors on stderr, exit status 1


@app.command()
def run(
    input: Annotated[Path, typer.Option("--input", help="LitTraceQA-shaped questions (JSONL: query_id, question, answer_types, ...).")],
    out_path: Annotated[Path, typer.Option("--out", help="Submission JSONL to write; an existing file is resumed.")],
    index: IndexOpt = None,
    preset: Annotated[Optional[str], typer.Option("--preset", "-p")] = None,
    corpus: CorpusOpt = None,
) -> None:
    """Batch mode: one submission line per input question, even when a question fails (the
    error is recorded in OUT.runs.jsonl); rerunning skips the questions done and retries the
    failed ones. Exit status 1 when a question got no answer."""
    from agent.batch import run_batch

    corpora = check_names(corpus, index)
    try:
        summary = run_batch(input, out_path, preset=preset, index=str(index) if index else None,
                            corpora=corpora, progress=_progress())
    except ValueError as exc:
        raise _fail(str(exc)) from None
    partial = f" ({summary['partial']} partial)" if summary.get("partial") else ""
    err.print(f"{summary['written']} answered{partial}, {summary['skipped']} already done, "
              f"{summary['failed']} failed -> {out_path}")
    if summary["failed"]:
        raise _fail(f"{summary['failed']} question(s) got no answer (see {out_path}.runs.jsonl); "
                    "run the same command again to retry them")


prompt_app = typer.Typer(help="Inspect the prompts.", no_args_is_help=True)
app.add_typer(prompt_app, name="prompt")


@prompt_app.command("render")
def prompt_render(
    question: Annotated[str, typer.Option("--question", help="The question to render the prompt for.")],
    node: Annotated[str, typer.Option("--node", help="decompose | verify | read_paper | synthesize | system | repair")] = "decompose",
    index: IndexOpt = None,
    preset: Annotated[Optional[str], typer.Option("--preset", "-p")] = None,
    corpus: CorpusOpt = None,
) -> None:
    """Print the exact prompt a node would send for a question, without calling any model
    (verify, read_paper and synthesize use LLM-free retrieval to fill in the evidence)."""
    from agent.render import render_prompt

    try:
        text = render_prompt(question, node, preset=preset, index=str(index) if index else None,
                             corpora=check_names(corpus, index))
    except ValueError as exc:
        raise _fail(str(exc), 2) from None
    out.print(text, markup=False, highlight=False)


DEMO_QUESTION = "How does SPECTER use citations to learn document-level representations of papers?"


@app.command()
def demo(
    index: IndexOpt = None,
    no_answer: Annotated[bool, typer.Option("--no-answer", help="Only the searches, no LLM answer.")] = False,
) -> None:
    """Build the demo index if needed, run two example searches (abstracts and full text), then
    answer a question with cited evidence using the configured model (the embedded local model
    by default)."""
    from agent.models import backend_of
    from tools.search import search as run_search

    idx = _open(index)
    try:
        for q in ("conditional random fields sequence labeling",
                  "citation-informed transformer document embeddings"):
            print_hits(q, "hybrid", run_search(idx, q, "hybrid", 5), idx)
    finally:
        idx.close()
    if no_answer:
        return
    if backend_of(idx.settings.llm) == "local":
        from agent.local_model import LocalModelError, find_part_files, require_runtime

        try:
            require_runtime()
            find_part_files()
        except LocalModelError as exc:
            err.print(f"[yellow]No chat model yet, so no answer:[/] {escape(str(exc))}")
            return
    out.print(f"[bold]Question:[/] {DEMO_QUESTION}")
    err.print("[dim](the embedded model runs on the CPU: expect a few minutes)[/]")
    ask(DEMO_QUESTION, index=index, preset=None, as_json=False)


from agent import cli_eval  # noqa: E402  (score and eval live in their own module)

cli_eval.register(app)
cli_corpora.register(app)
from agent import cli_chat  # noqa: E402  (ui, chat and trace live in their own module)

cli_chat.register(app)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
