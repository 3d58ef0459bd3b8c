"""Load, validate and score LitTraceQA files; the file-level face of ``evals.metrics``.

Validation is written by hand (no jsonschema dependency) so every message names the file, the
line and the field, e.g. ``sub.jsonl line 3: field 'evidence[1].locator.page' must be an
integer``; files are read with ``tools.jsonl`` (whose errors name the line too). Only the
standard library is imported: the CLI imports this module on every ``litloop score`` call.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from evals.metrics import (
    CANDIDATE_METRIC_NAMES,
    METRIC_NAMES,
    TASK_FAMILIES,
    score_all,
)
from tools.jsonl import iter_jsonl, json_type

Record = Mapping[str, Any]

SOURCE_TYPES: tuple[str, ...] = ("table", "figure", "text_span", "equation_algorithm", "citation_context")
ANSWER_TYPES: tuple[str, ...] = ("freeform", "multiple_choice", "table")
# The locator keys submission.schema.json allows; the rest are only accepted when not strict.
SUBMISSION_LOCATOR_KEYS: tuple[str, ...] = (
    "page", "table_id", "figure_id", "section", "equation_id", "algorithm_id", "citation_id",
)
_LOCATOR_STRING_KEYS = tuple(k for k in SUBMISSION_LOCATOR_KEYS if k != "page")
_MC_LABEL = re.compile(r"^[A-Z]?$")
_MAX_REPORTED_ERRORS = 20


# --------------------------------------------------------------------------- loading


def load_numbered(path: str | Path) -> tuple[list[dict[str, Any]], list[int]]:
    """The records of a JSONL file and their line numbers (for messages that name the line)."""
    numbered = list(iter_jsonl(path))
    return [record for _, record in numbered], [number for number, _ in numbered]


# --------------------------------------------------------------------------- field checks


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _field(name: str) -> str:
    return f"field '{name}'"


def _check_nonempty_string(value: Any, name: str, errors: list[str]) -> None:
    if not isinstance(value, str):
        errors.append(f"{_field(name)} must be a string, got {json_type(value)}")
    elif not value:
        errors.append(f"{_field(name)} must not be empty")


def _check_keys(obj: Mapping[str, Any], allowed: Sequence[str], prefix: str, errors: list[str]) -> None:
    for key in obj:
        if key not in allowed:
            where = f"{prefix}.{key}" if prefix else key
            errors.append(f"unexpected {_field(where)} (allowed: {', '.join(allowed)})")


def _no_check(*_: Any) -> None:
    """Stands in for ``_check_keys`` where extra keys are tolerated."""


def _check_required(obj: Mapping[str, Any], required: Sequence[str], prefix: str, errors: list[str]) -> None:
    for key in required:
        if key not in obj:
            where = f"{prefix}.{key}" if prefix else key
            errors.append(f"missing required {_field(where)}")


def _check_object(value: Any, name: str, errors: list[str]) -> bool:
    if not isinstance(value, dict):
        errors.append(f"{_field(name)} must be an object, got {json_type(value)}")
        return False
    return True


def _check_array(value: Any, name: str, errors: list[str]) -> bool:
    if not isinstance(value, list):
        errors.append(f"{_field(name)} must be an array, got {json_type(value)}")
        return False
    return True


def _check_papers(value: Any, errors: list[str], strict: bool) -> None:
    if not _check_array(value, "gold_papers", errors):
        return
    for i, paper in enumerate(value):
        name = f"gold_papers[{i}]"
        if not _check_object(paper, name, errors):
            continue
        _check_required(paper, ["paper_id"], name, errors)
        if strict:
            _check_keys(paper, ["paper_id"], name, errors)
        if "paper_id" in paper:
            _check_nonempty_string(paper["paper_id"], f"{name}.paper_id", errors)


def _check_locator(locator: Any, name: str, errors: list[str], strict: bool) -> None:
    if not _check_object(locator, name, errors):
        return
    if strict:
        _check_keys(locator, SUBMISSION_LOCATOR_KEYS, name, errors)
    if "page" in locator:
        page = locator["page"]
        if not _is_int(page):
            errors.append(f"{_field(name + '.page')} must be an integer, got {json_type(page)}")
        elif page < 1:
            errors.append(f"{_field(name + '.page')} must be at least 1, got {page}")
    for key in _LOCATOR_STRING_KEYS:
        if key not in locator:
            continue
        value = locator[key]
        # Not strict: ids may be integers, as in the gold itself (citation_id 24, section 5.6).
        ok = isinstance(value, str) or (not strict and isinstance(value, (int, float)) and not isinstance(value, bool))
        if not ok:
            kind = "a string" if strict else "a string or a number"
            errors.append(f"{_field(name + '.' + key)} must be {kind}, got {json_type(value)}")


def _check_evidence(value: Any, errors: list[str], strict: bool) -> None:
    if not _check_array(value, "evidence", errors):
        return
    for i, item in enumerate(value):
        name = f"evidence[{i}]"
        if not _check_object(item, name, errors):
            continue
        _check_required(item, ["paper_id", "source_type", "locator"], name, errors)
        if strict:
            _check_keys(item, ["paper_id", "source_type", "locator"], name, errors)
        if "paper_id" in item:
            _check_nonempty_string(item["paper_id"], f"{name}.paper_id", errors)
        if "source_type" in item and item["source_type"] not in SOURCE_TYPES:
            allowed = ", ".join(SOURCE_TYPES)
            errors.append(f"{_field(name + '.source_type')} must be one of {allowed}, got {item['source_type']!r}")
        if "locator" in item:
            _check_locator(item["locator"], f"{name}.locator", errors, strict)


def _check_answer(value: Any, errors: list[str], strict: bool) -> None:
    if not _check_object(value, "answer", errors):
        return
    _check_keys(value, ANSWER_TYPES, "answer", errors)
    # Not strict: a part may carry extra keys (the official evaluator scored tables that echo
    # their "schema"); the required key of each part still catches a misspelt one.
    check_part_keys = _check_keys if strict else _no_check
    if "freeform" in value and _check_object(value["freeform"], "answer.freeform", errors):
        part = value["freeform"]
        check_part_keys(part, ["text"], "answer.freeform", errors)
        _check_required(part, ["text"], "answer.freeform", errors)
        if "text" in part and not isinstance(part["text"], str):
            errors.append(f"{_field('answer.freeform.text')} must be a string, got {json_type(part['text'])}")
    if "multiple_choice" in value and _check_object(value["multiple_choice"], "answer.multiple_choice", errors):
        part = value["multiple_choice"]
        check_part_keys(part, ["gold"], "answer.multiple_choice", errors)
        _check_required(part, ["gold"], "answer.multiple_choice", errors)
        label = part.get("gold", "")
        if not isinstance(label, str) or not _MC_LABEL.match(label):
            errors.append(
                f"{_field('answer.multiple_choice.gold')} must be one capital letter A-Z or \"\", got {label!r}"
            )
    if "table" in value and _check_object(value["table"], "answer.table", errors):
        part = value["table"]
        check_part_keys(part, ["rows"], "answer.table", errors)
        _check_required(part, ["rows"], "answer.table", errors)
        if "rows" in part and _check_array(part["rows"], "answer.table.rows", errors):
            for i, row in enumerate(part["rows"]):
                _check_object(row, f"answer.table.rows[{i}]", errors)


def submission_record_errors(record: Any, *, strict: bool = False) -> list[str]:
    """Schema problems of one submission record, as ``field '...' ...`` phrases.

    Not strict (the default) checks every field the scorer reads, and refuses unknown keys at
    the top level and among the answer types (they can only be typos that silently lose
    points). It accepts extra keys in papers, evidence items, locators and answer parts, and
    numeric locator ids, because the official evaluator scored ``perturbed_submission_a.jsonl``,
    which has all of these (gold-style locators, ``citation_id: 24``, ``section: 5.6``, tables
    that echo their ``schema``). Strict is the letter of ``submission.schema.json``.
    """
    errors: list[str] = []
    if not isinstance(record, dict):
        return [f"record must be an object, got {json_type(record)}"]
    _check_keys(record, ["query_id", "gold_papers", "evidence", "answer"], "", errors)
    _check_required(record, ["query_id", "gold_papers", "answer"], "", errors)
    if "query_id" in record:
        _check_nonempty_string(record["query_id"], "query_id", errors)
    if "gold_papers" in record:
        _check_papers(record["gold_papers"], errors, strict)
    if "evidence" in record:
        _check_evidence(record["evidence"], errors, strict)
    if "answer" in record:
        _check_answer(record["answer"], errors, strict)
    return errors


def candidate_record_errors(record: Any) -> list[str]:
    """Problems of one candidate-list record (query_id + ranked candidate_papers)."""
    errors: list[str] = []
    if not isinstance(record, dict):
        return [f"record must be an object, got {json_type(record)}"]
    _check_required(record, ["query_id", "candidate_papers"], "", errors)
    if "query_id" in record:
        _check_nonempty_string(record["query_id"], "query_id", errors)
    papers = record.get("candidate_papers")
    if "candidate_papers" not in record or not _check_array(papers, "candidate_papers", errors):
        return errors
    ranks: dict[int, int] = {}
    with_rank = 0
    for i, paper in enumerate(papers):
        name = f"candidate_papers[{i}]"
        if not _check_object(paper, name, errors):
            continue
        _check_required(paper, ["paper_id"], name, errors)
        if "paper_id" in paper:
            _check_nonempty_string(paper["paper_id"], f"{name}.paper_id", errors)
        if "rank" not in paper:
            continue
        with_rank += 1
        rank = paper["rank"]
        if not _is_int(rank) or rank < 1:
            errors.append(f"{_field(name + '.rank')} must be a positive integer, got {rank!r}")
        elif rank in ranks:
            errors.append(f"{_field(name + '.rank')} repeats rank {rank} of candidate_papers[{ranks[rank]}]")
        else:
            ranks[rank] = i
    if 0 < with_rank < len(papers):
        errors.append(f"{_field('candidate_papers')} must give a rank for every paper or for none")
    return errors


def gold_record_errors(record: Any) -> list[str]:
    """The gold fields the scorer relies on (the gold is trusted data; this catches wrong files)."""
    errors: list[str] = []
    if not isinstance(record, dict):
        return [f"record must be an object, got {json_type(record)}"]
    _check_required(record, ["query_id", "task_family", "gold_papers", "evidence", "answer"], "", errors)
    if "query_id" in record:
        _check_nonempty_string(record["query_id"], "query_id", errors)
    if "gold_papers" in record:
        _check_papers(record["gold_papers"], errors, strict=False)
    if "evidence" in record:
        _check_evidence(record["evidence"], errors, strict=False)
    answer = record.get("answer")
    if "answer" in record and _check_object(answer, "answer", errors) and "table" in answer:
        table = answer["table"]
        if _check_object(table, "answer.table", errors):
            _check_required(table, ["schema", "rows"], "answer.table", errors)
            for i, column in enumerate(table.get("schema") or []):
                if _check_object(column, f"answer.table.schema[{i}]", errors):
                    _check_required(column, ["name", "type", "is_row_key"], f"answer.table.schema[{i}]", errors)
    return errors


# --------------------------------------------------------------------------- file validation


def _raise_if_errors(problems: list[str]) -> None:
    if not problems:
        return
    shown = problems[:_MAX_REPORTED_ERRORS]
    if len(problems) > len(shown):
        shown.append(f"... and {len(problems) - len(shown)} more problems")
    raise ValueError("\n".join(shown))


def _validate(
    records: Sequence[Any],
    path: str | Path,
    line_numbers: Sequence[int] | None,
    check: Callable[[Any], list[str]],
) -> None:
    lines = list(line_numbers) if line_numbers is not None else list(range(1, len(records) + 1))
    problems: list[str] = []
    first_line: dict[str, int] = {}
    for record, line in zip(records, lines):
        problems += [f"{path} line {line}: {error}" for error in check(record)]
        query_id = record.get("query_id") if isinstance(record, dict) else None
        if isinstance(query_id, str) and query_id:
            if query_id in first_line:
                first = first_line[query_id]
                problems.append(f"{path} line {line}: duplicate query_id {query_id!r} (first on line {first})")
            else:
                first_line[query_id] = line
    _raise_if_errors(problems)


def validate_submission(
    records: Sequence[Any],
    path: str | Path = "submission",
    *,
    line_numbers: Sequence[int] | None = None,
    strict: bool = False,
) -> None:
    """Raise ValueError listing every schema problem (up to 20) as ``<path> line N: ...``.

    ``line_numbers`` are the file lines of the records (``iter_jsonl`` gives them); by default
    record i is line i + 1. Duplicate query ids are refused.
    """
    _validate(records, path, line_numbers, lambda r: submission_record_errors(r, strict=strict))


def validate_candidates(
    records: Sequence[Any],
    path: str | Path = "candidates",
    *,
    line_numbers: Sequence[int] | None = None,
) -> None:
    """Raise ValueError for malformed candidate lists (see ``candidate_record_errors``)."""
    _validate(records, path, line_numbers, candidate_record_errors)


def validate_gold(
    records: Sequence[Any],
    path: str | Path = "gold",
    *,
    line_numbers: Sequence[int] | None = None,
) -> None:
    """Raise ValueError when a gold file lacks what the scorer reads (e.g. an input-only file)."""
    _validate(records, path, line_numbers, gold_record_errors)


# --------------------------------------------------------------------------- scoring


def score_files(
    gold_path: str | Path,
    submission_path: str | Path,
    candidates_path: str | Path | None = None,
    *,
    strict: bool = False,
) -> dict[str, Any]:
    """Load and validate the files, then ``score_all`` them (same result shape)."""
    gold, gold_lines = load_numbered(gold_path)
    validate_gold(gold, gold_path, line_numbers=gold_lines)
    submission, candidates = load_predictions(submission_path, candidates_path, strict=strict)
    return score_all(gold, submission, candidates)


def load_predictions(submission_path: str | Path, candidates_path: str | Path | None = None, *,
                     strict: bool = False) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
    """The submission and (when given) the candidate records, validated: ValueError naming each
    bad line and field."""
    submission, submission_lines = load_numbered(submission_path)
    validate_submission(submission, submission_path, line_numbers=submission_lines, strict=strict)
    candidates = None
    if candidates_path is not None:
        candidates, candidate_lines = load_numbered(candidates_path)
        validate_candidates(candidates, candidates_path, line_numbers=candidate_lines)
    return submission, candidates


def _cell(value: Any) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def format_table(result: Mapping[str, Any]) -> str:
    """A plain-text table: one row per metric, columns all / each task family, 4 decimals.

    ``n/a`` marks a metric no question in that column applies to. The counts follow the table.
    """
    metrics = result["metrics"]
    families = result["details"]["by_task_family"]
    names = [n for n in (*METRIC_NAMES, *CANDIDATE_METRIC_NAMES) if n in metrics]
    columns = ["all", *[f for f in families if families[f]["count"] or f in TASK_FAMILIES]]
    header_counts = [str(result["details"]["counts"]["total"]), *[str(families[f]["count"]) for f in columns[1:]]]
    body = [
        [name, _cell(metrics[name]), *[_cell(families[f]["metrics"].get(name)) for f in columns[1:]]]
        for name in names
    ]
    table = [["metric", *columns], ["questions", *header_counts], *body]
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    lines = []
    for index, row in enumerate(table):
        cells = [row[0].ljust(widths[0]), *[cell.rjust(width) for cell, width in zip(row[1:], widths[1:])]]
        lines.append("  ".join(cells).rstrip())
        if index == 1:
            lines.append("  ".join("-" * width for width in widths))
    counts = result["details"]["counts"]
    missing, extra = counts["missing_predictions"], counts["extra_predictions"]
    lines.append("")
    lines.append(
        f"missing predictions: {counts['missing_prediction_count']}{f' ({some_ids(missing)})' if missing else ''}  "
        f"extra predictions: {counts['extra_prediction_count']}{f' ({some_ids(extra)})' if extra else ''}  "
        f"table cells correct: {counts['table_cell_correct']}/{counts['table_cell_total']}"
    )
    return "\n".join(lines)


_SHOWN_IDS = 5  # query ids a message lists before "... and N more"


def some_ids(ids: Sequence[str]) -> str:
    """The first few query ids of a list, and how many more there are."""
    shown = ", ".join(ids[:_SHOWN_IDS])
    return shown + (f" and {len(ids) - _SHOWN_IDS} more" if len(ids) > _SHOWN_IDS else "")


def coverage_warnings(result: Mapping[str, Any], gold: str | Path, submission: str | Path,
                      candidates: str | Path | None = None) -> list[str]:
    """The query ids the files do not share, each kind as one message with its count and a few
    ids: gold questions without a submission line (each scores 0), submission lines outside the
    gold (not scored), gold questions without a candidate list (candidate recall 0)."""
    counts = result["details"]["counts"]
    missing, extra = counts["missing_predictions"], counts["extra_predictions"]
    out = []
    if missing:
        out.append(f"{len(missing)} of {counts['total']} gold questions have no line in {submission} "
                   f"({some_ids(missing)}): each scores 0")
    if extra:
        out.append(f"{len(extra)} query id(s) in {submission} are not in {gold} ({some_ids(extra)}): not scored")
    if counts.get("missing_candidates"):
        gone = counts["missing_candidates"]
        out.append(f"{len(gone)} of {counts['total']} gold questions have no line in {candidates} "
                   f"({some_ids(gone)}): candidate recall 0")
    return out
