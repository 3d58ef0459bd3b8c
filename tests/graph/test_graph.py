from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent.api import ask
from agent.context import make_context
from agent.graph import graph
from agent.runtime.resources import index_for

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
    m = scripted(
        decompose=numbered("crf query"), verify=(NOT_SATISFIED,), read=(cite_first_chunk,), synthesize=[ANSWER]
    )
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
    m = scripted(
        decompose=numbered("q"), verify=[NOT_SATISFIED, SATISFIED], read=(cite_first_chunk,), synthesize=[ANSWER]
    )
    ask("What F1 do CRFs reach on chunking?", **SMALL)
    second = m["decompose"].calls[1].user
    assert "the F1 of the HMM baseline" in second
    assert "q 0" in second and "q 1" in second  # earlier subqueries listed


def test_empty_missing_note_says_search_from_another_angle(scripted):
    m = scripted(
        decompose=numbered("q"),
        verify=[{**NOT_SATISFIED, "missing": ""}, SATISFIED],
        read=(cite_first_chunk,),
        synthesize=[ANSWER],
    )
    ask("What F1 do CRFs reach?", **SMALL)
    assert "no specific note; search from a different angle" in m["decompose"].calls[1].user


def test_venue_year_tag_on_every_subquery(scripted):
    scripted(
        decompose=[{"subqueries": ["crf chunking F1", "[ACL 2005] hmm baseline"]}],
        verify=[SATISFIED],
        read=(cite_first_chunk,),
        synthesize=[ANSWER],
    )
    out = ask("Which ACL 2005 papers report CRF results?", **SMALL)
    assert out["subqueries"] == ["[ACL 2005] crf chunking F1", "[ACL 2005] hmm baseline"]


def test_invalid_json_repaired_once(scripted):
    m = scripted(
        decompose=["this is not json", {"subqueries": ["crf F1"]}],
        verify=[SATISFIED],
        read=(cite_first_chunk,),
        synthesize=[ANSWER],
    )
    out = ask("What F1 do CRFs reach?", **SMALL)
    assert len(m["decompose"].calls) == 2
    assert "not valid" in m["decompose"].calls[1].user
    assert out["subqueries"] == ["crf F1"] and not out["errors"]


def test_invalid_twice_gives_the_extractive_answer(scripted):
    """A synthesis reply that is not JSON even after the repair turn: the answer quotes the
    sentences the reader selected, verbatim and cited, and says they do not answer directly."""
    scripted(
        decompose=[{"subqueries": ["crf F1"]}],
        verify=[SATISFIED],
        read=(cite_first_chunk,),
        synthesize=["garbage", "still garbage"],
    )
    out = ask("What F1 do CRFs reach?", **SMALL)
    assert [e["node"] for e in out["errors"]] == ["synthesize"]
    ans = out["answer"]
    assert out["status"] == ans["status"] == "partial" and ans["fallback"] == "extractive"
    assert ans["insufficient_evidence"] is True and ans["claims"] == []
    assert "do not answer this question directly" in ans["text"] and "[1]" in ans["text"]
    cited = next(c for c in ans["citations"] if c["paper_id"] == "crf")
    assert "95.7 F1" in cited["quote"] and all(c["quote"] in ans["text"] for c in ans["citations"])


def test_claims_cite_only_shown_sentences_that_support_them(scripted):
    def bad(messages):
        ok = ANSWER(messages)["claims"][0]
        return {
            "claims": [
                ok,
                {"text": "They reach 99 F1.", "sentences": ["S99"]},
                {"text": "CRFs reach 99.1 F1 [crf#c0].", "sentences": ok["sentences"]},
            ]
        }

    scripted(decompose=[{"subqueries": ["crf F1"]}], verify=[SATISFIED], read=(cite_first_chunk,), synthesize=[bad])
    out = ask("What F1 do CRFs reach?", **SMALL)
    ans = out["answer"]
    assert [c["chunk_id"] for c in ans["citations"]] == ["crf#c0"]
    assert ans["text"] == "CRFs reach 95.7 F1 [1]."
    reasons = {r["text"]: r["reason"] for r in ans["rejected_claims"]}
    assert reasons == {
        "They reach 99 F1.": "it cites S99, which was not shown",
        "CRFs reach 99.1 F1.": "the number '99.1' is not in the cited sentences",
    }
    claim = ans["claims"][0]
    assert claim["citations"] == [1] and "95.7 F1" in claim["sentences"][0]["text"]
    s = claim["sentences"][0]  # the offsets point at the quoted text in the chunk
    idx = index_for(make_context("paper"))
    chunk = idx.chunks[idx.chunk_row["crf#c0"]]
    assert " ".join(chunk.text[s["start"] : s["end"]].split()) == s["text"] == ans["citations"][0]["quote"]
    assert out["submission"]["evidence"] == [
        {"paper_id": "crf", "source_type": "text_span", "locator": {"section": "Abstract"}}
    ]
    assert out["submission"]["gold_papers"] == [{"paper_id": "crf"}]


def test_no_relevant_paper_means_no_guess(scripted):
    m = scripted(
        decompose=[{"subqueries": ["sourdough"]}],
        verify=[{"evidence_papers": [], "sufficient": True, "missing": ""}],
        read=({"sentences": [], "relevant": False},),
        synthesize=[],
    )
    out = ask("How long does sourdough ferment?", **SMALL)
    assert out["answer"]["insufficient_evidence"] is True
    assert "do not contain evidence" in out["answer"]["text"]
    assert m["synthesize"].calls == []


def test_multiple_choice_and_table_shapes(scripted):
    def reply(messages):
        return {**ANSWER(messages), "choice": "b", "table_rows": [{"model": "CRF", "f1": "95.7", "extra": "x"}]}

    scripted(decompose=[{"subqueries": ["crf F1"]}], verify=[SATISFIED], read=(cite_first_chunk,), synthesize=[reply])
    out = ask(
        "Which model reaches 95.7 F1?",
        answer_types=["multiple_choice", "table"],
        choice_scoring="model",
        options={"A": "HMM", "B": "CRF"},
        table_schema=[
            {"name": "model", "type": "string", "is_row_key": True},
            {"name": "f1", "type": "number", "is_row_key": False},
        ],
        **SMALL,
    )
    ans = out["submission"]["answer"]
    assert ans["multiple_choice"] == {"gold": "B"}
    assert ans["table"] == {"rows": [{"model": "CRF", "f1": "95.7"}]}
    assert "freeform" not in ans


def test_choice_outside_options_is_dropped(scripted):
    scripted(
        decompose=[{"subqueries": ["crf F1"]}],
        verify=[SATISFIED],
        read=(cite_first_chunk,),
        synthesize=[lambda m: {**ANSWER(m), "choice": "Z"}],
    )
    out = ask("Which?", answer_types=["multiple_choice"], options={"A": "x", "B": "y"}, choice_scoring="model", **SMALL)
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
    if os.environ.get("LITLOOP_UPDATE_SNAPSHOTS") == "1":  # rewrite it; review and commit the diff
        snapshot.write_text(drawn)
    assert snapshot.exists(), (
        f"{snapshot.name} is missing: run this test with LITLOOP_UPDATE_SNAPSHOTS=1 "
        "to draw it, then review and commit the file"
    )
    assert drawn == snapshot.read_text(), (
        "the graph's structure changed: if that is intended, rerun with "
        "LITLOOP_UPDATE_SNAPSHOTS=1 and commit the new graph.mmd"
    )
    nodes = set(graph.get_graph().nodes) - {"__start__", "__end__"}
    assert nodes == {
        "read_citations",
        "decompose",
        "search",
        "rerank",
        "verify",
        "expand_neighbors",
        "read_paper",
        "synthesize",
    }


def test_local_fast_asks_the_llm_only_to_read_and_answer(scripted):
    m = scripted(decompose=numbered("never"), verify=[NOT_SATISFIED], read=(cite_first_chunk,), synthesize=[ANSWER])
    out = ask("What F1 do CRFs reach on chunking?", preset="local-fast", max_rounds=3, fact_answer="write")
    assert not m["decompose"].calls and not m["verify"].calls  # their LLM-free fallbacks ran
    assert out["rounds"] == 1 and out["subqueries"] == ["What F1 do CRFs reach on chunking?"]
    syntheses = [c for c in m["synthesize"].calls if c.kwargs.get("scripted_method")]  # not the judge's probe
    assert len(m["read"].calls) == 2 and len(syntheses) == 1
    assert "crf" in out["candidates"][:3]


def test_local_fast_answers_a_fact_with_one_copy_call_and_no_reader(scripted):
    copy = {"value": "95.7 F1", "claim": "CRFs reach 95.7 F1 on chunking."}
    m = scripted(decompose=numbered("never"), verify=[NOT_SATISFIED], read=(cite_first_chunk,), synthesize=[copy])
    out = ask("What F1 do CRFs reach on chunking?", preset="local-fast")
    assert not m["decompose"].calls and not m["verify"].calls and not m["read"].calls
    [call] = [c for c in m["synthesize"].calls if c.kwargs.get("scripted_method")]
    assert "value" in call.kwargs["scripted_schema"]["properties"]
    assert out["answer"]["claims"][0]["text"] == "CRFs reach 95.7 F1 on chunking."


def test_verify_without_llm_takes_the_listing_as_evidence():
    from types import SimpleNamespace

    from agent.context import make_context
    from agent.nodes.method_steps import verify

    pool = {f"p{i}#c0": {"chunk_id": f"p{i}#c0", "paper_id": f"p{i}", "score": float(i)} for i in range(8)}
    runtime = SimpleNamespace(context=make_context("local-fast"))
    out = verify({"question": "q", "pool": pool, "new_subqueries": ["q"]}, runtime)
    assert out["evidence_papers"] == ["p7", "p6", "p5", "p4", "p3"]  # the 5 best, best first
    assert out["verdict"] == {
        "sufficient": True,
        "missing": "",
        "evidence_papers": out["evidence_papers"],
        "llm": False,
    }


def test_local_preset_runs_up_to_two_rounds_with_every_llm_role(scripted):
    m = scripted(
        decompose=numbered("crf"), verify=[NOT_SATISFIED, NOT_SATISFIED], read=(cite_first_chunk,), synthesize=[ANSWER]
    )
    out = ask("What F1 do CRFs reach on chunking?", preset="local")
    assert out["rounds"] == 2 and len(m["decompose"].calls) == len(m["verify"].calls) == 2  # never a third
    assert len(m["read"].calls) == 2
