"""Factoid questions over the demo corpus's four full-text papers: is the fact right, and is
the paper (and the page) that states it cited?

    python -m bench.factoid [--preset P] [--index DIR] [--limit N] [--out FILE] [--set KEY=VALUE]
    python -m bench.factoid --check [--index DIR]     # the data set against the index, no LLM

The questions are in bench/data/factoid_demo.jsonl: one line per question with `id`,
`question`, `answer_contains` (spellings of one fact: a number with its unit, or a name),
`paper_id`, `page` (1-based, as the index's chunk locators give it) and `evidence` (the
sentence, or table row, of the paper that states the fact, as the index's chunk text has it).

Each question goes through `agent.api.ask`; a row scores
- `correct`: one of `answer_contains` occurs in the answer text (both normalised: Unicode NFKC,
  case folded, whitespace collapsed, thousands separators dropped; a string that starts or ends
  with a digit must not be part of a longer number there, so "4.2" does not match "14.25");
- `paper_cited`: the gold paper is among the answer's citations;
- `page_cited`: a citation of the gold paper quotes a sentence on the gold page (the page of
  each quoted sentence; a chunk may run onto a second page), else has it in its locator;
- `miss`: for a wrong answer, where the fact was lost (`miss_stage`): not shown to the
  synthesis, shown but not cited, no claim written, a claim that cited it dropped (with the
  reason), or a kept claim without the fact; `evidence_shown`: the gold sentence was among the
  synthesis's sentences (rebuilt from the run's readings, `shown_sentences`).

Without --index the demo index is used (built on first use, as `litloop demo` does), whatever
LITLOOP_INDEX says. The scoring and the data set check are pure functions that import neither
torch nor Chroma.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.questions import add_set_option, run_knobs, run_rows
from evals.answers import percentile

DATA = Path(__file__).resolve().parent / "data" / "factoid_demo.jsonl"
FIELDS = ("id", "question", "answer_contains", "paper_id", "page", "evidence")

# a thousands separator: a comma or a (thin / no-break) space between a digit and a group of three
_THOUSANDS = re.compile(r"(?<=\d)[,\u00a0\u2009\u202f](?=\d{3}(?!\d))")
_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """Unicode NFKC, case folded, whitespace collapsed, thousands separators dropped."""
    text = _THOUSANDS.sub("", text or "")
    text = unicodedata.normalize("NFKC", text).casefold()
    return _SPACE.sub(" ", text).strip()


def _pattern(expected: str) -> re.Pattern[str]:
    body = re.escape(normalise(expected))
    if expected[:1].isdigit():
        body = r"(?<!\d)(?<!\d\.)" + body
    if expected[-1:].isdigit():
        body += r"(?!\.?\d)"
    return re.compile(body)


def matched_answer(text: str, answer_contains: Iterable[str]) -> str | None:
    """The first of `answer_contains` that occurs in `text` (normalised), else None."""
    norm = normalise(text)
    for expected in answer_contains:
        if expected.strip() and _pattern(expected.strip()).search(norm):
            return expected
    return None


def evidence_page(chunk: Any, evidence: str) -> int | None:
    """The page of a chunk that holds `evidence` on which the evidence starts (found
    whitespace-insensitively; else the chunk's page). A chunk that runs onto a second page says
    where that page begins."""
    words = evidence.split()
    m = re.search(r"\s+".join(re.escape(w) for w in words), chunk.text) if words else None
    return chunk.locator.page_of(m.start()) if m else chunk.locator.page


def _page(locator: Any) -> int | None:
    page = locator.get("page") if isinstance(locator, Mapping) else None
    try:
        return int(page) if page is not None else None
    except (TypeError, ValueError):
        return None


def _cited_pages(citation: Mapping[str, Any]) -> list[int]:
    """The pages a citation quotes from: its sentences' pages, else its locator's page."""
    pages = [int(x["page"]) for x in citation.get("sentences") or [] if isinstance(x, Mapping) and x.get("page")]
    if pages:
        return pages
    page = _page(citation.get("locator"))
    return [page] if page is not None else []


def score_answer(item: Mapping[str, Any], answer: Mapping[str, Any]) -> dict[str, Any]:
    """One question's scores: `answer` is the answer record (`ask(...)["answer"]`), with `text`
    and `citations` (each with `paper_id` and a `locator` dict holding `page`)."""
    citations = [c for c in (answer.get("citations") or []) if isinstance(c, Mapping)]
    gold_pages = sorted({p for c in citations if c.get("paper_id") == item["paper_id"] for p in _cited_pages(c)})
    matched = matched_answer(answer.get("text") or "", item["answer_contains"])
    return {
        "correct": matched is not None,
        "matched": matched,
        "paper_cited": any(c.get("paper_id") == item["paper_id"] for c in citations),
        "page_cited": int(item["page"]) in gold_pages,
        "cited_pages": gold_pages,
        "cited_papers": list(dict.fromkeys(str(c.get("paper_id")) for c in citations)),
    }


def _share(rows: Sequence[Mapping[str, Any]], key: str) -> float | None:
    return sum(bool(r.get(key)) for r in rows) / len(rows) if rows else None


def summarise(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Shares correct / paper cited / page cited, overall and per paper; median and p95 seconds."""
    secs = [float(r["seconds"]) for r in rows if r.get("seconds") is not None]
    calls = [float(r["llm_calls"]) for r in rows if r.get("llm_calls") is not None]
    papers: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        papers.setdefault(str(r.get("paper_id")), []).append(r)
    return {
        "questions": len(rows),
        "preset": rows[0].get("preset") if rows else None,
        "correct": _share(rows, "correct"),
        "paper_cited": _share(rows, "paper_cited"),
        "page_cited": _share(rows, "page_cited"),
        "correct_and_page_cited": _share([{"x": r.get("correct") and r.get("page_cited")} for r in rows], "x"),
        "seconds_median": statistics.median(secs) if secs else None,
        "seconds_p95": percentile(secs, 95),
        "llm_calls_mean": statistics.mean(calls) if calls else None,
        **faithfulness(rows),
        "evidence_shown": _share(rows, "evidence_shown"),
        "evidence_offered": _share([r for r in rows if "evidence_offered" in r], "evidence_offered"),
        "misses": dict(Counter(str(r["miss"]).split(":")[0] for r in rows if r.get("miss"))),
        "status": dict(Counter(str(r.get("status")) for r in rows if r.get("status") is not None)),
        "by_paper": {
            p: {
                "questions": len(rs),
                "correct": _share(rs, "correct"),
                "paper_cited": _share(rs, "paper_cited"),
                "page_cited": _share(rs, "page_cited"),
            }
            for p, rs in sorted(papers.items())
        },
    }


def faithfulness(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Over the answers' claims: the share whose every number, quoted phrase and name occurs in
    the sentences it cites (a name also in its cited papers' titles or the question: the support
    check run again on what the row recorded); claims dropped per answer; answers that fell back to quoting."""
    from agent.answer.support import check_claim  # pure text logic, no heavy import

    claims = [c for r in rows for c in r.get("claims") or []]
    ok = [check_claim(c["text"], c["sentences"], [*c.get("titles", []), c.get("question", "")]) is None for c in claims]
    return {
        "claims_per_answer": len(claims) / len(rows) if rows else None,
        "claims_supported": sum(ok) / len(ok) if ok else None,
        "rejected_claims_per_answer": (
            sum(len(r.get("rejected_claims") or []) for r in rows) / len(rows) if rows else None
        ),
        "extractive": _share([{"x": r.get("fallback") == "extractive"} for r in rows], "x"),
    }


def _holds(sentence: str, evidence: str) -> bool:
    """Whether a shown sentence is (part of) the gold evidence, or holds it: the two overlap by
    their normalised text (a sentence the splitter cut differently still counts)."""
    a, b = normalise(sentence), normalise(evidence)
    return bool(a and b) and (a in b or b in a or a[:60] in b or b[:60] in a)


def miss_stage(
    item: Mapping[str, Any], shown: Sequence[str], answer: Mapping[str, Any], pool: Sequence[str] | None = None
) -> str:
    """Where a question's fact was lost (empty for a correct answer): the gold evidence was
    `not shown` to the synthesis; shown but `not cited` by any claim the model wrote (or
    `no claim written`); `claim dropped: <reason>` when a claim that cited it was rejected;
    `claim kept without the fact` when a kept claim cites it but the answer lacks the fact.
    `shown` is the synthesis's sentences in prompt order (S1..Sn), `answer` the answer record.
    For a fact chosen then copied, `shown` is the sentences offered to the copy step and `pool`
    those ranked for it: the gold sentence `not offered` (not in the pool), `ranked below the
    sentences copied from`, or shown and `copied another value` (the value is not in it)."""
    if matched_answer(answer.get("text") or "", item["answer_contains"]) is not None:
        return ""
    gold = {i for i, text in enumerate(shown) if _holds(text, item["evidence"])}
    if not gold:
        if pool is None:
            return "not shown"
        if not any(_holds(text, item["evidence"]) for text in pool):
            return "not offered"
        return "ranked below the sentences copied from"
    value = (answer.get("chosen") or {}).get("value")
    if value and not any(" ".join(value.split()) in " ".join(shown[i].split()) for i in gold):
        words = value.split()
        if not all(w in shown[i] for i in gold for w in words):
            return "copied another value"
    kept = [c for c in answer.get("claims") or [] if isinstance(c, Mapping)]
    if any(_holds(s.get("text", ""), item["evidence"]) for c in kept for s in c.get("sentences") or []):
        return "claim kept without the fact"
    rejected = [r for r in answer.get("rejected_claims") or [] if isinstance(r, Mapping)]
    from tools.retrieval.sentences import sentence_index

    for r in rejected:
        if {sentence_index(str(sid)) for sid in r.get("sentence_ids") or []} & gold:
            return f"claim dropped: {r.get('reason', '')}"
    return "not cited" if kept or rejected else "no claim written"


def shown_sentences(
    result: Mapping[str, Any], preset: str | None, index: str, overrides: Mapping[str, Any]
) -> tuple[list[str], list[str] | None]:
    """The sentences the synthesis was shown in a finished run, in prompt order, rebuilt from the
    run's readings and subqueries with the functions the node calls: (shown, None), or for a fact
    chosen then copied (the sentences offered to the copy step, the pool ranked for it)."""
    from agent.answer.copy import chooses_fact, offered_sentences, ranked_offered
    from agent.answer.selection import evidence_sentences
    from agent.api import make_run_context
    from agent.runtime.resources import index_for

    ctx = make_run_context(preset, index=index, **dict(overrides))
    idx = index_for(ctx)
    state: Any = {
        "question": result["question"],
        "subqueries": result.get("subqueries", []),
        "readings": result["readings"],
    }
    if not chooses_fact(ctx, state):
        return [s["text"] for s in evidence_sentences(state, idx, ctx)], None
    pool = offered_sentences(state, idx, ctx)
    scores = ranked_offered(idx, result["question"], pool)
    top = sorted(range(len(pool)), key=lambda i: (-scores[i], i))[: ctx.choose_sentences]
    return [pool[i]["text"] for i in top], [s["text"] for s in pool]


def load_items(path: Path = DATA) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def _flat(text: str) -> str:
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text)).strip()


def check_dataset(idx, items: Sequence[Mapping[str, Any]]) -> list[str]:
    """Problems with the data set against an index (`idx.papers`, `idx.chunks` with `paper_id`,
    `text`, `locator.page`): missing fields, duplicate ids, an unknown paper, evidence that is
    not in a chunk of that paper on that page (whitespace-normalised), an answer that is not in
    its evidence. Empty: every item checks out."""
    problems: list[str] = []
    ids = Counter(str(it.get("id")) for it in items)
    problems += [f"{i}: id used {n} times" for i, n in ids.items() if n > 1]
    by_paper: dict[str, list[Any]] = {}
    for c in idx.chunks:
        by_paper.setdefault(c.paper_id, []).append(c)
    for it in items:
        name = it.get("id", "?")
        missing = [f for f in FIELDS if it.get(f) in (None, "", [])]
        if missing:
            problems.append(f"{name}: missing {', '.join(missing)}")
            continue
        if not isinstance(it["page"], int) or isinstance(it["page"], bool) or it["page"] < 1:
            problems.append(f"{name}: page {it['page']!r} is not a 1-based page number")
            continue
        if not isinstance(it["answer_contains"], list) or not all(isinstance(a, str) for a in it["answer_contains"]):
            problems.append(f"{name}: answer_contains is not a list of strings")
            continue
        if it["paper_id"] not in idx.papers:
            problems.append(f"{name}: paper {it['paper_id']} is not in the index")
            continue
        evidence = _flat(it["evidence"])
        pages = sorted(
            {evidence_page(c, it["evidence"]) for c in by_paper.get(it["paper_id"], []) if evidence in _flat(c.text)},
            key=lambda p: (p is None, p),
        )
        if it["page"] not in pages:
            where = f"found on page(s) {pages}" if pages else "not found in any chunk of the paper"
            problems.append(f"{name}: evidence not on page {it['page']} ({where})")
        if matched_answer(it["evidence"], it["answer_contains"]) is None:
            problems.append(f"{name}: none of answer_contains occurs in the evidence")
    return problems


def demo_index_path() -> str:
    """The demo index's directory, built on first use (as `litloop demo` does)."""
    from agent.settings import get_settings
    from tools.corpora.demo import ensure_demo_index

    return str(ensure_demo_index(get_settings()))


def run_question(
    item: Mapping[str, Any], preset: str | None, index: str, overrides: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    from agent.api import ask

    r = ask(item["question"], preset=preset, index=index, **dict[str, Any](overrides or {}))
    u = r["usage"]
    answer = r["answer"]
    shown, pool = shown_sentences(r, preset, index, overrides or {})
    return {
        "id": item["id"],
        "question": item["question"],
        "paper_id": item["paper_id"],
        "page": item["page"],
        **score_answer(item, answer),
        "miss": miss_stage(item, shown, answer, pool),
        "evidence_shown": any(_holds(t, item["evidence"]) for t in shown),
        **({"evidence_offered": any(_holds(t, item["evidence"]) for t in pool)} if pool is not None else {}),
        "seconds_by_step": {
            k[8:]: round(v, 2) for k, v in u.items() if k.startswith("seconds_") and k != "seconds_total"
        },
        "seconds": u["seconds_total"],
        "llm_calls": u.get("llm_calls", 0),
        "input_tokens": u.get("input_tokens", 0),
        "output_tokens": u.get("output_tokens", 0),
        "status": r["status"],
        "preset": r["preset"],
        "rounds": r["rounds"],
        "errors": len(r["errors"]),
        "answer": answer.get("text", ""),
        "citations": [
            {"paper_id": c.get("paper_id"), "page": _page(c.get("locator")), "chunk_id": c.get("chunk_id")}
            for c in answer.get("citations", [])
        ],
        "claims": [
            {
                "text": c["text"],
                "question": item["question"],
                "sentences": [s["text"] for s in c["sentences"]],
                "titles": list(
                    dict.fromkeys(t["title"] for t in answer.get("citations", []) if t["n"] in c["citations"])
                ),
            }
            for c in answer.get("claims", [])
        ],
        "rejected_claims": answer.get("rejected_claims", []),
        "fallback": answer.get("fallback", ""),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset")
    ap.add_argument("--index", help="index directory (default: the demo index)")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--out", type=Path, help="one JSON line per question")
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--check", action="store_true", help="only check the data set against the index")
    add_set_option(ap)
    args = ap.parse_args(argv)
    overrides = run_knobs(ap, args.set)
    items = load_items(args.data)
    index = args.index or demo_index_path()
    if args.check:
        from agent.settings import get_settings
        from tools.index import open_index

        idx = open_index(Path(index).expanduser(), get_settings())
        try:
            problems = check_dataset(idx, items)
        finally:
            idx.close()
        print(json.dumps({"items": len(items), "problems": problems}, indent=2))
        return 1 if problems else 0
    rows = run_rows(
        items[: args.limit],
        lambda item: run_question(item, args.preset, index, overrides),
        args.out,
        lambda row: (
            f"{row['seconds']:6.1f} s  {row['llm_calls']:3.0f} calls  correct={row['correct']!s:5}  "
            f"paper={row['paper_cited']!s:5}  page={row['page_cited']!s:5}  {row.get('miss', '')[:60]}"
        ),
    )
    print(json.dumps(summarise(rows), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
