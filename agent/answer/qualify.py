"""Which candidates of a "which papers" question qualify by similarity: the bundled embedder's
cosine between the question and each paper's best sentences, with the share of the question's
aspects the paper mentions; and the reading records a qualified or unread paper gets."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent.reading.evidence import sentence_record
from tools.retrieval.sentences import Sentence

if TYPE_CHECKING:
    from tools.handle import IndexHandle


def paper_similarities(idx: IndexHandle, question: str, shown: dict[str, list[Sentence]]) -> dict[str, float]:
    """The bundled embedder's cosine between the question and each paper's title with its best
    sentences (one batch): how a "which papers" candidate is accepted without a model call."""
    import numpy as np

    if not shown:
        return {}
    texts = [" ".join([idx.papers[pid].title, *(s["text"] for s in sents)]) for pid, sents in shown.items()]
    vecs = np.asarray(idx.embedder.encode([question, *texts]), dtype=float)
    vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
    return {pid: round(float(v @ vecs[0]), 4) for pid, v in zip(shown, vecs[1:], strict=True)}


def list_scores(sims: dict[str, float], covs: dict[str, float], weight: float) -> dict[str, float]:
    """Each candidate's score in a "which papers" reading by similarity: the embedder's cosine
    plus `weight` times the share of the question's aspects its text mentions
    (`agent.reading.evidence.term_coverage`), so a paper that matches one part of the question only
    (association-rule mining with no privacy in it) scores below one that matches all of it."""
    return {pid: round(sims[pid] + weight * covs.get(pid, 0.0), 4) for pid in sims}


def qualifies(
    sim: float, score: float, best: float, floor: float, margin: float, coverage: float = 1.0, least: float = 0.0
) -> str:
    """Why a candidate does not qualify, or "" when it does: its cosine must reach `floor` (an
    absolute minimum), its score must be within `margin` of the best candidate's (a floor
    relative to the question: how similar papers are to a question depends on its wording), and
    its `coverage` of the question's aspects must reach `least`."""
    if coverage < least:
        return f"it mentions {coverage:.0%} of the question's aspects < {least:.0%}"
    if sim < floor:
        return f"similarity {sim:.2f} < {floor:.2f}"
    if score < best - margin:
        return f"score {score:.2f} < {best:.2f} (the best) - {margin:.2f}"
    return ""


def by_similarity(
    idx: IndexHandle, shown: dict[str, list[Sentence]], sims: dict[str, float], covs: dict[str, float], ctx: Any
) -> dict[str, dict[str, Any]]:
    """The candidates that qualify (`qualifies`, on `list_scores`), quoted with their best
    sentences; each reading records its coverage and score."""
    scores = list_scores(sims, covs, ctx.list_coverage_weight)
    best = max(scores.values(), default=0.0)
    out: dict[str, dict[str, Any]] = {}
    for pid, sents in shown.items():
        why = qualifies(
            sims[pid],
            scores[pid],
            best,
            ctx.list_min_similarity,
            ctx.list_similarity_margin,
            covs.get(pid, 0.0),
            ctx.list_min_coverage,
        )
        if not why:
            out[pid] = selected_reading(idx, pid, sents, "similarity", len(sents))
        else:
            out[pid] = {**unread_reading(pid, why), "sentences_shown": len(sents)}
        out[pid].update(coverage=round(covs.get(pid, 0.0), 4), score=scores[pid])
    return out


def selected_reading(idx: IndexHandle, pid: str, sentences: list[Sentence], by: str, shown: int) -> dict[str, Any]:
    evidence = [sentence_record(idx, s) for s in sentences]
    return {
        "paper_id": pid,
        "relevant": True,
        "reader": by,
        "evidence": evidence,
        "evidence_chunk_ids": list(dict.fromkeys(e["chunk_id"] for e in evidence)),
        "sentences_shown": shown,
    }


def unread_reading(pid: str, note: str) -> dict[str, Any]:
    return {"paper_id": pid, "relevant": False, "evidence": [], "evidence_chunk_ids": [], "note": note}
