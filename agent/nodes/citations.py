"""read_citations: a question about a cited work ("who cites X", "which papers build on X",
"what do the papers say about X") read from the citation contexts instead of searched for.

Each paper that cites X becomes a reading whose evidence is its citing sentences, so synthesize
answers from them as from any reading (a "which papers" question names each citing paper with
its sentences; any other writes claims on them), and its citations quote the citing sentences.
When X names no cited work of the index, or no paper's text cites it, the node reads nothing and
the run searches as usual. SEE: docs/citations.md.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from agent.context import Context
from agent.reading.evidence import sentence_record
from agent.reading.injection import addresses_reader
from agent.reading.shape import citation_subject, papers_to_read, subject_names
from agent.runtime.resources import index_for
from agent.state import State
from tools.retrieval.sentences import Sentence


def read_citations(state: State, runtime: Runtime[Context]) -> dict:
    ctx = runtime.context
    idx = index_for(ctx)
    subject = citation_subject(state["question"]) or ""
    works = cited_works(idx, subject)
    readings: dict[str, Any] = {}
    contexts: list[dict[str, Any]] = []
    for work in works:
        for citing in work["citing"]:
            # a citing sentence that addresses its reader is withheld like any other sentence
            # (`agent.reading.injection.addresses_reader`): never evidence, never quoted; its paper is
            # flagged by the answer (`agent.reading.evidence.steering_sentences`)
            shown = [c for c in citing["contexts"] if not addresses_reader(c["sentence"])]
            if not shown:
                continue
            r = readings.setdefault(
                citing["paper_id"],
                {"paper_id": citing["paper_id"], "relevant": True, "evidence": [], "reader": "citation_context"},
            )
            for c in shown:
                sent = Sentence(chunk_id=c["chunk_id"], start=c["start"], end=c["end"], text=c["sentence"])
                if all(e["start"] != c["start"] or e["chunk_id"] != c["chunk_id"] for e in r["evidence"]):
                    r["evidence"].append(sentence_record(idx, sent))
                contexts.append(
                    {
                        "chunk_id": c["chunk_id"],
                        "start": c["start"],
                        "citation_id": citing["number"],
                        "cited": work["target"],
                        "intent": c["intent"],
                    }
                )
    kept = list(readings.values())[: papers_to_read(ctx, state["question"])]
    return {"readings": kept, "citation_contexts": contexts, "cited_works": [w["target"] for w in works]}


def cited_works(idx, subject: str) -> list[dict[str, Any]]:
    """The `cites` records of the works `subject` names (tools/citations/query.py): as asked,
    else without a generic last word ("the SPECTER paper"); none when it names nothing cited."""
    from tools.citations.query import UnknownWork, cites_record

    for name in subject_names(subject):
        try:
            works = cites_record(idx, name)["works"]
        except UnknownWork:
            continue
        if any(c["contexts"] for w in works for c in w["citing"]):
            return works
    return []
