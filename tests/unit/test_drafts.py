"""The words of an answer read out of a JSON reply that is still being written."""

from __future__ import annotations

import itertools
import json

from agent.llm.drafts import draft_parts, draft_text


def test_claims_so_far_are_read_from_a_reply_cut_anywhere():
    whole = json.dumps(
        {
            "claims": [
                {"text": "CRFs reach 95.7 F1 on chunking.", "sentences": ["S1"]},
                {"text": 'A "BiLSTM-CRF" reaches 90.9\nF1.', "sentences": ["S2"]},
            ],
            "insufficient_evidence": False,
        }
    )
    seen = [draft_text(whole[:n]) for n in range(len(whole) + 1)]
    assert seen[-1] == 'CRFs reach 95.7 F1 on chunking. A "BiLSTM-CRF" reaches 90.9 F1.'
    # the words only grow: each draft begins with the one before (an escape is never shown half-written)
    for before, after in itertools.pairwise(seen):
        assert after.startswith(before.rstrip()) or not before, (before, after)
    assert seen[whole.index("95.7") + 2] == "CRFs reach 95"
    assert "\\" not in "".join(seen)


def test_a_copied_fact_shows_its_claim_not_its_value_and_unicode_escapes_decode():
    raw = '{"value": "95.7 F1", "claim": "CRFs reach 95.7 F1 \\u2013 the best'
    assert draft_parts(raw) == ["CRFs reach 95.7 F1 – the best"]
    assert draft_text('{"value": "95.7", "claim": "x \\u20') == "x"


def test_no_claim_yet_is_no_draft():
    assert draft_text('{"claims": [{"sente') == ""
    assert draft_text("") == ""
