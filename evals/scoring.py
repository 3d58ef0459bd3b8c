"""Load, validate and score LitTraceQA files; the file-level face of ``evals.metrics``.

Records are validated by pydantic models (below) whose messages name the file, the line and
the field in litloop's one validation vocabulary (`tools.validation`), e.g. ``sub.jsonl line 3:
field 'evidence[1].locator.page': expected a page number (a whole number), got a string ('3')``;
files are read with ``tools.jsonl`` (whose errors name the line too). Only pydantic and the
standard library are imported: the CLI imports this module on every ``litloop score`` call.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainValidator,
    StrictStr,
    ValidationError,
    model_validator,
)

from evals.metrics import (
    CANDIDATE_METRIC_NAMES,
    METRIC_NAMES,
    TASK_FAMILIES,
    score_all,
)
from tools.jsonl import iter_jsonl
from tools.validation import field_messages, found

Record = Mapping[str, Any]

SOURCE_TYPES: tuple[str, ...] = ("table", "figure", "text_span", "equation_algorithm", "citation_context")
ANSWER_TYPES: tuple[str, ...] = ("freeform", "multiple_choice", "table")
# The locator keys submission.schema.json allows; the rest are only accepted when not strict.
SUBMISSION_LOCATOR_KEYS: tuple[str, ...] = (
    "page",
    "table_id",
    "figure_id",
    "section",
    "equation_id",
    "algorithm_id",
    "citation_id",
)
_MC_LABEL = re.compile(r"^[A-Z]?$")
_MAX_REPORTED_ERRORS = 20


# --------------------------------------------------------------------------- loading


def load_numbered(path: str | Path) -> tuple[list[dict[str, Any]], list[int]]:
    """The records of a JSONL file and their line numbers (for messages that name the line)."""
    numbered = list(iter_jsonl(path))
    return [record for _, record in numbered], [number for number, _ in numbered]


# --------------------------------------------------------------------------- record models
#
# Pydantic models of the three record kinds, whose errors read as every validation message of
# litloop does (`tools.validation`): "field 'evidence[1].locator.page': expected ..., got ...".
# A model only checks; the scorer reads the records as they are (so scores never depend on
# validation). Not strict (the default) refuses unknown keys at the top level and among the
# answer types (they can only be typos that silently lose points) and accepts extra keys in
# papers, evidence items, locators and answer parts, and numeric locator ids, because the
# official evaluator scored `perturbed_submission_a.jsonl`, which has all of these (gold-style
# locators, `citation_id: 24`, `section: 5.6`, tables that echo their `schema`). Strict is the
# letter of `submission.schema.json`.


def _nonempty(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {found(value)}")
    if not value:
        raise ValueError("is empty; give a non-empty string")
    return value


def _page(value: Any) -> int:
    if not _is_int(value):
        raise ValueError(f"expected a page number (a whole number), got {found(value)}")
    if value < 1:
        raise ValueError(f"expected a page number of at least 1, got {found(value)}")
    return value


def _string_id(value: Any) -> Any:
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {found(value)}")
    return value


def _loose_id(value: Any) -> Any:
    # not strict: ids may be numbers, as in the gold itself (citation_id 24, section 5.6)
    if not (isinstance(value, str) or (isinstance(value, (int, float)) and not isinstance(value, bool))):
        raise ValueError(f"expected a string or a number, got {found(value)}")
    return value


def _mc_label(value: Any) -> str:
    if not isinstance(value, str) or not _MC_LABEL.match(value):
        raise ValueError(f'expected one capital letter A-Z or "", got {found(value)}')
    return value


def _rank(value: Any) -> int:
    if not _is_int(value) or value < 1:
        raise ValueError(f"expected a rank (a whole number of at least 1), got {found(value)}")
    return value


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


NonEmpty = Annotated[str, PlainValidator(_nonempty)]
Page = Annotated[int, PlainValidator(_page)]
StringId = Annotated[Any, PlainValidator(_string_id)]
LooseId = Annotated[Any, PlainValidator(_loose_id)]
McLabel = Annotated[str, PlainValidator(_mc_label)]
Rank = Annotated[int, PlainValidator(_rank)]
SourceType = Literal["table", "figure", "text_span", "equation_algorithm", "citation_context"]
# Absent is allowed and null is not: such a field defaults to None without being validated.
_ABSENT: Any = None


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class _Paper(_Open):
    paper_id: NonEmpty


class _Locator(_Open):
    page: Page = _ABSENT
    table_id: LooseId = _ABSENT
    figure_id: LooseId = _ABSENT
    section: LooseId = _ABSENT
    equation_id: LooseId = _ABSENT
    algorithm_id: LooseId = _ABSENT
    citation_id: LooseId = _ABSENT


class _Evidence(_Open):
    paper_id: NonEmpty
    source_type: SourceType
    locator: _Locator


class _Freeform(_Open):
    text: StrictStr


class _MultipleChoice(_Open):
    gold: McLabel


class _Table(_Open):
    rows: list[dict[str, Any]]


class _Answer(_Closed):
    freeform: _Freeform = _ABSENT
    multiple_choice: _MultipleChoice = _ABSENT
    table: _Table = _ABSENT


class _Submission(_Closed):
    query_id: NonEmpty
    gold_papers: tuple[_Paper, ...]  # tuples, so the strict records may narrow them
    evidence: tuple[_Evidence, ...] = ()
    answer: _Answer


# Strict: the same records closed at every level, locator ids strings only.
_CLOSED = ConfigDict(extra="forbid", frozen=True)


class _StrictPaper(_Paper):
    model_config = _CLOSED


class _StrictLocator(_Locator):
    model_config = _CLOSED
    table_id: StringId = _ABSENT
    figure_id: StringId = _ABSENT
    section: StringId = _ABSENT
    equation_id: StringId = _ABSENT
    algorithm_id: StringId = _ABSENT
    citation_id: StringId = _ABSENT


class _StrictEvidence(_Evidence):
    model_config = _CLOSED
    locator: _StrictLocator


class _StrictFreeform(_Freeform):
    model_config = _CLOSED


class _StrictMultipleChoice(_MultipleChoice):
    model_config = _CLOSED


class _StrictTable(_Table):
    model_config = _CLOSED


class _StrictAnswer(_Answer):
    freeform: _StrictFreeform = _ABSENT
    multiple_choice: _StrictMultipleChoice = _ABSENT
    table: _StrictTable = _ABSENT


class _StrictSubmission(_Submission):
    gold_papers: tuple[_StrictPaper, ...]
    evidence: tuple[_StrictEvidence, ...] = ()
    answer: _StrictAnswer


class _GoldColumn(_Open):
    name: Any
    type: Any
    is_row_key: Any


class _GoldTable(_Open):
    columns: Annotated[list[_GoldColumn], BeforeValidator(lambda v: v or [])] = Field(alias="schema")
    rows: Any


class _GoldAnswer(_Open):
    table: _GoldTable = _ABSENT


class _Gold(_Open):
    """The gold fields the scorer relies on (the gold is trusted data; this catches wrong files)."""

    query_id: NonEmpty
    task_family: Any
    gold_papers: list[_Paper]
    evidence: list[_Evidence]
    answer: _GoldAnswer


class _CandidatePaper(_Open):
    paper_id: NonEmpty
    rank: Rank = _ABSENT


class _Candidates(_Open):
    query_id: NonEmpty
    candidate_papers: list[_CandidatePaper]

    @model_validator(mode="after")
    def _ranks(self) -> _Candidates:
        problems: list[str] = []
        first: dict[int, int] = {}
        for i, paper in enumerate(self.candidate_papers):
            if paper.rank is None:
                continue
            if paper.rank in first:
                problems.append(
                    f"field 'candidate_papers[{i}].rank' repeats rank {paper.rank} of "
                    f"candidate_papers[{first[paper.rank]}]"
                )
            else:
                first[paper.rank] = i
        ranked = sum(p.rank is not None for p in self.candidate_papers)
        if 0 < ranked < len(self.candidate_papers):
            problems.append("field 'candidate_papers' must give a rank for every paper or for none")
        if problems:
            raise ValueError("; ".join(problems))
        return self


def _fields_at(model: type[BaseModel], loc: Sequence[Any]) -> list[str]:
    """The field names (aliases) of the model found at `loc` inside `model`."""
    for part in loc:
        if isinstance(part, int):
            continue
        info = next((f for n, f in model.model_fields.items() if (f.alias or n) == part), None)
        inner = _model_in(info.annotation) if info is not None else None
        if inner is None:
            return []
        model = inner
    return [f.alias or n for n, f in model.model_fields.items()]


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        if (found_model := _model_in(arg)) is not None:
            return found_model
    return None


def _problems(model: type[BaseModel], record: Any) -> list[str]:
    try:
        model.model_validate(record)
    except ValidationError as exc:
        phrases = field_messages(exc)
        for n, err in enumerate(exc.errors(include_url=False)):
            if err["type"] == "extra_forbidden":  # what to do: the keys that are allowed there
                phrases[n] += f" (allowed: {', '.join(_fields_at(model, err['loc'][:-1]))})"
        return phrases
    return []


def submission_record_errors(record: Any, *, strict: bool = False) -> list[str]:
    """Schema problems of one submission record, as ``field '...': ...`` phrases (see above
    for what strict changes)."""
    return _problems(_StrictSubmission if strict else _Submission, record)


def candidate_record_errors(record: Any) -> list[str]:
    """Problems of one candidate-list record (query_id + ranked candidate_papers)."""
    return _problems(_Candidates, record)


def gold_record_errors(record: Any) -> list[str]:
    """The gold fields the scorer relies on (the gold is trusted data; this catches wrong files)."""
    return _problems(_Gold, record)


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


def load_predictions(
    submission_path: str | Path, candidates_path: str | Path | None = None, *, strict: bool = False
) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
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
        [name, _cell(metrics[name]), *[_cell(families[f]["metrics"].get(name)) for f in columns[1:]]] for name in names
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


def coverage_warnings(
    result: Mapping[str, Any], gold: str | Path, submission: str | Path, candidates: str | Path | None = None
) -> list[str]:
    """The query ids the files do not share, each kind as one message with its count and a few
    ids: gold questions without a submission line (each scores 0), submission lines outside the
    gold (not scored), gold questions without a candidate list (candidate recall 0)."""
    counts = result["details"]["counts"]
    missing, extra = counts["missing_predictions"], counts["extra_predictions"]
    out = []
    if missing:
        out.append(
            f"{len(missing)} of {counts['total']} gold questions have no line in {submission} "
            f"({some_ids(missing)}): each scores 0"
        )
    if extra:
        out.append(f"{len(extra)} query id(s) in {submission} are not in {gold} ({some_ids(extra)}): not scored")
    if counts.get("missing_candidates"):
        gone = counts["missing_candidates"]
        out.append(
            f"{len(gone)} of {counts['total']} gold questions have no line in {candidates} "
            f"({some_ids(gone)}): candidate recall 0"
        )
    return out
