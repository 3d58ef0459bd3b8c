"""What `litloop search`, `retrieve`, `index show`, `cites` and `refs` answer, as the records of
`agent.records.models`: one place for the commands' `--json`, the chats and the MCP server's
tools (agent/serve/mcp.py).

Each function takes an open index (an `IndexView`, or a `MultiIndex` over several corpora) and
checks its arguments against it: an unknown paper or seed id is an `UnknownPaper` whose message
says where to find ids. The text of chunks is returned as stored; a caller that hands it to a
model withholds the sentences that address their reader (`agent.reading.evidence.withheld_text`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent.records.models import (
    ChunkOut,
    CitesOut,
    PaperOut,
    RefsOut,
    RetrievedPaperOut,
    RetrieveOut,
    SearchHitOut,
    SearchOut,
    ShowPaperOut,
)


class UnknownPaper(ValueError):
    """A paper id the index does not hold (the message names the index and suggests ids)."""


def unknown_paper_message(idx, paper_id: str) -> str:
    """`no paper 'x' in index DIR; find paper ids with ...; did you mean ...?`"""
    where = f"index {idx.root}" if idx.root is not None else f"corpora {', '.join(idx.names)}"
    message = f'no paper {paper_id!r} in {where}; find paper ids with `litloop search "..."`'
    like = idx.ids_like(paper_id)
    return message + (f"; did you mean {', '.join(like)}?" if like else "")


def chunk_record(chunk: Any) -> ChunkOut:
    """A chunk (a `Chunk` or a `Passage`: its score and source too) as the records carry it."""
    return ChunkOut(
        chunk_id=chunk.chunk_id,
        kind=chunk.kind,
        text=chunk.text,
        locator=chunk.locator.to_dict(),
        score=getattr(chunk, "score", None),
        source=getattr(chunk, "source", None) or None,
    )


def search_record(idx, query: str, retriever: str = "hybrid", k: int = 10) -> tuple[list, SearchOut]:
    """`litloop search`: the hits (`PaperHit`, best first) and their record."""
    from tools.index.search import search

    hits = search(idx, query, retriever, k)  # type: ignore[arg-type]  # search() checks the name
    out = [SearchHitOut(paper_id=h.paper_id, title=h.title, score=h.score, chunk=chunk_record(h.chunk)) for h in hits]
    return hits, SearchOut(query=query, retriever=retriever, hits=out)


def check_seeds(idx, seeds: Sequence[str] | None) -> None:
    """Every seed must be a paper of the index."""
    unknown = [s for s in seeds or [] if s not in idx.papers]
    if unknown:
        raise UnknownPaper(f"unknown seed paper id(s): {', '.join(unknown)}; use ids from `litloop search`")


def retrieve_record(
    idx,
    question: str,
    *,
    subqueries: Sequence[str] | None = None,
    seeds: Sequence[str] | None = None,
    stage: str = "fused",
    k: int = 20,
) -> tuple[Any, RetrieveOut]:
    """`litloop retrieve`: Retrieve and Relate without an LLM. Returns the `RetrievalRun` and its
    record: the stage's top `k` papers, each with its score, rank, the chunks that put it
    in ranking A and the neighbour links that put it in ranking B."""
    from tools.retrieval.pipeline import STAGES, run_retrieval

    if stage not in STAGES:
        raise ValueError(f"the stage must be a, b or fused, not {stage!r}")
    if not question.strip():
        raise ValueError("the question is empty")
    check_seeds(idx, seeds)
    run = run_retrieval(
        idx, question, idx.settings, subqueries=list(subqueries or []) or None, seeds=seeds, relate=stage != "a"
    )
    scores = run.stage_scores(stage, idx.settings)
    papers = [
        _retrieved_paper(idx, run, pid, rank, scores.get(pid, 0.0))
        for rank, pid in enumerate(run.ranking(stage)[:k], start=1)
    ]
    record = RetrieveOut(
        question=question,
        stage=stage,
        subqueries=run.subqueries,
        seeds=run.seeds,
        papers=papers,
        seconds=run.seconds,
    )
    return run, record


def _retrieved_paper(idx, run, pid: str, rank: int, score: float) -> RetrievedPaperOut:
    from tools.retrieval.retrieve import passage_of

    return RetrievedPaperOut(
        paper_id=pid,
        title=idx.papers[pid].title,
        score=score,
        rank=rank,
        chunks=[chunk_record(passage_of(idx, h)) for h in run.evidence(pid)],
        via=run.b_why.get(pid, []),
    )


def paper_record(
    idx, paper_id: str, first_chunk: int = 0, max_chunks: int | None = None
) -> tuple[Any, list, ShowPaperOut]:
    """`litloop index show`: the paper, its chunks in order, and its record (the chunks from
    `first_chunk`, at most `max_chunks` of them: all by default)."""
    from agent.reading.evidence import flagged_sentences

    paper = idx.papers.get(paper_id)
    if paper is None:
        raise UnknownPaper(unknown_paper_message(idx, paper_id))
    chunks = idx.paper_chunks(paper_id)
    shown = chunks[first_chunk:] if max_chunks is None else chunks[first_chunk : first_chunk + max_chunks]
    record = ShowPaperOut(
        paper=PaperOut(**paper.to_dict()),
        flagged=bool(flagged_sentences(idx, paper_id)),
        text_loss=text_loss(idx, paper_id),
        chunk_count=len(chunks),
        first_chunk=first_chunk,
        chunks=[chunk_record(c) for c in shown],
    )
    return paper, chunks, record


def text_loss(idx, paper_id: str) -> dict[str, Any] | None:
    """The index's note that this PDF's reader kept too little of its text (share, lost pages),
    or None (it kept enough, it is no PDF, or the index was built before litloop recorded it)."""
    manifest = getattr(idx, "manifest", None)
    losses = (getattr(manifest, "counts", None) or {}).get("text_losses") or []
    return next((x for x in losses if x.get("paper_id") == paper_id), None)


def cites_record(idx, what: str) -> CitesOut:
    """`litloop cites`: who cites a paper or a cited work (tools/citations/query.py)."""
    from tools.citations.query import UnknownWork
    from tools.citations.query import cites_record as record

    try:
        return CitesOut(**record(idx, what))
    except UnknownWork as exc:
        like = idx.ids_like(what.strip())
        raise UnknownPaper(str(exc) + (f"; did you mean {', '.join(like)}?" if like else "")) from None


def refs_record(idx, paper_id: str) -> RefsOut:
    """`litloop refs`: what a paper cites, each reference with its contexts (tools/citations/query.py)."""
    from tools.citations.query import UnknownWork
    from tools.citations.query import refs_record as record

    try:
        return RefsOut(**record(idx, paper_id))
    except UnknownWork:
        raise UnknownPaper(unknown_paper_message(idx, paper_id)) from None
