"""The run folder of ``litloop eval``: its files, and the two steps that append to them.

A run folder holds (docs/design.md section 11 for ``metrics.json``):

- ``submission.jsonl``: one LitTraceQA submission record per answered question, written and
  flushed line by line; it is the run's ledger (``agent.records.ledger``, the one ``litloop run``
  keeps too): a rerun skips the query ids already in it, and a line cut short by a crash is
  dropped and its question runs again;
- ``candidates.jsonl``: the top 50 ranked papers per question (``query_id`` +
  ``candidate_papers``), scored with ``candidate_recall@k``;
- ``results.jsonl``: per question, the latency, LLM usage, answer text and cited chunks, and
  for the agent the answer's ``status`` (``ok`` or ``partial``: some LLM calls failed) and errors;
- ``failures.jsonl``: questions that raised or got no answer (status ``failed``: the model
  endpoint failed), with their error. The ledger's failure rule: a
  failed question is not done, so it is not in the submission and a rerun retries it; until
  then it scores 0 as a missing prediction;
- ``judgements.jsonl`` (with ``--judge``): the LLM judge's verdicts, one per answer (also when
  the judge's output stayed invalid: that verdict is recorded, not asked for again);
- ``run.json``: what the folder is a run of; resuming with another benchmark, index, preset or
  variant is refused;
- ``metrics.json``, ``report.md`` and ``recall_at_k.png``, rewritten at the end of every run
  (``evals.run``).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agent.records.ledger import Ledger
from evals.answers import prediction_text
from evals.datasets import Question
from tools.jsonl import append_line

log = logging.getLogger(__name__)

SUBMISSION = "submission.jsonl"
CANDIDATES = "candidates.jsonl"
RESULTS = "results.jsonl"
FAILURES = "failures.jsonl"
JUDGEMENTS = "judgements.jsonl"


def check_run_file(out: Path, identity: dict[str, Any]) -> None:
    """Write ``run.json``, or refuse a folder that holds another run."""
    path = out / "run.json"
    if path.exists():
        previous = json.loads(path.read_text(encoding="utf-8"))
        changed = {k: (previous.get(k), v) for k, v in identity.items() if previous.get(k) != v}
        if changed:
            what = "; ".join(f"{k}: {old!r} there, {new!r} now" for k, (old, new) in changed.items())
            raise ValueError(f"{out} holds another run ({what}); use another --out or delete the folder")
        return
    path.write_text(json.dumps({**identity, "created": now()}, indent=2) + "\n", encoding="utf-8")


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _fatal_errors() -> tuple[type[BaseException], ...]:
    """Configuration problems stop the run (every question would fail the same way)."""
    from agent.llm.local import LocalModelError
    from tools.index import IndexProblem
    from tools.models.embed import ModelNotAvailable

    return (IndexProblem, ModelNotAvailable, LocalModelError)


def answer_questions(answerer, questions: Sequence[Question], out: Path, *, progress: bool = False) -> dict[str, int]:
    """Answer the questions not yet in ``out/submission.jsonl``, one flushed line at a time."""
    from tqdm import tqdm

    ledger = Ledger(out / SUBMISSION)
    done = ledger.done()
    for name in (CANDIDATES, RESULTS):
        Ledger(out / name).keep_only(done)
    pending = [q for q in questions if q.query_id not in done]
    summary = {"answered": 0, "partial": 0, "skipped": len(questions) - len(pending), "failed": 0}
    fatal = _fatal_errors()
    with (
        Ledger(out / CANDIDATES).open() as cand,
        Ledger(out / RESULTS).open() as res,
        Ledger(out / FAILURES).open() as fail,
        ledger.open() as sub,
    ):
        bar = tqdm(pending, desc=answerer.name, unit="q", disable=not progress)
        for q in bar:
            started = time.perf_counter()
            try:
                outcome = answerer.answer(q)
            except fatal:
                raise
            except Exception as exc:  # one failing question must not stop the run
                log.exception("question %s failed", q.query_id)
                append_line(fail, {"query_id": q.query_id, "error": f"{type(exc).__name__}: {exc}", "at": now()})
                summary["failed"] += 1
                continue
            seconds = time.perf_counter() - started
            append_line(
                cand,
                {
                    "query_id": q.query_id,
                    "candidate_papers": [
                        {"paper_id": pid, "rank": r} for r, pid in enumerate(outcome.candidates, start=1)
                    ],
                },
            )
            append_line(
                res,
                {
                    "query_id": q.query_id,
                    "seconds": seconds,
                    "usage": outcome.usage,
                    "answer_text": outcome.answer_text,
                    "citations": outcome.citations,
                    "errors": outcome.errors,
                    **outcome.extra,
                },
            )
            append_line(sub, outcome.submission)  # last: the ledger line says the question is done
            summary["answered"] += 1
            summary["partial"] += outcome.extra.get("status") == "partial"
    return summary


def judge_answers(
    answerer, questions: Sequence[Question], out: Path, *, model_name: str | None = None, progress: bool = False
) -> int:
    """Judge every answered question with a gold free-form text that has no verdict yet."""
    from tqdm import tqdm

    from evals.judge import judge_answer

    verdicts = Ledger(out / JUDGEMENTS)
    judged = verdicts.ids()
    submissions = Ledger(out / SUBMISSION).latest()
    results = Ledger(out / RESULTS).latest()
    # free-form answers only: a question with a gold text (its correct option, if any, goes along)
    todo = [q for q in questions if q.query_id in submissions and q.query_id not in judged and q.gold_freeform]
    with verdicts.open() as handle:
        for q in tqdm(todo, desc="judge", unit="q", disable=not progress):
            result = results.get(q.query_id, {})
            verdict = judge_answer(
                q.question,
                q.reference_answer() or "",
                prediction_text(submissions[q.query_id], result),
                result.get("citations", []),
                chunk_text=answerer.chunk_text,
                model_name=model_name,
            )
            append_line(handle, {"query_id": q.query_id, **verdict})
    return len(todo)
