"""The benchmark runner behind `litloop eval`: questions in, scored run folder out.

``run_eval`` answers the questions not yet done (``evals.answerers``: the agent with a preset,
or an LLM-free retrieval variant), into a resumable run folder (``evals.run_folder``, whose
docstring lists its files; its ledger is the shared ``agent.records.ledger``), optionally judges the
answers, then scores the folder and writes ``metrics.json`` and the report. ``run_compare``
runs several names on the same questions into one ablation table; ``score_paths`` is
``litloop score``.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.records.ledger import Ledger
from evals.answerers import CANDIDATES_KEPT, make_answerer, run_names
from evals.answers import (
    exact_match,
    majority_baseline,
    mean_or_none,
    percentile,
    prediction_text,
    token_f1,
)
from evals.datasets import (
    Question,
    gold_records,
    has_gold_evidence,
    load_questions,
    resolve_benchmark,
)
from evals.run_folder import (
    CANDIDATES,
    FAILURES,
    JUDGEMENTS,
    RESULTS,
    SUBMISSION,
    answer_questions,
    check_run_file,
    judge_answers,
    now,
)

log = logging.getLogger(__name__)

# The ablation rows, in the order a reader expects them.
LABELS = {
    "bm25": "BM25 only",
    "paper-bm25": "paper BM25 only",
    "dense": "dense only",
    "hybrid": "hybrid (RRF of the three)",
    "hybrid+prf": "+ PRF",
    "rerank": "+ reranker (ranking A)",
    "A": "A only (pool of 20 chunks)",
    "B": "B only",
    "A+B": "A + B",
    "A+B:all5": "A + B, five neighbour sources",
    "prf+B:all5": "hybrid+PRF + B, five sources",
    "local": "agent, local model",
    "paper": "agent, paper preset",
}
EVIDENCE_METRICS = ("evidence_precision_macro", "evidence_recall_macro", "evidence_f1_macro")
ANSWER_METRICS = (
    "multiple_choice_accuracy",
    "freeform_exact_match",
    "table_row_f1_macro",
    "table_cell_accuracy_macro",
    "table_cell_accuracy_micro",
)
FREEFORM_METRICS = ("freeform_exact_match_normalized", "freeform_token_f1")
# the per-question field behind each macro metric
ROW_FIELDS = {
    "evidence_precision_macro": "evidence_precision",
    "evidence_recall_macro": "evidence_recall",
    "evidence_f1_macro": "evidence_f1",
    "multiple_choice_accuracy": "multiple_choice_correct",
    "freeform_exact_match": "freeform_exact_match",
    "table_row_f1_macro": "table_row_f1",
    "table_cell_accuracy_macro": "table_cell_accuracy",
}


# --------------------------------------------------------------------------- scoring


def not_applicable(metrics: dict[str, Any], names: Iterable[str]) -> None:
    """Mark metrics that do not apply to this run as None and recompute the two means."""
    from evals.metrics import answer_score_of, overall_of

    names = [n for n in names if n in metrics]
    if not names:
        return
    for name in names:
        metrics[name] = None
    metrics["answer_score"] = answer_score_of(
        metrics.get("multiple_choice_accuracy"),
        metrics.get("table_row_f1_macro"),
        metrics.get("table_cell_accuracy_macro"),
    )
    metrics["overall_score"] = overall_of(
        metrics.get("paper_f1_macro"), metrics.get("evidence_f1_macro"), metrics["answer_score"]
    )


def drop_inapplicable(result: dict[str, Any], names: Sequence[str]) -> None:
    """``not_applicable`` on the totals, each task family and the per-question fields."""
    not_applicable(result["metrics"], names)
    for block in result["details"]["by_task_family"].values():
        not_applicable(block["metrics"], names)
    for row in result["details"]["per_question"]:
        for name in names:
            if name in ROW_FIELDS:
                row[ROW_FIELDS[name]] = None


def _freeform_row(q: Question, submission: Mapping | None, result: Mapping | None, answered: bool) -> dict:
    if not q.gold_freeform or not answered:
        return {"freeform_exact_match_normalized": None, "freeform_token_f1": None}
    text = prediction_text(submission, result) if submission is not None else ""
    return {
        "freeform_exact_match_normalized": exact_match(text, q.gold_freeform),
        "freeform_token_f1": token_f1(text, q.gold_freeform),
    }


def _extra_metrics(rows: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    out = {name: mean_or_none(r.get(name) for r in rows) for name in FREEFORM_METRICS}
    out["judge_correctness_mean"] = mean_or_none(r.get("judge_correctness") for r in rows)
    out["judge_faithfulness_mean"] = mean_or_none(r.get("judge_faithfulness") for r in rows)
    return out


def score_run(questions: Sequence[Question], out: Path, kind: str) -> dict[str, Any]:
    """Score the run folder's files against the questions' gold; ``metrics`` and ``details``."""
    from evals.metrics import score_all
    from evals.scoring import validate_candidates, validate_submission

    ids = {q.query_id for q in questions}
    submissions = [r for r in Ledger(out / SUBMISSION).records() if r["query_id"] in ids]
    candidates = [r for r in Ledger(out / CANDIDATES).records() if r["query_id"] in ids]
    validate_submission(submissions, out / "submission.jsonl")
    validate_candidates(candidates, out / "candidates.jsonl")
    results = Ledger(out / RESULTS).latest()
    verdicts = Ledger(out / JUDGEMENTS).latest()
    gold = gold_records(list(questions))
    if not gold:
        return {"metrics": {}, "details": {"per_question": [], "by_task_family": {}, "counts": {"total": 0}}}
    scored = score_all(gold, submissions, candidates)
    by_id = {q.query_id: q for q in questions}
    sub_by_id = {r["query_id"]: r for r in submissions}
    n_candidates = {r["query_id"]: len(r["candidate_papers"]) for r in candidates}
    dropped = [] if has_gold_evidence(list(questions)) else list(EVIDENCE_METRICS)
    if kind == "retrieval":
        dropped += list(ANSWER_METRICS)
    for row in scored["details"]["per_question"]:
        qid = row["query_id"]
        result, verdict = results.get(qid, {}), verdicts.get(qid, {})
        row.update(_freeform_row(by_id[qid], sub_by_id.get(qid), result, kind == "agent"))
        row.update(
            {
                "judge_correctness": verdict.get("correctness"),
                "judge_faithfulness": verdict.get("faithfulness"),
                "seconds": result.get("seconds"),
                "llm_calls": (result.get("usage") or {}).get("llm_calls"),
                "candidates": n_candidates.get(qid, 0),
            }
        )
    drop_inapplicable(scored, dropped)
    rows = scored["details"]["per_question"]
    scored["metrics"].update(_extra_metrics(rows))
    for family, block in scored["details"]["by_task_family"].items():
        block["metrics"].update(_extra_metrics([r for r in rows if r["task_family"] == family]))
    choices = [q.gold_choice for q in questions if q.has_gold and q.gold_choice]
    scored["details"]["baselines"] = {"multiple_choice_majority": majority_baseline(choices)}
    return scored


def run_summary(questions: Sequence[Question], out: Path) -> dict[str, Any]:
    """Latency, LLM calls and tokens over the run's answered questions (resumed ones included)."""
    from evals.judge import summarize

    ids = {q.query_id for q in questions}
    results = [r for r in Ledger(out / RESULTS).records() if r["query_id"] in ids]
    answered = Ledger(out / SUBMISSION).done() & ids
    failures = Ledger(out / FAILURES).ids() & (ids - answered)
    seconds = [float(r["seconds"]) for r in results if r.get("seconds") is not None]

    def total(key: str) -> float:
        return sum(float((r.get("usage") or {}).get(key, 0) or 0) for r in results)

    n = len(results) or 1
    verdicts = [r for r in Ledger(out / JUDGEMENTS).records() if r["query_id"] in ids]
    return {
        "questions": len(questions),
        "answered": len(answered),
        "failed": len(failures),
        # answered, but some LLM calls of the run failed (the agent's answer status)
        "partial": sum(
            r.get("status") == "partial"
            for r in {r["query_id"]: r for r in results}.values()
            if r["query_id"] in answered
        ),
        "latency_p50_s": percentile(seconds, 50),
        "latency_p95_s": percentile(seconds, 95),
        "latency_mean_s": sum(seconds) / len(seconds) if seconds else None,
        "llm_calls": total("llm_calls"),
        "llm_calls_per_question": total("llm_calls") / n,
        "input_tokens": total("input_tokens"),
        "output_tokens": total("output_tokens"),
        "tokens_per_question": (total("input_tokens") + total("output_tokens")) / n,
        "judge": summarize(verdicts) if verdicts else None,
    }


# --------------------------------------------------------------------------- entry points


@dataclass
class EvalRequest:
    benchmark: str | Path
    index: Path
    out: Path
    preset: str | None = None
    no_llm: bool = False
    limit: int | None = None
    judge: bool = False
    judge_model: str | None = None
    progress: bool = False
    settings: dict[str, Any] = field(default_factory=dict)  # per-run knobs over the preset (`--set`)


def run_eval(request: EvalRequest, answerer=None, questions: Sequence[Question] | None = None) -> dict[str, Any]:
    """Answer, judge, score and report one run; returns the ``metrics.json`` document."""
    from evals.report import write_report

    benchmark = resolve_benchmark(request.benchmark)
    questions = list(questions) if questions is not None else load_questions(benchmark, request.limit)
    own = answerer is None
    answerer = answerer or make_answerer(
        request.preset, request.index, no_llm=request.no_llm, overrides=request.settings
    )
    out = request.out
    try:
        out.mkdir(parents=True, exist_ok=True)
        identity = {
            "benchmark": str(benchmark.resolve()),
            "index": str(Path(request.index).resolve()),
            **answerer.describe(),
        }
        check_run_file(out, identity)
        started = time.perf_counter()
        summary = answer_questions(answerer, questions, out, progress=request.progress)
        if request.judge and answerer.kind == "agent":
            summary["judged"] = judge_answers(
                answerer, questions, out, model_name=request.judge_model, progress=request.progress
            )
        elif request.judge:
            log.warning("--judge: an LLM-free run has no answers to judge")
        scored = score_run(questions, out, answerer.kind)
        doc = {
            "metrics": scored["metrics"],
            "details": scored["details"],
            "settings": {
                "eval": {
                    **identity,
                    "name": answerer.name,
                    "limit": request.limit,
                    "judge": request.judge,
                    "judge_model": request.judge_model,
                    "candidates_kept": CANDIDATES_KEPT,
                },
                "litloop": answerer.settings_dump(),
            },
            "run": {
                **run_summary(questions, out),
                "this_invocation": summary,
                "wall_s": time.perf_counter() - started,
                "finished": now(),
                "name": answerer.name,
                "label": LABELS.get(answerer.name, answerer.name),
                "kind": answerer.kind,
            },
        }
        (out / "metrics.json").write_text(
            json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8"
        )
        write_report(out, doc, questions)
        return doc
    finally:
        if own:
            answerer.close()


def slug(name: str) -> str:
    """A folder name for a run name (``A+B:all5`` -> ``A_B_all5``)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "run"


def run_compare(request: EvalRequest, names: Sequence[str]) -> dict[str, Any]:
    """Run several presets or variants on the same questions; one ablation table.

    Each run gets its own resumable folder ``out/<name>/``; the table goes to ``compare.md``
    and ``compare.json`` beside them, with one recall@k plot for all runs.
    """
    from evals.report import write_compare

    if not names:
        raise ValueError("--compare needs at least one preset or variant name")
    variants, presets = run_names()
    unknown = [n for n in names if n not in variants and n not in presets]
    if unknown:
        raise ValueError(
            f"unknown names {unknown}; agent presets: {', '.join(presets)}; LLM-free variants: {', '.join(variants)}"
        )
    if len({slug(n) for n in names}) != len(names):
        raise ValueError(f"names must be distinct: {list(names)}")
    benchmark = resolve_benchmark(request.benchmark)
    questions = load_questions(benchmark, request.limit)
    docs: dict[str, dict[str, Any]] = {}
    for name in names:
        sub = EvalRequest(
            benchmark,
            request.index,
            request.out / slug(name),
            preset=name,
            limit=request.limit,
            judge=request.judge,
            judge_model=request.judge_model,
            progress=request.progress,
            settings=request.settings,
        )
        docs[name] = run_eval(sub, questions=questions)
    return write_compare(request.out, docs, benchmark=str(benchmark), questions=len(questions))


def score_paths(
    gold_path: str | Path,
    submission_path: str | Path,
    candidates_path: str | Path | None = None,
    *,
    strict: bool = False,
) -> dict[str, Any]:
    """`litloop score`: validate and score files; the ``metrics.json`` shape.

    LitTraceQA gold scores exactly as ``evals.scoring.score_files``; a benchmark file without
    evidence locators or answers (citerec, PubMedQA) is accepted as gold too, and the metrics it
    cannot define are n/a (evidence metrics when no question has gold evidence).
    """
    from evals.metrics import score_all
    from evals.scoring import load_predictions

    questions = load_questions(gold_path)
    no_gold = [q.line for q in questions if not q.has_gold]
    if no_gold:
        raise ValueError(
            f"{gold_path} line {no_gold[0]}: field 'gold_papers' is missing "
            "(an input file without gold cannot be scored)"
        )
    submission, candidates = load_predictions(submission_path, candidates_path, strict=strict)
    result = score_all(gold_records(questions), submission, candidates)
    if not has_gold_evidence(questions):
        drop_inapplicable(result, EVIDENCE_METRICS)
    settings = {
        "gold": str(gold_path),
        "submission": str(submission_path),
        "candidates": str(candidates_path) if candidates_path else None,
        "strict": strict,
    }
    return {"metrics": result["metrics"], "details": result["details"], "settings": settings}
