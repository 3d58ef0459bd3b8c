"""Human-readable reports of eval runs: ``report.md`` with a recall@k plot and a per-question
table, and the ablation table of ``litloop eval --compare`` (``compare.md`` / ``compare.json``).

matplotlib (the `report` extra) is imported inside the plotting function with the Agg backend (no display
needed); without it the reports are written without their plot.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agent.records.ledger import Ledger
from evals.metrics import CANDIDATE_KS, CANDIDATE_METRIC_NAMES, METRIC_NAMES

log = logging.getLogger(__name__)

EXTRA_METRIC_NAMES = (
    "freeform_exact_match_normalized",
    "freeform_token_f1",
    "judge_correctness_mean",
    "judge_faithfulness_mean",
)
PLOT_NAME = "recall_at_k.png"
COMPARE_PLOT_NAME = "compare_recall_at_k.png"


# --------------------------------------------------------------------------- formatting


def fmt(value: Any, digits: int = 4) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def benchmark_label(path: str | Path) -> str:
    """``pubmedqa/dev.jsonl`` rather than a bare ``dev.jsonl``."""
    p = Path(path)
    return f"{p.parent.name}/{p.name}" if p.parent.name else p.name


def md_cell(value: Any, digits: int = 4) -> str:
    return fmt(value, digits).replace("|", "\\|").replace("\n", " ")


def md_table(
    header: Sequence[str], rows: Sequence[Sequence[Any]], numeric_from: int = 1, text_columns: Sequence[int] = ()
) -> str:
    """A markdown table; columns from ``numeric_from`` on are right-aligned, except ``text_columns``."""
    align = ["---" if i < numeric_from or i in text_columns else "---:" for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _metric_names(metrics: Mapping[str, Any]) -> list[str]:
    ordered = [*METRIC_NAMES, *CANDIDATE_METRIC_NAMES, *EXTRA_METRIC_NAMES]
    return [n for n in ordered if n in metrics] + sorted(n for n in metrics if n not in ordered)


def metrics_table(doc: Mapping[str, Any]) -> str:
    """Metric per row; columns all and each task family with questions; rows all n/a dropped."""
    metrics = doc["metrics"]
    families = {f: b for f, b in doc["details"].get("by_task_family", {}).items() if b.get("count")}
    header = [
        "metric",
        f"all ({doc['details']['counts'].get('total', 0)})",
        *[f"{f} ({b['count']})" for f, b in families.items()],
    ]
    rows = []
    for name in _metric_names(metrics):
        values = [metrics.get(name), *[b["metrics"].get(name) for b in families.values()]]
        if any(v is not None for v in values):
            rows.append([name, *values])
    return md_table(header, rows)


# --------------------------------------------------------------------------- plots


def recall_series(doc: Mapping[str, Any]) -> dict[int, float] | None:
    metrics = doc.get("metrics", {})
    if metrics.get("candidate_recall@1") is None:
        return None
    return {k: metrics[f"candidate_recall@{k}"] for k in CANDIDATE_KS}


def plot_recall_at_k(series: Mapping[str, Mapping[int, float] | None], path: Path, title: str) -> Path | None:
    """One line per run: candidate recall at k = 1, 5, 10, 20, 50 (log-scaled k axis)."""
    drawn = {name: s for name, s in series.items() if s}
    if not drawn:
        return None
    try:
        import matplotlib
    except ImportError:
        log.warning("no recall@k plot: matplotlib is not installed (pip install 'litloop[report]')")
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=110)
    for name, values in drawn.items():
        ks = sorted(values)
        ax.plot(ks, [values[k] for k in ks], marker="o", label=name)
    ax.set_xscale("log")
    ax.set_xticks(list(CANDIDATE_KS), [str(k) for k in CANDIDATE_KS])
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("k (candidate papers)")
    ax.set_ylabel("candidate recall@k (macro)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


# --------------------------------------------------------------------------- one run

QUESTION_COLUMNS = [
    ("query_id", "query_id"),
    ("task_family", "family"),
    ("paper_precision", "paper P"),
    ("paper_recall", "paper R"),
    ("paper_f1", "paper F1"),
    ("evidence_f1", "evidence F1"),
    ("candidate_recall@10", "R@10"),
    ("candidate_recall@50", "R@50"),
    ("multiple_choice_correct", "MC"),
    ("table_row_f1", "table row F1"),
    ("freeform_exact_match", "EM"),
    ("freeform_token_f1", "token F1"),
    ("judge_correctness", "judge C"),
    ("judge_faithfulness", "judge F"),
    ("seconds", "s"),
    ("llm_calls", "LLM calls"),
    ("candidates", "cands"),
]


def question_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """One row per question; columns that are n/a for every question are left out."""
    columns = [
        (key, title)
        for key, title in QUESTION_COLUMNS
        if key in ("query_id", "task_family") or any(r.get(key) is not None for r in rows)
    ]
    body = []
    for r in rows:
        cells = []
        for key, _ in columns:
            value = r.get(key)
            cells.append(f"{value:.2f}" if key == "seconds" and isinstance(value, float) else value)
        body.append(cells)
    return md_table([t for _, t in columns], body, numeric_from=2)


def judge_section(out: Path, run: Mapping[str, Any]) -> list[str]:
    summary = run.get("judge")
    if not summary:
        return []
    lines = [
        "## Judge",
        "",
        f"{summary['judged']} answers judged ({summary['failed']} failed), "
        f"{summary['llm_calls']} judge calls. Correctness (LiveRAG, -1..2) mean "
        f"{fmt(summary['correctness_mean'], 3)}; faithfulness (-1..1) mean {fmt(summary['faithfulness_mean'], 3)}.",
        "",
        md_table(["grade", *summary["correctness_counts"]], [["correctness", *summary["correctness_counts"].values()]]),
        "",
        md_table(
            ["grade", *summary["faithfulness_counts"]], [["faithfulness", *summary["faithfulness_counts"].values()]]
        ),
        "",
        "### Verdicts",
        "",
    ]
    verdicts = Ledger(out / "judgements.jsonl").records()
    lines.append(
        md_table(
            ["query_id", "correctness", "faithfulness", "reason"],
            [
                [
                    v["query_id"],
                    v.get("correctness"),
                    v.get("faithfulness"),
                    v.get("reason") or v.get("error") or v.get("skipped") or "",
                ]
                for v in verdicts
            ],
            numeric_from=1,
            text_columns=[3],
        )
    )
    return lines + [""]


def cost_lines(run: Mapping[str, Any]) -> list[str]:
    return [
        f"- questions: {run['questions']} ({run['answered']} answered, {run.get('partial', 0)} of them partial, "
        f"{run['failed']} failed)",
        f"- latency per question: p50 {fmt(run['latency_p50_s'], 2)} s, p95 {fmt(run['latency_p95_s'], 2)} s",
        f"- LLM calls: {fmt(run['llm_calls'], 0)} ({fmt(run['llm_calls_per_question'], 1)} per question); "
        f"tokens in/out: {fmt(run['input_tokens'], 0)} / {fmt(run['output_tokens'], 0)}",
    ]


def write_report(out: Path, doc: Mapping[str, Any], questions: Sequence[Any] = ()) -> Path:
    """``out/report.md`` (and ``out/recall_at_k.png`` when candidates were scored)."""
    run, settings = doc["run"], doc["settings"]["eval"]
    lines = [
        f"# Eval: {run['label']} on {benchmark_label(settings['benchmark'])}",
        "",
        f"Run `{run['name']}` ({run['kind']}), index `{settings['index']}`, finished {run['finished']}. "
        "Metric definitions: docs/metrics.md; n/a marks a metric that does not apply.",
        "",
    ]
    lines += cost_lines(run) + [""]
    if not doc["metrics"]:
        lines += ["The questions have no gold: nothing was scored.", ""]
    else:
        lines += ["## Metrics", "", metrics_table(doc), ""]
        baseline = doc["details"].get("baselines", {}).get("multiple_choice_majority")
        if baseline and doc["metrics"].get("multiple_choice_accuracy") is not None:
            lines += [
                f"Multiple-choice accuracy {fmt(doc['metrics']['multiple_choice_accuracy'])} against the "
                f"majority baseline (always {baseline['label']}) {fmt(baseline['accuracy'])}.",
                "",
            ]
        series = recall_series(doc)
        title = f"{run['label']} on {benchmark_label(settings['benchmark'])}: candidate recall@k"
        if series and plot_recall_at_k({run["name"]: series}, out / PLOT_NAME, title):
            lines += ["## Candidate recall@k", "", f"![candidate recall@k]({PLOT_NAME})", ""]
    lines += judge_section(out, run)
    if doc["metrics"]:
        lines += ["## Per question", "", question_table(doc["details"]["per_question"]), ""]
    path = out / "report.md"
    path.write_text("\n".join(lines).rstrip() + "\n", encoding="utf-8")
    return path


# --------------------------------------------------------------------------- comparison

COMPARE_COLUMNS = [
    *[(f"candidate_recall@{k}", f"R@{k}") for k in CANDIDATE_KS],
    ("paper_f1_macro", "paper F1"),
    ("evidence_f1_macro", "evidence F1"),
    ("multiple_choice_accuracy", "MC acc"),
    ("table_row_f1_macro", "table row F1"),
    ("freeform_token_f1", "token F1"),
    ("judge_correctness_mean", "judge C"),
    ("judge_faithfulness_mean", "judge F"),
    ("overall_score", "overall"),
]
COST_COLUMNS = [
    ("latency_p50_s", "s/q p50"),
    ("latency_p95_s", "s/q p95"),
    ("llm_calls_per_question", "LLM calls/q"),
    ("tokens_per_question", "tokens/q"),
]
COST_DIGITS = {"latency_p50_s": 2, "latency_p95_s": 2, "llm_calls_per_question": 1, "tokens_per_question": 0}


def compare_rows(docs: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for name, doc in docs.items():
        row = {
            "name": name,
            "label": doc["run"]["label"],
            "kind": doc["run"]["kind"],
            "questions": doc["run"]["questions"],
        }
        row.update({k: doc["metrics"].get(k) for k, _ in COMPARE_COLUMNS})
        row.update({k: doc["run"].get(k) for k, _ in COST_COLUMNS})
        rows.append(row)
    return rows


def write_compare(
    out: Path, docs: Mapping[str, Mapping[str, Any]], *, benchmark: str, questions: int
) -> dict[str, Any]:
    """``compare.md``, ``compare.json`` and one recall@k plot for all runs; returns the JSON."""
    out.mkdir(parents=True, exist_ok=True)
    rows = compare_rows(docs)
    columns = [(k, t) for k, t in COMPARE_COLUMNS + COST_COLUMNS if any(r.get(k) is not None for r in rows)]
    table = md_table(
        ["run", "what", *[t for _, t in columns]],
        [
            [r["name"], r["label"], *[fmt(r[k], COST_DIGITS[k]) if k in COST_DIGITS else r[k] for k, _ in columns]]
            for r in rows
        ],
        numeric_from=2,
    )
    series = {name: recall_series(doc) for name, doc in docs.items()}
    plot = plot_recall_at_k(series, out / COMPARE_PLOT_NAME, f"{benchmark_label(benchmark)}: candidate recall@k")
    lines = [
        f"# Ablation on {benchmark_label(benchmark)} ({questions} questions)",
        "",
        "Each run's folder holds its submission, candidates, metrics.json and report.md. "
        "n/a: the metric does not apply (no gold of that kind, or an LLM-free run has no answer).",
        "",
        table,
        "",
    ]
    if plot:
        lines += [f"![candidate recall@k]({COMPARE_PLOT_NAME})", ""]
    (out / "compare.md").write_text("\n".join(lines), encoding="utf-8")
    data = {"benchmark": benchmark, "questions": questions, "runs": rows}
    (out / "compare.json").write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
    return data
