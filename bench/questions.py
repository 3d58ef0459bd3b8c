"""What the question benchmarks (bench/factoid.py, bench/multi.py) share: the `--set KEY=VALUE`
run knobs, checked before any question is asked, and the loop that asks each question, writes
its row to `--out` as it comes and prints a line of it to stderr."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

Row = dict[str, Any]


def add_set_option(ap: argparse.ArgumentParser) -> None:
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a run knob over the preset (docs/settings.md), as `litloop eval --set`; repeatable",
    )


def run_knobs(ap: argparse.ArgumentParser, pairs: list[str]) -> dict[str, Any]:
    """The `--set` pairs as typed run knobs (`agent.context.check_values`); a malformed pair, an
    unknown knob or a bad value ends the command with the field and what is allowed."""
    bad = [kv for kv in pairs if "=" not in kv]
    if bad:
        ap.error(f"--set takes KEY=VALUE (a run knob of docs/settings.md), not {bad[0]!r}")
    from agent.context import ContextError, check_values

    try:  # a typo or a bad value fails here, before any question is asked
        return check_values(dict(kv.split("=", 1) for kv in pairs), "--set")
    except ContextError as exc:
        ap.error(str(exc))


def run_rows(
    items: Iterable[Mapping[str, Any]],
    ask: Callable[[Mapping[str, Any]], Row],
    out: Path | None,
    line: Callable[[Row], str],
) -> list[Row]:
    """Each item's row (`ask(item)`), written to `out` as one JSON line as soon as it exists (a
    run cut short keeps what it did) and summarised on stderr by `line(row)`."""
    rows: list[Row] = []
    sink = out.open("w", encoding="utf-8") if out else None
    try:
        for item in items:
            row = ask(item)
            rows.append(row)
            if sink:
                sink.write(json.dumps(row, ensure_ascii=False) + "\n")
                sink.flush()
            print(f"{line(row)}  {item['id']}", file=sys.stderr)
    finally:
        if sink:
            sink.close()
    return rows
