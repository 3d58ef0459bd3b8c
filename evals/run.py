"""The benchmark runner behind `litloop eval`: questions in, scored run folder out.

A run folder holds (DESIGN.md section 11 for `metrics.json`):

- ``submission.jsonl``: one LitTraceQA submission record per answered question, written and
  flushed line by line; it is the run's ledger: a rerun skips the query ids already in it (a line
  cut short by a crash is dropped and its question runs again);
- ``candidates.jsonl``: the top 50 ranked papers per question (``query_id`` +
  ``candidate_papers``), scored with ``candidate_recall@k``;
- ``results.jsonl``: per question, the latency, LLM usage, answer text and cited chunks;
- ``failures.jsonl``: questions that raised (they are not in the submission, so a rerun retries
  them; until then they score 0 as missing predictions);
- ``judgements.jsonl`` (with ``--judge``): the LLM judge's verdicts;
- ``run.json``: what the folder is a run of; resuming with another benchmark, index, preset or
  variant is refused;
- ``metrics.json``, ``report.md`` and ``recall_at_k.png``, rewritten at the end of every run.

Two kinds of runs:

- **agent**: every question through ``agent.api.ask`` with a preset (``paper``, ``local``, ...);
- **retrieval** (``--no-llm`` or a variant name): an LLM-free ranking. ``A+B`` (what
  ``--no-llm`` runs) is ``tools.pipeline.run_retrieval``, the pipeline ``litloop retrieve``
  shows; the other variants are ``evals.bench_retrieval.VARIANTS``. The submission names the
  top paper for a single-paper question and the top 5 for a multi-paper one (the median
  multi-paper question of citerec dev and LitTraceQA validation A has 4 gold papers), with the
  best pooled chunk of each as evidence (``A+B`` only), and no answer.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from evals.answers import (
    exact_match,
    majority_baseline,
    mean_or_none,
    percentile,
    token_f1,
)
from evals.datasets import (
    Question,
    gold_records,
    has_gold_evidence,
    load_questions,
    resolve_benchmark,
)

log = logging.getLogger(__name__)

CANDIDATES_KEPT = 50
# Papers a retrieval-only submission names, by task family (default for any other family).
NO_LLM_PAPERS = {"hidden_source_single_paper": 1}
NO_LLM_PAPERS_DEFAULT = 5
NO_LLM_VARIANT = "A+B"

# The ablation rows of issue 5, in the order a reader expects them.
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
ANSWER_METRICS = ("multiple_choice_accuracy", "freeform_exact_match", "table_row_f1_macro",
                  "table_cell_accuracy_macro", "table_cell_accuracy_micro")
FREEFORM_METRICS = ("freeform_exact_match_normalized", "freeform_token_f1")
# the per-question field behind each macro metric
ROW_FIELDS = {
    "evidence_precision_macro": "evidence_precision", "evidence_recall_macro": "evidence_recall",
    "evidence_f1_macro": "evidence_f1", "multiple_choice_accuracy": "multiple_choice_correct",
    "freeform_exact_match": "freeform_exact_match", "table_row_f1_macro": "table_row_f1",
    "table_cell_accuracy_macro": "table_cell_accuracy",
}


# --------------------------------------------------------------------------- answerers


@dataclass
class Outcome:
    """What one question produced."""

    submission: dict[str, Any]
    candidates: list[str]
    answer_text: str = ""
    citations: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, float] = field(default_factory=dict)
    errors: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


def no_llm_paper_count(task_family: str | None) -> int:
    return NO_LLM_PAPERS.get(task_family or "", NO_LLM_PAPERS_DEFAULT)


def retrieval_submission(q: Question, ranking: Sequence[str], evidence: Callable[[str], Any] | None = None) -> dict:
    """A submission from a paper ranking: the top papers (1 or 5), their best chunk as evidence."""
    from agent.submission import SOURCE_TYPE, evidence_locator

    papers = list(ranking[: no_llm_paper_count(q.task_family)])
    items = []
    for pid in papers:
        for p in evidence(pid) if evidence else []:
            items.append({"paper_id": pid, "source_type": SOURCE_TYPE.get(p.kind, "text_span"),
                          "locator": evidence_locator(p.locator.to_dict())})
    return {"query_id": q.query_id, "gold_papers": [{"paper_id": p} for p in papers], "evidence": items, "answer": {}}


def warm_up(index) -> None:
    """Load the embedder and open the dense index before the clock runs: otherwise the first
    question's latency holds seconds of model loading and the p95 reads as a slow query."""
    if hasattr(index, "dense_chunks"):  # a multi-corpus index warms up on its own
        index.dense_chunks("warm up", 1)


class RetrievalAnswerer:
    """An LLM-free ranking per question (a variant of ``evals.bench_retrieval``)."""

    kind = "retrieval"

    def __init__(self, variant: str, index: Path):
        from agent.settings import get_settings
        from evals.bench_retrieval import VARIANTS
        from tools.index import open_index

        if variant not in VARIANTS:
            raise ValueError(f"unknown retrieval variant {variant!r}; choose from {', '.join(VARIANTS)}")
        self.name = self.variant = variant
        self.settings = get_settings(index=index)
        self.index = open_index(index, self.settings)
        self.reranker = None
        if variant == "rerank":
            from tools.rerank import build_reranker

            self.reranker = build_reranker(self.settings.rerank, self.settings.device)
        self._fn = VARIANTS[variant]
        if variant not in ("bm25", "paper-bm25"):
            warm_up(self.index)

    def answer(self, q: Question) -> Outcome:
        if self.variant == NO_LLM_VARIANT:
            from tools.pipeline import run_retrieval
            from tools.retrieve import passage_of

            run = run_retrieval(self.index, q.question, self.settings, size=CANDIDATES_KEPT)
            ranking = run.fused
            submission = retrieval_submission(q, ranking, lambda pid: [passage_of(self.index, h) for h in run.evidence(pid, 1)])
            return Outcome(submission, ranking[:CANDIDATES_KEPT], extra={"seeds": run.seeds})
        ranking = self._fn(self.index, q.question, self.settings, self.reranker)
        return Outcome(retrieval_submission(q, ranking), ranking[:CANDIDATES_KEPT])

    def chunk_text(self, chunk_id: str) -> str | None:
        row = self.index.chunk_row.get(chunk_id)
        return None if row is None else self.index.chunks[row].text

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "variant": self.variant,
                "submission_papers": {**NO_LLM_PAPERS, "default": NO_LLM_PAPERS_DEFAULT},
                "reranker": self.settings.rerank.backend if self.variant == "rerank" else None}

    def settings_dump(self) -> dict[str, Any]:
        return self.settings.model_dump(mode="json")

    def close(self) -> None:
        self.index.close()


class AgentAnswerer:
    """Each question through ``agent.api.ask`` with a preset."""

    kind = "agent"

    def __init__(self, preset: str | None, index: Path):
        from agent.api import make_run_context
        from agent.resources import index_for

        self.index_path = index
        self.context = make_run_context(preset, index=str(index))
        self.name = self.preset = self.context.preset
        self.index = index_for(self.context)
        warm_up(self.index)

    def answer(self, q: Question) -> Outcome:
        from agent.api import ask
        from agent.graph import graph

        result = ask(q.question, preset=self.preset, index=str(self.index_path), graph=graph, **q.ask_arguments())
        # the agent's own fused A/B ranking (kadr: the papers of its top chunks)
        candidates = list(result["ranking"] or result["candidates"])
        answer = result["answer"]
        citations = [{k: c.get(k) for k in ("n", "chunk_id", "paper_id", "kind", "quote")}
                     for c in answer.get("citations", [])]
        extra = {"rounds": result["rounds"], "subqueries": result["subqueries"],
                 "insufficient_evidence": bool(answer.get("insufficient_evidence")),
                 "reader_candidates": list(result["candidates"]), "trace_id": result.get("trace_id")}
        return Outcome(result["submission"], candidates[:CANDIDATES_KEPT], answer.get("text", ""), citations,
                       dict(result["usage"]), list(result["errors"]), extra)

    def chunk_text(self, chunk_id: str) -> str | None:
        row = self.index.chunk_row.get(chunk_id)
        return None if row is None else self.index.chunks[row].text

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "preset": self.preset}

    def settings_dump(self) -> dict[str, Any]:
        from agent.resources import settings_for

        return {**settings_for(self.context).model_dump(mode="json"), "context": asdict(self.context)}

    def close(self) -> None:
        """The index belongs to the process-wide cache in agent.resources."""


def run_names() -> tuple[list[str], list[str]]:
    """(retrieval variants, agent presets) a run or a comparison can name."""
    from agent.context import preset_names
    from evals.bench_retrieval import VARIANTS

    return list(VARIANTS), preset_names()


def make_answerer(name: str | None, index: Path, *, no_llm: bool = False):
    """A retrieval variant or an agent preset by name (None: the default preset, or ``A+B``
    with ``no_llm``)."""
    variants, presets = run_names()
    if no_llm:
        if name and name not in variants:
            raise ValueError(f"--no-llm runs LLM-free retrieval; {name!r} is not one of its variants "
                             f"({', '.join(variants)})")
        return RetrievalAnswerer(name or NO_LLM_VARIANT, index)
    if name in variants:
        return RetrievalAnswerer(name, index)
    if name is not None and name not in presets:
        raise ValueError(f"unknown preset {name!r}; agent presets: {', '.join(presets)}; "
                         f"LLM-free variants: {', '.join(variants)}")
    return AgentAnswerer(name, index)


# --------------------------------------------------------------------------- run folder


def _read_ledger(path: Path) -> list[dict[str, Any]]:
    """Records of a JSONL file we wrote; lines that do not parse (a crash mid-write) are dropped
    and the file is rewritten without them. Untouched when every line parses."""
    if not path.exists():
        return []
    good_lines, records = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            log.warning("%s: dropping an incomplete line; its question runs again", path)
            continue
        if isinstance(record, dict) and isinstance(record.get("query_id"), str):
            good_lines.append(line)
            records.append(record)
    if len(good_lines) != len(path.read_text(encoding="utf-8").splitlines()):
        path.write_text("".join(line + "\n" for line in good_lines), encoding="utf-8")
    return records


def _keep_only(path: Path, ids: set[str]) -> None:
    """Drop the lines of questions not in the ledger (written before a crash cut the run)."""
    records = _read_ledger(path)
    kept, seen = [], set()
    for r in records:
        if r["query_id"] in ids and r["query_id"] not in seen:
            seen.add(r["query_id"])
            kept.append(r)
    if len(kept) != len(records):
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in kept), encoding="utf-8")


def _append(handle, record: Mapping[str, Any]) -> None:
    handle.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
    handle.flush()


def _check_run_file(out: Path, identity: dict[str, Any]) -> None:
    path = out / "run.json"
    if path.exists():
        previous = json.loads(path.read_text(encoding="utf-8"))
        changed = {k: (previous.get(k), v) for k, v in identity.items() if previous.get(k) != v}
        if changed:
            what = "; ".join(f"{k}: {old!r} there, {new!r} now" for k, (old, new) in changed.items())
            raise ValueError(f"{out} holds another run ({what}); use another --out or delete the folder")
        return
    path.write_text(json.dumps({**identity, "created": _now()}, indent=2) + "\n", encoding="utf-8")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _fatal_errors() -> tuple[type[BaseException], ...]:
    """Configuration problems stop the run (every question would fail the same way)."""
    from agent.local_model import LocalModelError
    from tools.embed import ModelNotAvailable
    from tools.index import IndexProblem

    return (IndexProblem, ModelNotAvailable, LocalModelError)


def answer_questions(answerer, questions: Sequence[Question], out: Path, *, progress: bool = False) -> dict[str, int]:
    """Answer the questions not yet in ``out/submission.jsonl``, one flushed line at a time."""
    from tqdm import tqdm

    submission_path = out / "submission.jsonl"
    done = {r["query_id"] for r in _read_ledger(submission_path)}
    for name in ("candidates.jsonl", "results.jsonl"):
        _keep_only(out / name, done)
    pending = [q for q in questions if q.query_id not in done]
    summary = {"answered": 0, "skipped": len(questions) - len(pending), "failed": 0}
    fatal = _fatal_errors()
    with (open(out / "candidates.jsonl", "a", encoding="utf-8") as cand,
          open(out / "results.jsonl", "a", encoding="utf-8") as res,
          open(out / "failures.jsonl", "a", encoding="utf-8") as fail,
          open(submission_path, "a", encoding="utf-8") as sub):
        bar = tqdm(pending, desc=answerer.name, unit="q", disable=not progress)
        for q in bar:
            started = time.perf_counter()
            try:
                outcome = answerer.answer(q)
            except fatal:
                raise
            except Exception as exc:  # one failing question must not stop the run
                log.exception("question %s failed", q.query_id)
                _append(fail, {"query_id": q.query_id, "error": f"{type(exc).__name__}: {exc}", "at": _now()})
                summary["failed"] += 1
                continue
            seconds = time.perf_counter() - started
            _append(cand, {"query_id": q.query_id, "candidate_papers": [
                {"paper_id": pid, "rank": r} for r, pid in enumerate(outcome.candidates, start=1)]})
            _append(res, {"query_id": q.query_id, "seconds": seconds, "usage": outcome.usage,
                          "answer_text": outcome.answer_text, "citations": outcome.citations,
                          "errors": outcome.errors, **outcome.extra})
            _append(sub, outcome.submission)  # last: the ledger line says the question is done
            summary["answered"] += 1
    return summary


def judge_answers(answerer, questions: Sequence[Question], out: Path, *, model_name: str | None = None,
                  progress: bool = False) -> int:
    """Judge every answered question with a gold free-form text that has no verdict yet."""
    from tqdm import tqdm

    from evals.judge import judge_answer

    path = out / "judgements.jsonl"
    judged = {r["query_id"] for r in _read_ledger(path)}
    submissions = {r["query_id"]: r for r in _read_ledger(out / "submission.jsonl")}
    results = {r["query_id"]: r for r in _read_ledger(out / "results.jsonl")}
    # free-form answers only: a question with a gold text (its correct option, if any, goes along)
    todo = [q for q in questions if q.query_id in submissions and q.query_id not in judged and q.gold_freeform]
    with open(path, "a", encoding="utf-8") as handle:
        for q in tqdm(todo, desc="judge", unit="q", disable=not progress):
            result = results.get(q.query_id, {})
            verdict = judge_answer(q.question, q.reference_answer() or "", prediction_text(submissions[q.query_id], result),
                                   result.get("citations", []), chunk_text=answerer.chunk_text, model_name=model_name)
            _append(handle, {"query_id": q.query_id, **verdict})
    return len(todo)


def prediction_text(submission: Mapping[str, Any] | None, result: Mapping[str, Any] | None) -> str:
    """The free-form text a question is graded on: the submission's, else the agent's prose."""
    part = ((submission or {}).get("answer") or {}).get("freeform") or {}
    text = part.get("text") if isinstance(part, Mapping) else None
    return text if isinstance(text, str) and text.strip() else str((result or {}).get("answer_text") or "")


# --------------------------------------------------------------------------- scoring


def not_applicable(metrics: dict[str, Any], names: Iterable[str]) -> None:
    """Mark metrics that do not apply to this run as None and recompute the two means."""
    from evals.metrics import answer_score_of, overall_of

    names = [n for n in names if n in metrics]
    if not names:
        return
    for name in names:
        metrics[name] = None
    metrics["answer_score"] = answer_score_of(metrics.get("multiple_choice_accuracy"),
                                              metrics.get("table_row_f1_macro"),
                                              metrics.get("table_cell_accuracy_macro"))
    metrics["overall_score"] = overall_of(metrics.get("paper_f1_macro"), metrics.get("evidence_f1_macro"),
                                          metrics["answer_score"])


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
    return {"freeform_exact_match_normalized": exact_match(text, q.gold_freeform),
            "freeform_token_f1": token_f1(text, q.gold_freeform)}


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
    submissions = [r for r in _read_ledger(out / "submission.jsonl") if r["query_id"] in ids]
    candidates = [r for r in _read_ledger(out / "candidates.jsonl") if r["query_id"] in ids]
    validate_submission(submissions, out / "submission.jsonl")
    validate_candidates(candidates, out / "candidates.jsonl")
    results = {r["query_id"]: r for r in _read_ledger(out / "results.jsonl")}
    verdicts = {r["query_id"]: r for r in _read_ledger(out / "judgements.jsonl")}
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
        row.update({"judge_correctness": verdict.get("correctness"), "judge_faithfulness": verdict.get("faithfulness"),
                    "seconds": result.get("seconds"), "llm_calls": (result.get("usage") or {}).get("llm_calls"),
                    "candidates": n_candidates.get(qid, 0)})
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
    results = [r for r in _read_ledger(out / "results.jsonl") if r["query_id"] in ids]
    answered = {r["query_id"] for r in _read_ledger(out / "submission.jsonl")} & ids
    failures = {r["query_id"] for r in _read_ledger(out / "failures.jsonl")} & (ids - answered)
    seconds = [float(r["seconds"]) for r in results if r.get("seconds") is not None]

    def total(key: str) -> float:
        return sum(float((r.get("usage") or {}).get(key, 0) or 0) for r in results)

    n = len(results) or 1
    verdicts = [r for r in _read_ledger(out / "judgements.jsonl") if r["query_id"] in ids]
    return {
        "questions": len(questions), "answered": len(answered), "failed": len(failures),
        "latency_p50_s": percentile(seconds, 50), "latency_p95_s": percentile(seconds, 95),
        "latency_mean_s": sum(seconds) / len(seconds) if seconds else None,
        "llm_calls": total("llm_calls"), "llm_calls_per_question": total("llm_calls") / n,
        "input_tokens": total("input_tokens"), "output_tokens": total("output_tokens"),
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


def run_eval(request: EvalRequest, answerer=None, questions: Sequence[Question] | None = None) -> dict[str, Any]:
    """Answer, judge, score and report one run; returns the ``metrics.json`` document."""
    from evals.report import write_report

    benchmark = resolve_benchmark(request.benchmark)
    questions = list(questions) if questions is not None else load_questions(benchmark, request.limit)
    own = answerer is None
    answerer = answerer or make_answerer(request.preset, request.index, no_llm=request.no_llm)
    out = request.out
    try:
        out.mkdir(parents=True, exist_ok=True)
        identity = {"benchmark": str(benchmark.resolve()), "index": str(Path(request.index).resolve()),
                    **answerer.describe()}
        _check_run_file(out, identity)
        started = time.perf_counter()
        summary = answer_questions(answerer, questions, out, progress=request.progress)
        if request.judge and answerer.kind == "agent":
            summary["judged"] = judge_answers(answerer, questions, out, model_name=request.judge_model,
                                              progress=request.progress)
        elif request.judge:
            log.warning("--judge: an LLM-free run has no answers to judge")
        scored = score_run(questions, out, answerer.kind)
        doc = {
            "metrics": scored["metrics"],
            "details": scored["details"],
            "settings": {"eval": {**identity, "name": answerer.name, "limit": request.limit,
                                  "judge": request.judge, "judge_model": request.judge_model,
                                  "candidates_kept": CANDIDATES_KEPT},
                         "litloop": answerer.settings_dump()},
            "run": {**run_summary(questions, out), "this_invocation": summary,
                    "wall_s": time.perf_counter() - started, "finished": _now(), "name": answerer.name,
                    "label": LABELS.get(answerer.name, answerer.name), "kind": answerer.kind},
        }
        (out / "metrics.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n",
                                          encoding="utf-8")
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
        raise ValueError(f"unknown names {unknown}; agent presets: {', '.join(presets)}; "
                         f"LLM-free variants: {', '.join(variants)}")
    if len({slug(n) for n in names}) != len(names):
        raise ValueError(f"names must be distinct: {list(names)}")
    benchmark = resolve_benchmark(request.benchmark)
    questions = load_questions(benchmark, request.limit)
    docs: dict[str, dict[str, Any]] = {}
    for name in names:
        sub = EvalRequest(benchmark, request.index, request.out / slug(name), preset=name, limit=request.limit,
                          judge=request.judge, judge_model=request.judge_model, progress=request.progress)
        docs[name] = run_eval(sub, questions=questions)
    return write_compare(request.out, docs, benchmark=str(benchmark), questions=len(questions))


def score_paths(gold_path: str | Path, submission_path: str | Path, candidates_path: str | Path | None = None,
                *, strict: bool = False) -> dict[str, Any]:
    """`litloop score`: validate and score files; the ``metrics.json`` shape.

    LitTraceQA gold scores exactly as ``evals.scoring.score_files``; a benchmark file without
    evidence locators or answers (citerec, PubMedQA) is accepted as gold too, and the metrics it
    cannot define are n/a (evidence metrics when no question has gold evidence).
    """
    from evals.metrics import score_all
    from evals.scoring import iter_jsonl, validate_candidates, validate_submission

    questions = load_questions(gold_path)
    no_gold = [q.line for q in questions if not q.has_gold]
    if no_gold:
        raise ValueError(f"{gold_path} line {no_gold[0]}: missing required field 'gold_papers' "
                         "(an input file without gold cannot be scored)")
    numbered = list(iter_jsonl(submission_path))
    submission = [r for _, r in numbered]
    validate_submission(submission, submission_path, line_numbers=[n for n, _ in numbered], strict=strict)
    candidates = None
    if candidates_path is not None:
        numbered = list(iter_jsonl(candidates_path))
        candidates = [r for _, r in numbered]
        validate_candidates(candidates, candidates_path, line_numbers=[n for n, _ in numbered])
    result = score_all(gold_records(questions), submission, candidates)
    if not has_gold_evidence(questions):
        drop_inapplicable(result, EVIDENCE_METRICS)
    settings = {"gold": str(gold_path), "submission": str(submission_path),
                "candidates": str(candidates_path) if candidates_path else None, "strict": strict}
    return {"metrics": result["metrics"], "details": result["details"], "settings": settings}
