"""bench.streaming's summary of timed runs."""

from __future__ import annotations

from bench.streaming import summary


def test_the_summary_times_the_streamed_runs_and_counts_the_kept_drafts():
    rows = [
        {"first_words_s": 8.0, "answer_s": 12.0, "seconds": 12.1, "kept": True},
        {"first_words_s": 10.0, "answer_s": 13.0, "seconds": 13.2, "kept": False},
        {"first_words_s": None, "answer_s": 1.0, "seconds": 1.1, "kept": False},  # a list: no model call
    ]
    out = summary(rows)
    assert out == {
        "questions": 3,
        "streamed": 2,
        "first_words_s": 9.0,
        "answer_s": 12.0,
        "seconds": 12.1,
        "words_before_answer_s": 3.5,
        "kept": 1,
    }
