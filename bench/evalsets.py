"""The three evaluation sets written by reading the demo corpus, and their check.

    python -m bench.evalsets check [--index DIR]     # every line against the demo index, no LLM

The sets (bench/data/README.md says how they were built and which split is held out):
- `factoid_test.jsonl`: held-out factoid questions over the four demo PDFs, in the shape of
  `factoid_demo.jsonl` (scored by `bench.factoid --data`);
- `factoid_heldout.jsonl`: the factoid test split written after `factoid_test.jsonl` became a
  development set (bench/data/README.md says why), same shape;
- `selector_gold.jsonl`: a question and the 1-3 sentences or table rows of one page that answer
  it, for measuring an evidence-sentence selector on its own;
- `multi_paper.jsonl`: "which papers ..." questions with the paper ids that answer them.

Each line is validated into a frozen pydantic model, so a problem names file, line and field
(`factoid_test.jsonl:7: field 'page': ...`). `lint` holds the checks that need no index (counts,
split balance, repeated ids or questions across the files and with factoid_demo.jsonl);
`check_index` the ones that do (each evidence or gold string is in a chunk of that paper on that
page, whitespace-normalised; each gold paper is indexed). Importing this module loads neither
torch nor Chroma.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from bench.factoid import evidence_page, matched_answer

DATA = Path(__file__).resolve().parent / "data"
FACTOID_DEMO = DATA / "factoid_demo.jsonl"

# The four full-text papers of the demo corpus; the factoid and selector sets cover each.
DEMO_PDFS = ("2020.acl-main.207", "2020.acl-main.447", "2023.eacl-main.121", "N18-3011")

# The minimums the sets were written to (the brief they answer); `lint` holds them to these.
MIN_FACTOID = 32
MIN_FACTOID_PER_PAPER = 6
MIN_FACTOID_TABLE = 8
MIN_HELDOUT_PER_PAPER = 6
MIN_SELECTOR = 64
MIN_SELECTOR_TABLE = 20
MIN_MULTI = 16
MIN_MULTI_WITH_PDF = 2

Text = Annotated[str, StringConstraints(strip_whitespace=False, min_length=1)]
Page = Annotated[int, Field(ge=1, strict=True)]
Split = Literal["dev", "test"]


class _Line(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    id: Text = Field(description="unique across all the evaluation sets")
    question: Text = Field(description="a user's question; no question repeats across the sets")


class FactoidItem(_Line):
    """One line of factoid_test.jsonl (the shape of factoid_demo.jsonl)."""

    answer_contains: list[Text] = Field(min_length=1, description="spellings of one fact")
    paper_id: Text
    page: Page = Field(description="1-based, as the index's chunk locators give it")
    evidence: Text = Field(description="the sentence or table row as the chunk text has it")


class SelectorItem(_Line):
    """One line of selector_gold.jsonl."""

    paper_id: Text
    page: Page
    gold: list[Text] = Field(
        min_length=1, max_length=3, description="the sentences or table rows of one page that answer it"
    )
    kind: Literal["text", "table", "caption"]
    split: Split


class MultiPaperItem(_Line):
    """One line of multi_paper.jsonl."""

    gold_papers: list[Text] = Field(min_length=2, max_length=10)
    how: Text = Field(description="the phrasings searched and the rule for including a paper")
    split: Split


SETS: dict[str, type[_Line]] = {
    "factoid_test.jsonl": FactoidItem,
    "factoid_heldout.jsonl": FactoidItem,
    "selector_gold.jsonl": SelectorItem,
    "multi_paper.jsonl": MultiPaperItem,
}


class DataError(ValueError):
    """Lines of an evaluation set that do not validate; `problems` has one message each."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


def _field_message(name: str, line: int, err: Mapping[str, Any]) -> str:
    where = ".".join(str(p) for p in err["loc"]) or "(line)"
    return f"{name}:{line}: field '{where}': {err['msg']}"


def load(path: Path, model: type[_Line]) -> list[tuple[int, _Line]]:
    """(line number, item) for each non-blank line; DataError naming file:line:field on any
    line that is not JSON or does not validate."""
    items: list[tuple[int, _Line]] = []
    problems: list[str] = []
    for n, raw in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as e:
            problems.append(f"{path.name}:{n}: not JSON ({e.msg})")
            continue
        try:
            items.append((n, model.model_validate(value)))
        except ValidationError as e:
            problems += [_field_message(path.name, n, err) for err in e.errors()]
    if problems:
        raise DataError(problems)
    return items


def load_sets(folder: Path = DATA) -> dict[str, list[tuple[int, _Line]]]:
    """The three sets, each file's lines validated (DataError lists every bad line)."""
    out: dict[str, list[tuple[int, _Line]]] = {}
    problems: list[str] = []
    for name, model in SETS.items():
        try:
            out[name] = load(folder / name, model)
        except DataError as e:
            problems += e.problems
    if problems:
        raise DataError(problems)
    return out


def demo_questions(path: Path = FACTOID_DEMO) -> list[tuple[str, str, str]]:
    """(where, id, question) of the factoid_demo.jsonl lines, which the new sets must not repeat."""
    if not path.is_file():
        return []
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    return [(f"{path.name}:{n}", str(r.get("id")), str(r.get("question"))) for n, r in enumerate(rows, 1)]


def norm_question(q: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", q)).strip().casefold()


def _is_table_row(text: str) -> bool:
    return text.count("|") >= 1


def _split_problems(name: str, items: Sequence[tuple[int, Any]], by_paper: bool) -> list[str]:
    """dev/test assigned by alternation (within each paper for the selector set): the k-th line
    of a group is dev when k is even, so the halves differ by at most one."""
    groups: dict[str, list[tuple[int, Any]]] = {}
    for n, it in items:
        groups.setdefault(it.paper_id if by_paper else "", []).append((n, it))
    problems = []
    for key, rows in groups.items():
        for k, (n, it) in enumerate(rows):
            want = "dev" if k % 2 == 0 else "test"
            if it.split != want:
                problems.append(
                    f"{name}:{n}: field 'split': {it.split!r} breaks the dev/test alternation"
                    + (f" within paper {key}" if key else "")
                    + f" (expected {want!r})"
                )
    return problems


def lint(sets: Mapping[str, Sequence[tuple[int, Any]]], demo: Iterable[tuple[str, str, str]] = ()) -> list[str]:
    """Problems that need no index: counts under the minimums, split balance, ids or questions
    repeated across the sets or with factoid_demo.jsonl. Empty: the sets check out."""
    problems: list[str] = []
    fact = [it for _, it in sets["factoid_test.jsonl"]]
    sel = [it for _, it in sets["selector_gold.jsonl"]]
    multi = [it for _, it in sets["multi_paper.jsonl"]]

    def at_least(what: str, have: int, want: int) -> None:
        if have < want:
            problems.append(f"{what}: {have}, at least {want} wanted")

    at_least("factoid_test.jsonl: questions", len(fact), MIN_FACTOID)
    per_paper = Counter(it.paper_id for it in fact)
    for pid in DEMO_PDFS:
        at_least(f"factoid_test.jsonl: questions on {pid}", per_paper[pid], MIN_FACTOID_PER_PAPER)
    at_least(
        "factoid_test.jsonl: table-row evidence", sum(_is_table_row(it.evidence) for it in fact), MIN_FACTOID_TABLE
    )
    held = [it for _, it in sets.get("factoid_heldout.jsonl", [])]
    held_papers = Counter(it.paper_id for it in held)
    for pid in DEMO_PDFS:
        at_least(f"factoid_heldout.jsonl: questions on {pid}", held_papers[pid], MIN_HELDOUT_PER_PAPER)
    # a held-out fact is one no other set asks for: its evidence is in none of theirs
    used = {
        _flat(text): name
        for name, items in sets.items()
        if name != "factoid_heldout.jsonl"
        for _, it in items
        for text in [getattr(it, "evidence", None), *getattr(it, "gold", [])]
        if text
    }
    for n, it in sets.get("factoid_heldout.jsonl", []):
        ev = _flat(it.evidence)
        for text, name in used.items():
            if ev in text or text in ev:
                problems.append(f"factoid_heldout.jsonl:{n}: field 'evidence': also the evidence of a line of {name}")
                break
    at_least("selector_gold.jsonl: pairs", len(sel), MIN_SELECTOR)
    at_least("selector_gold.jsonl: table rows", sum(it.kind == "table" for it in sel), MIN_SELECTOR_TABLE)
    sel_papers = Counter(it.paper_id for it in sel)
    if sel and (set(sel_papers) != set(DEMO_PDFS) or max(sel_papers.values()) - min(sel_papers.values()) > 1):
        problems.append(f"selector_gold.jsonl: pairs per paper {dict(sel_papers)} do not cover the four PDFs evenly")
    at_least("multi_paper.jsonl: questions", len(multi), MIN_MULTI)
    at_least(
        "multi_paper.jsonl: questions with a demo PDF among the gold papers",
        sum(any(p in DEMO_PDFS for p in it.gold_papers) for it in multi),
        MIN_MULTI_WITH_PDF,
    )
    for name, items in sets.items():
        for n, it in items:
            dup = [p for p, c in Counter(getattr(it, "gold_papers", [])).items() if c > 1]
            if dup:
                problems.append(f"{name}:{n}: field 'gold_papers': {dup} listed twice")
    problems += _split_problems("selector_gold.jsonl", sets["selector_gold.jsonl"], by_paper=True)
    problems += _split_problems("multi_paper.jsonl", sets["multi_paper.jsonl"], by_paper=False)

    seen_ids: dict[str, str] = {}
    seen_q: dict[str, str] = {}
    rows = [(f"{name}:{n}", it.id, it.question) for name, items in sets.items() for n, it in items]
    for where, id_, question in [*demo, *rows]:
        if id_ in seen_ids:
            problems.append(f"{where}: field 'id': {id_!r} already used at {seen_ids[id_]}")
        seen_ids.setdefault(id_, where)
        q = norm_question(question)
        if q in seen_q:
            problems.append(f"{where}: field 'question': repeats the question at {seen_q[q]}")
        seen_q.setdefault(q, where)
    return problems


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text)).strip()


def _pages_with(chunks: Sequence[Any], text: str) -> list[int]:
    """The pages on which `text` starts in a chunk that holds it (whitespace-normalised)."""
    want = _flat(text)
    return sorted({p for c in chunks if want in _flat(c.text) and (p := evidence_page(c, text)) is not None})


def check_index(idx: Any, sets: Mapping[str, Sequence[tuple[int, Any]]]) -> list[str]:
    """Problems against an index (`idx.papers`, `idx.paper_chunks(pid)` with `text` and
    `locator.page`): an unknown paper, an evidence or gold string not in a chunk of its paper
    on its page, a factoid answer that is not in its evidence. Empty: every line checks out."""
    problems: list[str] = []
    cache: dict[str, list[Any]] = {}

    def chunks(pid: str) -> list[Any]:
        if pid not in cache:
            cache[pid] = list(idx.paper_chunks(pid))
        return cache[pid]

    def on_page(where: str, field: str, pid: str, page: int, text: str) -> None:
        pages = _pages_with(chunks(pid), text)
        if page not in pages:
            found = f"found on page(s) {pages}" if pages else "not in any chunk of the paper"
            problems.append(f"{where}: field '{field}': not on page {page} of {pid} ({found}): {text[:60]!r}")

    for name, items in sets.items():
        for n, it in items:
            where = f"{name}:{n}"
            for pid in getattr(it, "gold_papers", None) or [it.paper_id]:
                if pid not in idx.papers:
                    problems.append(f"{where}: paper {pid!r} is not in the index")
            if isinstance(it, FactoidItem) and it.paper_id in idx.papers:
                on_page(where, "evidence", it.paper_id, it.page, it.evidence)
                if matched_answer(it.evidence, it.answer_contains) is None:
                    problems.append(f"{where}: field 'answer_contains': none occurs in the evidence")
            if isinstance(it, SelectorItem) and it.paper_id in idx.papers:
                for k, gold in enumerate(it.gold):
                    on_page(where, f"gold.{k}", it.paper_id, it.page, gold)
    return problems


def summary(sets: Mapping[str, Sequence[tuple[int, Any]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, items in sets.items():
        its = [it for _, it in items]
        row: dict[str, Any] = {"lines": len(its)}
        if its and hasattr(its[0], "split"):
            row["splits"] = dict(sorted(Counter(it.split for it in its).items()))
        if its and hasattr(its[0], "paper_id"):
            row["per_paper"] = dict(sorted(Counter(it.paper_id for it in its).items()))
        if its and hasattr(its[0], "kind"):
            row["kinds"] = dict(sorted(Counter(it.kind for it in its).items()))
        out[name] = row
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    chk = sub.add_parser("check", help="validate the three sets, then check them against the index")
    chk.add_argument("--index", help="index directory (default: the demo index, built on first use)")
    chk.add_argument("--data", type=Path, default=DATA, help="folder holding the three files")
    args = ap.parse_args(argv)
    try:
        sets = load_sets(args.data)
    except DataError as e:
        print(json.dumps({"problems": e.problems}, indent=2))
        return 1
    problems = lint(sets, demo_questions(args.data / FACTOID_DEMO.name))

    from agent.settings import get_settings
    from bench.factoid import demo_index_path
    from tools.index import open_index

    idx = open_index(Path(args.index or demo_index_path()).expanduser(), get_settings())
    try:
        problems += check_index(idx, sets)
    finally:
        idx.close()
    print(json.dumps({"sets": summary(sets), "problems": problems}, indent=2))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
