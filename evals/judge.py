"""An LLM judge for free-form answers, on the LiveRAG scales.

Correctness against the benchmark's reference answer: 2 correct and relevant, 1 correct with
irrelevant information, 0 no answer (abstention), -1 incorrect. Faithfulness to the evidence the
answer cites: 1 full support, 0 partial, -1 none. SEE: the LiveRAG Challenge evaluation
guidelines (SIGIR 2025). The prompt is ``agent/prompts/judge.md`` (system: ``judge_system.md``);
the model is the ``judge`` role of ``agent.llm`` (the local model unless an endpoint is
configured), built through ``agent.runtime.resources.chat_model`` so tests can script it.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

CORRECTNESS = (-1, 0, 1, 2)
FAITHFULNESS = (-1, 0, 1)
EVIDENCE_CHARS = 1500  # per cited passage: enough for a table or a paragraph, bounded for small models
MAX_EVIDENCE = 8


class Judgement(BaseModel):
    reason: str = Field(default="", description="One or two sentences explaining both grades.")
    correctness: Literal[-1, 0, 1, 2] = Field(
        description="2 correct and relevant; 1 correct but with irrelevant information; 0 no answer "
        "(abstention); -1 incorrect."
    )
    faithfulness: Literal[-1, 0, 1] = Field(
        description="1 every part grounded in the cited evidence; 0 partly grounded; -1 not grounded or nothing cited."
    )


def evidence_block(citations: Sequence[Mapping[str, Any]], chunk_text: Callable[[str], str | None] | None) -> str:
    """The cited passages as the judge sees them: full chunk text when the index has it."""
    blocks = []
    for n, c in enumerate(citations[:MAX_EVIDENCE], start=1):
        text = (chunk_text(c["chunk_id"]) if chunk_text and c.get("chunk_id") else None) or c.get("quote", "")
        text = " ".join(str(text).split())[:EVIDENCE_CHARS]
        where = c.get("chunk_id") or c.get("paper_id", "")
        blocks.append(f"[{n}] {where} (paper {c.get('paper_id', '?')}, {c.get('kind', 'text')})\n{text}")
    return "\n\n".join(blocks) or "(no evidence cited)"


def judge_prompt(question: str, reference: str, answer: str, evidence: str) -> str:
    from agent import prompts

    return prompts.render("judge", question=question, reference=reference, answer=answer, evidence=evidence)


def judge_answer(
    question: str,
    reference: str,
    answer: str,
    citations: Sequence[Mapping[str, Any]] = (),
    *,
    chunk_text: Callable[[str], str | None] | None = None,
    model_name: str | None = None,
    settings=None,
) -> dict[str, Any]:
    """Grade one answer; returns a JSON-ready verdict (``ok`` false when the judge failed).

    An empty answer is not sent to the model: it is an abstention (correctness 0) with nothing
    to be faithful to (faithfulness None).
    """
    if not answer or not answer.strip():
        return {
            "ok": True,
            "skipped": "empty answer",
            "correctness": 0,
            "faithfulness": None,
            "reason": "",
            "llm_calls": 0,
            "input_tokens": 0,
            "output_tokens": 0,
            "seconds": 0.0,
        }
    from agent import prompts
    from agent.llm import structured_call
    from agent.runtime.resources import chat_model
    from agent.settings import default_settings

    model = chat_model("judge", settings or default_settings(), model_name)
    user = judge_prompt(question, reference, answer.strip(), evidence_block(citations, chunk_text))
    started = time.perf_counter()
    result = structured_call(
        model,
        Judgement,
        prompts.render("judge_system"),
        user,
        repair_prompt=prompts.render("repair", error="{error}", schema="{schema}"),
    )
    verdict: dict[str, Any] = {
        "ok": result.ok,
        "correctness": result.value.correctness if result.value else None,
        "faithfulness": result.value.faithfulness if result.value else None,
        "reason": result.value.reason.strip() if result.value else "",
        "llm_calls": result.calls,
        "input_tokens": result.input_tokens,
        "output_tokens": result.output_tokens,
        "seconds": time.perf_counter() - started,
    }
    if not result.ok:
        verdict["error"] = result.error
    return verdict


def summarize(verdicts: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Means and distributions of the grades (failed or skipped grades are left out of the means)."""
    verdicts = list(verdicts)
    correctness = [v["correctness"] for v in verdicts if v.get("correctness") is not None]
    faithfulness = [v["faithfulness"] for v in verdicts if v.get("faithfulness") is not None]
    c_counts, f_counts = Counter(correctness), Counter(faithfulness)
    return {
        "judged": len(verdicts),
        "failed": sum(not v.get("ok", False) for v in verdicts),
        "correctness_mean": sum(correctness) / len(correctness) if correctness else None,
        "faithfulness_mean": sum(faithfulness) / len(faithfulness) if faithfulness else None,
        "correctness_counts": {str(k): c_counts.get(k, 0) for k in CORRECTNESS},
        "faithfulness_counts": {str(k): f_counts.get(k, 0) for k in FAITHFULNESS},
        "llm_calls": sum(v.get("llm_calls", 0) for v in verdicts),
        "input_tokens": sum(v.get("input_tokens", 0) for v in verdicts),
        "output_tokens": sum(v.get("output_tokens", 0) for v in verdicts),
    }
