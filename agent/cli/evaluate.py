"""`litloop score` and `litloop eval`: the evaluation commands, registered on the main app.

Only typer and rich load here; the scorer, the runner and the agent load inside the commands.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")]


def _fail(message: str, code: int = 1) -> typer.Exit:
    err.print(f"[bold red]error:[/] {escape(message)}")
    return typer.Exit(code)


def _config_errors() -> tuple[type[BaseException], ...]:
    from agent.llm.local import LocalModelError
    from tools.index import IndexProblem
    from tools.models.embed import ModelNotAvailable

    return (IndexProblem, ModelNotAvailable, LocalModelError, ValueError, FileNotFoundError)


def _print_json(doc: dict) -> None:
    typer.echo(json.dumps(doc, indent=2, ensure_ascii=False, default=str))


def score(
    gold: Annotated[
        Path,
        typer.Option(
            "--gold", help="Gold records (LitTraceQA validation shape, or a benchmark file with gold_papers)."
        ),
    ],
    submission: Annotated[Path, typer.Option("--submission", help="Submission JSONL (LitTraceQA submission records).")],
    candidates: Annotated[
        Path | None, typer.Option("--candidates", help="Ranked candidate papers per query_id, for candidate_recall@k.")
    ] = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Enforce the letter of submission.schema.json (no extra keys, string ids).")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Validate a submission and score it with the official LitTraceQA metric definitions."""
    from evals.run import score_paths
    from evals.scoring import coverage_warnings, format_table

    try:
        result = score_paths(gold, submission, candidates, strict=strict)
    except (ValueError, FileNotFoundError) as exc:
        raise _fail(str(exc)) from None
    for warning in coverage_warnings(result, gold, submission, candidates):  # counted, and said
        err.print(f"[yellow]warning:[/] {escape(warning)}")
    if as_json:
        _print_json(result)
        return
    out.print(escape(format_table(result)))


def _names(values: list[str] | None) -> list[str]:
    return [n.strip() for v in values or [] for n in v.split(",") if n.strip()]


def eval_cmd(
    benchmark: Annotated[
        str,
        typer.Option(
            "--benchmark", "-b", help="Questions JSONL, or a name: citerec-dev, pubmedqa-dev, littraceqa-validation-a."
        ),
    ],
    index: Annotated[
        Path, typer.Option("--index", "-i", help="Index of the benchmark's papers (see docs/benchmarks.md).")
    ],
    out_dir: Annotated[Path, typer.Option("--out", "-o", help="Run folder; an existing run there is resumed.")],
    preset: Annotated[
        str | None,
        typer.Option(
            "--preset",
            "-p",
            help="Agent preset (paper, local, ...) or an LLM-free variant (bm25, hybrid, A+B, ...). Default: local with the embedded model, else paper.",
        ),
    ] = None,
    no_llm: Annotated[
        bool, typer.Option("--no-llm", help="LLM-free retrieval only (Retrieve + Relate, ranking A+B); no answers.")
    ] = False,
    limit: Annotated[int | None, typer.Option("--limit", "-n", min=1, help="Only the first N questions.")] = None,
    compare: Annotated[
        list[str] | None,
        typer.Option(
            "--compare",
            help="Run several presets/variants on the same questions (repeat or comma-separate) and write compare.md.",
        ),
    ] = None,
    judge: Annotated[
        bool,
        typer.Option(
            "--judge", help="Grade free-form answers with the LLM judge (correctness -1..2, faithfulness -1..1)."
        ),
    ] = False,
    judge_model: Annotated[
        str | None,
        typer.Option(
            "--judge-model", help="Model name for the judge role (default: the configured model, else the local one)."
        ),
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="A run knob over the preset, KEY=VALUE (repeatable; docs/settings.md lists them), e.g. --set choice_scoring=calibrated.",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Run a benchmark end to end: submission.jsonl, candidates.jsonl, metrics.json, report.md.
    Exit status 1 when a question got no answer (it scores 0 until a rerun retries it)."""
    from evals.run import EvalRequest, run_compare, run_eval
    from evals.scoring import format_table

    names = _names(compare)
    if names and (preset or no_llm):
        raise _fail("--compare names every run itself; drop --preset / --no-llm", 2)
    try:
        knobs = context_settings(set_ or [])
    except ValueError as exc:
        raise _fail(str(exc), 2) from None
    request = EvalRequest(
        benchmark,
        index,
        out_dir,
        preset=preset,
        no_llm=no_llm,
        limit=limit,
        judge=judge,
        judge_model=judge_model,
        progress=sys.stderr.isatty(),
        settings=knobs,
    )
    try:
        if names:
            data = run_compare(request, names)
        else:
            doc = run_eval(request)
    except _config_errors() as exc:
        raise _fail(str(exc)) from None
    if names:
        if as_json:
            _print_json(data)
        else:
            out.print((out_dir / "compare.md").read_text(encoding="utf-8"), markup=False)
            err.print(f"[dim]runs in {escape(str(out_dir))}/<name>/; table in compare.md and compare.json[/]")
        return
    run = doc["run"]
    if as_json:
        _print_json(doc)
    else:
        if doc["metrics"]:
            out.print(escape(format_table(doc)))
        err.print(
            f"[dim]{run['answered']}/{run['questions']} answered ({run.get('partial', 0)} partial, "
            f"{run['failed']} failed); report: {escape(str(out_dir / 'report.md'))}[/]"
        )
    if run["failed"]:  # scored as missing predictions until a rerun answers them
        raise _fail(
            f"{run['failed']} question(s) got no answer (see {out_dir / 'failures.jsonl'}); "
            "run the same command again to retry them"
        )


def context_settings(pairs: list[str]) -> dict:
    """`--set KEY=VALUE` pairs as context values, typed and checked by the context itself
    (`agent.context.check_values`): a value of the wrong type, outside the field's choices or
    range is a ValueError naming the field, the value and what is allowed."""
    from dataclasses import fields

    from agent.context import Context, check_values

    known = {f.name for f in fields(Context)}
    out: dict = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        key = key.strip()
        if not sep or key not in known or key in ("preset", "index", "corpora"):
            raise ValueError(
                f"--set {pair!r}: expected KEY=VALUE with KEY a run knob of docs/settings.md "
                f"(e.g. choice_scoring=calibrated)"
            )
        out[key] = raw
    return check_values(out, "--set")


def register(app: typer.Typer) -> None:
    """Add `score` and `eval` to the litloop app."""
    app.command("score")(score)
    app.command("eval")(eval_cmd)
