from __future__ import annotations

from pathlib import Path

import pytest

from agent.api import ask
from agent.graph import graph

from .conftest import (
    ANSWER,
    NOT_SATISFIED,
    SATISFIED,
    SMALL,
    cite_first_chunk,
    numbered,
)

pytestmark = pytest.mark.graph


def test_exactly_three_rounds_when_never_satisfied(scripted):
    m = scripted(decompose=numbered("crf query"), verify=(NOT_SATISFIED,), read=(cite_first_chunk,), synthesize=[ANSWER])
    out = ask("What F1 do CRFs reach on chunking?", **SMALL)
    assert len(m["decompose"].calls) == 3
    assert len(m["verify"].calls) == 3
    assert out["rounds"] == 3 and len(out["subqueries"]) == 6


def test_one_round_when_satisfied_at_once(scripted):
    m = scripted(decompose=numbered("crf"), verify=[SATISFIED], read=(cite_first_chunk,), synthesize=[ANSWER])
    out = ask("What F1 do CRFs reach on chunking?", **SMALL)
    assert len(m["decompose"].calls) == 1 and out["rounds"] == 1
    assert "crf" in out["candidates"][:3]


def test_stops_when_decomposition_brings_nothing_new(scripted):
    same = {"subqueries": ["conditional random fields F1"]}
    m = scripted(decompose=[same, same], verify=[NOT_SATISFIED], read=(cite_first_chunk,), synthesize=[ANSWER])
    out = ask("What F1 do CRFs reach on chunking?", **SMALL)
    assert len(m["decompose"].calls) == 2
    assert len(m["verify"].calls) == 1  # the second round searched nothing, so nothing to verify
    assert out["subqueries"] == ["conditional random fields F1"]


def test_missing_note_reaches_next_decomposition(scripted):
    m = scripted(decompose=numbered("q"), verify=[NOT_SATISFIED, SATISFIED], read=(cite_first_chunk,), synthesize=[ANSWER])
    ask("What F1 do CRFs reach on chunking?", **SMALL)
    second = m["decompose"].calls[1].user
    assert "the F1 of the HMM baseline" in second
    assert "q 0" in second and "q 1" in second  # earlier subqueries listed


def test_empty_missing_note_says_search_from_another_angle(scripted):
    m = scripted(decompose=numbered("q"), verify=[{**NOT_SATISFIED, "missing": ""}, SATISFIED],
                 read=(cite_first_chunk,), synthesize=[ANSWER])
    ask("What F1 do CRFs reach?", **SMALL)
    assert "no specific note; search from a different angle" in m["decompose"].calls[1].user


def test_venue_year_tag_on_every_subquery(scripted):
    scripted(decompose=[{"subqueries": ["crf chunking F1", "[ACL 2005] hmm baseline"]}], verify=[SATISFIED],
             read=(cite_first_chunk,), synthesize=[ANSWER])
    out = ask("Which ACL 2005 papers report CRF results?", **SMALL)
    assert out["subqueries"] == ["[ACL 2005] crf chunking F1", "[ACL 2005] hmm baseline"]


def test_invalid_json_repaired_once(scripted):
    m = scripted(decompose=["this is not json", {"subqueries": ["crf F1"]}], verify=[SATISFIED],
                 read=(cite_first_chunk,), synthesize=[ANSWER])
    out = ask("What F1 do CRFs reach?", **SMALL)
    assert len(m["decompose"].calls) == 2
    assert "not valid" in m["decompose"].calls[1].user
    assert out["subqueries"] == ["crf F1"] and not out["errors"]


def test_invalid_twice_is_a_recorded_failure(scripted):
    scripted(decompose=[{"subqueries": ["crf F1"]}], verify=[SATISFIED], read=(cite_first_chunk,),
             synthesize=["garbage", "still garbage"])
    out = ask("What F1 do CRFs reach?", **SMALL)
    assert [e["node"] for e in out["errors"]] == ["synthesize"]
    # a failed synthesis is no answer, not a finding that there is no evidence
    assert out["status"] == out["answer"]["status"] == "failed"
    assert out["answer"]["insufficient_evidence"] is False and out["answer"]["text"] == ""
    assert out["answer"]["failure"].startswith("the synthesis failed: invalid JSON")
    assert out["answer"]["citations"] == [] and out["submission"]["answer"]["freeform"]["text"] == ""


def test_citations_only_to_existing_shown_chunks(scripted):
    bad = {**ANSWER, "answer": "CRFs reach 95.7 F1 [crf#c0] and 99 F1 [crf#c99] [nope#c1].",
           "facts": [{"value": "99", "unit": "F1", "paper_id": "crf", "chunk_id": "crf#c99"}]}
    scripted(decompose=[{"subqueries": ["crf F1"]}], verify=[SATISFIED], read=(cite_first_chunk,), synthesize=[bad])
    out = ask("What F1 do CRFs reach?", **SMALL)
    ans = out["answer"]
    assert [c["chunk_id"] for c in ans["citations"]] == ["crf#c0"]
    assert set(ans["invalid_citations"]) == {"crf#c99", "nope#c1"}
    assert "[1]" in ans["text"] and "crf#c99" not in ans["text"]
    assert out["submission"]["evidence"] == [{"paper_id": "crf", "source_type": "text_span", "locator": {"section": "Abstract"}}]
    assert out["submission"]["gold_papers"] == [{"paper_id": "crf"}]


def test_no_relevant_paper_means_no_guess(scripted):
    m = scripted(decompose=[{"subqueries": ["sourdough"]}], verify=[{"evidence_papers": [], "sufficient": True, "missing": ""}],
                 read=({"relevant": False, "sufficient": False, "evidence_chunk_ids": [], "finding": ""},), synthesize=[])
    out = ask("How long does sourdough ferment?", **SMALL)
    assert out["answer"]["insufficient_evidence"] is True
    assert "do not contain evidence" in out["answer"]["text"]
    assert m["synthesize"].calls == []


def test_multiple_choice_and_table_shapes(scripted):
    reply = {**ANSWER, "choice": "b", "table_rows": [{"model": "CRF", "f1": "95.7", "extra": "x"}]}
    scripted(decompose=[{"subqueries": ["crf F1"]}], verify=[SATISFIED], read=(cite_first_chunk,), synthesize=[reply])
    out = ask("Which model reaches 95.7 F1?", answer_types=["multiple_choice", "table"],
              options={"A": "HMM", "B": "CRF"},
              table_schema=[{"name": "model", "type": "string", "is_row_key": True},
                            {"name": "f1", "type": "number", "is_row_key": False}], **SMALL)
    ans = out["submission"]["answer"]
    assert ans["multiple_choice"] == {"gold": "B"}
    assert ans["table"] == {"rows": [{"model": "CRF", "f1": "95.7"}]}
    assert "freeform" not in ans


def test_choice_outside_options_is_dropped(scripted):
    scripted(decompose=[{"subqueries": ["crf F1"]}], verify=[SATISFIED], read=(cite_first_chunk,),
             synthesize=[{**ANSWER, "choice": "Z"}])
    out = ask("Which?", answer_types=["multiple_choice"], options={"A": "x", "B": "y"}, **SMALL)
    assert out["submission"]["answer"]["multiple_choice"] == {"gold": ""}


def test_progress_events(scripted):
    scripted(decompose=numbered("crf"), verify=[SATISFIED], read=(cite_first_chunk,), synthesize=[ANSWER])
    events = []
    ask("What F1 do CRFs reach?", on_event=events.append, **SMALL)
    nodes = [e["node"] for e in events]
    assert nodes == ["decompose", "search", "rerank", "verify", "expand_neighbors", "read_paper", "synthesize"]
    assert events[0]["round"] == 1 and events[0]["max_rounds"] == 3
    assert events[5]["papers_read"] == 3


def test_graph_structure_snapshot():
    snapshot = Path(__file__).with_name("graph.mmd")
    drawn = graph.get_graph().draw_mermaid()
    if not snapshot.exists():  # first run writes it; review and commit the file
        snapshot.write_text(drawn)
    assert drawn == snapshot.read_text()
    nodes = set(graph.get_graph().nodes) - {"__start__", "__end__"}
    assert nodes == {"decompose", "search", "rerank", "verify", "expand_neighbors", "read_paper", "synthesize"}


def test_local_fast_asks_the_llm_only_to_read_and_answer(scripted):
    m = scripted(decompose=numbered("never"), verify=[NOT_SATISFIED], read=(cite_first_chunk,), synthesize=[ANSWER])
    out = ask("What F1 do CRFs reach on chunking?", preset="local-fast", max_rounds=3)
    assert not m["decompose"].calls and not m["verify"].calls  # their LLM-free fallbacks ran
    assert out["rounds"] == 1 and out["subqueries"] == ["What F1 do CRFs reach on chunking?"]
    assert len(m["read"].calls) == 2 and len(m["synthesize"].calls) == 1
    assert "crf" in out["candidates"][:3]


def test_verify_without_llm_takes_the_listing_as_evidence():
    from types import SimpleNamespace

    from agent.context import make_context
    from agent.nodes.method_steps import verify

    pool = {f"p{i}#c0": {"chunk_id": f"p{i}#c0", "paper_id": f"p{i}", "score": float(i)} for i in range(8)}
    runtime = SimpleNamespace(context=make_context("local-fast"))
    out = verify({"question": "q", "pool": pool, "new_subqueries": ["q"]}, runtime)
    assert out["evidence_papers"] == ["p7", "p6", "p5", "p4", "p3"]  # the 5 best, best first
    assert out["verdict"] == {"sufficient": True, "missing": "", "evidence_papers": out["evidence_papers"], "llm": False}


def test_local_preset_runs_one_round_with_every_llm_role(scripted):
    m = scripted(decompose=numbered("crf"), verify=[NOT_SATISFIED], read=(cite_first_chunk,), synthesize=[ANSWER])
    out = ask("What F1 do CRFs reach on chunking?", preset="local")
    assert out["rounds"] == 1 and len(m["decompose"].calls) == len(m["verify"].calls) == 1
    assert len(m["read"].calls) == 2
