"""Choose, then copy: a fact's answer copied from the sentences that best match its question.

A small model chooses better than it writes. The joint reading's sentences (`offered_sentences`)
are ranked by the question's words with no model call (`ranked_offered`); with `choose_by` the
model's next-token probabilities re-rank the best few (`sentence_probabilities`: each sentence's
letter; `answer_probabilities`: each sentence's P(yes)). One call then copies the answer's value
from the best `choose_sentences`: the reply's `value` is an enum of their own word spans
(`copy_values`; only those holding a figure for a question that asks for a quantity), so a
grammar-constrained model cannot write a figure or name they do not hold; the claim is written
around the value and checked as every claim is (`agent.answer.claims.check_claims`, the support
judge). With no claim left, the answer quotes the sentence holding the value first and names the
value (`agent.answer.assemble.build_answer`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agent import prompts
from agent.answer.choice import CallFailed, normalised, option_logprobs, synthesis_model
from agent.llm.schemas import Claim, Synthesis, copied_fact_model
from agent.reading.evidence import listing
from agent.reading.shape import asks_quantity
from agent.runtime.calls import llm
from agent.state import add_usage

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

    from agent.context import Context
    from agent.records.answer import ChosenSentence, RejectedClaim
    from agent.state import RunError, State
    from tools.handle import IndexHandle
    from tools.retrieval.sentences import Sentence

LABELS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
SPAN_WORDS = 6  # longest value copied, in words
MOST_SPANS = 400  # enum size kept in the schema (short spans first)
_EDGE = "\"'“”‘’.,;:()[]{}"
_DIGIT = re.compile(r"\d")
_REFERENCE = re.compile(
    r"\b(?:Tables?|Figs?\.?|Figures?|Sections?|Appendix|Equations?|Eqs?\.?)\s*\(?[A-Z]?\d+(?:\.\d+)*\)?|§\s*\d+(?:\.\d+)*"
)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def word_spans(text: str) -> list[str]:
    """The spans of 1 to SPAN_WORDS consecutive words of a sentence (a table row's cells one by
    one), punctuation trimmed at their edges, shortest first, each once, at most MOST_SPANS:
    what a value may be copied as."""
    text = _REFERENCE.sub(" ", text)  # "Table 6", "§ 2.1": where a value is, not a value
    parts = [c for c in text.split("|") if c.strip()] if "|" in text else [text]
    seen: dict[str, None] = {}
    for n in range(1, SPAN_WORDS + 1):
        for part in parts:
            words = [w.strip(_EDGE) for w in part.split()]
            words = [w for w in words if w]
            for i in range(len(words) - n + 1):
                seen.setdefault(" ".join(words[i : i + n]), None)
    return list(seen)[:MOST_SPANS]


def copy_values(spans: Sequence[Sequence[str]], quantity: bool = False) -> list[str]:
    """The values a copy may take from the offered sentences' `word_spans`, each once, at most
    MOST_SPANS: for a quantity, only those that hold a digit, when any does."""
    values = list(dict.fromkeys(v for per in spans for v in per))
    if quantity and any(_DIGIT.search(v) for v in values):
        values = [v for v in values if _DIGIT.search(v)]
    return values[:MOST_SPANS]


def states_value(claim: str, value: str) -> bool:
    """Whether a claim states the copied value: each of its numbers, or, for a value without
    one, the value itself (case and spacing aside)."""
    numbers = _NUMBER.findall(value)
    if numbers:
        found = set(_NUMBER.findall(claim))
        return all(n in found for n in numbers)
    flat = " ".join(value.casefold().split())
    return bool(flat) and flat in " ".join(claim.casefold().split())


@dataclass
class Chosen:
    """The outcome of choose-then-copy: `shown` in the chooser's order, the sentence holding the
    copied value first (the claim cites S1), the offered ones' scores, the copied value and the
    synthesis made of the claim (None: no claim to check)."""

    shown: list[Sentence]
    scores: list[float]  # of the sentences offered to the copy step, in `shown` order
    chooser: str = "words"  # what ordered them: "words" (no model call), "letter", "yesno"
    value: str = ""
    synthesis: Synthesis | None = None
    note: str = ""
    rejected: list[RejectedClaim] = field(default_factory=list)  # a claim refused before the checks
    usage: dict[str, Any] = field(default_factory=dict)
    errors: list[RunError] = field(default_factory=list)

    def figure(self, quantity: bool) -> str:
        """The copied value as a quote's lead names it: for a question asking for a quantity, a
        value that holds a figure; else nothing."""
        return self.value if quantity and _DIGIT.search(self.value) else ""

    def record(self) -> ChosenSentence:
        out: ChosenSentence = {
            "chooser": self.chooser,
            "scores": [round(p, 4) for p in self.scores],
            "value": self.value,
        }
        if self.note:
            out["note"] = self.note
        return out


def _with_table_context(idx: IndexHandle, s: Sentence) -> Sentence:
    """A sentence as the ranking scores it (`agent.reading.evidence.in_table_context`)."""
    from agent.reading.evidence import in_table_context
    from tools.retrieval.retrieve import chunk_of

    chunk = chunk_of(idx, s["chunk_id"])
    return in_table_context(s, chunk.kind, chunk.text)


def ranked_offered(idx: IndexHandle, question: str, shown: list[Sentence], how: str = "bm25") -> list[float]:
    """Scores that order the offered sentences for a fact, best first, with no model call:
    BM25 over the question's stems, a sentence holding a figure weighing `FIGURE_WEIGHT` times
    more when the question asks for a quantity ("bm25"); "hybrid" fuses that order with the
    bundled embedder's cosine to the question by RRF (k 10)."""
    from agent.reading.evidence import FIGURE_WEIGHT, holds_figure
    from tools.retrieval.sentences import sentence_scores

    if not shown:
        return []
    lex = list(sentence_scores([_with_table_context(idx, s) for s in shown], [question], stem=True))
    if asks_quantity(question):
        lex = [sc * (FIGURE_WEIGHT if holds_figure(s["text"]) else 1.0) for sc, s in zip(lex, shown, strict=True)]
    if how == "bm25":
        return lex
    import numpy as np

    from tools.retrieval.fusion import rrf_scores

    q = np.asarray(idx.embedder.encode([question])[0])
    cos = (np.asarray(idx.embedder.encode([s["text"] for s in shown])) @ q).tolist()
    n = range(len(shown))
    fused = rrf_scores([sorted(n, key=lambda i: (-lex[i], i)), sorted(n, key=lambda i: (-cos[i], i))], k=10)
    return [fused[i] for i in n]


def sentence_probabilities(
    model: Any, question: str, idx: IndexHandle, shown: list[Sentence], usage: dict[str, Any]
) -> list[float] | None:
    """Each shown sentence's probability of being the one that states the answer: its letter as
    the model's next token, renormalised over the letters. None: the endpoint gives no
    log-probabilities. A failed call raises CallFailed."""
    labels = list(LABELS[: len(shown)])
    user = prompts.render(
        "pick_sentence",
        question=question,
        sentences=listing(idx, shown, with_paper=True, ids=[f"{lb}." for lb in labels]),
        labels=", ".join(labels),
    )
    lp = option_logprobs(model, prompts.render("pick_sentence_system"), user, labels, usage=usage)
    if lp is None:
        return None
    p = normalised(lp)
    return [p[lb] for lb in labels]


def answer_probabilities(
    model: Any, question: str, idx: IndexHandle, shown: list[Sentence], usage: dict[str, Any]
) -> list[float] | None:
    """Each shown sentence's P(yes) that it states the answer, one next-token call a sentence
    (the question first, so the calls share the prompt's prefix in a prompt cache). None: the
    endpoint gives no log-probabilities. A failed call raises CallFailed."""
    system = prompts.render("answers_system")
    out: list[float] = []
    for s in shown:
        user = prompts.render("answers", question=question, sentence=listing(idx, [s], with_paper=True, ids=["-"]))
        lp = option_logprobs(model, system, user, ["yes", "no"], usage=usage)
        if lp is None:
            return None
        out.append(normalised(lp)["yes"])
    return out


def chooses_fact(ctx: Context, state: State) -> bool:
    """Whether this run answers its question by choose-then-copy: `fact_answer` "choose" and a
    fact question with no options and no table asked for, that does not ask how or why (an
    explanation is written from the sentences, not copied: `asks_explanation`)."""
    from agent.reading.shape import asks_explanation, shape_of

    types = state.get("answer_types") or ["freeform"]
    return (
        ctx.fact_answer == "choose"
        and not state.get("options")
        and "table" not in types
        and shape_of(ctx, state["question"]) == "fact"
        and not asks_explanation(state["question"])
    )


def offered_sentences(state: State, idx: IndexHandle, ctx: Context) -> list[Sentence]:
    """The sentences choose-then-copy ranks: the joint reading's, at most `choose_pool`."""
    from dataclasses import replace

    from agent.answer.selection import evidence_sentences

    return evidence_sentences(
        state, idx, replace(ctx, synthesize_sentences=ctx.choose_pool, synthesize_chunks=ctx.choose_pool)
    )


def choose_then_copy(state: State, runtime: Runtime[Context], shown: list[Sentence]) -> Chosen:
    """The fact's answer chosen and copied from `shown`: the sentences ranked with no model call
    (`ranked_offered`, "bm25"), the best `choose_sentences` re-ranked by the model when
    `choose_by` asks for it ("letter", "yesno"; an endpoint without log-probabilities keeps the
    words' order), then one call copies the value from their word spans and writes the claim
    around it. The sentence holding the value comes first in `Chosen.shown`, and the claim cites it."""
    from agent.runtime.resources import index_for

    ctx = runtime.context
    idx = index_for(ctx)
    question = state["question"]
    usage: dict[str, Any] = {"llm_calls": 0}
    errors: list[RunError] = []
    scores = ranked_offered(idx, question, shown)
    order = sorted(range(len(shown)), key=lambda i: (-scores[i], i))
    top = [shown[i] for i in order[: min(len(LABELS), ctx.choose_sentences)]]
    rest = [shown[i] for i in order[len(top) :]]
    top_scores = [scores[i] for i in order[: len(top)]]
    chooser = "words"
    if ctx.choose_by != "words" and len(top) > 1:
        t = time.perf_counter()
        pick = sentence_probabilities if ctx.choose_by == "letter" else answer_probabilities
        try:
            probs = pick(synthesis_model(ctx), question, idx, top, usage)
        except CallFailed as failed:
            probs = None
            errors.append({"node": "synthesize", "error": f"sentence choice: {failed.error}", "kind": failed.kind})
        usage["seconds_choose"] = time.perf_counter() - t
        if probs is not None:
            by_p = sorted(range(len(top)), key=lambda i: (-probs[i], i))
            top, top_scores, chooser = [top[i] for i in by_p], [probs[i] for i in by_p], ctx.choose_by
    chosen = Chosen(shown=[*top, *rest], scores=top_scores, chooser=chooser, usage=usage, errors=errors)
    spans = [word_spans(s["text"]) for s in top]
    values = copy_values(spans, asks_quantity(question))
    if not values:
        chosen.note = "the sentences offered have no words to copy"
        return chosen
    prompt = prompts.render("copy_fact", question=question, sentences=listing(idx, top, with_paper=True))
    call = llm("synthesize", copied_fact_model(values), prompt, runtime, draft=True)
    chosen.usage = add_usage(usage, call.usage)
    chosen.errors = [*errors, *call.errors]
    if call.value is None:
        chosen.note = "the copy step gave no usable reply"
        return chosen
    value = call.value.value if call.value.value in values else ""
    claim = " ".join(call.value.claim.split())
    if not value or not claim:
        chosen.note = "the copy step gave no value or no claim"
        return chosen
    holder = next(i for i, per in enumerate(spans) if value in per)
    chosen.shown = [top[holder], *(s for i, s in enumerate(top) if i != holder), *rest]
    chosen.scores = [top_scores[holder], *(sc for i, sc in enumerate(top_scores) if i != holder)]
    chosen.value = value
    if not states_value(claim, value):
        chosen.note = "the claim does not state the copied value"
        chosen.rejected = [
            {"text": claim, "sentence_ids": ["S1"], "reason": f"it does not state {value!r}, the value copied"}
        ]
    else:
        chosen.synthesis = Synthesis(claims=[Claim(text=claim, sentences=["S1"])])
    return chosen
