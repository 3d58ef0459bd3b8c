"""A parsed paper's citation contexts: each in-text citation of a bibliography entry, located in
the paper's chunks, with its sentence, page, section and intent.

Where the citations come from:
- S2ORC JSON and GROBID TEI mark them (`Block.cites`: the cite spans, `<ref type="bibr">`), each
  with the key of the entry it links; a mark the source could not link is linked here by its text
  ("Liu et al., 2019)") when it names one entry, else left out;
- a PDF marks none: they are found in the chunks' text by `tools.citations.intext.Linker`, which
  counts only citations that name an entry of the paper's bibliography.

A mark is located in the chunks by its text with the words before it, in reading order (the
chunker packs and cuts blocks, so block offsets do not carry over). Equation chunks are skipped:
a PDF equation chunk repeats the sentence that leads into it, which its text chunk already holds.

The sentence is the project's sentence splitter's (tools/retrieval/sentences.py), so a context's
sentence is exactly a sentence the reader and the synthesis can be shown and cite.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from tools.base import Chunk, Document
from tools.citations.intext import Found, Linker
from tools.citations.model import Context
from tools.retrieval.sentences import Sentence, split_sentences

log = logging.getLogger(__name__)

# Characters before a mark searched for with it, to place it among repeats of its text ("[3]").
LEFT_CONTEXT = 30
# Chunk kinds citations are read from (equation chunks repeat their lead-in sentence).
CITING_KINDS = ("title_abstract", "text", "figure", "table")


@dataclass(frozen=True)
class _Hit:
    chunk: int  # position in the paper's chunks
    start: int
    end: int
    key: str


def paper_contexts(doc: Document, chunks: Sequence[Chunk]) -> list[Context]:
    """Every citation context of `doc` in its `chunks` (as the index stores them), in reading
    order; empty for a paper without a bibliography."""
    bibliography = [e for e in doc.paper.bibliography if e.key]
    if not bibliography:
        return []
    linker = Linker(bibliography)
    marked = any(b.cites for b in doc.blocks)
    hits = list(_marked_hits(doc, chunks, linker) if marked else _found_hits(chunks, linker))
    return _contexts(doc.paper.paper_id, chunks, _unique(hits))


def _found_hits(chunks: Sequence[Chunk], linker: Linker) -> Iterator[_Hit]:
    linker.prepare([c.text for c in chunks if c.kind in CITING_KINDS])
    for n, chunk in enumerate(chunks):
        if chunk.kind in CITING_KINDS:
            for f in linker.find(chunk.text):
                yield _Hit(n, f.start, f.end, f.key)


def _marked_hits(doc: Document, chunks: Sequence[Chunk], linker: Linker) -> Iterator[_Hit]:
    """The source's marks, located in the chunks in reading order."""
    keys = {e.key for e in doc.paper.bibliography}
    texts = [c.text.replace("\n", " ") if c.kind in CITING_KINDS else "" for c in chunks]
    at = (0, 0)  # (chunk, offset) where the last mark ended
    for block in doc.blocks:
        for mark in block.cites:
            surface = block.text[mark.start : mark.end]
            left = block.text[max(0, mark.start - LEFT_CONTEXT) : mark.start]
            place = _locate(texts, at, left + surface, len(left)) or _locate(texts, at, surface, 0, ahead=1)
            if place is None:
                log.debug(
                    "%s: citation %r not found in the chunks (cut by the chunk cap?)", doc.paper.paper_id, surface
                )
                continue
            n, start = place
            at = (n, start + len(surface))
            if mark.key in keys:
                yield _Hit(n, start, start + len(surface), mark.key)
            else:  # not linked by the source: by its text, when it names entries
                for f in linker.find(surface):
                    yield _Hit(n, start + f.start, start + f.end, f.key)


def _locate(texts: list[str], at: tuple[int, int], needle: str, shift: int, ahead: int | None = None):
    """(chunk, offset of the needle's text after `shift` characters) of the first `needle` from
    `at` on, looking `ahead` chunks past the current one at most (all when None)."""
    n, offset = at
    last = len(texts) if ahead is None else min(len(texts), n + ahead + 1)
    for i in range(n, last):
        found = texts[i].find(needle, offset if i == n else 0)
        if found >= 0:
            return i, found + shift
    return None


def _unique(hits: list[_Hit]) -> list[_Hit]:
    return list(dict.fromkeys(hits))


def _contexts(paper_id: str, chunks: Sequence[Chunk], hits: list[_Hit]) -> list[Context]:
    sentences: dict[int, list[Sentence]] = {}
    out = []
    for hit in hits:
        chunk = chunks[hit.chunk]
        if hit.chunk not in sentences:
            sentences[hit.chunk] = split_sentences(chunk.chunk_id, chunk.text, chunk.kind)
        sent = _sentence_at(sentences[hit.chunk], hit.start)
        start, end = (sent["start"], sent["end"]) if sent else (hit.start, hit.end)
        text = sent["text"] if sent else " ".join(chunk.text[hit.start : hit.end].split())
        out.append(
            Context(
                paper_id=paper_id,
                key=hit.key,
                chunk_id=chunk.chunk_id,
                start=start,
                end=end,
                cite_start=hit.start,
                cite_end=hit.end,
                sentence=text,
                page=chunk.locator.page_of(hit.start),
                section=chunk.locator.section,
            )
        )
    return label_intents(out, {chunks[h.chunk].chunk_id: chunks[h.chunk].text for h in hits})


def _sentence_at(sentences: list[Sentence], offset: int) -> Sentence | None:
    """The sentence holding `offset` (a citation just after a sentence's end, "... end. (Lo,
    2020)", which the splitter may leave between two, goes with the one before)."""
    best = None
    for s in sentences:
        if s["start"] <= offset:
            best = s
        if s["start"] <= offset < s["end"]:
            return s
    return best


def label_intents(contexts: list[Context], chunk_texts: dict[str, str] | None = None) -> list[Context]:
    """Each context with the intent of its citation, from its sentence, its section and, when the
    chunks' texts are given, where the citation stands in the sentence (so that cues near it
    weigh more and the cues of the sentence's other citations do not count)."""
    from dataclasses import replace

    from tools.citations.intent import classify_intent

    out = []
    for c in contexts:
        marker = _marker_in_sentence(c, chunk_texts.get(c.chunk_id) if chunk_texts else None)
        intent = classify_intent(c.sentence, marker=marker, section=c.section)
        out.append(replace(c, intent=intent.label, cue=intent.cue))
    return out


def _marker_in_sentence(c: Context, chunk_text: str | None) -> tuple[int, int] | None:
    """The citation's (start, end) in `c.sentence` (whitespace-normalised), None when it is not
    found there (a citation the splitter left just outside its sentence)."""
    if chunk_text is None:
        return None
    surface = " ".join(chunk_text[c.cite_start : c.cite_end].split())
    before = " ".join(chunk_text[c.start : c.cite_start].split())
    at = c.sentence.find(surface, max(0, len(before) - 1)) if surface else -1
    if at < 0:
        at = c.sentence.find(surface) if surface else -1
    return (at, at + len(surface)) if at >= 0 else None


__all__ = ["Found", "label_intents", "paper_contexts"]
