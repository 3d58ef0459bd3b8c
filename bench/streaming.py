"""How soon a chat shows the answer's words: the run streamed as the chats run it (the context's
`stream_drafts`), timing the first words of the draft, the checked answer and the run.

    python -m bench.streaming [--data FILE] [--limit N] [--preset P] [--index DIR] [--set KEY=VALUE]

Each question (the `question` field of a JSONL file; default the demo factoid set) goes through
`agent.api.ask` with `on_event`; a row records
- `first_words_s`: seconds from the question to the first draft event with words in it (None
  when the answer needed no model call, or the endpoint cannot stream);
- `answer_s`: seconds to the synthesis step's answer event (the checked answer);
- `seconds`: the whole run; `drafts`: draft events; `kept`: whether the checked answer's text
  begins with the draft's first claim (the words a reader saw first stayed).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from bench.questions import add_set_option, run_knobs

DATA = Path(__file__).resolve().parent / "data" / "factoid_demo.jsonl"


def timed_run(question: str, **run: Any) -> dict[str, Any]:
    """One question asked with drafts on; when its words, its answer and its end came."""
    from agent.api import ask

    started = time.perf_counter()
    marks: dict[str, Any] = {"first_words_s": None, "answer_s": None, "drafts": 0}

    def on_event(ev: dict[str, Any]) -> None:
        now = time.perf_counter() - started
        if ev.get("node") == "draft" and ev.get("text"):
            marks["drafts"] += 1
            if marks["first_words_s"] is None:
                marks["first_words_s"] = now
            marks["last_draft"] = ev["text"]
        elif ev.get("node") == "synthesize" and marks["answer_s"] is None:
            marks["answer_s"] = now

    result = ask(question, on_event=on_event, stream_drafts=True, **run)
    text = str((result.get("answer") or {}).get("text") or "")
    last = str(marks.pop("last_draft", "") or "")
    first_claim = last.split(". ")[0].strip()
    return {
        **marks,
        "seconds": time.perf_counter() - started,
        "kept": bool(first_claim) and text.startswith(first_claim[:40]),
        "answer": text[:200],
    }


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    streamed = [r for r in rows if r["first_words_s"] is not None]

    def median(key: str, of: list[dict[str, Any]]) -> float | None:
        values = [r[key] for r in of if r[key] is not None]
        return round(statistics.median(values), 1) if values else None

    return {
        "questions": len(rows),
        "streamed": len(streamed),
        "first_words_s": median("first_words_s", streamed),
        "answer_s": median("answer_s", rows),
        "seconds": median("seconds", rows),
        "words_before_answer_s": round(
            statistics.median(r["answer_s"] - r["first_words_s"] for r in streamed if r["answer_s"] is not None), 1
        )
        if streamed
        else None,
        "kept": sum(r["kept"] for r in streamed),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--limit", type=int, default=6)
    parser.add_argument("--preset", default=None)
    parser.add_argument("--index", default=None)
    parser.add_argument("--out", type=Path, default=None)
    add_set_option(parser)
    args = parser.parse_args(argv)
    questions = [json.loads(line) for line in args.data.read_text().splitlines() if line.strip()][: args.limit]
    run: dict[str, Any] = {**run_knobs(parser, args.set), "preset": args.preset, "index": args.index}
    rows = []
    for q in questions:
        row = {"id": q.get("id"), **timed_run(q["question"], **run)}
        rows.append(row)
        print(json.dumps(row, ensure_ascii=False), flush=True)
    out = summary(rows)
    print(json.dumps(out))
    if args.out:
        args.out.write_text(json.dumps({"summary": out, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
