"""A comparison comes back as a table: one row per paper that qualifies, one column per aspect
the question names, each cell a quoted, cited sentence of that paper; no model call on the CPU
presets. The real graph index, the scripted model."""

from __future__ import annotations

import pytest

from agent.api import ask
from agent.reading.shape import COMPARE_COLUMN
from tools.retrieval.text import tokenize

pytestmark = pytest.mark.graph

QUESTION = "Compare conditional random fields and hidden Markov models on F1 and accuracy"
JOINT = dict(preset="local-fast", list_min_similarity=0.0, list_similarity_margin=3.0)


def test_a_comparison_is_a_table_of_quoted_cells_without_a_model_call(scripted):
    m = scripted(read=[], synthesize=[])
    out = ask(QUESTION, compare_papers=3, **JOINT)
    answer = out["answer"]
    assert m["read"].calls == [] and m["synthesize"].calls == []
    assert answer["shape"] == "comparison" and not answer["insufficient_evidence"]
    rows = answer["table_rows"]
    assert 1 <= len(rows) <= 3  # compare_papers
    assert all(set(r) == {"paper", "F1", "accuracy"} for r in rows)
    by_paper = {r["paper"].rsplit("(", 1)[1].rstrip(")"): r for r in rows}
    # each cell quotes the paper's own sentence that holds the aspect, cited
    assert "95.7 F1" in by_paper["crf"]["F1"] and "[" in by_paper["crf"]["F1"]
    assert "hmm" in by_paper, by_paper  # the HMM paper is the other method the question names
    assert "96.1 accuracy" in by_paper["hmm"]["accuracy"]
    assert by_paper["hmm"]["F1"] == "not stated in the sentences read"
    for claim in answer["claims"]:  # every cell is a claim: its sentence, word for word
        assert claim["text"] == " ".join(s["text"] for s in claim["sentences"])
        assert all(f"[{n}]" in answer["text"] for n in claim["citations"])
        assert {"f1", "accuraci"} & set(tokenize(claim["text"], stem=True))
    lines = answer["text"].splitlines()
    assert lines[1] == "| Paper | F1 | accuracy |" and lines[2] == "|---|---|---|"
    assert len(lines) == 3 + len(rows)


def test_a_comparison_that_names_no_aspect_has_one_column_of_each_papers_best_sentence(scripted):
    scripted(read=[], synthesize=[])
    answer = ask("What is the difference between conditional random fields and Markov models?", **JOINT)["answer"]
    assert answer["shape"] == "comparison"
    assert all(set(r) == {"paper", COMPARE_COLUMN} for r in answer["table_rows"])
    assert "| Paper | What it says |" in answer["text"]


def test_read_per_paper_a_comparison_goes_to_the_synthesis_and_the_shape_can_be_forced(scripted):
    m = scripted(
        read=(lambda messages: {"sentences": ["S1"], "relevant": True, "finding": ""},),
        synthesize=[{"claims": [], "insufficient_evidence": True}],
    )
    ask(QUESTION, preset="local-fast", list_reading="per_paper")
    synthesis = next(c for c in m["synthesize"].calls if c.kwargs.get("scripted_method"))
    assert "each of these aspects that its sentences state, naming the paper: F1; accuracy." in synthesis.user
    assert synthesis.kwargs["scripted_schema"]["properties"]["claims"]["maxItems"] == 4 * 2  # compare_papers x aspects
    assert len(m["read"].calls) == 6  # every candidate (list_papers, capped by the corpus)

    scripted(read=[], synthesize=[])
    forced = ask("CRFs and HMMs, side by side", answer_shape="comparison", **JOINT)["answer"]
    assert forced["shape"] == "comparison" and "| Paper | What it says |" in forced["text"]


def test_a_comparison_at_the_default_thresholds_leaves_out_the_paper_below_the_similarity_floor(scripted):
    # local-fast as shipped (list_min_similarity 0.35, list_similarity_margin 0.25, compare_papers 4):
    # the BiLSTM-CRF paper names neither HMMs nor accuracy, and its cosine is below the floor
    scripted(read=[], synthesize=[])
    out = ask(QUESTION, preset="local-fast")
    readings = {r["paper_id"]: r for r in out["readings"]}
    rows = out["answer"]["table_rows"]
    named = [r["paper"].rsplit("(", 1)[1].rstrip(")") for r in rows]
    assert named[:2] == ["crf", "hmm"] and "lstm" not in named, named
    assert readings["lstm"]["note"].startswith("similarity ") and "< 0.35" in readings["lstm"]["note"]
    assert all(readings[p]["relevant"] for p in named)
