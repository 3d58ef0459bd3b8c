"""Numbered citations, one per cited chunk, each quoting the sentences cited in it with their
page, and for a table row the cell that holds the claim's figure (docs/attribution.md)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from agent.records.answer import Citation, QuotedSentence
from tools.retrieval.retrieve import chunk_of
from tools.retrieval.sentences import Sentence
from tools.tables import cell_locator, split_cells

if TYPE_CHECKING:
    from tools.handle import IndexHandle


class Citations:
    """Numbered citations, one per cited chunk, each quoting the sentences cited in it."""

    def __init__(self, idx: IndexHandle) -> None:
        self.idx = idx
        self.by_chunk: dict[str, Citation] = {}

    def cite(self, sentences: list[Sentence], claim: str = "") -> list[int]:
        numbers = []
        for s in sentences:
            c = self.by_chunk.get(s["chunk_id"])
            if c is None:
                c = self.by_chunk[s["chunk_id"]] = citation(self.idx, s["chunk_id"], len(self.by_chunk) + 1)
            if all(x["start"] != s["start"] for x in c["sentences"]):
                chunk = chunk_of(self.idx, s["chunk_id"])
                whole = chunk.locator
                quoted: QuotedSentence = {
                    "start": s["start"],
                    "end": s["end"],
                    "text": s["text"],
                    "page": whole.page_of(s["start"]),
                }
                cell = table_cell(chunk.text, s["text"], claim) if chunk.kind == "table" else {}
                if "row" in cell:
                    quoted["row"] = cell["row"]
                if "column" in cell:  # only where the figure sits in one cell
                    quoted["column"] = cell["column"]
                c["sentences"].append(quoted)
                c["sentences"].sort(key=lambda x: x["start"])
                c["quote"] = " … ".join(x["text"] for x in c["sentences"])
                # the citation's page is where its quoted sentences are (a chunk may span two)
                c["locator"] = whole.at(c["sentences"][0]["start"], c["sentences"][-1]["end"]).to_dict()
            numbers.append(c["n"])
        return list(dict.fromkeys(numbers))

    def all(self) -> list[Citation]:
        return sorted(self.by_chunk.values(), key=lambda c: c["n"])


def citation(idx: IndexHandle, chunk_id: str, n: int) -> Citation:
    """Citation n of a chunk; its `sentences` (offsets in `chunk_text`, the chunk's text) and
    `quote` are filled in by the claims that cite it."""
    chunk = chunk_of(idx, chunk_id)
    paper = idx.papers[chunk.paper_id]
    return {
        "n": n,
        "chunk_id": chunk_id,
        "paper_id": chunk.paper_id,
        "title": paper.title,
        "authors": list(paper.authors),
        "venue": paper.venue,
        "year": paper.year,
        "kind": chunk.kind,
        "locator": chunk.locator.to_dict(),
        "quote": "",
        "sentences": [],
        "chunk_text": chunk.text,
    }


def table_cell(table: str, row: str, claim: str) -> dict[str, Any]:
    """A cited table row's cell: {"row": its label, "column": the header of the cell holding the
    claim's first figure found in the row} (LitTraceQA table locators), {} for a caption line."""
    cells = split_cells(row)
    if not cells:
        return {}
    figures = re.findall(r"\d+(?:[.,]\d+)*%?", claim)
    value = next((f for f in figures if any(f in cell for cell in cells)), "")
    return cell_locator(table, row, value)


def with_markers(text: str, numbers: list[int]) -> str:
    """A claim with its citation markers before its final stop: "... 95.7 F1 [1][2]."."""
    marks = "".join(f"[{n}]" for n in numbers)
    if text and text[-1] in ".!?":
        return f"{text[:-1]} {marks}{text[-1]}"
    return f"{text} {marks}."


def mark_contexts(citations: list[Citation], contexts: list[dict[str, Any]]) -> list[Citation]:
    """The citations that quote a citing sentence (a question about a cited work, agent/nodes/
    citations.py) marked as citation contexts: `source` "citation_context" and `cited`, each cited
    entry's number in the citing paper's reference list and the work it is."""
    out = []
    for c in citations:
        starts = {q["start"] for q in c["sentences"]}
        cited = {
            (x["citation_id"], x["cited"]): {"citation_id": x["citation_id"], "cited": x["cited"]}
            for x in contexts
            if x["chunk_id"] == c["chunk_id"] and x["start"] in starts
        }
        out.append({**c, "source": "citation_context", "cited": list(cited.values())} if cited else c)
    return out
