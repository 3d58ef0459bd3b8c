"""LitTraceQA metrics as pure functions over gold and submission records.

Every public metric takes the gold records (``validation_a.jsonl`` shape) and the submission
records (``submission.schema.json`` shape) as plain dicts and returns a macro (or micro) average.
The definitions reproduce the official LitTraceQA evaluator: on
``perturbed_submission_a.jsonl`` every value of ``perturbed_submission_a.official_metrics.json``
is matched to full float precision (see ``docs/metrics.md`` for each rule and the edge cases).

A metric whose answer type no gold question has (no multiple-choice question, no table) is
undefined and returned as ``None``, never 0.0: a 0.0 would read as "all wrong" and would pull the
overall score down for a question set that simply has no such questions.
"""

from __future__ import annotations

import html
import math
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

Record = Mapping[str, Any]

TASK_FAMILIES: tuple[str, ...] = ("hidden_source_single_paper", "multi_paper")
CANDIDATE_KS: tuple[int, ...] = (1, 5, 10, 20, 50)

# The element id that locates an evidence item inside its page, per source type. The README's
# "page and table/figure id" generalises to every source type; the citation id is needed to
# reproduce the official evidence recall (q_019 lists three references on the same page).
EVIDENCE_ID_FIELDS: dict[str, tuple[str, ...]] = {
    "table": ("table_id",),
    "figure": ("figure_id",),
    "equation_algorithm": ("equation_id", "algorithm_id"),
    "citation_context": ("citation_id",),
    "text_span": (),
}
_ALL_ID_FIELDS: tuple[str, ...] = ("table_id", "figure_id", "equation_id", "algorithm_id", "citation_id")

METRIC_NAMES: tuple[str, ...] = (
    "paper_precision_macro",
    "paper_recall_macro",
    "paper_f1_macro",
    "evidence_precision_macro",
    "evidence_recall_macro",
    "evidence_f1_macro",
    "multiple_choice_accuracy",
    "freeform_exact_match",
    "table_row_f1_macro",
    "table_cell_accuracy_macro",
    "table_cell_accuracy_micro",
    "answer_score",
    "overall_score",
)
CANDIDATE_METRIC_NAMES: tuple[str, ...] = tuple(f"candidate_recall@{k}" for k in CANDIDATE_KS)


# --------------------------------------------------------------------------- normalisation


def normalize_text(value: Any) -> str:
    """Fold a string for answer comparison.

    HTML entities are decoded (the gold has ``Don&#x27;t``), Unicode is NFKC-folded, case is
    folded, whitespace collapsed, and spaces next to punctuation dropped, because PDF extraction
    writes ``DAWN - ICL : Strategic`` where a reader writes ``DAWN-ICL: Strategic``.
    """
    text = unicodedata.normalize("NFKC", html.unescape(str(value))).casefold()
    text = " ".join(text.split())
    return re.sub(r"\s*([^\w\s])\s*", r"\1", text)


def normalize_id(value: Any) -> str | None:
    """Fold a locator id (``Table 4``, ``24``) so ``"24"`` and ``24`` or ``table 4`` agree."""
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return " ".join(unicodedata.normalize("NFKC", str(value)).casefold().split())


def _normalize_page(value: Any) -> Any:
    """Pages compare as integers; ``"7"`` and ``7`` are the same page."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and float(value).is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return value


def parse_number(value: Any) -> float | None:
    """Read a table number, accepting ``"1,234"``, ``"93.2%"`` and a Unicode minus.

    Returns None for anything that is not a number (booleans included), so the caller can fall
    back to a string comparison.
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    if not isinstance(value, str):
        return None
    text = value.strip().replace("\u2212", "-").replace(",", "").rstrip("%").strip()
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


_TRUE = {"true", "yes", "y", "1"}
_FALSE = {"false", "no", "n", "0"}


def _parse_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        folded = value.strip().casefold()
        if folded in _TRUE:
            return True
        if folded in _FALSE:
            return False
    return None


def normalize_cell(value: Any, column_type: str) -> Any:
    """Normalise a table cell by its schema column type so equal values compare equal.

    Numbers compare as floats (``2.50`` == ``"2.5"``), rounded to 9 decimals to absorb float
    noise but not reading precision (2.05 vs 2.049 differ: the official figures show no
    tolerance). Booleans accept yes/no/true/false. A value that does not parse as its column
    type falls back to the folded string, and a missing cell is None.
    """
    if value is None:
        return None
    if column_type == "number":
        number = parse_number(value)
        if number is not None:
            return ("num", round(number, 9))
    elif column_type == "boolean":
        flag = _parse_bool(value)
        if flag is not None:
            return ("bool", flag)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return ("str", normalize_text(value))


# --------------------------------------------------------------------------- per-question parts


def set_prf(gold: set[Any], predicted: set[Any]) -> tuple[float, float, float]:
    """Precision, recall and F1 of a predicted set against a gold set.

    An empty prediction scores 0 against a non-empty gold (the official evidence precision
    confirms it: four perturbed questions give no evidence and count as 0, not 1). An empty gold
    is vacuous: 1.0 for an empty prediction, 0.0 for any claim.
    """
    if not gold:
        score = 1.0 if not predicted else 0.0
        return score, score, score
    hits = len(gold & predicted)
    precision = hits / len(predicted) if predicted else 0.0
    recall = hits / len(gold)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def paper_ids(record: Record | None) -> set[str]:
    """The set of paper ids a record names; duplicates count once."""
    if not record:
        return set()
    return {
        str(paper["paper_id"]).strip()
        for paper in record.get("gold_papers") or []
        if isinstance(paper, Mapping) and paper.get("paper_id") is not None
    }


def evidence_key(item: Record) -> tuple[Any, ...]:
    """The identity of an evidence item: paper, source type, page and element id.

    The element id depends on the source type (``EVIDENCE_ID_FIELDS``); section, row, column,
    region and sentence bounds are deliberately not part of it, so a right table cited with a
    different row still counts.
    """
    locator = item.get("locator") or {}
    source_type = item.get("source_type")
    fields = EVIDENCE_ID_FIELDS.get(str(source_type), _ALL_ID_FIELDS)
    ids = tuple(normalize_id(locator.get(field)) for field in fields)
    return (str(item.get("paper_id", "")).strip(), source_type, _normalize_page(locator.get("page")), *ids)


def evidence_keys(record: Record | None) -> set[tuple[Any, ...]]:
    """The set of evidence keys of a record; repeated keys count once (as the official does)."""
    if not record:
        return set()
    return {evidence_key(item) for item in record.get("evidence") or [] if isinstance(item, Mapping)}


def _answer_part(record: Record | None, part: str) -> Mapping[str, Any] | None:
    if not record:
        return None
    answer = record.get("answer") or {}
    value = answer.get(part) if isinstance(answer, Mapping) else None
    return value if isinstance(value, Mapping) else None


def multiple_choice_correct(gold: Record, predicted: Record | None) -> bool | None:
    """Whether the predicted option label is the gold one; None when the question has none."""
    gold_mc = _answer_part(gold, "multiple_choice")
    if gold_mc is None:
        return None
    predicted_mc = _answer_part(predicted, "multiple_choice") or {}
    label = str(predicted_mc.get("gold") or "").strip().upper()
    return bool(label) and label == str(gold_mc.get("gold", "")).strip().upper()


def freeform_exact(gold: Record, predicted: Record | None) -> bool | None:
    """Exact match of the folded free-form text; None when the question has no free-form answer."""
    gold_ff = _answer_part(gold, "freeform")
    if gold_ff is None:
        return None
    predicted_ff = _answer_part(predicted, "freeform") or {}
    text = predicted_ff.get("text")
    if not isinstance(text, str) or not text.strip():
        return False
    return normalize_text(text) == normalize_text(gold_ff.get("text", ""))


def table_key_columns(schema: Sequence[Record]) -> list[tuple[str, str]]:
    """The ``(name, type)`` of the row-key columns; every column is a key when none is marked."""
    columns = [(str(col["name"]), str(col.get("type", "string"))) for col in schema]
    keys = [(str(col["name"]), str(col.get("type", "string"))) for col in schema if col.get("is_row_key")]
    return keys or columns


def _row_key(row: Mapping[str, Any], key_columns: Sequence[tuple[str, str]]) -> tuple[Any, ...]:
    return tuple(normalize_cell(row.get(name), kind) for name, kind in key_columns)


def table_scores(gold: Record, predicted: Record | None) -> dict[str, Any] | None:
    """Row F1 and cell accuracy of one table answer; None when the question has no table.

    Rows match on their normalised row-key tuple (set semantics: a repeated predicted key counts
    once, as the official q_023 figure requires). Cells are the gold rows' non-key cells; one is
    correct when the first predicted row with the same key holds an equal normalised value. A
    table with only key columns has no cells, and its cell accuracy is its row F1 (this is what
    reproduces the official macro figure); it adds nothing to the micro counts.
    """
    gold_table = _answer_part(gold, "table")
    if gold_table is None:
        return None
    schema = list(gold_table.get("schema") or [])
    key_columns = table_key_columns(schema)
    key_names = {name for name, _ in key_columns}
    value_columns = [(str(c["name"]), str(c.get("type", "string"))) for c in schema if str(c["name"]) not in key_names]
    gold_rows = [row for row in gold_table.get("rows") or [] if isinstance(row, Mapping)]
    predicted_table = _answer_part(predicted, "table") or {}
    predicted_rows = [row for row in predicted_table.get("rows") or [] if isinstance(row, Mapping)]

    first_by_key: dict[tuple[Any, ...], Mapping[str, Any]] = {}
    for row in predicted_rows:
        first_by_key.setdefault(_row_key(row, key_columns), row)
    gold_keys = {_row_key(row, key_columns) for row in gold_rows}
    _, _, row_f1 = set_prf(gold_keys, set(first_by_key))

    correct = total = 0
    for row in gold_rows:
        match = first_by_key.get(_row_key(row, key_columns))
        for name, kind in value_columns:
            total += 1
            if match is not None and name in match:
                correct += normalize_cell(match.get(name), kind) == normalize_cell(row.get(name), kind)
    cell_accuracy = correct / total if total else row_f1
    return {"row_f1": row_f1, "cell_accuracy": cell_accuracy, "cells_correct": correct, "cells_total": total}


def candidate_ids(record: Record | None) -> list[str]:
    """A candidate record's paper ids in rank order (list order when ranks are absent)."""
    if not record:
        return []
    papers = [p for p in record.get("candidate_papers") or [] if isinstance(p, Mapping)]
    if papers and all(isinstance(p.get("rank"), int) for p in papers):
        papers = sorted(papers, key=lambda p: p["rank"])
    return [str(p.get("paper_id", "")).strip() for p in papers]


def candidate_recall(gold: Record, candidates: Record | None, k: int) -> float:
    """Fraction of the question's gold papers among its top-k candidates (0 without a list)."""
    if k < 1:
        raise ValueError(f"k must be a positive integer, got {k}")
    wanted = paper_ids(gold)
    if not wanted:
        return 1.0
    return len(wanted & set(candidate_ids(candidates)[:k])) / len(wanted)


# --------------------------------------------------------------------------- per question


def index_by_query_id(records: Iterable[Record], what: str = "records") -> dict[str, Record]:
    """Map query_id to record, refusing duplicates (which one would count is ambiguous)."""
    indexed: dict[str, Record] = {}
    for record in records:
        query_id = str(record.get("query_id", ""))
        if query_id in indexed:
            raise ValueError(f"duplicate query_id {query_id!r} in {what}")
        indexed[query_id] = record
    return indexed


def score_question(gold: Record, predicted: Record | None, candidates: Record | None = None) -> dict[str, Any]:
    """Every per-question score of one gold question; a missing prediction scores as empty."""
    paper_p, paper_r, paper_f = set_prf(paper_ids(gold), paper_ids(predicted))
    ev_p, ev_r, ev_f = set_prf(evidence_keys(gold), evidence_keys(predicted))
    table = table_scores(gold, predicted)
    scores: dict[str, Any] = {
        "query_id": gold.get("query_id"),
        "task_family": gold.get("task_family"),
        "predicted": predicted is not None,
        "paper_precision": paper_p,
        "paper_recall": paper_r,
        "paper_f1": paper_f,
        "evidence_precision": ev_p,
        "evidence_recall": ev_r,
        "evidence_f1": ev_f,
        "multiple_choice_correct": multiple_choice_correct(gold, predicted),
        "freeform_exact_match": freeform_exact(gold, predicted),
        "table_row_f1": table["row_f1"] if table else None,
        "table_cell_accuracy": table["cell_accuracy"] if table else None,
        "table_cells_correct": table["cells_correct"] if table else 0,
        "table_cells_total": table["cells_total"] if table else 0,
    }
    if candidates is not None:
        for k in CANDIDATE_KS:
            scores[f"candidate_recall@{k}"] = candidate_recall(gold, candidates, k)
    return scores


def score_questions(
    gold: Sequence[Record],
    submission: Iterable[Record],
    candidates: Iterable[Record] | None = None,
) -> list[dict[str, Any]]:
    """Per-question scores for every gold question, in gold order."""
    predicted = index_by_query_id(submission, "submission")
    candidate_index = index_by_query_id(candidates, "candidates") if candidates is not None else None
    rows = []
    for record in gold:
        query_id = str(record.get("query_id"))
        cands = None if candidate_index is None else candidate_index.get(query_id, {})
        rows.append(score_question(record, predicted.get(query_id), cands))
    return rows


# --------------------------------------------------------------------------- aggregation


def _mean(values: Iterable[float | bool | None]) -> float | None:
    present = [float(v) for v in values if v is not None]
    return sum(present) / len(present) if present else None


def _macro(rows: Sequence[Mapping[str, Any]], field: str) -> float | None:
    return _mean(row.get(field) for row in rows)


def answer_score_of(mc: float | None, row_f1: float | None, cell: float | None) -> float | None:
    """Mean of the answer metrics that apply to the question set (None when none apply)."""
    return _mean([mc, row_f1, cell])


def overall_of(paper_f1: float | None, evidence_f1: float | None, answer: float | None) -> float | None:
    """Mean of paper F1, evidence F1 and the answer score, over the parts that are defined."""
    return _mean([paper_f1, evidence_f1, answer])


def aggregate(rows: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    """The metric vector of a list of per-question scores (see ``METRIC_NAMES``)."""
    correct = sum(row["table_cells_correct"] for row in rows)
    total = sum(row["table_cells_total"] for row in rows)
    metrics: dict[str, float | None] = {
        "paper_precision_macro": _macro(rows, "paper_precision"),
        "paper_recall_macro": _macro(rows, "paper_recall"),
        "paper_f1_macro": _macro(rows, "paper_f1"),
        "evidence_precision_macro": _macro(rows, "evidence_precision"),
        "evidence_recall_macro": _macro(rows, "evidence_recall"),
        "evidence_f1_macro": _macro(rows, "evidence_f1"),
        "multiple_choice_accuracy": _macro(rows, "multiple_choice_correct"),
        "freeform_exact_match": _macro(rows, "freeform_exact_match"),
        "table_row_f1_macro": _macro(rows, "table_row_f1"),
        "table_cell_accuracy_macro": _macro(rows, "table_cell_accuracy"),
        "table_cell_accuracy_micro": correct / total if total else None,
    }
    metrics["answer_score"] = answer_score_of(
        metrics["multiple_choice_accuracy"], metrics["table_row_f1_macro"], metrics["table_cell_accuracy_macro"]
    )
    metrics["overall_score"] = overall_of(
        metrics["paper_f1_macro"], metrics["evidence_f1_macro"], metrics["answer_score"]
    )
    if rows and "candidate_recall@1" in rows[0]:
        for name in CANDIDATE_METRIC_NAMES:
            metrics[name] = _macro(rows, name)
    return metrics


# --------------------------------------------------------------------------- public metrics


def _metric(gold: Sequence[Record], submission: Iterable[Record], name: str) -> float | None:
    return aggregate(score_questions(gold, submission))[name]


def paper_precision_macro(gold: Sequence[Record], submission: Iterable[Record]) -> float | None:
    """Mean over gold questions of |predicted ∩ gold papers| / |predicted papers|."""
    return _metric(gold, submission, "paper_precision_macro")


def paper_recall_macro(gold: Sequence[Record], submission: Iterable[Record]) -> float | None:
    """Mean over gold questions of |predicted ∩ gold papers| / |gold papers|."""
    return _metric(gold, submission, "paper_recall_macro")


def paper_f1_macro(gold: Sequence[Record], submission: Iterable[Record]) -> float | None:
    """Mean over gold questions of the per-question paper F1 (not F1 of the mean P and R)."""
    return _metric(gold, submission, "paper_f1_macro")


def evidence_precision_macro(gold: Sequence[Record], submission: Iterable[Record]) -> float | None:
    """Mean over gold questions of the precision of the predicted evidence keys."""
    return _metric(gold, submission, "evidence_precision_macro")


def evidence_recall_macro(gold: Sequence[Record], submission: Iterable[Record]) -> float | None:
    """Mean over gold questions of the recall of the gold evidence keys."""
    return _metric(gold, submission, "evidence_recall_macro")


def evidence_f1_macro(gold: Sequence[Record], submission: Iterable[Record]) -> float | None:
    """Mean over gold questions of the per-question evidence F1."""
    return _metric(gold, submission, "evidence_f1_macro")


def multiple_choice_accuracy(gold: Sequence[Record], submission: Iterable[Record]) -> float | None:
    """Share of multiple-choice questions answered with the gold label."""
    return _metric(gold, submission, "multiple_choice_accuracy")


def freeform_exact_match(gold: Sequence[Record], submission: Iterable[Record]) -> float | None:
    """Share of free-form questions whose folded text equals the gold text (reported, not ranked)."""
    return _metric(gold, submission, "freeform_exact_match")


def table_row_f1_macro(gold: Sequence[Record], submission: Iterable[Record]) -> float | None:
    """Mean over table questions of the row-key F1."""
    return _metric(gold, submission, "table_row_f1_macro")


def table_cell_accuracy_macro(gold: Sequence[Record], submission: Iterable[Record]) -> float | None:
    """Mean over table questions of the per-table cell accuracy (row F1 for key-only tables)."""
    return _metric(gold, submission, "table_cell_accuracy_macro")


def table_cell_accuracy_micro(gold: Sequence[Record], submission: Iterable[Record]) -> float | None:
    """Correct non-key cells over all gold non-key cells, pooled across tables."""
    return _metric(gold, submission, "table_cell_accuracy_micro")


def answer_score(gold: Sequence[Record], submission: Iterable[Record]) -> float | None:
    """Mean of multiple-choice accuracy, table row F1 and macro table cell accuracy (where defined)."""
    return _metric(gold, submission, "answer_score")


def overall_score(gold: Sequence[Record], submission: Iterable[Record]) -> float | None:
    """The official overall score: mean of paper F1, evidence F1 and the answer score."""
    return _metric(gold, submission, "overall_score")


def candidate_recall_at_k(gold: Sequence[Record], candidates: Iterable[Record], k: int) -> float | None:
    """Mean over gold questions of the share of gold papers in the top-k candidates.

    A question with no candidate record scores 0; candidate records for other questions are
    ignored.
    """
    indexed = index_by_query_id(candidates, "candidates")
    return _mean(candidate_recall(record, indexed.get(str(record.get("query_id")), {}), k) for record in gold)


# --------------------------------------------------------------------------- everything


def _families(gold: Sequence[Record]) -> list[str]:
    seen = [str(r.get("task_family")) for r in gold]
    return list(TASK_FAMILIES) + sorted(set(seen) - set(TASK_FAMILIES))


def score_all(
    gold: Sequence[Record],
    submission: Iterable[Record],
    candidates: Iterable[Record] | None = None,
) -> dict[str, Any]:
    """Score a submission (and optionally a candidate file) against gold.

    Returns ``{"metrics": {...}, "details": {"per_question": [...], "by_task_family": {family:
    {"count": n, "metrics": {...}}}, "counts": {...}}}``. Missing predictions score zero and are
    listed; predictions for questions outside the gold are ignored and listed.
    """
    submission = list(submission)
    candidates = None if candidates is None else list(candidates)
    rows = score_questions(gold, submission, candidates)
    gold_ids = [str(r.get("query_id")) for r in gold]
    predicted_ids = {str(r.get("query_id")) for r in submission}
    by_family = {}
    for family in _families(gold):
        family_rows = [row for row in rows if row["task_family"] == family]
        by_family[family] = {"count": len(family_rows), "metrics": aggregate(family_rows)}
    counts: dict[str, Any] = {
        "total": len(gold),
        "missing_prediction_count": sum(qid not in predicted_ids for qid in gold_ids),
        "extra_prediction_count": len(predicted_ids - set(gold_ids)),
        "missing_predictions": [qid for qid in gold_ids if qid not in predicted_ids],
        "extra_predictions": sorted(predicted_ids - set(gold_ids)),
        "multiple_choice_questions": sum(row["multiple_choice_correct"] is not None for row in rows),
        "freeform_questions": sum(row["freeform_exact_match"] is not None for row in rows),
        "table_questions": sum(row["table_row_f1"] is not None for row in rows),
        "table_cell_correct": sum(row["table_cells_correct"] for row in rows),
        "table_cell_total": sum(row["table_cells_total"] for row in rows),
    }
    if candidates is not None:
        candidate_ids_seen = {str(r.get("query_id")) for r in candidates}
        counts["missing_candidates"] = [qid for qid in gold_ids if qid not in candidate_ids_seen]
    details = {"per_question": rows, "by_task_family": by_family, "counts": counts}
    return {"metrics": aggregate(rows), "details": details}
