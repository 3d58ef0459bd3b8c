"""Claims: their text cleaned of the markers a model writes, checked against the sentences they
cite (the deterministic check, `agent.answer.support`, then optionally the model's P(yes)), and
re-anchored to the shown sentence that states them when the model cited the one next to it."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from agent.answer.support import check_claim
from agent.reading.evidence import support_context
from agent.reading.figures import normalise
from tools.retrieval.sentences import Sentence, sentence_index, sentence_scores

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

    from agent.context import Context
    from tools.handle import IndexHandle

_MARKER = re.compile(r"\s*[\[(](?:\s*(?:S\d+|\d+|[^\[\]()\s]+#c\d+)\s*[,;]?)+[\])]")


_LEADING_IDS = re.compile(r"^(?:S\d+\s*[,;:.)\-–]?\s+)+")


def clean_claim(text: str) -> str:
    """A claim's text without citation markers the model wrote ([S3], (S1, S2), [P3#c12], [2],
    or ids leading the text: "S1 Patients with ..."), and without a sentence cut off by the
    length cap."""
    text = _LEADING_IDS.sub("", " ".join(_MARKER.sub("", text).split()))
    return whole_sentences(text[:1].upper() + text[1:])


_SENTENCE_END = re.compile(r"[.!?](?:\s*\[[^\[\]]+\])*[\"')\]]*(?=\s|$)")


def whole_sentences(answer: str) -> str:
    """The text without a sentence cut off at the end (the embedded model's claims are capped
    by its grammar, LITLOOP_LLM__LOCAL_TEXT_CHARS): up to the last sentence end, when there is one."""
    text = answer.strip()
    ends = list(_SENTENCE_END.finditer(text))
    if not ends or ends[-1].end() == len(text):
        return text
    return text[: ends[-1].end()]


def check_claims(
    claims: Any,
    shown: list[Sentence],
    idx: IndexHandle,
    judge: Any = None,
    threshold: float = 0.5,
    reanchor: int = 0,
    question: str = "",
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(kept, rejected): each claim with the shown sentences it cites; a claim is rejected when
    it cites no shown sentence or says what its sentences do not (`agent.answer.support.check_claim`).
    Ids that were not shown are dropped from a claim (and named in the rejection when none is left).
    `judge(claim, sentences) -> P(yes) or None`: a claim that passed is also dropped when the
    model's P(yes) is below `threshold`. With a judge and `reanchor` > 0, a claim that fails is
    tried on the `reanchor` other shown sentences that share most words with it, one at a time:
    one that passes both checks becomes its citation (`reanchored_from` keeps the ids the model
    gave), so a claim the model cited to the sentence next to the right one is kept, correctly
    cited, and never on the judge's word alone. A name the claim takes from the `question`
    (restating what is asked: "the SPECTER-based recommender") needs not be in its sentences;
    its numbers always do."""
    kept, rejected, seen = [], [], set()
    for claim in claims:
        text = clean_claim(claim.text)
        ids = list(dict.fromkeys(claim.sentences))
        known = [i for i in map(sentence_index, ids) if i is not None and i < len(shown)]
        unknown = [sid for sid in ids if sentence_index(sid) not in known]
        cited = [shown[i] for i in dict.fromkeys(known)]
        key = normalise(text)
        if not text or key in seen:
            continue
        seen.add(key)
        why: str | None
        if not cited:
            why = f"it cites {', '.join(unknown)}, which was not shown" if unknown else "it cites no sentence"
        else:
            why = (
                check_claim(
                    without_paper_ids(text, idx, shown),
                    [s["text"] for s in cited],
                    [*support_context(idx, cited), question],
                )
                or _only_steering(idx, cited)
                or _figure_beside_instruction(text, idx, cited)
            )
        p = None
        if not why and judge is not None:
            p = judge(text, [s["text"] for s in cited])
            if p is not None and p < threshold:
                why = f"the model judged that the cited sentences do not state it (P(yes) {p:.2f} < {threshold:.2f})"
        if why and judge is not None and reanchor > 0:
            moved = _reanchor(text, cited, shown, idx, judge, threshold, reanchor, question)
            if moved is not None:
                kept.append(
                    {
                        "text": text,
                        "sentences": [moved[0]],
                        "unknown_ids": unknown,
                        "support_p": moved[1],
                        "reanchored_from": {"sentence_ids": ids, "reason": why},
                    }
                )
                continue
        if why:
            rejected.append(
                {"text": text, "sentence_ids": ids, "reason": why, **({"support_p": p} if p is not None else {})}
            )
        else:
            kept.append({"text": text, "sentences": cited, "unknown_ids": unknown, "support_p": p})
    return kept, rejected


def without_paper_ids(text: str, idx: IndexHandle, shown: list[Sentence]) -> str:
    """The claim as the check reads it: the ids of the papers whose sentences were shown, which a
    prompt prints in each sentence's header and a model may repeat ("N18-3011 reports ..."), taken
    out (longest first), so the digits of an id are not read as a figure the sentences must hold."""
    from tools.retrieval.retrieve import chunk_of

    ids = {chunk_of(idx, s["chunk_id"]).paper_id for s in shown}
    for pid in sorted(ids, key=len, reverse=True):
        text = text.replace(pid, "")
    return text


def _only_steering(idx: IndexHandle, cited: list[Sentence]) -> str | None:
    """Why a claim is rejected when every sentence it cites is in a paper that tries to steer
    answers (`agent.reading.evidence.steering_sentences`): such a paper's figures are not taken on its
    word alone."""
    from agent.reading.evidence import steering_sentences
    from tools.retrieval.retrieve import chunk_of

    papers = list(dict.fromkeys(chunk_of(idx, s["chunk_id"]).paper_id for s in cited))
    flagged = [pid for pid in papers if steering_sentences(idx, pid)]
    if not papers or len(flagged) < len(papers):
        return None
    return (
        f"its only support is {', '.join(flagged)}, which contains text addressed to whoever reads it "
        f'("{steering_sentences(idx, flagged[0])[0][:120]}")'
    )


def _figure_beside_instruction(text: str, idx: IndexHandle, cited: list[Sentence]) -> str | None:
    """Why a claim is rejected when one of its figures is held only by cited sentences that share
    a chunk (a paragraph, a caption, a table) with a withheld sentence
    (`agent.reading.evidence.withheld_by_chunk`): an instruction split in two, a plain statement
    of a false figure and then an order to repeat it, cannot carry its figure into an answer."""
    from agent.reading.evidence import withheld_by_chunk
    from agent.reading.figures import numbers
    from tools.retrieval.retrieve import chunk_of

    for value, _, written in numbers(text):
        holding = [s for s in cited if any(v == value for v, _, _ in numbers(s["text"]))]
        if not holding:
            continue
        beside = [withheld_by_chunk(idx, chunk_of(idx, s["chunk_id"]).paper_id).get(s["chunk_id"]) for s in holding]
        if all(beside):
            return (
                f"its figure {written} is stated only beside text addressed to whoever reads it "
                f'("{str(beside[0])[:120]}")'
            )
    return None


def _reanchor(
    text: str,
    cited: list[Sentence],
    shown: list[Sentence],
    idx: IndexHandle,
    judge: Any,
    threshold: float,
    tries: int,
    question: str = "",
) -> tuple[Sentence, float] | None:
    """The shown sentence (not among `cited`) that states the claim: the `tries` sentences with
    the best word match (BM25 over the shown sentences) are checked, best first, by the
    deterministic check and the judge; (sentence, P(yes)) of the first that passes both."""
    taken = {(s["chunk_id"], s["start"]) for s in cited}
    scores = sentence_scores(shown, [text])
    order = sorted(
        (i for i, sc in enumerate(scores) if sc > 0 and (shown[i]["chunk_id"], shown[i]["start"]) not in taken),
        key=lambda i: -scores[i],
    )
    for i in order[:tries]:
        s = shown[i]
        if (
            check_claim(without_paper_ids(text, idx, shown), [s["text"]], [*support_context(idx, [s]), question])
            or _only_steering(idx, [s])
            or _figure_beside_instruction(text, idx, [s])
        ):
            continue
        p = judge(text, [s["text"]])
        if p is not None and p >= threshold:
            return s, p
    return None


def support_judge(runtime: Runtime[Context]) -> Any:
    """A judge for check_claims: the synthesis's model asked P(yes) per claim
    (`agent.answer.choice.support_probability`), and a counter of its calls. A failed call
    judges nothing (None): the deterministic check stands."""
    from agent.answer import choice
    from agent.llm import is_endpoint_error

    model = choice.synthesis_model(runtime.context)
    judged: dict[str, float] = {}

    def judge(claim: str, sentences: list[str]) -> float | None:
        try:
            return choice.support_probability(model, claim, sentences, usage=judged)
        except choice.CallFailed:  # recorded by the call (agent.llm.token_call)
            return None
        except Exception as exc:  # a refused call judges nothing either
            if not is_endpoint_error(exc):
                raise
            return None

    return judge, judged
