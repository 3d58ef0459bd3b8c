"""Multiple choice from the evidence (agent/answer/choice.py): the arithmetic on fixed log-probabilities."""

from __future__ import annotations

import math

import pytest

from agent.answer.choice import (
    abstain_label,
    calibrated,
    choice_from_text,
    decide,
    label_logprobs,
    normalised,
)
from agent.answer.logprobs import top_logprobs_of

pytestmark = pytest.mark.unit

OPTIONS = {"A": "yes", "B": "no", "C": "maybe"}


def test_label_tokens_add_up_and_a_missing_label_gets_the_floor():
    top = [
        {"token": "A", "logprob": math.log(0.5)},
        {"token": " A", "logprob": math.log(0.1)},
        {"token": "B.", "logprob": math.log(0.2)},
        {"token": "Yes", "logprob": math.log(0.05)},
        {"token": "The", "logprob": math.log(0.01)},
    ]
    lp = label_logprobs(top, ["A", "B", "C"], OPTIONS)
    assert math.isclose(math.exp(lp["A"]), 0.65) and math.isclose(math.exp(lp["B"]), 0.2)
    assert math.isclose(lp["C"], math.log(0.01) - 2.0)  # 2 nats below the lowest listed


def test_contextual_calibration_divides_by_the_prior():
    with_ev = {"A": math.log(0.6), "B": math.log(0.3), "C": math.log(0.1)}
    prior = {"A": math.log(0.8), "B": math.log(0.1), "C": math.log(0.1)}  # the model says "yes" to anything
    p = calibrated(with_ev, prior)
    # 0.6/0.8 : 0.3/0.1 : 0.1/0.1 = 0.75 : 3 : 1, renormalised
    assert math.isclose(p["A"], 0.75 / 4.75) and math.isclose(p["B"], 3 / 4.75) and math.isclose(p["C"], 1 / 4.75)
    assert decide(p, "C", 0.0) == ("B", pytest.approx((3 - 1) / 4.75))
    assert calibrated(with_ev, None) == normalised(with_ev)  # no prior: uncorrected


def test_a_small_margin_abstains_when_the_question_allows_it():
    p = {"A": 0.45, "B": 0.40, "C": 0.15}
    assert decide(p, "C", 0.1) == ("C", pytest.approx(0.05))
    assert decide(p, "C", 0.01)[0] == "A"
    assert decide(p, None, 0.5)[0] == "A"  # no abstention option: the best stands


def test_the_abstention_option_is_found_by_its_text():
    assert abstain_label(OPTIONS) == "C"
    assert abstain_label({"A": "HMM", "B": "CRF"}) is None
    assert abstain_label({"A": "maybe", "B": "unclear"}) is None  # two candidates: none chosen


def test_logprobs_are_read_from_the_reply_metadata():
    class Reply:
        response_metadata = {
            "logprobs": {
                "content": [{"token": "B", "logprob": -0.1, "top_logprobs": [{"token": "B", "logprob": -0.1}]}]
            }
        }

    assert top_logprobs_of(Reply()) == [{"token": "B", "logprob": -0.1}]
    assert top_logprobs_of(object()) is None


def test_choice_from_the_answer_text_when_the_model_left_it_empty():
    opts = {"A": "yes", "B": "no", "C": "maybe"}
    assert choice_from_text("A", opts) == "A"
    assert choice_from_text("B) no, it does not [p#c0]", opts) == "B"
    assert choice_from_text("Answer: C", opts) == "C"
    assert choice_from_text("No, the trial found no effect [p#c1].", opts) == "B"
    assert choice_from_text("Maybe: the evidence is mixed.", opts) == "C"
    assert choice_from_text("A study of 40 patients found ...", opts) == ""  # an article, not a label
    assert choice_from_text("D", opts) == ""  # not an option
    assert choice_from_text("The evidence is mixed.", opts) == ""
