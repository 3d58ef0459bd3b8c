"""The labelled set of citation intents: citing sentences of the shipped S2ORC fixtures.

    python -m bench.intent_set check        # every stored context is re-found in its fixture
    python -m bench.intent_set candidates   # the contexts the set is drawn from, as JSON lines

A context is one sentence (the project's splitter, `tools.retrieval.sentences`) of a body-text
paragraph that holds at least one cite span, with its paper, section, paragraph index and the
markers' text and offsets in the sentence. The set takes `PER_PAPER` contexts from each fixture,
evenly spaced through the paper, and splits by paper (sorted ids alternate dev / test), so no
paper is in both splits. bench/data/README.md says how the labels were written.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from tools.citations.intent import INTENTS

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "data" / "s2orc"
DATA = Path(__file__).resolve().parent / "data" / "citation_intents.jsonl"
PER_PAPER = 15  # 10 fixtures x 15 = 150 contexts: enough per split to see each class


class Marker(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    start: int = Field(ge=0)  # offsets in `sentence`
    end: int = Field(ge=0)


class Context(BaseModel):
    """One citing sentence as the labelled set stores it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    paper_id: str
    fixture: str  # path under tests/data/s2orc
    paragraph: int = Field(ge=0)  # index in body_text
    section: str
    sentence: str
    markers: tuple[Marker, ...] = Field(min_length=1)
    split: str
    pass1: str | None = None  # the label read from the sentence alone
    pass2: str | None = None  # the label read from the sentence in its paragraph and section
    label: str | None = None  # the adjudicated label
    note: str = ""

    @model_validator(mode="after")
    def _check(self) -> Context:
        if self.split not in ("dev", "test"):
            raise ValueError(f"split must be dev or test, got {self.split!r}")
        for name in ("pass1", "pass2", "label"):
            value = getattr(self, name)
            if value is not None and value not in INTENTS:
                raise ValueError(f"{name} must be one of {', '.join(INTENTS)}, got {value!r}")
        for m in self.markers:
            if self.sentence[m.start : m.end] != m.text:
                raise ValueError(f"marker {m.text!r} is not at {m.start}:{m.end} of the sentence")
        return self


def load(path: Path = DATA, split: str = "all") -> list[Context]:
    """The stored contexts of `split` (dev, test or all); a bad line raises naming file:line."""
    out = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            ctx = Context.model_validate_json(line)
        except ValidationError as exc:
            raise ValueError(f"{path}:{n}: {exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}") from exc
        if split in ("all", ctx.split):
            out.append(ctx)
    return out


# --- extraction -------------------------------------------------------------------------------


def _body(path: Path) -> tuple[str, Any]:
    """(paper id, body_text paragraphs) of a fixture, read through the ingest validation."""
    from tools.ingest.records import PARSE_KEYS, S2orcRecord, validate

    record = validate(S2orcRecord, json.loads(path.read_text(encoding="utf-8")), path, None)
    parses = [p for p in (getattr(record, k) for k in PARSE_KEYS) if p is not None]
    parse = next((p for p in parses if p.body_text), record.bare_parse)
    # ACL exports cut the id at the first dot ('2020' for '2020.acl-main.207'): the file name is right
    return path.stem, parse.body_text


def fixtures() -> list[Path]:
    return sorted(FIXTURES.glob("*.json")) + sorted((FIXTURES / "s2orc_json").glob("*.json"))


def contexts_of(path: Path) -> Iterator[dict[str, Any]]:
    """Every citing sentence of a fixture, in reading order."""
    from tools.ingest.s2orc import section_name
    from tools.retrieval.sentences import split_sentences

    paper_id, body = _body(path)
    for p, para in enumerate(body):
        spans = [
            (c.start, c.end)
            for c in para.cite_spans
            if c.start is not None and c.end is not None and not _footnote_mark(c.text, c.ref_id)
        ]
        if not spans:
            continue
        sents = [(s["start"], s["end"]) for s in split_sentences(f"{paper_id}#{p}", para.text)]
        for start, end in _superscripts_back(sents, spans, para.text):
            inside = [(s, e) for s, e in spans if start <= s < end]
            if not inside:
                continue
            raw = para.text[start:end]
            clean = " ".join(raw.split())
            markers = [_marker(raw, clean, s - start, min(e, end) - start) for s, e in inside]
            yield {
                "paper_id": paper_id,
                "fixture": str(path.relative_to(FIXTURES)),
                "paragraph": p,
                "section": section_name(para.sec_num, para.section) or "",
                "sentence": clean,
                "paragraph_text": para.text,
                "markers": [m for m in markers if m is not None],
            }


_NUMERIC = re.compile(r"[\[(]?\d+(?:\s*[-–,]\s*\d+)*[\])]?[,;]?")


def _footnote_mark(text: str, ref_id: str | None) -> bool:
    """GROBID takes a footnote's superscript for a citation; linked to no entry, it is one."""
    return ref_id is None and text.strip().isdigit()


def _superscripts_back(sents: list[tuple[int, int]], spans: list[tuple[int, int]], text: str) -> list[tuple[int, int]]:
    """Sentence spans with numeric citation markers that open a sentence moved to the end of
    the sentence before: a superscript after the full stop ("... diseases. 1 Successful") is
    the previous sentence's citation. "[12] showed that" (lower case after it) stays."""
    out = list(sents)
    starts = sorted(spans)
    for i in range(1, len(out)):
        start, end = out[i]
        cut = start
        for s, e in starts:
            if s < cut or text[cut:s].strip() or not _NUMERIC.fullmatch(text[s:e].strip()):
                continue
            cut = e
        rest = text[cut:end].lstrip()
        if cut > start and rest[:1].isupper():
            out[i - 1] = (out[i - 1][0], cut)
            out[i] = (cut + len(text[cut:end]) - len(rest), end)
    return out


def _marker(raw: str, clean: str, start: int, end: int) -> dict[str, Any] | None:
    """The marker's text and offsets in the whitespace-normalised sentence."""
    before = " ".join(raw[:start].split())
    text = " ".join(raw[start:end].split())
    offset = len(before) + (1 if before and raw[:start][-1:].isspace() else 0)
    if clean[offset : offset + len(text)] != text:
        found = clean.find(text)
        if found < 0:
            return None
        offset = found
    return {"text": text, "start": offset, "end": offset + len(text)}


def split_of(paper_ids: list[str]) -> dict[str, str]:
    """Sorted paper ids alternate dev, test: decided before any rule was written."""
    return {pid: ("dev" if i % 2 == 0 else "test") for i, pid in enumerate(sorted(paper_ids))}


def candidates() -> list[dict[str, Any]]:
    """PER_PAPER contexts per fixture, evenly spaced through the paper, with ids and splits."""
    per_paper = {p: list(contexts_of(p)) for p in fixtures()}
    splits = split_of([p.stem for p in per_paper])
    out = []
    for path, rows in per_paper.items():
        rows = [r for r in rows if r["markers"]]
        n = len(rows)
        picks = sorted({int(i * n / PER_PAPER) for i in range(min(PER_PAPER, n))})
        for k, i in enumerate(picks, 1):
            row = dict(rows[i], id=f"{path.stem}-{k:02d}", split=splits[path.stem])
            out.append(row)
    return out


def check(path: Path = DATA) -> list[str]:
    """Problems of the stored set: contexts not re-found in their fixture, labels missing."""
    stored = load(path)
    fresh = {(c["paper_id"], c["paragraph"], c["sentence"]) for p in fixtures() for c in contexts_of(p)}
    problems = []
    for c in stored:
        if (c.paper_id, c.paragraph, c.sentence) not in fresh:
            problems.append(f"{c.id}: sentence not found in paragraph {c.paragraph} of {c.fixture}")
        if c.pass1 is None or c.pass2 is None or c.label is None:
            problems.append(f"{c.id}: pass1, pass2 and label must all be set")
    ids = [c.id for c in stored]
    if len(set(ids)) != len(ids):
        problems.append("ids repeat")
    for pid in {c.paper_id for c in stored}:
        if len({c.split for c in stored if c.paper_id == pid}) > 1:
            problems.append(f"{pid}: in both splits")
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.intent_set", description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=["check", "candidates"])
    args = ap.parse_args(argv)
    if args.command == "candidates":
        for row in candidates():
            print(json.dumps(row, ensure_ascii=False))
        return 0
    problems = check()
    for p in problems:
        print(p)
    print(f"{len(load())} contexts, {len(problems)} problems", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
