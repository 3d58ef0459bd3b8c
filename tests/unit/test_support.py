"""The deterministic support check (agent/answer/support.py) on hand-made claims."""

from __future__ import annotations

from decimal import Decimal

import pytest

from agent.answer.support import check_claim
from agent.reading.figures import names, numbers

pytestmark = pytest.mark.unit

CITED = [
    "SPECTER is trained with a triplet margin loss on 684K triplets and reaches 81.1 F1 in 12 ms per paper.",
    "The corpus has 81.1M papers, of which 2,564,545 are cited.",
]
PAPER = ["SPECTER: Document-level Representation Learning using Citation-informed Transformers ACL 2020"]


@pytest.mark.parametrize(
    "claim",
    [
        "SPECTER trains with a triplet margin loss.",
        "It learns from 684,000 triplets and reaches 81.1 F1.",  # a paraphrase, 684K written out
        "The corpus holds 81.1 million papers.",  # 81.1M = 81.1 million
        "About 2564545 of the papers are cited.",  # no thousands separator
        "Encoding takes 12 ms per paper.",
        'SPECTER (ACL 2020) uses "a triplet margin loss".',  # the paper's own year; an exact quote
        "Transformers informed by citations.",  # a name from the cited paper's title
    ],
)
def test_supported_claims_pass(claim):
    assert check_claim(claim, CITED, PAPER) is None


@pytest.mark.parametrize(
    "claim, reason",
    [
        ("SPECTER reaches 81.2 F1.", "the number '81.2'"),  # a changed number
        ("Encoding takes 12 s per paper.", "other units"),  # a unit change
        ("SciBERT is trained with a triplet loss.", "the name 'SciBERT'"),  # a wrong name
        ("SPECTER uses BERT.", "the name 'BERT'"),  # an acronym inside a longer one is not that acronym
        ('It uses a "quadruplet loss".', "the quoted phrase"),
        ("The corpus has 81.1 billion papers.", "the number"),
        ("It is fast环境.", "another script"),
        ("SPECTER reaches 81.1 F1 in 2019.", "the number '2019'"),
    ],
)
def test_unsupported_claims_fail_with_a_reason(claim, reason):
    why = check_claim(claim, CITED, PAPER)
    assert why is not None and reason in why


def test_a_claim_citing_nothing_fails():
    assert check_claim("Anything.", [], PAPER) == "it cites no sentence"


def test_a_bare_number_in_the_sentence_accepts_a_unit_the_sentence_names():
    row = ["SPECTER | 80.0 | 75.2"]
    assert check_claim("SPECTER reaches 80.0 F1.", row, ["Model | F1 | MAP"]) is None
    assert "unit" in check_claim("SPECTER reaches 80.0 %.", row, ["Model | F1 | MAP"])


def test_an_acronym_may_abbreviate_words_of_the_evidence():
    ev = ["We present conditional random fields, which reach 95.7 F1."]
    assert check_claim("CRFs reach 95.7 F1.", ev) is None
    assert "HMM" in check_claim("HMMs reach 95.7 F1.", ev)


def test_numbers_and_names_are_read_as_written():
    assert [(v, u) for v, u, _ in numbers("81.1M, 95.7%, 1,024 tokens, 3.5x, CoNLL-2003, GPT-4, F1")] == [
        (Decimal("81100000"), None),
        (Decimal("95.7"), "%"),
        (Decimal("1024"), "tokens"),
        (Decimal("3.5"), "x"),
    ]
    assert names("SPECTER and SciBERT beat fastText on CoNLL-2003 (F1); The model") == [
        "SPECTER",
        "SciBERT",
        "fastText",
        "CoNLL-2003",
        "F1",
    ]


def test_a_name_after_digits_and_a_repeated_sentence_id():
    assert check_claim("mTc-WBC scans were used.", ["We used 99mTc-WBC scintigraphy."]) is None
    assert check_claim("As S2 states, CRFs beat HMMs.", ["CRFs beat HMMs."]) is None  # S2: the prompt's id
