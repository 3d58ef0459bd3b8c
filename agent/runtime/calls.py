"""What every step of a run shares: the structured call with usage and failure recording, the
question's venue and year, chunks and papers as prompts show them."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from agent import prompts
from agent.runtime.resources import chat_model, settings_for
from agent.state import RunError
from tools.base import Locator
from tools.retrieval.retrieve import chunk_of

T = TypeVar("T", bound=BaseModel)

VENUES = (
    "ACL|EMNLP|NAACL|EACL|COLING|TACL|NeurIPS|NIPS|ICML|ICLR|AAAI|IJCAI|SIGIR|KDD|WWW|CVPR|ICCV|ECCV|"
    "CIKM|WSDM|ECIR|MICCAI|INTERSPEECH|ICASSP|UAI|AISTATS|COLT|JMLR|TPAMI"
)
_VENUE_YEAR = re.compile(rf"\b({VENUES})\s*'?((?:19|20)\d\d)\b", re.IGNORECASE)


def venue_year(question: str) -> tuple[str, str] | None:
    """The venue and year a question names (e.g. 'ICCV 2025'), for the [VENUE YEAR] tag."""
    m = _VENUE_YEAR.search(question)
    if not m:
        return None
    venue = next(v for v in VENUES.split("|") if v.lower() == m.group(1).lower())
    return venue, m.group(2)


@dataclass(frozen=True)
class LLMResult(Generic[T]):
    """A node's structured call: the value (None when it failed), the usage update for the
    state's `usage` reducer, the error records for `errors`, and, when asked for, the accepted
    reply's tokens with their top log-probabilities (`logprobs`; never part of `usage`)."""

    value: T | None
    usage: dict[str, float]
    errors: list[RunError] = field(default_factory=list)
    logprobs: tuple[dict[str, Any], ...] | None = None


def llm(
    role: str, schema: type[T], user: str, runtime, logprobs: int | None = None, draft: bool = False
) -> LLMResult[T]:
    """One structured call for a node (`agent.llm.structured_call`, attempts and endpoint
    health recorded there). With `logprobs`, the accepted reply's token log-probabilities.
    `draft`: the call writes the answer's words; with the run's `stream_drafts` on they go to
    the run's custom stream as the model writes them (`draft_writer`)."""
    from agent.llm import structured_call

    ctx = runtime.context
    model = chat_model(role, settings_for(ctx), ctx.model_for(role))
    repair = prompts.render("repair", error="{error}", schema="{schema}")
    on_text = draft_writer(runtime, role) if draft and not logprobs else None
    t = time.perf_counter()
    result = structured_call(
        model, schema, prompts.render("system"), user, repair_prompt=repair, logprobs=logprobs, on_text=on_text
    )
    usage = {
        "llm_calls": result.calls,
        "input_tokens": result.input_tokens,
        "output_tokens": result.output_tokens,
        f"seconds_{role}": time.perf_counter() - t,
    }
    errors: list[RunError] = (
        []
        if result.ok
        else [{"node": role, "error": result.error, "kind": result.error_kind, "raw": (result.raw or "")[:2000]}]
    )
    return LLMResult(result.value, usage, errors, result.logprobs if logprobs else None)


def draft_writer(runtime, role: str):
    """Where a drafting call's reply so far goes, or None: with the run's `stream_drafts` on,
    LangGraph's custom stream (`stream_mode="custom"`), as `{"draft": words so far, "role":
    role}` each time the words a reader sees change (`agent.llm.drafts.draft_text`)."""
    from agent.llm.drafts import draft_text

    writer = getattr(runtime, "stream_writer", None)
    if not getattr(runtime.context, "stream_drafts", False) or writer is None:
        return None
    shown = [""]

    def on_text(raw: str) -> None:
        words = draft_text(raw)
        if words != shown[0]:
            shown[0] = words
            writer({"draft": words, "role": role})

    return on_text


def chunk_block(chunk: dict[str, Any], max_chars: int) -> str:
    """A chunk as the model sees it: id, kind, location, text (cut), without the sentences that
    address their reader or are in another language than its paper's body (`language`, set by
    `chunk_dict`; `agent.reading.evidence.withheld_text`)."""
    from agent.reading.evidence import withheld_text
    from agent.reading.injection import shown_field

    loc = shown_field(Locator.from_dict(chunk.get("locator")).describe(), "section")
    text = " ".join(withheld_text(chunk["text"], chunk["kind"], chunk.get("language")).split())[:max_chars]
    return f"CHUNK {chunk['chunk_id']} [{chunk['kind']}; {loc}]\n{text}"


def paper_label(paper) -> str:
    """A paper's venue and year as a prompt shows them (the venue withheld when it addresses its
    reader, `agent.reading.injection.shown_field`)."""
    from agent.reading.injection import shown_field

    return " ".join(shown_field(x, "venue") for x in (paper.venue, paper.year) if x) or "venue/year unknown"


def chunk_dict(idx, chunk_id: str) -> dict[str, Any]:
    """The indexed chunk behind a hit, as a prompt shows it (`chunk_block`), with its paper's body
    language (`agent.reading.evidence.paper_language`), against which its sentences are read."""
    from agent.reading.evidence import paper_language

    chunk = chunk_of(idx, chunk_id)
    return {**chunk.to_dict(), "language": paper_language(idx, chunk.paper_id)}
