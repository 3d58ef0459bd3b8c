"""How well the PDF parser cuts papers: paragraphs and headings against GROBID, fragments and
mid-sentence cuts, equations, footnotes, tables against a hand-checked inventory, and parse time.

    python -m bench.pdf [--pdfs DIR] [--grobid DIR] [--tables FILE] [--workers N] [--json] [--out FILE]

Every PDF in --pdfs (default: the demo corpus's four) goes through `parse_pdf` then
`chunk_document`. Measured:

- paragraph alignment against GROBID, where --grobid holds `<stem>.json` (S2ORC JSON; default
  `fulltext/` in the shared data folder: LITLOOP_SHARED_DATA, else ../shared/data beside the
  repository; skipped with a message when absent). Ours: the body blocks of kind "text", not the
  abstract, not footnotes (`Block.footnote`). GROBID's: `pdf_parse.body_text` entries with text and
  a section (GROBID files footnotes there without a section). Tokens are the `\\w+` runs of the
  NFKC lower-cased text; the overlap of two paragraphs is their multiset token intersection over
  the longer one's token count, and a paragraph is matched when its best overlap on the other side
  is at least 0.9. Precision = matched ours / ours, recall = matched GROBID's / GROBID's. Both
  sides are the body: our acknowledgements and lettered appendix sections are left out, as GROBID
  files them in `back_matter`. Beside it, a merge-tolerant F1 also matches a paragraph against a
  run of up to three consecutive paragraphs of the other side: how much of the disagreement is
  one parse merging what the other split (GROBID merges across run-in headings and indents);
- section headings against GROBID's (`sec_num section`), compared without the number as sets of
  lower-cased alphanumeric token strings;
- on every PDF: the share of text chunks (not footnotes) under 120 characters (fragments) and
  of those not ending a sentence (a footnote mark after the full stop still ends one), equation chunks (and those under 40 characters), footnote chunks;
- tables against bench/data/pdf_tables.json (read off page images by hand): found = a table chunk
  with that table id; rows right = its grid (the pipe-table rows of its chunks, a table cut into
  pieces read as one) has the printed number of rows; cells right = each hand-read cell (row,
  column, text) is in that cell of the grid (on tables of two columns or more);
- parse seconds, serially and with a process pool of --workers over files (the machine may be
  shared: timings are indicative).

A short table goes to stderr; --json prints one JSON object to stdout (--out writes it to a file).
The metric functions are pure and import neither pdfplumber nor the parser.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
PDFS = REPO / "tools" / "corpora" / "demo_data" / "pdfs"
TABLES = Path(__file__).resolve().parent / "data" / "pdf_tables.json"

# A paragraph counts as found on the other side at this token overlap: a few tokens lost to a
# hyphenation, a footnote mark or an inline formula still match, a paragraph cut in two does not.
MATCH_OVERLAP = 0.9
# Text chunks shorter than this are fragments: about one sentence, too little to answer from.
FRAGMENT_CHARS = 120
# Equation chunks shorter than this are most likely a stray symbol line, not a display formula.
SHORT_EQUATION_CHARS = 40
EXAMPLES = 5

_CLOSERS = "\"'”’)]"
_SENTENCE_END = ".!?:"
# A footnote mark after the punctuation that ends a word's sentence; "§2.1" and "v3.4" keep their digits.
_FOOTNOTE_MARK = re.compile(r"((?:[^\W\d_]|[)\]\"'”’])[.!?:])\s?(?:\d{1,2}|[*†‡]{1,2})$")
# "3", "4.2", "A", "B.1", "II." before a heading's words (GROBID's sec_num, our section prefix).
_SECTION_NUMBER = re.compile(r"^(?:(?:\d{1,2}|[A-Z])(?:\.\d{1,2}){0,3}\.?|[IVX]{1,5}\.)\s+")


# --- pure metrics -----------------------------------------------------------------------------


def tokens(text: str) -> list[str]:
    """The word tokens compared: runs of letters or of digits of the NFKC-normalised, lower-cased
    text (a subscript is "p1" in one parse and "p 1" in another: both give "p", "1")."""
    return re.findall(r"[^\W\d_]+|\d+", unicodedata.normalize("NFKC", text or "").lower())


def overlap(a: Counter, b: Counter) -> float:
    """Multiset intersection of two token bags over the larger bag's size (0 when both are empty)."""
    longest = max(sum(a.values()), sum(b.values()))
    return sum((a & b).values()) / longest if longest else 0.0


def f1(precision: float | None, recall: float | None) -> float | None:
    if precision is None or recall is None:
        return None
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def _ratio(part: float, whole: int) -> float | None:
    return part / whole if whole else None


def _matched(side: list[Counter], other: list[Counter], threshold: float) -> list[bool]:
    """Whether each bag of `side` overlaps some bag of `other` by at least `threshold`."""
    sizes = [sum(b.values()) for b in other]
    out = []
    for bag in side:
        n = sum(bag.values())
        # overlap <= min/max of the two sizes: skip pairs whose lengths alone rule a match out
        out.append(
            n > 0
            and any(min(n, m) >= threshold * max(n, m) and overlap(bag, o) >= threshold for o, m in zip(other, sizes))
        )
    return out


def paragraph_alignment(ours: Sequence[str], theirs: Sequence[str], threshold: float = MATCH_OVERLAP) -> dict[str, Any]:
    """Precision, recall and F1 of our paragraphs against a reference parse's paragraphs."""
    a = [Counter(tokens(p)) for p in ours]
    b = [Counter(tokens(p)) for p in theirs]
    hit_a, hit_b = _matched(a, b, threshold), _matched(b, a, threshold)
    precision, recall = _ratio(sum(hit_a), len(a)), _ratio(sum(hit_b), len(b))
    return {
        "ours": len(a),
        "theirs": len(b),
        "matched_ours": sum(hit_a),
        "matched_theirs": sum(hit_b),
        "precision": precision,
        "recall": recall,
        "f1": f1(precision, recall),
    }


def merge_tolerant_alignment(
    ours: Sequence[str], theirs: Sequence[str], threshold: float = MATCH_OVERLAP, run: int = 3
) -> dict[str, Any]:
    """Like paragraph_alignment, but a paragraph also counts as matched when it overlaps a run of
    up to `run` consecutive paragraphs of the other side (one parse merged what the other split).
    A diagnostic beside the specified measure: it says how much of the disagreement is merging."""
    a = [Counter(tokens(p)) for p in ours]
    b = [Counter(tokens(p)) for p in theirs]

    def runs(bags: list[Counter]) -> list[Counter]:
        out = []
        for i in range(len(bags)):
            acc: Counter = Counter()
            for bag in bags[i : i + run]:
                acc = acc + bag
                out.append(acc)
        return out

    hit_a, hit_b = _matched(a, runs(b), threshold), _matched(b, runs(a), threshold)
    precision, recall = _ratio(sum(hit_a), len(a)), _ratio(sum(hit_b), len(b))
    return {"precision": precision, "recall": recall, "f1": f1(precision, recall)}


def section_key(name: str) -> str:
    """A heading without its number, as lower-case alphanumeric tokens: '2.1 Node Types' -> 'node types'."""
    text = unicodedata.normalize("NFKC", name or "").strip()
    text = _SECTION_NUMBER.sub("", text)
    return " ".join(re.findall(r"[^\W_]+", text.lower()))


def section_agreement(ours: Sequence[str], theirs: Sequence[str]) -> dict[str, Any]:
    """Our headings against the reference's, as sets of `section_key`s; the unmatched names in order."""
    ka = {section_key(s) for s in ours} - {""}
    kb = {section_key(s) for s in theirs} - {""}
    common = ka & kb
    precision, recall = _ratio(len(common), len(ka)), _ratio(len(common), len(kb))
    return {
        "ours": len(ka),
        "theirs": len(kb),
        "precision": precision,
        "recall": recall,
        "f1": f1(precision, recall),
        "unmatched_ours": [s for s in dict.fromkeys(ours) if section_key(s) and section_key(s) not in common],
        "unmatched_theirs": [s for s in dict.fromkeys(theirs) if section_key(s) and section_key(s) not in common],
    }


def ends_sentence(text: str) -> bool:
    """Whether the text ends a sentence: its last character, past closing quotes and brackets and a
    footnote mark after a word's full stop ('research.1', 'tool. 12', 'data.†'), is one of `.!?:`
    (a colon ends the lead-in to a list or a formula)."""
    end = _FOOTNOTE_MARK.sub(r"\1", (text or "").rstrip())
    return end.rstrip(_CLOSERS).rstrip()[-1:] in tuple(_SENTENCE_END)


def table_rows(chunk_text: str) -> int:
    """Rows of a rendered table chunk: its lines after the caption (the first line) holding ' | '."""
    return sum(" | " in line for line in (chunk_text or "").split("\n")[1:])


def _example(text: str, page: int | None) -> dict[str, Any]:
    flat = " ".join(text.split())
    return {"text": flat[:60], "end": flat[-40:], "chars": len(text), "page": page}


def cut_stats(chunks: Iterable[Any]) -> dict[str, Any]:
    """Fragment and mid-sentence rates of the text chunks (footnotes aside), equation and footnote
    counts, and the shortest offenders as examples. `chunks` are `tools.base.Chunk`s."""
    chunks = list(chunks)
    text = [c for c in chunks if c.kind == "text" and not getattr(c.locator, "footnote", None)]
    fragments = sorted((c for c in text if len(c.text) < FRAGMENT_CHARS), key=lambda c: len(c.text))
    cut = sorted((c for c in text if not ends_sentence(c.text)), key=lambda c: len(c.text))
    equations = [c for c in chunks if c.kind == "equation"]
    return {
        "text_chunks": len(text),
        "fragments": len(fragments),
        "mid_sentence": len(cut),
        "fragment_rate": _ratio(len(fragments), len(text)),
        "mid_sentence_rate": _ratio(len(cut), len(text)),
        "equation_chunks": len(equations),
        "short_equation_chunks": sum(len(c.text) < SHORT_EQUATION_CHARS for c in equations),
        "footnote_chunks": sum(bool(getattr(c.locator, "footnote", None)) for c in chunks),
        "examples": {
            "fragments": [_example(c.text, c.locator.page) for c in fragments[:EXAMPLES]],
            "mid_sentence": [_example(c.text, c.locator.page) for c in cut[:EXAMPLES]],
        },
    }


def table_scores(expected: Sequence[Mapping[str, Any]], chunks_by_paper: Mapping[str, Sequence[Any]]) -> dict[str, Any]:
    """Each hand-listed table against the table chunks of its paper (papers not parsed are left out).

    Rows are checked on tables of two columns or more only: a one-cell box (a framed block of
    guidelines) renders without ' | ', so `table_rows` cannot count it.
    """
    per_table = []
    for t in expected:
        if t["paper"] not in chunks_by_paper:
            continue
        mine = [c for c in chunks_by_paper[t["paper"]] if c.kind == "table" and c.locator.table_id == t["label"]]
        want = int(t["header_rows"]) + int(t["body_rows"])
        grid = table_grid([c.text for c in mine])
        got = (len(grid) if grid else table_rows(mine[0].text)) if mine else None
        checked = int(t.get("columns", 2)) > 1
        cells = [_cell_right(grid, cell) for cell in t.get("cells", [])] if checked else []
        per_table.append(
            {
                "paper": t["paper"],
                "label": t["label"],
                "page": t["page"],
                "found": bool(mine),
                "page_got": mine[0].locator.page if mine else None,
                "expected_rows": want,
                "got_rows": got,
                "rows_right": (got == want) if checked else None,
                "cells_right": sum(cells),
                "cells_checked": len(cells),
            }
        )
    return {
        "total": len(per_table),
        "found": sum(r["found"] for r in per_table),
        "page_right": sum(r["found"] and r["page_got"] == r["page"] for r in per_table),
        "rows_total": sum(r["rows_right"] is not None for r in per_table),
        "rows_right": sum(r["rows_right"] is True for r in per_table),
        "cells_total": sum(r["cells_checked"] for r in per_table),
        "cells_right": sum(r["cells_right"] for r in per_table),
        "per_table": per_table,
    }


def table_grid(pieces: Sequence[str]) -> list[list[str]]:
    """The rows of a table cut into chunk pieces (each with the caption and header rows): the
    first piece's rows, then the body rows of the others; [] when the pieces are no pipe table."""
    from tools.tables import parse_grid

    rows: list[list[str]] = []
    for k, text in enumerate(pieces):
        got, heads = parse_grid(text)
        rows += got if k == 0 else got[heads:]
    return rows


def _cell_right(grid: Sequence[Sequence[str]], cell: Mapping[str, Any]) -> bool:
    """Is the hand-read cell (row 0 = the first header row, column 0 = leftmost) where the grid has it?"""
    r, c = int(cell["row"]), int(cell["column"])
    if r >= len(grid) or c >= len(grid[r]):
        return False
    return " ".join(str(cell["text"]).split()) in " ".join(grid[r][c].split())


# --- reading the parses -----------------------------------------------------------------------


def shared_data_dir() -> Path:
    """LITLOOP_SHARED_DATA, else ../shared/data beside the repository (as tests/conftest.py)."""
    return Path(os.environ.get("LITLOOP_SHARED_DATA", REPO.parent / "shared" / "data"))


# Back matter: GROBID files acknowledgements and appendices apart from body_text (`back_matter`).
_BACK_MATTER = re.compile(r"^(?:acknowledg|[A-Z](?:\.\d{1,2})*\s)", re.IGNORECASE)


def our_paragraphs(doc: Any, body_only: bool = False) -> list[str]:
    """Body text blocks of a parsed Document, without the abstract and footnotes; `body_only`:
    without acknowledgements and lettered appendix sections either (GROBID's body_text has none)."""

    def back(section: str | None) -> bool:
        name = (section or "").strip()
        return bool(_BACK_MATTER.match(name)) and not re.match(r"^\d", name)

    return [
        b.text
        for b in doc.blocks
        if b.kind == "text"
        and getattr(b, "footnote", None) is None
        and (b.section or "").strip().lower() != "abstract"
        and b.text.strip()
        and not (body_only and back(b.section))
    ]


def our_sections(doc: Any) -> list[str]:
    return [s for s in dict.fromkeys(b.section for b in doc.blocks) if s and s.strip().lower() != "abstract"]


def grobid_body(record: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """body_text of an S2ORC record (the 2020 release's pdf_parse, doc2json's grobid_parse, or bare)."""
    for key in ("pdf_parse", "grobid_parse"):
        if isinstance(record.get(key), Mapping) and "body_text" in record[key]:
            return list(record[key]["body_text"] or [])
    return list(record.get("body_text") or [])


def grobid_paragraphs(body: Sequence[Mapping[str, Any]]) -> list[str]:
    """Entries with text and a section: GROBID files footnotes in body_text with an empty section."""
    return [p["text"] for p in body if (p.get("text") or "").strip() and (p.get("section") or "").strip()]


def grobid_sections(body: Sequence[Mapping[str, Any]]) -> list[str]:
    names = (" ".join(x for x in (p.get("sec_num") or "", p.get("section") or "") if x).strip() for p in body)
    return [s for s in dict.fromkeys(names) if (s and section_key(s))]


# --- running ----------------------------------------------------------------------------------


def _timed_parse(path: str) -> tuple[str, float, int]:
    """One file in a pool worker: (stem, seconds, blocks)."""
    from tools.ingest.pdf import parse_pdf

    t = time.perf_counter()
    doc = parse_pdf(Path(path))
    return Path(path).stem, time.perf_counter() - t, len(doc.blocks)


def pool_seconds(paths: Sequence[Path], workers: int) -> float:
    """Wall time to parse every file with a process pool (start-up included)."""
    t = time.perf_counter()
    with ProcessPoolExecutor(max_workers=workers) as pool:
        list(pool.map(_timed_parse, [str(p) for p in paths]))
    return time.perf_counter() - t


def page_count(path: Path) -> int:
    import pdfplumber  # heavy import kept off the metric functions' import path

    with pdfplumber.open(path) as pdf:
        return len(pdf.pages)


def grobid_scores(docs: Mapping[str, Any], folder: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for stem, doc in docs.items():
        path = folder / f"{stem}.json"
        if not path.is_file():
            continue
        body = grobid_body(json.loads(path.read_text(encoding="utf-8")))
        ours, theirs = our_paragraphs(doc, body_only=True), grobid_paragraphs(body)
        out[stem] = {
            "paragraphs": paragraph_alignment(ours, theirs),
            "paragraphs_merge_tolerant": merge_tolerant_alignment(ours, theirs),
            "sections": section_agreement(our_sections(doc), grobid_sections(body)),
        }
    return out


def run(pdfs: Sequence[Path], grobid: Path | None, tables: Sequence[Mapping[str, Any]], workers: int) -> dict[str, Any]:
    from tools.ingest.chunker import chunk_document
    from tools.ingest.pdf import parse_pdf

    docs, chunks, papers, examples = {}, {}, {}, {}
    for path in pdfs:
        t = time.perf_counter()
        doc = parse_pdf(path)
        seconds = time.perf_counter() - t
        docs[path.stem], chunks[path.stem] = doc, chunk_document(doc)
        pages = page_count(path)
        stats = cut_stats(chunks[path.stem])
        examples[path.stem] = stats.pop("examples")
        papers[path.stem] = {
            "pages": pages,
            "blocks": len(doc.blocks),
            "chunks": len(chunks[path.stem]),
            **stats,
            "seconds": seconds,
            "seconds_per_page": _ratio(seconds, pages),
        }
    texts = sum(p["text_chunks"] for p in papers.values())
    pages = sum(p["pages"] for p in papers.values())
    serial = sum(p["seconds"] for p in papers.values())
    return {
        "papers": papers,
        "grobid": grobid_scores(docs, grobid) if grobid else {},
        "tables": table_scores(tables, chunks),
        "fragment_rate": _ratio(sum(p["fragments"] for p in papers.values()), texts),
        "mid_sentence_rate": _ratio(sum(p["mid_sentence"] for p in papers.values()), texts),
        "text_chunks": texts,
        "pages": pages,
        "parse_s_serial": serial,  # parse_pdf alone, file after file
        "parse_s_pool": pool_seconds(pdfs, workers),
        "workers": workers,
        "seconds_per_page": _ratio(serial, pages),
        "examples": examples,
    }


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def summary_lines(report: Mapping[str, Any]) -> list[str]:
    """The human table for stderr."""
    lines = [f"{'paper':20} {'pages':>5} {'text':>5} {'frag':>5} {'mid':>5} {'eq':>4} {'eq<40':>5} {'fn':>3} {'s':>6}"]
    for stem, p in report["papers"].items():
        lines.append(
            f"{stem:20} {p['pages']:5} {p['text_chunks']:5} {_pct(p['fragment_rate']):>5} "
            f"{_pct(p['mid_sentence_rate']):>5} {p['equation_chunks']:4} {p['short_equation_chunks']:5} "
            f"{p['footnote_chunks']:3} {p['seconds']:6.1f}"
        )
    lines.append(f"all: fragments {_pct(report['fragment_rate'])}, mid-sentence {_pct(report['mid_sentence_rate'])}")
    for stem, g in report["grobid"].items():
        pa, se = g["paragraphs"], g["sections"]
        lines.append(
            f"GROBID {stem}: paragraphs {pa['ours']}/{pa['theirs']} P {_pct(pa['precision'])} "
            f"R {_pct(pa['recall'])} F1 {_pct(pa['f1'])}; sections P {_pct(se['precision'])} "
            f"R {_pct(se['recall'])} F1 {_pct(se['f1'])}; merge-tolerant F1 "
            f"{_pct(g.get('paragraphs_merge_tolerant', {}).get('f1'))}"
        )
    tb = report["tables"]
    lines.append(
        f"tables: found {tb['found']}/{tb['total']}, page right {tb['page_right']}, rows right "
        f"{tb['rows_right']}/{tb['rows_total']}, cells right {tb.get('cells_right')}/{tb.get('cells_total')}"
    )
    lines.append(
        f"parse: {report['parse_s_serial']:.1f} s serial ({report['seconds_per_page'] or 0:.2f} s/page), "
        f"{report['parse_s_pool']:.1f} s with {report['workers']} workers"
    )
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pdfs", type=Path, default=PDFS, help="folder of PDFs (default: the demo corpus's)")
    ap.add_argument("--grobid", type=Path, help="folder of <stem>.json GROBID parses (default: shared data fulltext/)")
    ap.add_argument("--tables", type=Path, default=TABLES)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", action="store_true", help="print the report as JSON to stdout")
    ap.add_argument("--out", type=Path, help="also write the JSON report here")
    args = ap.parse_args(argv)
    pdfs = sorted(args.pdfs.glob("*.pdf"))
    if not pdfs:
        ap.error(f"no PDFs in {args.pdfs}")
    grobid = args.grobid or shared_data_dir() / "fulltext"
    if not grobid.is_dir():
        print(
            f"GROBID comparison skipped: {grobid} is absent (set LITLOOP_SHARED_DATA to the shared data "
            "folder, or pass --grobid)",
            file=sys.stderr,
        )
        grobid = None
    tables = json.loads(args.tables.read_text(encoding="utf-8"))["tables"] if args.tables.is_file() else []
    if not tables:
        print(f"table check skipped: no tables in {args.tables}", file=sys.stderr)
    report = run(pdfs, grobid, tables, max(1, args.workers))
    print("\n".join(summary_lines(report)), file=sys.stderr)
    text = json.dumps(report, indent=2, ensure_ascii=False)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    if args.json:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
