"""The resumable ledger of a run over many questions, kept by `litloop run` and `litloop eval`.

A ledger is an append-only JSONL file of records keyed by `query_id`, written and flushed one
line at a time (`tools.jsonl.append_line`), so a run that stops (a crash, Ctrl-C, a lost
machine) is resumed by running the same command again:

- **Torn lines**: reading the ledger back drops a line that a crash cut short (not JSON, or
  without a string `query_id`) and rewrites the file without it; that question runs again.
- **Failure rule**: a question is done only when its latest record is a success. A question
  that raised is recorded with its error (a record with `error`, or `ok: false`) and is *not*
  done: the next run retries it, and a success then supersedes the failure. A failure is never
  counted as done, and never lost: until the retry, its record says what went wrong.

Where the records live:

- `litloop run --out OUT`: the ledger is `OUT.runs.jsonl`, one record per attempt (ok or error,
  usage, seconds, trace id). `OUT`, the submission, keeps one line per question in input order;
  a failed question's line is an empty (valid) submission record, replaced when its retry
  succeeds.
- `litloop eval --out DIR`: the ledger is `DIR/submission.jsonl`, which must stay a valid
  submission, so it holds successes only and a failure is recorded in `DIR/failures.jsonl`
  instead; the question is not in the ledger, so it is not done, and the next run retries it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from tools.jsonl import read_lines, to_line

log = logging.getLogger(__name__)


def is_failure(record: Mapping[str, Any]) -> bool:
    """Whether a ledger record says its question failed (the failure rule above)."""
    return bool(record.get("error")) or record.get("ok") is False


class Ledger:
    """One ledger file (see the module docstring); nothing is read until asked."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def records(self) -> list[dict[str, Any]]:
        """Every record in file order; torn lines are dropped and the file rewritten without
        them (a file whose lines all parse is left untouched)."""
        if not self.path.exists():
            return []
        kept, torn = [], False
        for line in read_lines(self.path):
            if line.problem() is None and isinstance(line.value.get("query_id"), str):
                kept.append(line)
            else:
                torn = True
                log.warning(
                    "%s line %d: dropping a line cut short by a crash; its question runs again", self.path, line.number
                )
        if torn:
            self._rewrite(line.text for line in kept)
        return [line.value for line in kept]

    def ids(self) -> set[str]:
        """Query ids with any record, success or failure."""
        return {r["query_id"] for r in self.records()}

    def latest(self) -> dict[str, dict[str, Any]]:
        """The latest record of each query id."""
        return {r["query_id"]: r for r in self.records()}

    def done(self) -> set[str]:
        """Query ids whose latest record is a success: what a resumed run skips."""
        return {qid for qid, r in self.latest().items() if not is_failure(r)}

    def open(self) -> IO[str]:
        """The file for appending (`tools.jsonl.append_line` writes and flushes one record)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return self.path.open("a", encoding="utf-8")

    def keep_only(self, ids: set[str]) -> None:
        """Keep the first record of each query id in `ids`; drop the rest (lines written for a
        question that is to run again)."""
        records = self.records()
        kept, seen = [], set()
        for r in records:
            if r["query_id"] in ids and r["query_id"] not in seen:
                seen.add(r["query_id"])
                kept.append(r)
        if len(kept) != len(records):
            self._rewrite(to_line(r) for r in kept)

    def sort(self, order: Sequence[str]) -> None:
        """Put the records in the order of `order` (query ids); ids it lacks keep their place
        after them. Untouched when already in that order."""
        records = self.records()
        rank = {qid: i for i, qid in enumerate(order)}
        ordered = sorted(records, key=lambda r: rank.get(r["query_id"], len(rank)))
        if ordered != records:
            self._rewrite(to_line(r) for r in ordered)

    def _rewrite(self, lines: Iterable[str]) -> None:
        """Replace the file in one step, so a crash while rewriting leaves the old one."""
        tmp = self.path.with_name(f"{self.path.name}.tmp-{os.getpid()}")
        tmp.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        os.replace(tmp, self.path)
