"""Tables as text: a grid of cells rendered as a pipe table (header rows, a `|---|` line, body
rows; one row per line) and read back, so a cited row's cells, and the column a value sits in,
can be named (LitTraceQA table locators carry `row` and `column`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_SEPARATOR = re.compile(r"\|(?:-{3}\|)+")


def is_separator(line: str) -> bool:
    """The `|---|---|` line between a pipe table's header and its body."""
    return _SEPARATOR.fullmatch(line.strip()) is not None


def is_row(line: str) -> bool:
    line = line.strip()
    return (line.startswith("| ") and line.endswith(" |")) or line == "|  |"


def render_grid(rows: Sequence[Sequence[str]], header_rows: int) -> str:
    """The grid as a pipe table: header rows, a `|---|` line, body rows; one row per line."""
    if not rows:
        return ""
    width = max(len(r) for r in rows)

    def line(cells: Sequence[str]) -> str:
        padded = [*cells, *[""] * (width - len(cells))]
        return "| " + " | ".join(c.replace("|", "/") for c in padded) + " |"

    out = [line(r) for r in rows[:header_rows]]
    if header_rows:
        out.append("|" + "---|" * width)
    out += [line(r) for r in rows[header_rows:]]
    return "\n".join(out)


def parse_grid(text: str) -> tuple[list[list[str]], int]:
    """A rendered pipe table back to (rows, header rows): the inverse of render_grid, for
    addressing a cited row's cells."""
    rows: list[list[str]] = []
    heads = 0
    for ln in text.splitlines():
        if is_separator(ln):
            heads = len(rows)
            continue
        if is_row(ln):
            rows.append([c.strip() for c in ln[2:-2].split(" | ")])
    return rows, heads


def split_cells(line: str) -> list[str]:
    """The cells of one rendered row."""
    line = line.strip()
    return [c.strip() for c in line[2:-2].split(" | ")] if is_row(line) else []


def column_names(text: str) -> list[str]:
    """Each column's name: its header cells joined top to bottom ("CS prec."), else its index."""
    rows, heads = parse_grid(text)
    width = max((len(r) for r in rows), default=0)
    names = []
    for c in range(width):
        parts = [r[c] for r in rows[:heads] if c < len(r) and r[c]]
        names.append(" ".join(parts) or str(c))
    return names


def cell_locator(text: str, row_line: str, value: str) -> dict[str, str | int]:
    """Where `value` sits in the row `row_line` of the pipe table `text`: {"row": the row's
    label (its first cell, else its index), "column": the column's name}; only the row when
    the value is in no cell or in several."""
    rows, _ = parse_grid(text)
    cells = split_cells(row_line)
    if not cells:
        return {}
    index = next((i for i, r in enumerate(rows) if r == cells), None)
    label: str | int = cells[0] or (index if index is not None else "")
    out: dict[str, str | int] = {"row": label}
    norm = _norm(value)
    hits = [c for c, cell in enumerate(cells) if norm and norm in _norm(cell).split()] or [
        c for c, cell in enumerate(cells) if norm and norm in _norm(cell)
    ]
    if len(hits) == 1:
        names = column_names(text)
        out["column"] = names[hits[0]] if hits[0] < len(names) else hits[0]
    return out


def labelled_row(text: str, row_line: str) -> str:
    """A body row of the pipe table `text` as a reader can take it alone: its label (first cell),
    then each other cell after its column's name ("title | Prec.: 85.5 | Rec.: 85.4 | F1: 85.5").
    The row as it is when the table has fewer than 3 columns, no header, or the row another
    width: a two-column row ("Papers w/ DOIs | 52.2M") already says what its number is."""
    cells = split_cells(row_line)
    _, header, _ = table_parts(text)
    names = column_names(text)
    if not header or len(cells) < 3 or len(cells) != len(names):
        return row_line
    named = [f"{name}: {cell}" for name, cell in zip(names[1:], cells[1:], strict=True) if cell]
    return " | ".join([cells[0], *named]) if named else row_line


def _norm(text: str) -> str:
    return " ".join(text.replace(",", "").lower().split())


def table_parts(text: str) -> tuple[list[str], list[str], list[str]]:
    """(caption lines, header lines with the separator, body row lines) of a table chunk."""
    lines = text.split("\n")
    first = next((i for i, ln in enumerate(lines) if is_row(ln) or is_separator(ln)), len(lines))
    caption, grid = lines[:first], lines[first:]
    sep = next((i for i, ln in enumerate(grid) if is_separator(ln)), None)
    if sep is None:
        return caption, [], grid
    return caption, grid[: sep + 1], grid[sep + 1 :]
