"""The `litloop` command line.

Heavy libraries (torch, chromadb, sentence-transformers) load inside the commands that need them,
so `litloop --help` is instant. Output: rich colour on a terminal, plain text when piped, and
`--json` for scripts (the contract in docs/design.md section 11). Progress bars go to stderr and only
when stderr is a terminal.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from agent.cli import corpora as cli_corpora
from agent.cli import index as cli_index
from agent.cli.common import IndexOpt, JsonOpt, err, fail, out, progress, reports_problems
from agent.cli.corpora import CorpusOpt, check_names
from agent.cli.index import open_index_or_demo, using_index
from agent.cli.render import print_answer, print_hits, print_retrieval, progress_printer
from agent.records.models import ask_record
from tools.corpora.demo import EXAMPLE_QUESTIONS as DEMO_EXAMPLES

app = typer.Typer(
    help="litloop: answers about the scientific literature, with the evidence for each claim.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

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
    from agent.api.papers import search_record
    from tools.index.search import RETRIEVERS

    if retriever not in RETRIEVERS:
        raise fail(f"--retriever must be one of {', '.join(RETRIEVERS)}, not {retriever!r}", 2)
    with using_index(index, corpus) as idx:  # open while printing: records are read on demand
        hits, record = search_record(idx, query, retriever, k)
        if as_json:
            out.print_json(record.model_dump_json())
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
    from agent.api.papers import retrieve_record
    from tools.retrieval.pipeline import STAGES

    if stage not in STAGES:
        raise fail(f"--stage must be a, b or fused, not {stage!r}", 2)
    with using_index(index, corpus) as idx:
        run, record = retrieve_record(idx, question, subqueries=subquery, seeds=seed, stage=stage, k=k)
    if as_json:
        out.print_json(record.model_dump_json())
        return
    print_retrieval(question, stage, run, record.model_dump()["papers"])


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
    from agent.chat.terminal import Draft
    from agent.context import preset_names

    if preset and preset not in preset_names():
        raise fail(f"unknown preset {preset!r}; choose one of {', '.join(preset_names())}", 2)
    corpora = check_names(corpus, index)
    on_event = None if as_json and not sys.stderr.isatty() else progress_printer
    # on a terminal, the answer's words on one live line while the model writes them
    draft = Draft(err) if on_event is not None and err.is_interactive else None
    try:
        result = run_ask(
            question,
            preset=preset,
            index=str(index) if index else None,
            corpora=corpora,
            on_event=draft.around(progress_printer) if draft is not None else on_event,
            stream_drafts=draft is not None,
        )
    except ValueError as exc:  # a bad question or run option; model and index problems: reports_problems
        raise fail(str(exc)) from None
    finally:
        if draft is not None:
            draft.close()
    if as_json:
        out.print_json(ask_record(result).model_dump_json())
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
    from agent.cli.batch import run_batch

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
    from agent.api.prompt import render_prompt

    try:
        text = render_prompt(
            question, node, preset=preset, index=str(index) if index else None, corpora=check_names(corpus, index)
        )
    except ValueError as exc:
        raise fail(str(exc), 2) from None
    out.print(text, markup=False, highlight=False)


DEMO_QUESTION = DEMO_EXAMPLES[0]  # the demo corpus's first example question


@app.command()
@reports_problems
def demo(
    index: IndexOpt = None,
    no_answer: Annotated[bool, typer.Option("--no-answer", help="Only the searches, no LLM answer.")] = False,
) -> None:
    """Build the demo index if needed, run two example searches (abstracts and full text), then
    answer a question with cited evidence using the configured model (the embedded local model
    by default)."""
    from agent.llm import backend_of
    from tools.index.search import search as run_search

    idx = open_index_or_demo(index)
    try:
        for q in ("conditional random fields sequence labeling", "citation-informed transformer document embeddings"):
            print_hits(q, "hybrid", run_search(idx, q, "hybrid", 5), idx)
    finally:
        idx.close()
    if no_answer:
        return
    if backend_of(idx.settings.llm) == "local":
        from agent.llm.local import LocalModelError, find_part_files, require_runtime

        try:
            require_runtime()
            find_part_files()
        except LocalModelError as exc:
            err.print(f"[yellow]No chat model yet, so no answer:[/] {escape(str(exc))}")
            return
    out.print(f"[bold]Question:[/] {DEMO_QUESTION}")
    err.print("[dim](the embedded model runs on the CPU: expect a few minutes)[/]")
    ask(DEMO_QUESTION, index=index, preset=None, as_json=False)


from agent.cli import evaluate as cli_eval  # noqa: E402  (score and eval live in their own module)

cli_eval.register(app)
cli_corpora.register(app)
from agent.cli import cites as cli_cites  # noqa: E402  (cites and refs live in their own module)

cli_cites.register(app)
cli_index.register(app)
from agent.cli import chat as cli_chat  # noqa: E402  (ui, chat and trace live in their own module)

cli_chat.register(app)
from agent.cli import mcp as cli_mcp  # noqa: E402  (the MCP server lives in its own module)

cli_mcp.register(app)
from agent.cli import serve as cli_serve  # noqa: E402  (the Agent Protocol server lives in its own module)

cli_serve.register(app)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
