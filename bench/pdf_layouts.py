"""How litloop reads PDFs of publishers' and journals' templates other than ACL's: section
headings, bibliography entries, numbered tables, in-text citations of named pages and the share
of each PDF's words kept, against the hand counts of bench/data/pdf_layouts.json.

    python -m bench.pdf_layouts --fetch            # the PDFs, from their Debian packages
    python -m bench.pdf_layouts [--split dev|test] [--json]

The PDFs are not in the repository: each entry names a Debian package, its version, the PDF's
path inside it and its sha256; `--fetch` runs `apt-get download` and `dpkg -x` (Debian or Ubuntu
with the package lists updated) and keeps each PDF in `~/.cache/litloop/pdf-layouts`
(`LITLOOP_PDF_LAYOUTS` elsewhere), checking its sha256. Each PDF goes through what an index build
does: `parse_pdf`, `chunk_document`, `paper_contexts` (tools/citations/extract.py).

Per PDF: each count as found / expected and their agreement (the smaller over the larger, 1.0 when
both are 0); the citation recall of the counted pages (a gold citation is found when a context on
its page links an entry whose raw text contains the gold's `entry`, both folded to letters and
digits) and their precision (of the distinct entries linked from a counted page, the share a gold
citation of the page names); the share of words kept against pypdfium2's plain text layer
(`text_account`, with the text floor's paragraphs put back) and whether the build warned; the
seconds a page. Each split is also averaged per template first, so one template cannot carry
it. The split is by template: tune on dev, report test (bench/data/README.md says which test
split was seen when).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "pdf_layouts.json"


def cache_dir() -> Path:
    return Path(os.environ.get("LITLOOP_PDF_LAYOUTS") or Path.home() / ".cache" / "litloop" / "pdf-layouts")


def entries(split: str | None = None) -> list[dict[str, Any]]:
    papers = json.loads(DATA.read_text("utf-8"))["papers"]
    return [p for p in papers if split in (None, p["split"])]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fetch(papers: Sequence[dict[str, Any]], out: Path) -> list[str]:
    """Each paper's PDF into `out/<id>.pdf` from its Debian package, each package downloaded and
    unpacked once however many PDFs it holds; the problems, one per paper."""
    out.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []
    wanted: dict[str, list[dict[str, Any]]] = {}
    for p in papers:
        target = out / f"{p['id']}.pdf"
        if not (target.exists() and sha256(target) == p["sha256"]):
            wanted.setdefault(f"{p['package']}={p['version']}", []).append(p)
    for spec, group in wanted.items():
        with tempfile.TemporaryDirectory() as tmp:
            got = subprocess.run(["apt-get", "download", spec], cwd=tmp, capture_output=True, text=True)
            debs = list(Path(tmp).glob("*.deb"))
            if got.returncode != 0 or not debs:
                problems += [f"{p['id']}: apt-get download {spec} failed: {got.stderr.strip()[-200:]}" for p in group]
                continue
            subprocess.run(["dpkg", "-x", str(debs[0]), str(Path(tmp) / "x")], check=True)
            for p in group:
                pdf = Path(tmp) / "x" / p["path"]
                if not pdf.exists():
                    problems.append(f"{p['id']}: {p['path']} is not in {debs[0].name}")
                elif sha256(pdf) != p["sha256"]:
                    problems.append(f"{p['id']}: {p['path']} has another sha256 than the one counted")
                else:
                    shutil.copyfile(pdf, out / f"{p['id']}.pdf")
    return problems


def fold(text: str) -> str:
    """NFKC, lower case, letters and digits only: how `entry` strings are compared."""
    return re.sub(r"[\W_]+", "", unicodedata.normalize("NFKC", text).lower())


def headings(sections: Sequence[str | None]) -> set[str]:
    """The section and subsection headings blocks name ("2 Method › 2.1 Data" is two), without
    the front matter's and the bibliography's."""
    out: set[str] = set()
    for name in sections:
        if not name:
            continue
        parts = [s.strip() for s in name.split("›")][:2]
        if fold(parts[0]) in {"abstract", "references", "bibliography"}:
            continue
        out.update(" › ".join(parts[: i + 1]) for i in range(len(parts)))
    return out


def agreement(found: int, expected: int) -> float:
    if found == expected:
        return 1.0
    return min(found, expected) / max(found, expected)


def citation_recall(
    found: Sequence[tuple[int | None, str]], gold: dict[int, list[dict[str, str]]]
) -> tuple[int, int, int, int]:
    """(found, expected, right, linked) over the counted pages. Recall: a gold item is found
    when a context on its page links an entry whose folded raw text contains the item's folded
    `entry` (one context each). Precision: of the distinct entries that contexts on a counted
    page link, how many some gold item of that page names (`right` of `linked`)."""
    left = {page: [fold(raw) for p, raw in found if p == page] for page in gold}
    hit = 0
    for page, items in gold.items():
        for item in items:
            want = fold(item["entry"])
            pool = left[page]
            at = next((i for i, raw in enumerate(pool) if want in raw), None)
            if at is not None:
                pool.pop(at)
                hit += 1
    linked = right = 0
    for page, items in gold.items():
        wants = [fold(item["entry"]) for item in items]
        for raw in {fold(r) for p, r in found if p == page}:
            linked += 1
            right += any(w in raw for w in wants)
    return hit, sum(len(v) for v in gold.values()), right, linked


def read(paper: dict[str, Any], pdf: Path) -> dict[str, Any]:
    from tools.citations.extract import paper_contexts
    from tools.ingest.chunker import chunk_document
    from tools.ingest.pdf import parse_pdf

    started = time.perf_counter()
    doc = parse_pdf(pdf, paper_id=paper["id"])
    seconds = time.perf_counter() - started
    chunks = chunk_document(doc)
    by_id = {c.chunk_id: c for c in chunks}
    raws = {e.key: e.raw for e in doc.paper.bibliography}
    found = [
        (by_id[c.chunk_id].locator.page_of(c.cite_end - 1), raws.get(c.key, "")) for c in paper_contexts(doc, chunks)
    ]
    tables = {b.table_id for b in doc.blocks if b.kind == "table" and b.table_id}
    counts = {
        "sections": len(headings([b.section for b in doc.blocks])),
        "references": len(doc.paper.bibliography),
        "tables": len(tables),
    }
    cited, gold, right, linked = citation_recall(
        found, {int(k): v for k, v in (paper.get("citation_pages") or {}).items()}
    )
    account = doc.text_account
    share = account.share if account else None
    return {
        "id": paper["id"],
        "split": paper["split"],
        "template": paper["template"],
        **{k: f"{v}/{paper[k]}" for k, v in counts.items()},
        **{f"{k}_agreement": round(agreement(v, paper[k]), 3) for k, v in counts.items()},
        "citations": f"{cited}/{gold}",
        "_cited": (cited, gold, right, linked),
        "citation precision": f"{right}/{linked}",
        # against pypdfium2's plain text layer where it reads the file (tools/ingest/pdf/floor.py)
        "kept": round(share, 3) if share is not None else None,
        "warned": bool(account and account.problem("x")),
        "put back": account.put_back if account else 0,
        "seconds a page": round(seconds / max(1, paper["pages"]), 3),
    }


def summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"pdfs": len(rows)}
    for k in ("sections", "references", "tables"):
        vals = [r[f"{k}_agreement"] for r in rows]
        out[f"{k} agreement (mean)"] = round(sum(vals) / len(vals), 3) if vals else None
        out[f"{k} exact"] = f"{sum(v == 1.0 for v in vals)}/{len(vals)}"
    cited = sum(r["_cited"][0] for r in rows)
    gold = sum(r["_cited"][1] for r in rows)
    right = sum(r["_cited"][2] for r in rows)
    linked = sum(r["_cited"][3] for r in rows)
    out["citation recall"] = f"{cited}/{gold} ({cited / gold:.2f})" if gold else None
    out["citation precision"] = f"{right}/{linked} ({right / linked:.2f})" if linked else None
    kept = sorted(r["kept"] for r in rows if r["kept"] is not None)
    out["words kept (median)"] = kept[len(kept) // 2] if kept else None
    # the aims: sections within 0.8-1.25 of the hand count, references within 10 %, and every
    # PDF keeps 0.85 of its text against the plain layer or its build warns
    out["sections within 0.8-1.25"] = f"{sum(_within(r, 'sections', 0.8, 1.25) for r in rows)}/{len(rows)}"
    out["references within 10 %"] = f"{sum(_within(r, 'references', 0.9, 1.1) for r in rows)}/{len(rows)}"
    out["kept 0.85 or warned"] = f"{sum((r['kept'] or 0) >= 0.85 or r['warned'] for r in rows)}/{len(rows)}"
    seconds = sorted(r["seconds a page"] for r in rows)
    out["seconds a page (max)"] = seconds[-1] if seconds else None
    out["per template (mean of template means)"] = _per_template(rows)
    return out


def _within(row: dict[str, Any], key: str, low: float, high: float) -> bool:
    found, expected = (int(x) for x in row[key].split("/"))
    if expected == 0:
        return found == 0
    return low <= found / expected <= high


def _per_template(rows: Sequence[dict[str, Any]]) -> dict[str, float | None]:
    """Each figure averaged within a template first, then across templates, so a template with
    several PDFs counts once."""
    by: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by.setdefault(r["template"], []).append(r)

    def mean(values: list[float]) -> float | None:
        return round(sum(values) / len(values), 3) if values else None

    out: dict[str, float | None] = {}
    for k in ("sections", "references", "tables"):
        out[f"{k} agreement"] = mean([mean([r[f"{k}_agreement"] for r in rs]) or 0.0 for rs in by.values()])
    recalls = []
    for rs in by.values():
        gold = sum(r["_cited"][1] for r in rs)
        if gold:
            recalls.append(sum(r["_cited"][0] for r in rs) / gold)
    out["citation recall"] = mean(recalls)
    out["kept"] = mean([mean([r["kept"] for r in rs if r["kept"] is not None]) or 0.0 for rs in by.values()])
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=("dev", "test"), help="one split (default: both, reported apart)")
    ap.add_argument("--fetch", action="store_true", help="download the PDFs from their Debian packages first")
    ap.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    args = ap.parse_args(argv)
    papers = entries(args.split)
    folder = cache_dir()
    if args.fetch:
        for problem in fetch(papers, folder):
            print(f"pdf_layouts: {problem}", file=sys.stderr)
    missing = [p["id"] for p in papers if not (folder / f"{p['id']}.pdf").exists()]
    if missing:
        print(
            f"pdf_layouts: {len(missing)} PDF(s) not in {folder} ({', '.join(missing[:5])}...): "
            "run `python -m bench.pdf_layouts --fetch` first",
            file=sys.stderr,
        )
    rows = [read(p, folder / f"{p['id']}.pdf") for p in papers if p["id"] not in missing]
    report = {
        split: summary([r for r in rows if r["split"] == split])
        for split in ("dev", "test")
        if any(r["split"] == split for r in rows)
    }
    shown = [{k: v for k, v in r.items() if not k.startswith("_")} for r in rows]
    if args.json:
        print(json.dumps({"papers": shown, "splits": report}, ensure_ascii=False, indent=2))
        return 0
    for r in shown:
        print(
            f"{r['split']:<4} {r['id']:<28} sections {r['sections']:>7}  references {r['references']:>7}  "
            f"tables {r['tables']:>5}  citations {r['citations']:>6} (precision {r['citation precision']:>5})  "
            f"kept {r['kept']}{' (warned)' if r['warned'] else ''}  put back {r['put back']}  "
            f"{r['seconds a page']:.2f} s/page"
        )
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
