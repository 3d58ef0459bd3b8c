"""A claim's text as the answer keeps it (agent/answer/claims.py): the markers a model writes
dropped, a sentence cut off by the length cap left out."""

from __future__ import annotations

import pytest

from agent.answer.claims import clean_claim, whole_sentences

pytestmark = pytest.mark.unit


def test_an_answer_cut_off_mid_sentence_ends_at_its_last_whole_sentence():
    assert (
        whole_sentences("CRFs reach 95.7 F1 [p#c0]. They beat HMMs on the same data without the need for any task")
        == "CRFs reach 95.7 F1 [p#c0]."
    )
    assert whole_sentences("It works (see Table 2). Then") == "It works (see Table 2)."
    assert whole_sentences("One sentence, complete.") == "One sentence, complete."
    assert whole_sentences("No sentence end at all") == "No sentence end at all"  # nothing better to keep
    assert whole_sentences("A") == "A"  # a multiple-choice label stays
    assert whole_sentences("F1 is 95.7 on chunking") == "F1 is 95.7 on chunking"  # a decimal point is no end


def test_clean_claim_drops_the_markers_a_model_writes():
    assert (
        clean_claim("S1 patients with close margins had a 66% failure rate.")
        == "Patients with close margins had a 66% failure rate."
    )
    assert clean_claim("S2: CRFs reach 95.7 F1 [S2] (S1, S3) [crf#c0].") == "CRFs reach 95.7 F1."
    assert clean_claim("S2ORC holds 81.1M papers (Table S1).") == "S2ORC holds 81.1M papers (Table S1)."
