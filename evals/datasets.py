"""Benchmark questions in the LitTraceQA record shape, and what `ask()` needs from each.

One loader reads every benchmark the project measures on (``../shared/data/README.md``):

- ``citerec/dev.jsonl``: multi-paper retrieval (gold papers only, no answer);
- ``pubmedqa/dev.jsonl``: single-paper retrieval and yes/no/maybe multiple choice, with the
  authors' conclusion as a free-form gold text;
- ``littraceqa/validation_a.jsonl``: LitTraceQA validation A (gold papers, evidence, free-form,
  multiple-choice and table answers); its paper pool is not available offline, so its runs need a
  user-built index of the official ``paper_metadata.jsonl`` and PDFs;
- LitTraceQA *input* records (``test_inputs.jsonl``: ``multiple_choice_options`` as a list,
  ``table_schema``), which have no gold and are answered but not scored.

A benchmark record with gold carries the options and the table schema inside its gold answer
(``answer.multiple_choice.options``, ``answer.table.schema``); they are handed to ``ask()`` as
``options`` and ``table_schema``. The gold itself never reaches the agent.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.records.submission import (
    answer_part,
    ask_arguments,
    question_options,
    question_table_schema,
)
from evals.scoring import ANSWER_TYPES, gold_record_errors
from tools.jsonl import iter_jsonl

_MAX_REPORTED_ERRORS = 20
REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Benchmark:
    name: str
    questions: str  # path under the shared data folder
    corpus: str | None  # the papers to index; None: not available offline
    description: str


BENCHMARKS: dict[str, Benchmark] = {
    b.name: b
    for b in (
        Benchmark(
            "citerec-dev",
            "citerec/dev.jsonl",
            "citerec/papers.jsonl",
            "citation recommendation: 129 multi-paper retrieval questions over 3,186 CiteSeer papers",
        ),
        Benchmark(
            "pubmedqa-dev",
            "pubmedqa/dev.jsonl",
            "pubmedqa/papers.jsonl",
            "PubMedQA: 500 single-paper yes/no/maybe questions over 1,000 abstracts",
        ),
        Benchmark(
            "littraceqa-validation-a",
            "littraceqa/validation_a.jsonl",
            None,
            "LitTraceQA validation A: 28 questions; the paper pool is not shipped (build an index "
            "from the official paper_metadata.jsonl and PDFs)",
        ),
    )
}


def shared_data_dir() -> Path:
    """``LITLOOP_SHARED_DATA``, else ``../shared/data`` beside the repository."""
    return Path(os.environ.get("LITLOOP_SHARED_DATA", REPO.parent / "shared" / "data"))


def resolve_benchmark(value: str | Path) -> Path:
    """A questions file: an existing path, or a name from ``BENCHMARKS`` under the shared data."""
    path = Path(value)
    if path.is_file():
        return path
    if str(value) in BENCHMARKS:
        named = shared_data_dir() / BENCHMARKS[str(value)].questions
        if named.is_file():
            return named
        raise FileNotFoundError(
            f"benchmark {value!r}: {named} is absent (set LITLOOP_SHARED_DATA to the shared data folder)"
        )
    names = ", ".join(BENCHMARKS)
    raise FileNotFoundError(f"{value}: no such file (or use a benchmark name: {names})")


@dataclass(frozen=True)
class Question:
    """One benchmark question: what the agent is asked, and the record it is scored against."""

    query_id: str
    question: str
    task_family: str | None
    answer_types: tuple[str, ...]
    options: dict[str, str] | None = None
    table_schema: list[dict[str, Any]] | None = None
    record: Mapping[str, Any] = field(default_factory=dict, repr=False)
    line: int = 0

    @property
    def has_gold(self) -> bool:
        return "gold_papers" in self.record

    @property
    def gold_freeform(self) -> str | None:
        """The gold free-form text, where the benchmark has one (PubMedQA: the conclusion)."""
        part = answer_part(self.record, "freeform")
        text = part.get("text") if part else None
        return text if isinstance(text, str) and text.strip() else None

    @property
    def gold_choice(self) -> str | None:
        part = answer_part(self.record, "multiple_choice")
        label = part.get("gold") if part else None
        return str(label).strip().upper() if label else None

    def reference_answer(self) -> str | None:
        """The gold answer in words, for the judge: the free-form text and the correct option."""
        parts = []
        if self.gold_freeform:
            parts.append(self.gold_freeform)
        if self.gold_choice and self.options and self.gold_choice in self.options:
            parts.append(f"(Correct option: {self.gold_choice}: {self.options[self.gold_choice]})")
        return " ".join(parts) or None

    def ask_arguments(self) -> dict[str, Any]:
        """Keyword arguments for ``agent.api.ask`` (``agent.records.submission.ask_arguments``).

        ``freeform`` is added to the answer types where the gold has a free-form text the
        question does not ask for (PubMedQA asks for an option only): the agent writes its prose
        answer anyway, and the submission then carries it, so exact match, token F1 and the
        judge can read it. The multiple-choice and table answers are unaffected.
        """
        arguments = ask_arguments({**self.record, "query_id": self.query_id, "answer_types": list(self.answer_types)})
        if self.gold_freeform and "freeform" not in arguments["answer_types"]:
            arguments["answer_types"].append("freeform")
        return arguments


def question_errors(record: Mapping[str, Any]) -> list[str]:
    """Problems of one question record, as ``field '...' ...`` phrases (empty when usable)."""
    errors: list[str] = []
    for name in ("query_id", "question"):
        value = record.get(name)
        if name not in record:
            errors.append(f"missing required field '{name}'")
        elif not isinstance(value, str) or not value.strip():
            errors.append(f"field '{name}' must be a non-empty string")
    types = record.get("answer_types", [])
    if not isinstance(types, list):
        errors.append("field 'answer_types' must be an array")
    else:
        for i, t in enumerate(types):
            if t not in ANSWER_TYPES:
                errors.append(f"field 'answer_types[{i}]' must be one of {', '.join(ANSWER_TYPES)}, got {t!r}")
    listed = record.get("multiple_choice_options")
    if listed is not None:
        if not isinstance(listed, list):
            errors.append("field 'multiple_choice_options' must be an array")
        else:
            for i, o in enumerate(listed):
                if not isinstance(o, Mapping) or not isinstance(o.get("label"), str) or "text" not in o:
                    errors.append(f"field 'multiple_choice_options[{i}]' must be an object with 'label' and 'text'")
    part = answer_part(record, "multiple_choice")
    if part is not None and "options" in part and not isinstance(part["options"], Mapping):
        errors.append("field 'answer.multiple_choice.options' must be an object (label -> text)")
    schema = record.get("table_schema")
    if schema is not None and not (
        isinstance(schema, list) and all(isinstance(c, Mapping) and "name" in c for c in schema)
    ):
        errors.append("field 'table_schema' must be an array of columns with a 'name'")
    if "gold_papers" in record:
        # a scored question: what the scorer reads must be right (evidence and answer may be absent)
        filled = {"evidence": [], "answer": {}, **record}
        errors += gold_record_errors(filled)
    return errors


def load_questions(path: str | Path, limit: int | None = None) -> list[Question]:
    """Read and check a questions file; raise ValueError naming each bad line and field.

    ``limit`` keeps the first N questions (file order), after the whole file is checked.
    """
    path = Path(path)
    questions: list[Question] = []
    problems: list[str] = []
    first_line: dict[str, int] = {}
    for line, record in iter_jsonl(path):
        errors = question_errors(record)
        problems += [f"{path} line {line}: {e}" for e in errors]
        qid = record.get("query_id")
        if isinstance(qid, str) and qid in first_line:
            problems.append(f"{path} line {line}: duplicate query_id {qid!r} (first on line {first_line[qid]})")
        elif isinstance(qid, str):
            first_line[qid] = line
        if errors:
            continue
        questions.append(
            Question(
                query_id=record["query_id"],
                question=record["question"],
                task_family=record.get("task_family"),
                answer_types=tuple(record.get("answer_types") or ()),
                options=question_options(record),
                table_schema=question_table_schema(record),
                record=record,
                line=line,
            )
        )
    if problems:
        shown = problems[:_MAX_REPORTED_ERRORS]
        if len(problems) > len(shown):
            shown.append(f"... and {len(problems) - len(shown)} more problems")
        raise ValueError("\n".join(shown))
    if not questions:
        raise ValueError(f"{path}: no questions")
    return questions[:limit] if limit is not None else questions


def gold_records(questions: list[Question]) -> list[Mapping[str, Any]]:
    """The records to score against: the questions that have gold papers."""
    return [q.record for q in questions if q.has_gold]


def has_gold_evidence(questions: list[Question]) -> bool:
    """Whether the benchmark has evidence locators at all (citerec and PubMedQA have none)."""
    return any("evidence" in q.record for q in questions if q.has_gold)
