"""What the interfaces show of papers: the records of `search`, `retrieve`, `index show`,
`cites` and `refs` (built in `agent.reading.queries`), the index a run's context names, and the
records with paper text treated as data, as a client's model would read them.

The CLI, the chats and the MCP server reach papers through this module, not through the core's
rooms (the layers are import-linter contracts in pyproject.toml).
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

from agent.reading.evidence import is_instruction, paper_language, withheld_text
from agent.reading.injection import shown_field
from agent.reading.queries import (
    UnknownPaper,
    cites_record,
    paper_record,
    refs_record,
    retrieve_record,
    search_record,
)
from agent.records.models import AskOut, ChunkOut, ContextOut
from agent.runtime.resources import index_for

__all__ = [
    "UnknownPaper",
    "answer_as_data",
    "as_data",
    "cites_record",
    "context_as_data",
    "fields_as_data",
    "index_for",
    "paper_record",
    "refs_record",
    "retrieve_record",
    "search_record",
]

M = TypeVar("M", bound=BaseModel)


# ----------------------------------------------------------------------------- paper text as data


def _language(idx, paper_id: object) -> str | None:
    """A paper's body language (`agent.reading.evidence.paper_language`) where the index is given."""
    return paper_language(idx, paper_id) if idx is not None and isinstance(paper_id, str) else None


def as_data(chunk: ChunkOut, idx=None) -> ChunkOut:
    """A chunk with the sentences that address their reader (or, given the index, are in another
    language than its paper's body) withheld from its text, and its locator's section name
    withheld when it addresses its reader."""
    text = withheld_text(chunk.text, chunk.kind, _language(idx, chunk.chunk_id.rsplit("#", 1)[0]))
    locator = dict(chunk.locator)
    if isinstance(section := locator.get("section"), str):
        locator["section"] = shown_field(section, "section")
    return chunk.model_copy(update={"text": text, "withheld": text != chunk.text, "locator": locator})


def context_as_data(c: ContextOut) -> ContextOut:
    """A citation context with its sentence withheld when it addresses its reader."""
    withheld = is_instruction(c.sentence)
    return c.model_copy(update={"sentence": "" if withheld else c.sentence, "withheld": withheld})


def fields_as_data(record: M, idx=None) -> M:
    """A record with its paper fields (title, venue, authors) withheld where they address their
    reader (`agent.reading.injection.shown_field`), and its abstract without the sentences that
    do: a client's model reads them as it reads the chunks."""
    update: dict[str, Any] = {}
    for key in ("title", "venue"):
        if isinstance(value := getattr(record, key, None), str):
            update[key] = shown_field(value, key)
    if isinstance(abstract := getattr(record, "abstract", None), str) and abstract:
        update["abstract"] = withheld_text(abstract, "text", _language(idx, getattr(record, "paper_id", None)))
    if isinstance(authors := getattr(record, "authors", None), list):
        update["authors"] = [shown_field(a, "author") if isinstance(a, str) else a for a in authors]
    return record.model_copy(update=update)


def answer_as_data(record: AskOut, idx=None) -> AskOut:
    """An answer with its citations' chunk texts and paper titles withheld where they address
    their reader (the claims and quotes passed the gate when the answer was written)."""
    citations = []
    for c in record.attribution.citations:
        shown = dict(c)
        if isinstance(c.get("title"), str):
            shown["title"] = shown_field(c["title"], "title")
        if isinstance(c.get("chunk_text"), str):
            shown["chunk_text"] = withheld_text(
                c["chunk_text"], c.get("kind") or "text", _language(idx, c.get("paper_id"))
            )
        citations.append(shown)
    return record.model_copy(update={"attribution": record.attribution.model_copy(update={"citations": citations})})
