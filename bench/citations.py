"""How well citation contexts are found in PDFs: precision and recall of the in-text citations
extracted from the demo corpus's PDFs against a hand count.

    python -m bench.citations [--gold FILE ...] [--json]

Gold: bench/data/citations/<paper>.json, one per hand-counted PDF: for each page, the in-text
citations whose year is printed on it, as 'first-author surname year' (how each was counted is in
the file's "how"). Each PDF goes through what an index build does: `parse_pdf`, `chunk_document`,
`paper_contexts` (tools/citations/extract.py).

A found context is right when a gold citation not yet matched sits on the page where its year is
(the chunk's page at the citation's last character) and names the entry the context links: the
surname is in the entry's author part (the raw text before its year, accents and case folded)
and the year, with its letter when the gold has one, is the entry's. Precision = right / found,
recall = right / gold. Each wrong or missed citation is listed. The metric functions are pure.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
GOLD = sorted((Path(__file__).resolve().parent / "data" / "citations").glob("*.json"))


def _fold(text: str) -> str:
    from tools.citations.intext import fold

    return fold(text)


def names_entry(gold: str, raw: str) -> bool:
    """Does gold citation 'Surname 2019a' name the bibliography entry `raw`?"""
    surname, _, year = gold.rpartition(" ")
    m = re.search(rf"(?<!\d){re.escape(year)}(?![\w])" if year[-1].isalpha() else rf"(?<!\d){year}(?!\d)", raw)
    if m is None:
        return False
    return _fold(surname) in _fold(raw[: m.start()])


def score(found: Sequence[tuple[int | None, str]], gold: dict[int, list[str]]) -> dict[str, Any]:
    """`found`: (page, raw entry) per extracted context; `gold`: page -> citations. Greedy
    one-to-one matching per page."""
    left = {p: list(v) for p, v in gold.items()}
    wrong = []
    right = 0
    for page, raw in found:
        pool = left.get(page, []) if page is not None else []
        hit = next((g for g in pool if names_entry(g, raw)), None)
        if hit is None:
            wrong.append({"page": page, "entry": raw[:100]})
            continue
        pool.remove(hit)
        right += 1
    n_gold = sum(len(v) for v in gold.values())
    missed = [{"page": p, "citation": g} for p, v in left.items() for g in v]
    return {
        "found": len(found),
        "gold": n_gold,
        "right": right,
        "precision": right / len(found) if found else 0.0,
        "recall": right / n_gold if n_gold else 0.0,
        "wrong": wrong,
        "missed": missed,
    }


def run(gold_file: Path) -> dict[str, Any]:
    from tools.citations.extract import paper_contexts
    from tools.ingest.chunker import chunk_document
    from tools.ingest.pdf import parse_pdf

    gold = json.loads(gold_file.read_text())
    doc = parse_pdf(REPO / gold["pdf"], paper_id=gold["paper"])
    chunks = chunk_document(doc)
    by_id = {c.chunk_id: c for c in chunks}
    entries = {e.key: e.raw for e in doc.paper.bibliography}
    found = [(by_id[c.chunk_id].locator.page_of(c.cite_end - 1), entries[c.key]) for c in paper_contexts(doc, chunks)]
    result = score(found, {int(p): v for p, v in gold["pages"].items()})
    return {"paper": gold["paper"], **result}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--gold", type=Path, nargs="*", default=GOLD, help="hand-count files (default: bench/data/citations)"
    )
    ap.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    args = ap.parse_args(argv)
    results = [run(g) for g in args.gold]
    right = sum(r["right"] for r in results)
    found = sum(r["found"] for r in results)
    gold = sum(r["gold"] for r in results)
    total = {"found": found, "gold": gold, "right": right, "precision": right / found, "recall": right / gold}
    if args.json:
        print(json.dumps({"papers": results, "total": total}, ensure_ascii=False, indent=2))
    for r in [*results, {"paper": "all", **total}]:
        print(
            f"{r['paper']:<20} found {r['found']:>4}  gold {r['gold']:>4}  right {r['right']:>4}  "
            f"precision {r['precision']:.3f}  recall {r['recall']:.3f}",
            file=sys.stderr,
        )
        for w in r.get("wrong", []):
            print(f"    wrong  p.{w['page']}: {w['entry']}", file=sys.stderr)
        for m in r.get("missed", []):
            print(f"    missed p.{m['page']}: {m['citation']}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
