"""The next-token call (`agent.llm.token_call`: option scoring, the support judge) is
recorded like a structured call: one attempt with its tokens and log-probabilities, the run's
endpoint health counted and obeyed, a transport failure a failure value."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage

from agent.answer.choice import CallFailed, option_logprobs
from agent.llm import ENDPOINT_FAILURES_TO_STOP, endpoint_watch, token_call
from tests.fakes import ScriptedChatModel

pytestmark = pytest.mark.unit

TOP = [{"token": "B", "logprob": -0.1}, {"token": "A", "logprob": -2.5}]


def with_logprobs(token: str = "B") -> AIMessage:
    return AIMessage(
        content=token,
        usage_metadata={"input_tokens": 7, "output_tokens": 1, "total_tokens": 8},
        response_metadata={"logprobs": {"content": [{"token": token, "logprob": -0.1, "top_logprobs": TOP}]}},
    )


class Failing:
    """A model whose calls raise (the scripted model answers a probe it did not plan for as an
    endpoint without log-probabilities, so failures are scripted here)."""

    def __init__(self, exc: BaseException, then=None) -> None:
        self.exc, self.then, self.calls = exc, then, 0

    def bind(self, **kwargs):
        return self

    def invoke(self, messages):
        self.calls += 1
        if self.then is not None and self.calls > 2:
            return self.then
        raise self.exc


def test_a_reply_is_one_attempt_with_its_tokens_and_logprobs():
    model = ScriptedChatModel(responses=[with_logprobs()])
    result = token_call(model, "system", "user", top_logprobs=20)
    assert result.ok and result.value == "B" and result.calls == 1
    assert (result.input_tokens, result.output_tokens) == (7, 1)
    assert result.logprobs[0]["top_logprobs"] == TOP
    assert model.calls[0].kwargs["logprobs"] is True and model.calls[0].kwargs["max_tokens"] == 1


def test_option_logprobs_counts_the_call_and_raises_on_a_failed_one():
    usage: dict[str, float] = {}
    lp = option_logprobs(ScriptedChatModel(responses=[with_logprobs()]), "s", "u", ["A", "B"], usage=usage)
    assert lp is not None and lp["B"] > lp["A"] and usage == {"llm_calls": 1, "input_tokens": 7, "output_tokens": 1}
    with pytest.raises(CallFailed) as failed:
        option_logprobs(Failing(TimeoutError("down")), "s", "u", ["A", "B"])
    assert failed.value.kind == "call" and "TimeoutError: down" in failed.value.error


def test_failures_count_in_the_run_health_and_stop_the_calls():
    model = Failing(TimeoutError("down"))
    with endpoint_watch() as health:
        results = [token_call(model, "s", "u", top_logprobs=20) for _ in range(ENDPOINT_FAILURES_TO_STOP + 2)]
    assert [r.error_kind for r in results] == ["call"] * ENDPOINT_FAILURES_TO_STOP + ["not_sent"] * 2
    assert model.calls == ENDPOINT_FAILURES_TO_STOP and health.down


def test_a_reply_starts_the_failure_count_again():
    model = Failing(TimeoutError("down"), then=with_logprobs())
    with endpoint_watch() as health:
        results = [token_call(model, "s", "u", top_logprobs=20) for _ in range(3)]
    assert [r.ok for r in results] == [False, False, True] and health.failures == 0


def test_an_error_that_is_not_the_transport_raises():
    with pytest.raises(ValueError):
        token_call(Failing(ValueError("a bug")), "s", "u", top_logprobs=20)
