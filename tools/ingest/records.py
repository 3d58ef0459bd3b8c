"""The one validation layer every reader goes through: raw input becomes typed records, or a
message naming the file, the line and the field.

Readers (jsonl.py, s2orc.py, the PDF sidecar in loader.py) guard no field themselves. A JSON
value is validated here into a frozen pydantic model; a value of the wrong type refuses the
record with one `IngestError` such as

    papers.jsonl:7: paper 'p7': field 'pdf_parse.body_text[3].eq_spans[0].end': expected a
    character offset (a whole number), got a string ('x'); fix or remove the field

and the reader goes on with the next record. Missing and null fields take their defaults; only
values that are present and of the wrong kind are refused: a record is indexed as given or not at
all, never with a field silently dropped. The one exception is a bibliography entry's year, read
best-effort ("in press" -> unknown), since GROBID's reference parses are noisy and one odd year
must not cost a paper.

The phrases themselves ("field '...': expected ..., got ...") come from `tools.validation`,
which the LitTraceQA scorer, the per-run context and the model's replies share.

Also here, because every reader needs it: `read_json_lines`, JSONL decoded line by line, so a bad
byte costs its line only; a UTF-8 BOM is accepted, and an empty file is reported. The Document
every reader returns is made in `tools.ingest.documents`.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainValidator,
    ValidationError,
    model_validator,
)

from tools.base import IngestError
from tools.jsonl import read_lines
from tools.validation import field_messages, found, joined

log = logging.getLogger(__name__)

# A record's message lists this many field problems, then counts the rest.
MAX_FIELD_MESSAGES = 3
# Years outside this range are typing slips (2109, 209), not papers.
YEAR_RANGE = (1000, 2100)
# Part of the message of a record that failed for a reason no validator names: a reader bug,
# which the fuzz tier checks never happens.
READER_BUG = "this is a bug in litloop's reader"

M = TypeVar("M", bound=BaseModel)


# --- leaf types -----------------------------------------------------------------------------


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    raise ValueError(f"expected a string, got {found(value)}")


def _label(value: Any) -> str:
    """A section number, equation number or object number: '3.1', 2 -> '2'."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return str(int(value)) if float(value).is_integer() else str(value)
    return _text(value)


def _id(value: Any) -> str:
    """A paper id: a non-empty string, or a whole number as many corpora give them."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise ValueError(f"expected a paper id (a string), got {found(value)}")
    if not value.strip():
        raise ValueError("is empty; give every paper a unique id (any string)")
    return value.strip()


def _optional_id(value: Any) -> str | None:
    return None if value in (None, "") else _id(value)


def _ref_id(value: Any) -> str | None:
    """A span's or a bibliography entry's link to an id ('FIGREF0', '25540194'); null when none."""
    if value is None or value == "":
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str):
        return value
    raise ValueError(f"expected an id (a string), got {found(value)}")


def _whole(value: Any) -> int | None:
    """A whole number, or None; 12.0 counts, 12.5, inf and '12' do not."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return None


def _offset(value: Any) -> int | None:
    if value is None:
        return None
    n = _whole(value)
    if n is None:
        raise ValueError(f"expected a character offset (a whole number), got {found(value)}")
    return n


def _year(value: Any) -> int | None:
    """2019, 2019.0, '2019', '2011-11' -> the year; null or '' -> unknown; anything else refused."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    year = _whole(value)
    if year is None and isinstance(value, str):
        m = re.match(r"\s*(\d{4})(?!\d)", value)
        year = int(m.group(1)) if m else None
    if year is None:
        raise ValueError(f"expected a year such as 2019, got {found(value)}")
    if not YEAR_RANGE[0] <= year <= YEAR_RANGE[1]:
        raise ValueError(f"expected a year between {YEAR_RANGE[0]} and {YEAR_RANGE[1]}, got {found(value)}")
    return year


def _loose_year(value: Any) -> int | None:
    """A bibliography entry's year, best effort: whatever is not a year is unknown."""
    try:
        return _year(value)
    except ValueError:
        return None


def _names(value: Any) -> tuple[str, ...]:
    """Authors: a list of names or of {first, middle, last, suffix} / {name} objects, or one
    string of names separated by ';' (or else by ',' and 'and')."""
    if value is None:
        return ()
    if isinstance(value, str):
        sep = r"\s*;\s*" if ";" in value else r"\s*,\s*|\s+and\s+"
        return tuple(n for n in (" ".join(p.split()) for p in re.split(sep, value)) if n)
    if not isinstance(value, list):
        raise ValueError(f"expected a list of author names or one string of names, got {found(value)}")
    names = []
    for n, author in enumerate(value, start=1):
        if isinstance(author, dict):
            try:
                name = AuthorRecord.model_validate(author).full_name
            except ValidationError as exc:
                raise ValueError(f"item {n}: {_field_messages(exc)[0]}") from None
        elif isinstance(author, str):
            name = " ".join(author.split())
        else:
            raise ValueError(f"item {n} is {found(author)}, expected a name or an author object")
        if name:
            names.append(name)
    return tuple(names)


def _none_is_empty(empty: Callable[[], Any]) -> BeforeValidator:
    return BeforeValidator(lambda v: empty() if v is None else v)


Text = Annotated[str, PlainValidator(_text)]
Label = Annotated[str, PlainValidator(_label)]
Id = Annotated[str, PlainValidator(_id)]
OptionalId = Annotated[str | None, PlainValidator(_optional_id)]
RefId = Annotated[str | None, PlainValidator(_ref_id)]
Offset = Annotated[int | None, PlainValidator(_offset)]
Year = Annotated[int | None, PlainValidator(_year)]
LooseYear = Annotated[int | None, PlainValidator(_loose_year)]
Names = Annotated[tuple[str, ...], PlainValidator(_names)]


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class AuthorRecord(_Record):
    first: Text = ""
    middle: Annotated[
        tuple[Text, ...], BeforeValidator(lambda v: [v] if isinstance(v, str) else v), _none_is_empty(tuple)
    ] = ()
    last: Text = ""
    suffix: Text = ""
    name: Text = ""

    @property
    def full_name(self) -> str:
        parts = (self.first, *self.middle, self.last, self.suffix)
        return " ".join(" ".join(p.split()) for p in parts if p.strip()) or " ".join(self.name.split())


# --- the normalised JSONL paper record (tools/ingest/jsonl.py) -------------------------------


class PaperRecord(_Record):
    paper_id: OptionalId = None  # required: `paper_id` says so with one message for every reader
    title: Text = ""
    abstract: Text = ""
    authors: Names = ()
    venue: Text = ""
    year: Year = None
    references: Annotated[tuple[Id, ...], _none_is_empty(tuple)] = ()
    field: Text = ""


# --- S2ORC / GROBID JSON (tools/ingest/s2orc.py) ---------------------------------------------


class Span(_Record):
    """A cite, reference or equation span of a paragraph."""

    start: Offset = None
    end: Offset = None
    text: Text = ""
    ref_id: RefId = None
    raw_str: Text = ""
    latex: Text = ""
    eq_num: Label = ""


Spans = Annotated[tuple[Span, ...], _none_is_empty(tuple)]


class Paragraph(_Record):
    text: Text = ""
    section: Text = ""
    sec_num: Label = ""
    cite_spans: Spans = ()
    ref_spans: Spans = ()
    eq_spans: Spans = ()


Paragraphs = Annotated[tuple[Paragraph, ...], _none_is_empty(tuple)]


class RefEntry(_Record):
    """A figure or table of `ref_entries`."""

    text: Text = ""
    type_str: Text = ""
    type: Text = ""
    num: Label = ""
    content: Text = ""
    latex: Text = ""


class BibRecord(_Record):
    title: Text = ""
    year: LooseYear = None
    raw_text: Text = ""
    authors: Names = ()
    venue: Text = ""
    link: RefId = None
    links: RefId = None


class Parse(_Record):
    """One full-text parse (`pdf_parse`, `grobid_parse`, `latex_parse`, or a bare top level)."""

    paper_id: OptionalId = None
    abstract: Paragraphs = ()
    body_text: Paragraphs = ()
    back_matter: Paragraphs = ()
    bib_entries: Annotated[dict[str, BibRecord], _none_is_empty(dict)] = Field(default_factory=dict)
    ref_entries: Annotated[dict[str, RefEntry], _none_is_empty(dict)] = Field(default_factory=dict)


class S2orcMetadata(_Record):
    title: Text = ""
    abstract: Text = ""
    authors: Names = ()
    year: Year = None
    venue: Text = ""
    journal: Text = ""


# The top-level keys of a bare parse; the field that holds them has no name of its own in messages.
_BARE = "bare_parse"
_BARE_KEYS = tuple(k for k in Parse.model_fields if k not in ("paper_id", "abstract"))


def _abstract_text(value: Any) -> str:
    if value is None or isinstance(value, str):
        return value or ""
    raise ValueError(f"expected a string or an array of paragraph objects, got {found(value)}")


class S2orcRecord(_Record):
    """Any S2ORC shape: the 2020 release, doc2json's metadata + parse, or a bare parse."""

    paper_id: OptionalId = None
    title: Text = ""
    abstract: Annotated[str, PlainValidator(_abstract_text)] = ""
    authors: Names = ()
    year: Year = None
    venue: Text = ""
    metadata: S2orcMetadata | None = None
    latex_parse: Parse | None = None
    grobid_parse: Parse | None = None
    pdf_parse: Parse | None = None
    bare_parse: Parse = Field(default_factory=Parse)

    @model_validator(mode="before")
    @classmethod
    def _split_bare_parse(cls, data: Any) -> Any:
        """The top level's parse fields, read as a Parse; a paragraph-list abstract goes there."""
        if not isinstance(data, dict):
            return data
        bare = {k: data[k] for k in _BARE_KEYS if k in data}
        rest = dict(data)
        if isinstance(data.get("abstract"), list):
            bare["abstract"] = rest.pop("abstract")
        rest[_BARE] = bare
        return rest


# The paper's parse keys in the order they are preferred: LaTeX parses are the more exact (S2ORC
# paper section 2.2), GROBID's the more common.
PARSE_KEYS = ("latex_parse", "grobid_parse", "pdf_parse")


# --- the PDF sidecar (<name>.meta.json) -------------------------------------------------------


class PdfMetadata(_Record):
    paper_id: OptionalId = None
    title: Text = ""
    abstract: Text = ""
    authors: Names = ()
    venue: Text = ""
    year: Year = None

    def as_metadata(self) -> dict[str, Any]:
        """The fields given, as `parse_pdf(metadata=...)` takes them."""
        return {k: v for k, v in self.model_dump().items() if v not in (None, "", ())}


# --- validation and its messages --------------------------------------------------------------


def validate(model: type[M], value: Any, path: Path | str, line: int | None) -> M:
    """`value` as a `model`, or an IngestError listing the fields to fix (and the paper, when
    its id is readable)."""
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        text = joined(_field_messages(exc), MAX_FIELD_MESSAGES)
        try:
            pid = _id(value.get("paper_id")) if isinstance(value, dict) else None
        except ValueError:
            pid = None
        paper = f"paper {pid[:80]!r}: " if pid else ""
        advice = "fix or remove the field" if text.startswith("field") else "each record must be one JSON object"
        raise IngestError(str(path), f"{paper}{text}; {advice}", line) from None


def _field_messages(exc: ValidationError) -> list[str]:
    return field_messages(exc, skip=(_BARE,))


# --- reading JSONL bytes line by line ---------------------------------------------------------


def read_json_lines(path: Path) -> Iterator[tuple[int, Any] | IngestError]:
    """(line number, value) for every non-blank line, or an IngestError for a line that cannot be
    read; an IngestError for a file without records.

    The lines come from the one JSONL reader, `tools.jsonl.read_lines`: each is decoded on its
    own, so one bad byte costs its line; lines end at b'\\n' only, and a BOM at the start of a
    line is dropped. Here a bad line gets the ingesters' wording (what to fix, that it is skipped).
    """
    empty = True
    for line in read_lines(path):
        empty = False
        if line.error is None and line.reason is None:  # any JSON value: the reader validates it
            yield line.number, line.value
        elif line.reason and line.reason.startswith("not UTF-8"):
            yield IngestError(str(path), f"{line.reason}; this line is skipped", line.number)
        else:
            yield _unreadable(path, line.number, line.text)
    if empty:
        yield IngestError(str(path), "the file is empty (no records); fill it or leave it out")


def _unreadable(path: Path, number: int, text: str) -> IngestError:
    """The ingesters' message for a line the JSONL reader could not parse."""
    try:
        parse_json(text)
    except Unreadable as exc:
        return IngestError(str(path), f"{exc.reason}; fix or remove the line", number)
    return IngestError(str(path), "the line is not a JSON value; fix or remove the line", number)


def undecodable(byte: int, offset: int) -> str:
    """Why a line is not text: its first bad `byte`, `offset` bytes into the line."""
    return f"not UTF-8 text (byte 0x{byte:02x} at byte {offset + 1} of the line); re-save the file as UTF-8"


class Unreadable(ValueError):
    """Text that json.loads cannot turn into a value: the reason, and the line within the text."""

    def __init__(self, reason: str, line: int | None = None):
        super().__init__(reason)
        self.reason, self.line = reason, line


def parse_json(text: str) -> Any:
    """json.loads, with every way it fails (bad syntax, nesting past the recursion limit, a number
    too long to convert) as `Unreadable`."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise Unreadable(f"not valid JSON ({exc.msg} at column {exc.colno})", exc.lineno) from None
    except RecursionError:
        raise Unreadable("not valid JSON for litloop: arrays or objects nested too deeply to read") from None
    except ValueError as exc:  # e.g. an integer longer than Python converts (4,300 digits)
        raise Unreadable(f"not valid JSON for litloop ({exc})") from None
