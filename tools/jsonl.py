"""JSON Lines: the one reader and the one writer every JSONL file of litloop goes through.

Reading numbers the lines as the file has them (blank lines are skipped but counted), so every
problem names the file and the line. Each line is decoded on its own: a byte that is not UTF-8
or a value nested too deeply for the parser costs that line only (a problem of the line, never
an exception from the middle of the file), and a UTF-8 BOM at the start of a line is dropped.

- `read_lines(path)`: every non-blank line with its number, its text and its parsed value, or
  the decoder's error for a line that is not JSON. Readers of user input with their own wording
  (the ingesters, `tools.ingest`) build their messages from it;
- `iter_jsonl(path)` / `load_jsonl(path)`: the records (JSON objects) of a file. A line that is
  not one raises `JsonlError` (`x.jsonl line 3: invalid JSON (...)`); with `skip_bad=True`, for
  the files litloop appends to itself (ledgers, traces), where a crash can cut the last line
  short, it is logged and skipped instead.

Writing: `append_line` writes one record and flushes, so a crash loses at most the line being
written; `write_jsonl` writes a whole file. Only the standard library is imported.
"""

from __future__ import annotations

import codecs
import json
import logging
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

log = logging.getLogger(__name__)


class JsonlError(ValueError):
    """A line of a JSONL file that is not a record; the message names the file and the line."""

    def __init__(self, path: str | Path, line: int, reason: str) -> None:
        super().__init__(f"{path} line {line}: {reason}")
        self.path, self.line, self.reason = str(path), line, reason


@dataclass(frozen=True)
class Line:
    """One non-blank line: its number in the file, its text, and its value or why it has none
    (`error`, the decoder's; `reason`, a line that is not UTF-8 or is nested too deeply)."""

    number: int
    text: str
    value: Any = None
    error: json.JSONDecodeError | None = None
    reason: str | None = None

    def problem(self) -> str | None:
        """Why this line is not a record (a JSON object), or None when it is one."""
        if self.reason is not None:
            return self.reason
        if self.error is not None:
            return f"invalid JSON ({self.error.msg} at column {self.error.colno})"
        if not isinstance(self.value, dict):
            return f"expected a JSON object, got {json_type(self.value)}"
        return None


def json_type(value: Any) -> str:
    """A JSON value's type as a message says it ("an array", "a string", "null")."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def read_lines(path: str | Path) -> Iterator[Line]:
    """Every non-blank line of `path`, parsed; FileNotFoundError when the file is absent.

    Lines end at newlines only (the file's own line ends), never at the Unicode line separators
    that JSON strings may hold unescaped, as `str.splitlines` would split them.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            raw = raw.rstrip(b"\r\n")
            if raw.startswith(codecs.BOM_UTF8):
                raw = raw[len(codecs.BOM_UTF8) :]
            if not raw.strip():
                continue
            yield parse_line(number, raw)


def parse_line(number: int, raw: bytes) -> Line:
    """One line's bytes decoded and parsed; what went wrong is the line's `problem()`."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Line(
            number,
            raw.decode("utf-8", "replace"),
            reason=f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at byte {exc.start + 1} of the line); "
            "re-save the file as UTF-8",
        )
    try:
        return Line(number, text, json.loads(text))
    except json.JSONDecodeError as error:
        return Line(number, text, error=error)
    except RecursionError:  # the C parser recurses once per level: '[' * 100_000 ends here
        return Line(
            number,
            text,
            reason=f"invalid JSON (nested more than about {sys.getrecursionlimit()} levels "
            "deep, more than the parser allows)",
        )
    except ValueError as exc:  # an integer of more digits than Python converts (about 4,300)
        return Line(number, text, reason=f"a value the JSON parser refuses ({exc})")


def iter_jsonl(path: str | Path, *, skip_bad: bool = False) -> Iterator[tuple[int, dict[str, Any]]]:
    """`(line number, record)` for each JSON object of the file.

    A line that is not one raises `JsonlError`, or with `skip_bad` is logged and skipped.
    """
    for line in read_lines(path):
        problem = line.problem()
        if problem is None:
            yield line.number, line.value
        elif skip_bad:
            log.warning("%s line %d: skipped, %s (a line cut short by a crash?)", path, line.number, problem)
        else:
            raise JsonlError(path, line.number, problem)


def load_jsonl(path: str | Path, *, skip_bad: bool = False) -> list[dict[str, Any]]:
    """The records of a JSONL file as a list (see `iter_jsonl` for the errors)."""
    return [record for _, record in iter_jsonl(path, skip_bad=skip_bad)]


def to_line(record: Mapping[str, Any]) -> str:
    """One record as a JSONL line (no newline): UTF-8 as is, anything else JSON lacks as str."""
    return json.dumps(record, ensure_ascii=False, default=str)


def append_line(handle: IO[str], record: Mapping[str, Any]) -> None:
    """Write one record and flush it: a crash then loses at most the line being written."""
    handle.write(to_line(record) + "\n")
    handle.flush()


def write_jsonl(path: str | Path, records: Iterable[Mapping[str, Any]]) -> None:
    """Write a whole JSONL file, one record a line."""
    with Path(path).open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(to_line(record) + "\n")
