"""The answerers of ``litloop eval``: how one benchmark question becomes an ``Outcome``.

- **agent** (``AgentAnswerer``): the question through ``agent.api.ask`` with a preset
  (``paper``, ``local``, ...);
- **retrieval** (``RetrievalAnswerer``, ``--no-llm`` or a variant name): an LLM-free ranking.
  ``A+B`` (what ``--no-llm`` runs) is ``tools.retrieval.pipeline.run_retrieval``, the pipeline
  ``litloop retrieve`` shows; the other variants are ``evals.variants.VARIANTS``. The
  submission names the top paper for a single-paper question and the top 5 for a multi-paper
  one (the median multi-paper question of citerec dev and LitTraceQA validation A has 4 gold
  papers), with the best pooled chunk of each as evidence (``A+B`` only), and no answer.

Every answerer has ``name``, ``kind``, ``answer(q)``, ``chunk_text(chunk_id)`` (for the
judge), ``describe()`` (the run's identity in ``run.json``), ``settings_dump()`` and ``close()``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from evals.datasets import Question

CANDIDATES_KEPT = 50
# Papers a retrieval-only submission names, by task family (default for any other family).
NO_LLM_PAPERS = {"hidden_source_single_paper": 1}
NO_LLM_PAPERS_DEFAULT = 5
NO_LLM_VARIANT = "A+B"


@dataclass
class Outcome:
    """What one question produced."""

    submission: dict[str, Any]
    candidates: list[str]
    answer_text: str = ""
    citations: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, float] = field(default_factory=dict)
    errors: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


def no_llm_paper_count(task_family: str | None) -> int:
    return NO_LLM_PAPERS.get(task_family or "", NO_LLM_PAPERS_DEFAULT)


def retrieval_submission(q: Question, ranking: Sequence[str], evidence: Callable[[str], Any] | None = None) -> dict:
    """A submission from a paper ranking: the top papers (1 or 5), their best chunk as evidence."""
    from agent.records.submission import SOURCE_TYPE, evidence_locator

    papers = list(ranking[: no_llm_paper_count(q.task_family)])
    items = []
    for pid in papers:
        for p in evidence(pid) if evidence else []:
            items.append(
                {
                    "paper_id": pid,
                    "source_type": SOURCE_TYPE.get(p.kind, "text_span"),
                    "locator": evidence_locator(p.locator.to_dict()),
                }
            )
    return {"query_id": q.query_id, "gold_papers": [{"paper_id": p} for p in papers], "evidence": items, "answer": {}}


def warm_up(index) -> None:
    """Load the embedder and open the dense index before the clock runs: otherwise the first
    question's latency holds seconds of model loading and the p95 reads as a slow query."""
    if hasattr(index, "dense_chunks"):  # a multi-corpus index warms up on its own
        index.dense_chunks("warm up", 1)


class RetrievalAnswerer:
    """An LLM-free ranking per question (a variant of ``evals.variants``)."""

    kind = "retrieval"

    def __init__(self, variant: str, index: Path):
        from agent.settings import get_settings
        from evals.variants import VARIANTS
        from tools.index import open_index

        if variant not in VARIANTS:
            raise ValueError(f"unknown retrieval variant {variant!r}; choose from {', '.join(VARIANTS)}")
        self.name = self.variant = variant
        self.settings = get_settings(index=index)
        self.index = open_index(index, self.settings)
        self.reranker = None
        if variant == "rerank":
            from tools.models.rerank import build_reranker

            self.reranker = build_reranker(self.settings.rerank, self.settings.device)
        self._fn = VARIANTS[variant]
        if variant not in ("bm25", "paper-bm25"):
            warm_up(self.index)

    def answer(self, q: Question) -> Outcome:
        if self.variant == NO_LLM_VARIANT:
            from tools.retrieval.pipeline import run_retrieval
            from tools.retrieval.retrieve import passage_of

            run = run_retrieval(self.index, q.question, self.settings, size=CANDIDATES_KEPT)
            ranking = run.fused
            submission = retrieval_submission(
                q, ranking, lambda pid: [passage_of(self.index, h) for h in run.evidence(pid, 1)]
            )
            return Outcome(submission, ranking[:CANDIDATES_KEPT], extra={"seeds": run.seeds})
        ranking = self._fn(self.index, q.question, self.settings, self.reranker)
        return Outcome(retrieval_submission(q, ranking), ranking[:CANDIDATES_KEPT])

    def chunk_text(self, chunk_id: str) -> str | None:
        row = self.index.chunk_row.get(chunk_id)
        return None if row is None else self.index.chunks[row].text

    def describe(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "variant": self.variant,
            "submission_papers": {**NO_LLM_PAPERS, "default": NO_LLM_PAPERS_DEFAULT},
            "reranker": self.settings.rerank.backend if self.variant == "rerank" else None,
        }

    def settings_dump(self) -> dict[str, Any]:
        return self.settings.model_dump(mode="json")

    def close(self) -> None:
        self.index.close()


class AnswerFailed(RuntimeError):
    """The agent's run gave no answer (its status is `failed`): recorded as a failed question."""


class AgentAnswerer:
    """Each question through ``agent.api.ask`` with a preset."""

    kind = "agent"

    def __init__(self, preset: str | None, index: Path, overrides: dict | None = None):
        from agent.api import make_run_context
        from agent.runtime.resources import index_for

        self.index_path = index
        self.overrides = dict(overrides or {})
        self.context = make_run_context(preset, index=str(index), **self.overrides)
        self.name = self.preset = self.context.preset
        self.index = index_for(self.context)
        warm_up(self.index)

    def answer(self, q: Question) -> Outcome:
        from agent.api import ask
        from agent.graph import graph

        result = ask(
            q.question,
            preset=self.preset,
            index=str(self.index_path),
            graph=graph,
            **q.ask_arguments(),
            **self.overrides,
        )
        if result["status"] == "failed":  # no answer (the endpoint failed): a failed question, retried later
            failure = (result["answer"] or {}).get("failure") or "the run failed"
            raise AnswerFailed(f"no answer: {failure} (trace {result.get('trace_id')})")
        # the agent's own fused A/B ranking (kadr: the papers of its top chunks)
        candidates = list(result["ranking"] or result["candidates"])
        answer = result["answer"]
        citations = [
            {k: c.get(k) for k in ("n", "chunk_id", "paper_id", "kind", "quote")} for c in answer.get("citations", [])
        ]
        extra = {
            "rounds": result["rounds"],
            "subqueries": result["subqueries"],
            "insufficient_evidence": bool(answer.get("insufficient_evidence")),
            "reader_candidates": list(result["candidates"]),
            "trace_id": result.get("trace_id"),
            "status": result["status"],
            # what the attribution benchmarks read: the readers' verdicts, the claims kept and
            # dropped, and how a multiple-choice answer was decided
            "readings": [
                {k: r.get(k) for k in ("paper_id", "relevant", "model_relevant", "relevant_p", "note", "failed")}
                for r in result.get("readings") or []
            ],
            "claims": [c["text"] for c in answer.get("claims", [])],
            "rejected_claims": answer.get("rejected_claims", []),
            "fallback": answer.get("fallback", ""),
            "choice": answer.get("choice", ""),
            "model_choice": answer.get("model_choice"),
            "choice_scores": answer.get("choice_scores"),
        }
        return Outcome(
            result["submission"],
            candidates[:CANDIDATES_KEPT],
            answer.get("text", ""),
            citations,
            dict(result["usage"]),
            list(result["errors"]),
            extra,
        )

    def chunk_text(self, chunk_id: str) -> str | None:
        row = self.index.chunk_row.get(chunk_id)
        return None if row is None else self.index.chunks[row].text

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "preset": self.preset, **({"settings": self.overrides} if self.overrides else {})}

    def settings_dump(self) -> dict[str, Any]:
        from agent.runtime.resources import settings_for

        return {**settings_for(self.context).model_dump(mode="json"), "context": asdict(self.context)}

    def close(self) -> None:
        """The index belongs to the process-wide cache in agent.runtime.resources."""


def run_names() -> tuple[list[str], list[str]]:
    """(retrieval variants, agent presets) a run or a comparison can name."""
    from agent.context import preset_names
    from evals.variants import VARIANTS

    return list(VARIANTS), preset_names()


def make_answerer(name: str | None, index: Path, *, no_llm: bool = False, overrides: dict | None = None):
    """A retrieval variant or an agent preset by name (None: the default preset, or ``A+B``
    with ``no_llm``)."""
    variants, presets = run_names()
    if no_llm:
        if name and name not in variants:
            raise ValueError(
                f"--no-llm runs LLM-free retrieval; {name!r} is not one of its variants ({', '.join(variants)})"
            )
        return RetrievalAnswerer(name or NO_LLM_VARIANT, index)
    if name in variants:
        return RetrievalAnswerer(name, index)
    if name is not None and name not in presets:
        raise ValueError(
            f"unknown preset {name!r}; agent presets: {', '.join(presets)}; LLM-free variants: {', '.join(variants)}"
        )
    return AgentAnswerer(name, index, overrides)
