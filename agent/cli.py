"""The `litloop` command line.

Heavy libraries (torch, chromadb, sentence-transformers) load inside the commands that need them,
so `litloop --help` is instant. Output: rich colour on a terminal, plain text when piped, and
`--json` for scripts (the contract in docs/design.md section 11). Progress bars go to stderr and only
when stderr is a terminal.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from agent import cli_corpora
from agent.cli_common import IndexOpt, JsonOpt, err, fail, out, progress, reports_problems
from agent.cli_corpora import CorpusOpt, check_names, open_named
from agent.cli_render import print_answer, print_hits, print_index_info, print_paper, print_retrieval, progress_printer
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

log = logging.getLogger("litloop")


@app.callback()
def _root(
    verbose: Annotated[int, typer.Option("--verbose", "-v", count=True, help="More log output (-vv for debug).")] = 0,
) -> None:
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    # Third-party chatter stays at WARNING unless -vv.
    for noisy in ("chromadb", "httpx", "sentence_transformers", "transformers", "pdfminer"):
        logging.getLogger(noisy).setLevel(logging.WARNING if verbose < 2 else logging.DEBUG)


def _settings(index: Path | None = None) -> Settings:
    return get_settings(index=index)


@contextmanager
def _using_index(index: Path | None, corpus: list[str] | None = None) -> Iterator:
    """`_open`'s index for one command, closed whatever happens; a bad value met while using it
    (a malformed id or query option) is a one-line error like the problems `reports_problems` maps."""
    idx = _open(index, corpus)
    try:
        yield idx
    except ValueError as exc:
        raise fail(str(exc)) from None
    finally:
        idx.close()


def _open(index: Path | None, corpus: list[str] | None = None):
    """Open the named corpora, or the given index, or the configured one, or the demo index
    (built on first use)."""
    from tools.index import open_index

    if corpus:
        return open_named(corpus, index)

    settings = _settings(index)
    if settings.index is None:
        from tools.corpora.demo import ensure_demo_index

        if not (settings.demo_index / "CURRENT").exists():
            err.print(f"[dim]Building the demo index in {settings.demo_index} (first use, a few minutes)...[/]")
        ensure_demo_index(settings, progress=progress())
        return open_index(settings.demo_index, settings)
    return open_index(settings.index, settings)


# ----------------------------------------------------------------------------- index


@index_app.command("build")
@reports_problems
def index_build(
    paths: Annotated[
        list[Path],
        typer.Argument(help="Files or folders of JSONL records, S2ORC JSON, GROBID TEI XML (.tei.xml) and PDFs."),
    ],
    index: Annotated[Path, typer.Option("--index", "-i", help="Index directory to create or add to.")],
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Start a new index instead of adding to the existing one.")
    ] = False,
    strict: Annotated[
        bool, typer.Option("--strict", help="Fail (writing nothing) on any bad input instead of skipping it.")
    ] = False,
    embeddings: Annotated[
        Path | None,
        typer.Option(
            "--embeddings",
            help="Window vectors computed elsewhere (.npz: ids, vectors, model; or .jsonl), "
            "imported instead of embedding those windows (see `index export-windows`).",
        ),
    ] = None,
    ray: Annotated[
        bool,
        typer.Option(
            "--ray",
            help="Parse, chunk and embed on Ray (pip install 'litloop[ray]'): a local Ray instance "
            "started for the build, or the cluster of --ray-address; GPU workers are used when present.",
        ),
    ] = False,
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray-address",
            metavar="ADDRESS",
            help="Build on this Ray cluster (implies --ray): `auto` for the one "
            "`ray start --head` began on this machine, or HOST:6379 (its GCS address).",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Index papers; an existing index gets only the new papers (nothing is re-embedded)."""
    from tools.index import BuildFailed, build_index

    settings = _settings(index)
    on_ray = ray or ray_address is not None
    loader = None
    if on_ray:
        from tools.index.ray_build import ray_loader

        if embeddings is not None:
            raise fail("--embeddings and --ray: give one (Ray computes every window's vector itself)")
        loader = ray_loader(settings, ray_address, progress=progress())
    try:
        report = build_index(
            paths,
            index,
            settings,
            rebuild=rebuild,
            strict=strict,
            progress=progress(),
            embeddings=embeddings,
            loader=loader,
        )
    except BuildFailed as exc:
        for p in exc.problems:
            err.print(f"[yellow]problem:[/] {escape(p)}")
        raise fail(str(exc)) from None
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
        out.print(
            f"{report.windows_imported} windows embedded on Ray"
            + (f", {report.windows_embedded} here" if report.windows_embedded else "")
        )
    if embeddings is not None:
        out.print(
            f"{report.windows_imported} windows imported from {escape(str(embeddings))}, "
            f"{report.windows_embedded} embedded here"
            + (f"; {report.vectors_ignored} vectors for unknown ids ignored" if report.vectors_ignored else "")
        )
    if report.already_indexed:
        out.print(f"{report.already_indexed} papers of the input were already in the index (skipped).")
    if t:
        out.print(f"Index now holds {t['papers']} papers, {t['chunks']} chunks, {t['citation_edges']} citation edges.")


@index_app.command("export-windows")
@reports_problems
def index_export_windows(
    out_file: Annotated[Path, typer.Option("--out", "-o", help="The JSONL file to write.")],
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Papers to cut into windows without building an index (as `index build` reads them). "
            "Without: the windows of the index's chunks."
        ),
    ] = None,
    index: IndexOpt = None,
) -> None:
    """Write the windows a build embeds ({"id", "chunk_id", "text"} a line), of the given papers or
    of the index's chunks, for a job elsewhere to embed and `index build --embeddings` to import."""
    from tools.index.vector_file import export_input_windows, export_windows

    if paths:
        settings = _settings(index)
        n, problems = export_input_windows(paths, settings, out_file)
        for p in problems:
            err.print(f"[yellow]problem:[/] {escape(p)}")
        if not n:
            raise fail("no papers could be read from the input; nothing to embed")
        out.print(
            f"Wrote {n} windows to {escape(str(out_file))}; embed them with "
            f"{escape(settings.embedder.model)} and save ids, vectors and "
            f"model={escape(settings.embedder.model)} in an .npz"
        )
        return
    with _using_index(index) as idx:
        n = export_windows(idx, out_file)
        e = idx.manifest.embedder
    out.print(
        f"Wrote {n} windows to {escape(str(out_file))}; embed them with {escape(e.name)} "
        f"({e.dim}-d) and save ids, vectors and model={escape(e.name)} in an .npz"
    )


@index_app.command("info")
@reports_problems
def index_info_cmd(index: IndexOpt = None, as_json: JsonOpt = False) -> None:
    """Counts per chunk kind, papers, citation edges, embedder and sizes."""
    from tools.index import index_info

    settings = _settings(index)
    root = settings.resolved_index
    info = index_info(root, settings)
    if as_json:
        out.print_json(json.dumps(info))
        return
    print_index_info(root, info)


@index_app.command("compact")
@reports_problems
def index_compact(index: IndexOpt = None, as_json: JsonOpt = False) -> None:
    """Merge the index's segments (one per build or add) into one; searches then ask one of each
    store. Rewrites every chunk and vector, so it takes about as long as the build did without
    the embedding; readers keep the version they opened meanwhile."""
    from tools.index import compact_index

    settings = _settings(index)
    report = compact_index(settings.resolved_index, settings, progress=progress())
    if as_json:
        out.print_json(json.dumps(report.to_dict()))
    elif report.segments_before <= 1:
        out.print(f"Nothing to compact: the index is {report.segments_before} segment.")
    else:
        out.print(
            f"Merged {report.segments_before} segments into 1 ({report.chunks} chunks, {report.windows} "
            f"vectors) in {report.seconds:.1f} s."
        )


@index_app.command("gc")
@reports_problems
def index_gc(index: IndexOpt = None, as_json: JsonOpt = False) -> None:
    """Remove the superseded versions no reader holds, the segments no version names and what
    interrupted builds left (builds, adds and compactions do the same after their switch)."""
    from tools.index import gc_index

    settings = _settings(index)
    result = gc_index(settings.resolved_index, settings)
    if as_json:
        out.print_json(json.dumps(result))
        return
    out.print(
        f"Removed {len(result['versions_removed'])} version(s), {len(result['segments_removed'])} "
        f"segment(s) and {len(result['interrupted_removed'])} interrupted build(s)."
    )
    if result["versions_kept"]:
        out.print(f"Kept {len(result['versions_kept'])} superseded version(s) a reader still holds.")


@index_app.command("upgrade")
@reports_problems
def index_upgrade(index: IndexOpt = None, as_json: JsonOpt = False) -> None:
    """Convert an index written by an earlier litloop (format 1) to this format in place, keeping
    its embeddings (nothing is re-embedded); readers keep the old version until they reopen."""
    from tools.index import upgrade_index

    settings = _settings(index)
    result = upgrade_index(settings.resolved_index, settings, progress=progress())
    if as_json:
        out.print_json(json.dumps(result))
    elif not result["upgraded"]:
        out.print(f"Nothing to do: the index is already format {result['format_version']}.")
    else:
        out.print(
            f"Upgraded to format {result['format_version']} ({result['chunks']} chunks) in {result['seconds']:.1f} s."
        )


@index_app.command("show")
@reports_problems
def index_show(
    paper_id: Annotated[
        str, typer.Argument(help="The paper's id (as `litloop search` shows it; CORPUS:ID over several corpora).")
    ],
    index: IndexOpt = None,
    corpus: CorpusOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """What the index holds for one paper: its record and its chunks in order (kind, locator, text)."""
    with _using_index(index, corpus) as idx:
        paper = idx.papers.get(paper_id)
        if paper is None:
            raise fail(_unknown_paper(idx, paper_id), 2)
        chunks = idx.paper_chunks(paper_id)
    if as_json:
        out.print_json(
            json.dumps(
                {
                    "paper": paper.to_dict(),
                    "chunks": [
                        {"chunk_id": c.chunk_id, "kind": c.kind, "text": c.text, "locator": c.locator.to_dict()}
                        for c in chunks
                    ],
                }
            )
        )
        return
    print_paper(paper, chunks)


def _unknown_paper(idx, paper_id: str) -> str:
    where = f"index {idx.root}" if idx.root is not None else f"corpora {', '.join(idx.names)}"
    message = f'no paper {paper_id!r} in {where}; find paper ids with `litloop search "..."`'
    like = idx.ids_like(paper_id)
    return message + (f"; did you mean {', '.join(like)}?" if like else "")


# ----------------------------------------------------------------------------- search


@app.command()
@reports_problems
def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    index: IndexOpt = None,
    corpus: CorpusOpt = None,
    retriever: Annotated[str, typer.Option("--retriever", "-r", help="bm25 | paper-bm25 | dense | hybrid")] = "hybrid",
    k: Annotated[int, typer.Option("--k", "-k", min=1, help="Number of papers.")] = 10,
    as_json: JsonOpt = False,
) -> None:
    """Top papers for a query, each with its best evidence chunk and locator."""
    from tools.retrieval.search import RETRIEVERS
    from tools.retrieval.search import search as run_search

    if retriever not in RETRIEVERS:
        raise fail(f"--retriever must be one of {', '.join(RETRIEVERS)}, not {retriever!r}", 2)
    with _using_index(index, corpus) as idx:  # open while printing: records are read on demand
        hits = run_search(idx, query, retriever, k)
        if as_json:
            out.print_json(json.dumps({"query": query, "retriever": retriever, "hits": [h.to_dict() for h in hits]}))
            return
        print_hits(query, retriever, hits, idx)


@app.command()
@reports_problems
def retrieve(
    question: Annotated[str, typer.Argument(help="The question.")],
    index: IndexOpt = None,
    corpus: CorpusOpt = None,
    subquery: Annotated[
        list[str] | None,
        typer.Option("--subquery", "-q", help="A subquery (repeatable). Default: the question itself."),
    ] = None,
    seed: Annotated[
        list[str] | None,
        typer.Option(
            "--seed",
            "-s",
            help="A seed paper id for Relate (repeatable), added to A's top paper. Default: the top papers of A.",
        ),
    ] = None,
    stage: Annotated[
        str,
        typer.Option("--stage", help="a (question-anchored) | b (paper-anchored) | fused (A+B, what the reader gets)"),
    ] = "fused",
    k: Annotated[int, typer.Option("--k", "-k", min=1, help="Papers to show.")] = 20,
    as_json: JsonOpt = False,
) -> None:
    """Retrieve and Relate without an LLM: ranking A, ranking B or their fusion, with the chunks
    (or neighbour links) that put each paper there."""
    from tools.retrieval.pipeline import STAGES, run_retrieval

    if stage not in STAGES:
        raise fail(f"--stage must be a, b or fused, not {stage!r}", 2)
    with _using_index(index, corpus) as idx:
        unknown = [s for s in seed or [] if s not in idx.papers]
        if unknown:
            raise fail(f"unknown seed paper id(s): {', '.join(unknown)}; use ids from `litloop search`", 2)
        run = run_retrieval(idx, question, idx.settings, subqueries=subquery, seeds=seed, relate=stage != "a")
        scores = run.stage_scores(stage, idx.settings)
        papers = [
            _retrieved_paper(idx, run, pid, rank, scores.get(pid, 0.0))
            for rank, pid in enumerate(run.ranking(stage)[:k], start=1)
        ]
    if as_json:
        out.print_json(
            json.dumps(
                {
                    "question": question,
                    "stage": stage,
                    "subqueries": run.subqueries,
                    "seeds": run.seeds,
                    "papers": papers,
                    "seconds": run.seconds,
                }
            )
        )
        return
    print_retrieval(question, stage, run, papers)


def _retrieved_paper(idx, run, pid: str, rank: int, score: float) -> dict:
    """One paper of `litloop retrieve` as its JSON carries it: score, rank, the chunks that put it
    in ranking A and the neighbour links that put it in ranking B."""
    from tools.retrieval.retrieve import passage_of

    chunks = [passage_of(idx, h).to_dict() for h in run.evidence(pid)]
    return {
        "paper_id": pid,
        "title": idx.papers[pid].title,
        "score": score,
        "rank": rank,
        "chunks": chunks,
        "via": run.b_why.get(pid, []),
    }


# ----------------------------------------------------------------------------- agent


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
        raise fail(line + where)
    err.print(f"[yellow]warning:[/] {escape(line + where)}")


def json_errors(errors: list[dict]) -> list[dict]:
    """`errors` as `--json` carries them: node, kind, message, and the start of the raw reply."""
    return [
        {"node": e.get("node"), "kind": e.get("kind"), "error": e.get("error"), "raw": (e.get("raw") or "")[:300]}
        for e in errors
    ]


@app.command()
@reports_problems
def ask(
    question: Annotated[str, typer.Argument(help="The question.")],
    index: IndexOpt = None,
    corpus: CorpusOpt = None,
    preset: Annotated[
        str | None,
        typer.Option(
            "--preset",
            "-p",
            help="paper | local | local-fast | kadr | ... (default: paper with an endpoint; with the embedded model local-fast below 8 CPU threads, else local)",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Answer a question with cited evidence (decompose, search, verify, relate, read, synthesize).
    Exit status 1 when there is no answer (the model endpoint failed: the errors and the trace id
    go to stderr); a partial answer (some calls failed) is printed with a warning."""
    from agent.api import ask as run_ask
    from agent.context import preset_names

    if preset and preset not in preset_names():
        raise fail(f"unknown preset {preset!r}; choose one of {', '.join(preset_names())}", 2)
    corpora = check_names(corpus, index)
    try:
        result = run_ask(
            question,
            preset=preset,
            index=str(index) if index else None,
            corpora=corpora,
            on_event=None if as_json and not sys.stderr.isatty() else progress_printer,
        )
    except ValueError as exc:  # a bad question or run option; model and index problems: reports_problems
        raise fail(str(exc)) from None
    if as_json:
        record = dict(result["submission"])
        record.update(
            attribution=attribution(result["answer"]),
            trace_id=result.get("trace_id"),
            status=result["status"],
            errors=json_errors(result["errors"]),
        )
        out.print_json(json.dumps(record))
    elif result["status"] != "failed":
        print_answer(result)
    report_status(result)  # a failed answer: its errors on stderr, exit status 1


@app.command()
@reports_problems
def run(
    input: Annotated[
        Path,
        typer.Option("--input", help="LitTraceQA-shaped questions (JSONL: query_id, question, answer_types, ...)."),
    ],
    out_path: Annotated[Path, typer.Option("--out", help="Submission JSONL to write; an existing file is resumed.")],
    index: IndexOpt = None,
    preset: Annotated[str | None, typer.Option("--preset", "-p")] = None,
    corpus: CorpusOpt = None,
) -> None:
    """Batch mode: one submission line per input question, even when a question fails (the
    error is recorded in OUT.runs.jsonl); rerunning skips the questions done and retries the
    failed ones. Exit status 1 when a question got no answer."""
    from agent.batch import run_batch

    corpora = check_names(corpus, index)
    try:
        summary = run_batch(
            input, out_path, preset=preset, index=str(index) if index else None, corpora=corpora, progress=progress()
        )
    except ValueError as exc:
        raise fail(str(exc)) from None
    partial = f" ({summary['partial']} partial)" if summary.get("partial") else ""
    err.print(
        f"{summary['written']} answered{partial}, {summary['skipped']} already done, "
        f"{summary['failed']} failed -> {out_path}"
    )
    if summary["failed"]:
        raise fail(
            f"{summary['failed']} question(s) got no answer (see {out_path}.runs.jsonl); "
            "run the same command again to retry them"
        )


prompt_app = typer.Typer(help="Inspect the prompts.", no_args_is_help=True)
app.add_typer(prompt_app, name="prompt")


@prompt_app.command("render")
@reports_problems
def prompt_render(
    question: Annotated[str, typer.Option("--question", help="The question to render the prompt for.")],
    node: Annotated[
        str, typer.Option("--node", help="decompose | verify | read_paper | synthesize | system | repair")
    ] = "decompose",
    index: IndexOpt = None,
    preset: Annotated[str | None, typer.Option("--preset", "-p")] = None,
    corpus: CorpusOpt = None,
) -> None:
    """Print the exact prompt a node would send for a question, without calling any model
    (verify, read_paper and synthesize use LLM-free retrieval to fill in the evidence)."""
    from agent.render import render_prompt

    try:
        text = render_prompt(
            question, node, preset=preset, index=str(index) if index else None, corpora=check_names(corpus, index)
        )
    except ValueError as exc:
        raise fail(str(exc), 2) from None
    out.print(text, markup=False, highlight=False)


DEMO_QUESTION = "How does SPECTER use citations to learn document-level representations of papers?"


@app.command()
@reports_problems
def demo(
    index: IndexOpt = None,
    no_answer: Annotated[bool, typer.Option("--no-answer", help="Only the searches, no LLM answer.")] = False,
) -> None:
    """Build the demo index if needed, run two example searches (abstracts and full text), then
    answer a question with cited evidence using the configured model (the embedded local model
    by default)."""
    from agent.models import backend_of
    from tools.retrieval.search import search as run_search

    idx = _open(index)
    try:
        for q in ("conditional random fields sequence labeling", "citation-informed transformer document embeddings"):
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
