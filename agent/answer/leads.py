"""A lead sentence per theme of an overview answer (agent/answer/overview.py groups the papers):
for a theme of two papers or more, the model writes one short sentence from their quoted sentences, and it is checked
like any claim (`agent.answer.claims.check_claims`: each figure, name and quoted phrase in the
sentences it cites, then the support judge where the run has one); a lead that fails is dropped,
with its reason, and the theme keeps its name and its papers' quotes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from agent import prompts
from agent.answer.claims import check_claims, support_judge
from agent.llm.schemas import Claim
from agent.reading.evidence import listing
from agent.runtime.calls import llm
from agent.state import add_usage
from tools.retrieval.sentences import Sentence

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

    from agent.context import Context
    from agent.state import State
    from tools.handle import IndexHandle

# what a theme's lead is written from: each paper's first quoted sentence, at most this many; a
# theme of one paper gets none (its quote already says what the paper does)
SENTENCES_PER_PAPER = 1
SENTENCES = 4
MIN_PAPERS = 2

# (theme, its sentences) -> (the lead kept, with the sentences it cites, or None; the leads dropped)
LeadWriter = Callable[[dict[str, Any], list[Sentence]], tuple[dict[str, Any] | None, list[dict[str, Any]]]]


def lead_sentences(papers: Sequence[str], sentences_of: dict[str, list[Sentence]]) -> list[Sentence]:
    """What a theme's lead is written from: its papers' first `SENTENCES_PER_PAPER` quoted
    sentences, in the theme's order, at most `SENTENCES`; none for fewer than `MIN_PAPERS` papers."""
    if len(papers) < MIN_PAPERS:
        return []
    return [s for pid in papers for s in sentences_of[pid][:SENTENCES_PER_PAPER]][:SENTENCES]


def too_long(text: str, words: int) -> str | None:
    """Why a lead is dropped for its length, or None."""
    n = len(text.split())
    return f"the lead has {n} words, more than {words}" if n > words else None


class LeadCalls:
    """Writes the leads of one answer (`write`, a `LeadWriter`) and keeps what they cost."""

    def __init__(self, state: State, runtime: Runtime[Context], idx: IndexHandle):
        self.state, self.runtime, self.idx = state, runtime, idx
        self.usage: dict[str, Any] = {"llm_calls": 0}
        self.errors: list[Any] = []
        self.judge, self.judged = support_judge(runtime) if runtime.context.support_judge else (None, {})

    def cost(self) -> dict[str, Any]:
        """The calls' usage, the support judge's included."""
        return add_usage(self.usage, self.judged)

    def write(
        self, theme: dict[str, Any], sentences: list[Sentence]
    ) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
        ctx = self.runtime.context
        if not sentences:
            return None, []
        prompt = prompts.render(
            "theme_lead",
            question=self.state["question"],
            theme=theme["name"],
            words=ctx.lead_words,
            sentences=listing(self.idx, sentences, with_paper=True),
        )
        call = llm("synthesize", Claim, prompt, self.runtime)
        self.usage = add_usage(self.usage, call.usage)
        self.errors.extend(call.errors)
        if call.value is None:
            return None, []
        why = too_long(call.value.text, ctx.lead_words)
        if why:
            return None, [{"text": call.value.text, "sentence_ids": call.value.sentences, "reason": why}]
        kept, rejected = check_claims(
            [call.value],
            sentences,
            self.idx,
            judge=self.judge,
            threshold=ctx.support_threshold,
            question=self.state["question"],
        )
        return (kept[0] if kept else None), rejected
