"""Multiple choice decided from the evidence: each option label's probability as the model's
next token, given the question and the readers' selected sentences, corrected by the same
prompt's probabilities with the evidence removed (contextual calibration: Zhao et al., 2021,
"Calibrate before use"), with an abstention rule when the best option does not stand out.

The arithmetic is pure (`calibrated`, `decide`); `option_logprobs` asks the model for one token
with its top log-probabilities (llama.cpp's and OpenAI's `logprobs`/`top_logprobs`). An endpoint
that returns no log-probabilities gives None, and the synthesis's own choice stands
(`choice_from_text` reads that choice when the model named it only in its text).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agent import prompts
from agent.answer.logprobs import first_token_top

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

    from agent.context import Context
    from agent.state import State

if TYPE_CHECKING:
    from agent.records.answer import ChoiceScores
    from agent.state import RunError
    from tools.retrieval.sentences import Sentence

TOP_LOGPROBS = 20  # the most OpenAI accepts; a label outside them gets FLOOR below the lowest
FLOOR = 2.0  # nats below the lowest listed log-probability for a label that was not listed
# option texts that mean "the evidence does not settle it" (PubMedQA's "maybe")
_INSUFFICIENT = re.compile(
    r"^\s*(maybe|unclear|unknown|cannot (be )?(determined|tell)|insufficient|not enough|"
    r"undetermined|uncertain|neither)\b",
    re.IGNORECASE,
)


def abstain_label(options: Mapping[str, str]) -> str | None:
    """The option that stands for "the evidence does not settle it", when exactly one does."""
    hits = [k for k, v in options.items() if _INSUFFICIENT.match(v or "")]
    return hits[0] if len(hits) == 1 else None


def _bare(token: str) -> str:
    return re.sub(r"[\s.:)(\]\[]", "", token).casefold()


def label_logprobs(
    top: Sequence[Mapping[str, Any]], labels: Sequence[str], options: Mapping[str, str] | None = None
) -> dict[str, float]:
    """Each label's log-probability among one token's top alternatives: tokens that are the
    label once stripped of spaces and punctuation ("A", " A", "A.", "a"), or the first word of
    its option's text ("Yes" for "A: yes"), add up; a label not among them gets FLOOR nats below
    the lowest listed."""
    floor = min((t["logprob"] for t in top), default=-20.0) - FLOOR
    words = {k: _bare((v or "").split()[0]) for k, v in (options or {}).items() if (v or "").split()}
    taken = []  # each token counts for one label (the label itself before an option's word)
    for t in top:
        tok = _bare(str(t.get("token", "")))
        hit = next((lb for lb in labels if tok == lb.casefold()), None) or next(
            (lb for lb in labels if words.get(lb) and len(words[lb]) > 1 and tok == words[lb]), None
        )
        if hit:
            taken.append((hit, math.exp(t["logprob"])))
    out: dict[str, float] = {}
    for label in labels:
        ps = [p for lb, p in taken if lb == label]
        out[label] = math.log(sum(ps)) if ps else floor
    return out


def normalised(logprobs: Mapping[str, float]) -> dict[str, float]:
    """Probabilities over the labels only (softmax of their log-probabilities)."""
    if not logprobs:
        return {}
    top = max(logprobs.values())
    exp = {k: math.exp(v - top) for k, v in logprobs.items()}
    total = sum(exp.values())
    return {k: v / total for k, v in exp.items()}


def calibrated(with_evidence: Mapping[str, float], prior: Mapping[str, float] | None) -> dict[str, float]:
    """p(label | question, evidence) / p(label | question), renormalised over the labels; with
    no prior, the uncorrected probabilities."""
    p = normalised(with_evidence)
    if not prior:
        return p
    q = normalised(prior)
    ratio = {k: p[k] / max(q.get(k, 0.0), 1e-9) for k in p}
    total = sum(ratio.values())
    return {k: v / total for k, v in ratio.items()}


def decide(probs: Mapping[str, float], abstain: str | None, margin: float) -> tuple[str, float]:
    """(label, margin of the best over the second). Below `margin`, the abstention option when
    the question has one."""
    ranked = sorted(probs.items(), key=lambda kv: (-kv[1], kv[0]))
    if not ranked:
        return "", 0.0
    gap = ranked[0][1] - (ranked[1][1] if len(ranked) > 1 else 0.0)
    if abstain and gap < margin:
        return abstain, gap
    return ranked[0][0], gap


def choice_prompt(question: str, options: Mapping[str, str], evidence: str | None) -> str:
    opts = "\n".join(f"{k}: {v}" for k, v in sorted(options.items()))
    block = prompts.render("choose_evidence", evidence=evidence) if evidence is not None else ""
    return prompts.render(
        "choose", question=question, options=opts, evidence_block=block, labels=", ".join(sorted(options))
    )


def support_probability(
    model: Any, claim: str, sentences: Sequence[str], usage: dict[str, Any] | None = None
) -> float | None:
    """P(yes) that `sentences` state `claim`, as the model's next token (yes and no only,
    renormalised), or None when the endpoint gives no log-probabilities."""
    user = prompts.render("support_judge", claim=claim, sentences="\n".join(f"- {s}" for s in sentences))
    lp = option_logprobs(model, prompts.render("support_system"), user, ["yes", "no"], usage=usage)
    return None if lp is None else normalised(lp)["yes"]


def qualifies_probability(
    model: Any, question: str, title: str, sentences: Sequence[str], usage: dict[str, Any] | None = None
) -> float | None:
    """P(yes) that a paper, by its title and these sentences, is one a "which papers" question
    asks for (yes and no only, renormalised), or None when the endpoint gives no log-probabilities.
    The question comes first, so consecutive papers share the prompt's prefix in a prompt cache."""
    user = prompts.render("qualifies", question=question, title=title, sentences="\n".join(f"- {s}" for s in sentences))
    lp = option_logprobs(model, prompts.render("qualifies_system"), user, ["yes", "no"], usage=usage)
    return None if lp is None else normalised(lp)["yes"]


class CallFailed(RuntimeError):
    """A next-token call that `agent.llm.token_call` recorded as failed (the endpoint did not
    answer, or had already failed the run's last calls)."""

    def __init__(self, error: str | None, kind: str | None) -> None:
        super().__init__(error or "no reply")
        self.error, self.kind = error or "no reply", kind or "call"


def option_logprobs(
    model: Any,
    system: str,
    user: str,
    labels: Sequence[str],
    options: Mapping[str, str] | None = None,
    usage: dict[str, Any] | None = None,
) -> dict[str, float] | None:
    """The labels' log-probabilities as the model's next token for this prompt
    (`agent.llm.token_call`), or None when the endpoint gives none. `usage`: llm_calls and
    tokens are added to it. A failed call raises CallFailed."""
    from agent.llm import token_call

    result = token_call(model, system, user, top_logprobs=TOP_LOGPROBS)
    if usage is not None:
        usage["llm_calls"] = usage.get("llm_calls", 0) + result.calls
        usage["input_tokens"] = usage.get("input_tokens", 0) + result.input_tokens
        usage["output_tokens"] = usage.get("output_tokens", 0) + result.output_tokens
    if not result.ok:
        raise CallFailed(result.error, result.error_kind)
    top = first_token_top(result.logprobs)
    return label_logprobs(top, labels, options) if top else None


_CITE = re.compile(r"\[([^\[\]]+?#c\d+)\]")
_LEAD = re.compile(r"^[\s\"'(\[]*(?:answer\s*[:=-]\s*)?(?:option\s+)?", re.IGNORECASE)


def choice_from_text(answer: str, options: dict[str, str]) -> str:
    """The option an answer names when the model left `choice` empty: the answer starts with a
    label ("B", "B)", "B: no") or with exactly one option's text ("No, ..."). Else empty: a
    guess is worse than no choice."""
    text = _LEAD.sub("", _CITE.sub("", answer)).strip()
    label = re.match(r"([A-Za-z])(?:$|[).:,;])", text)  # "B", "B)", "B: no"; not "A study"
    if label and label.group(1).upper() in options:
        return label.group(1).upper()
    words = text.lower()
    hits = [k for k, v in options.items() if v and re.match(rf"{re.escape(v.strip().lower())}\b", words)]
    return hits[0] if len(hits) == 1 else ""


def synthesis_model(ctx: Context) -> Any:
    """The synthesis's chat model, which the option scoring and the support judge also ask."""
    from agent.runtime.resources import chat_model, settings_for

    return chat_model("synthesize", settings_for(ctx), ctx.model_for("synthesize"))


def score_options(
    state: State, runtime: Runtime[Context], shown: list[Sentence]
) -> tuple[ChoiceScores | None, dict[str, Any], list[RunError]]:
    """The options scored as the model's next token with and without the selected sentences,
    and the label `choice_scoring` picks. (scores or None, usage, errors)."""
    import time

    ctx = runtime.context
    options = state["options"]
    labels = sorted(options)
    model = synthesis_model(ctx)
    system = prompts.render("choose_system")
    evidence = "\n".join(s["text"] for s in shown)
    t = time.perf_counter()
    usage: dict[str, float] = {"llm_calls": 0}
    try:
        with_ev = option_logprobs(
            model, system, choice_prompt(state["question"], options, evidence), labels, options, usage=usage
        )
        prior = None
        if with_ev is not None and ctx.choice_scoring == "calibrated":
            prior = option_logprobs(
                model, system, choice_prompt(state["question"], options, None), labels, options, usage=usage
            )
    except CallFailed as failed:  # recorded by the call: the synthesis's choice stands
        return None, usage, [{"node": "synthesize", "error": f"option scoring: {failed.error}", "kind": failed.kind}]
    except Exception as exc:  # a refused scoring call (a 400) leaves the synthesis's choice
        from agent.llm import describe_error, is_endpoint_error

        if not is_endpoint_error(exc):
            raise
        import openai

        if isinstance(exc, openai.BadRequestError):  # the endpoint does not take logprobs: not a failure
            return {"method": ctx.choice_scoring, "unavailable": describe_error(exc)}, usage, []
        return None, usage, [{"node": "synthesize", "error": f"option scoring: {describe_error(exc)}", "kind": "call"}]
    usage["seconds_choice"] = time.perf_counter() - t
    if with_ev is None:
        return None, usage, []
    probs = calibrated(with_ev, prior)
    label, margin = decide(probs, abstain_label(options), ctx.choice_abstain_margin)
    return (
        {
            "method": ctx.choice_scoring,
            "with_evidence": with_ev,
            "prior": prior,
            "probabilities": probs,
            "choice": label,
            "margin": margin,
            "abstain": abstain_label(options),
        },
        usage,
        [],
    )
