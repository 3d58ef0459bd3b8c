"""Which sentences the synthesis is shown, and which an extractive answer quotes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent.reading.evidence import FIGURE_WEIGHT, holds_figure, pick_evidence
from agent.reading.shape import asks_quantity
from agent.state import State
from tools.retrieval.fusion import round_robin
from tools.retrieval.sentences import Sentence, sentence_scores

if TYPE_CHECKING:
    from agent.context import Context
    from agent.state import Reading
    from tools.handle import IndexHandle


def reading_sentences(reading: Reading, idx: IndexHandle) -> list[Sentence]:
    """The sentences a reading selected as evidence, those whose chunk the index still has."""
    return [
        Sentence(chunk_id=e["chunk_id"], start=e["start"], end=e["end"], text=e["text"])
        for e in reading.get("evidence", [])
        if e["chunk_id"] in idx.chunk_row
    ]


def evidence_sentences(state: State, idx: IndexHandle, ctx: Context) -> list[Sentence]:
    """What the synthesis is shown: the sentences the readers selected in the relevant papers,
    taken in turn from each paper (reading order), at most `synthesize_sentences` from at most
    `synthesize_chunks` chunks. A reading that names chunks but no sentences (KADR's, which has
    no LLM reader) gets its chunks' sentences that best match the question."""
    per_paper: list[list[Sentence]] = []
    queries = [state["question"], *state.get("subqueries", [])]
    for r in state.get("readings", []):
        if not r.get("relevant"):
            continue
        if r.get("evidence"):
            sents = reading_sentences(r, idx)
        else:
            ids = [c for c in r.get("evidence_chunk_ids", []) if c in idx.chunk_row]
            # the paper-wide selectors need the paper in the index; the chunks' do not
            selector = ctx.evidence_selector if r.get("paper_id") in idx.papers else "chunks"
            sents = pick_evidence(idx, selector, r.get("paper_id", ""), ids, queries, ctx.read_sentence_chars)
        per_paper.append(sents)
    keyed = {(s["chunk_id"], s["start"]): s for sents in per_paper for s in sents}
    order = round_robin([[(s["chunk_id"], s["start"]) for s in sents] for sents in per_paper])
    out: list[Sentence] = []
    chunks: set[str] = set()
    for key in order:
        if len(out) >= ctx.synthesize_sentences:
            break
        if key[0] not in chunks and len(chunks) >= ctx.synthesize_chunks:
            continue
        chunks.add(key[0])
        out.append(keyed[key])
    # shown grouped by chunk, so a prompt lists each chunk's locator once
    first = {cid: i for i, cid in reversed(list(enumerate(s["chunk_id"] for s in out)))}
    return sorted(out, key=lambda s: (first[s["chunk_id"]], s["start"]))


def extractive(shown: list[Sentence], limit: int = 3, question: str = "") -> list[Sentence]:
    """The sentences an extractive answer quotes, at most `limit`, in the order shown: for a
    question that asks for a quantity, those that best match it (BM25 over stems), a sentence
    holding a figure weighing `FIGURE_WEIGHT` times more, so the quote shows the figures the
    papers give; otherwise the first shown sentence of each paper's chunks in turn (the
    readers' selections)."""
    if question and asks_quantity(question) and shown:
        scores = sentence_scores(shown, [question], stem=True)
        weighted = [
            sc * (FIGURE_WEIGHT if holds_figure(s["text"]) else 1.0) for sc, s in zip(scores, shown, strict=True)
        ]
        best = sorted(range(len(shown)), key=lambda i: (-weighted[i], i))[:limit]
        return [shown[i] for i in sorted(best)]
    by_chunk = round_robin(
        [
            [i for i, s in enumerate(shown) if s["chunk_id"] == cid]
            for cid in dict.fromkeys(s["chunk_id"] for s in shown)
        ]
    )
    return [shown[i] for i in sorted(by_chunk[:limit])]
