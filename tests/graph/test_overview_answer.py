"""Overview questions through the whole graph: the papers that qualify (as a "which papers"
question finds them) grouped into themes, every line quoting its paper, no model call, and the
same record in the answer a client reads. The real graph index, the scripted model."""

from __future__ import annotations

import json

import pytest

from agent.api import ask

pytestmark = pytest.mark.graph

OVERVIEW = "Give me an overview of the literature on Markov models for tagging or information extraction."
WHICH = "Which papers use Markov models for tagging or information extraction?"
KNOBS = dict(preset="local-fast", list_min_similarity=0.2)


def test_an_overview_groups_the_qualifying_papers_into_themes_without_a_model_call(scripted):
    m = scripted(read=[], synthesize=[])
    out = ask(OVERVIEW, **KNOBS)
    answer = out["answer"]
    assert answer["shape"] == "overview" and not answer["insufficient_evidence"], answer["text"]
    assert m["read"].calls == [] and m["synthesize"].calls == []
    themes = answer["themes"]
    assert 1 <= len(themes) <= 4
    in_themes = [p for t in themes for p in t["papers"]]
    # each cited paper is in exactly one theme, and no theme holds a paper the answer does not cite
    assert sorted(in_themes) == sorted(set(answer["papers"]))
    assert all(t["name"] and t["terms"] for t in themes)
    for claim in answer["claims"]:  # nothing but the papers' own sentences, each cited
        assert claim["text"] == " ".join(s["text"] for s in claim["sentences"])
        assert all(f"[{n}]" in answer["text"] for n in claim["citations"])
    for n, theme in enumerate(themes, 1):
        assert f"Theme {n}: {theme['name']}" in answer["text"]
    # the record a client reads (litloop ask --json, the served API, MCP) is plain JSON with them
    assert json.loads(json.dumps(out))["answer"]["themes"] == themes


def test_an_overview_names_the_papers_the_list_question_names(scripted):
    scripted(read=[], synthesize=[])
    listed = ask(WHICH, **KNOBS)["answer"]
    overview = ask(OVERVIEW, **KNOBS)["answer"]
    assert listed["shape"] == "papers" and overview["shape"] == "overview" and len(listed["papers"]) >= 2
    assert set(overview["papers"]) == set(listed["papers"]), (listed["text"], overview["text"])
    # papers that share no content word with the question are not listed to fill a theme
    assert {"cook", "bread"}.isdisjoint(overview["papers"])


def test_an_overview_asked_as_a_table_is_a_table_of_themes(scripted):
    scripted(read=[], synthesize=[])
    answer = ask(OVERVIEW.rstrip(".") + ", as a table.", **KNOBS)["answer"]
    assert answer["shape"] == "overview"
    header, rule, *rows = answer["text"].splitlines()[1:]
    assert header.startswith("| Theme | Paper | What it says |") and set(rule) <= set("|-: ")
    assert len(rows) == len(answer["papers"]) == len(answer["table_rows"])
    assert {r["theme"] for r in answer["table_rows"]} == {t["name"] for t in answer["themes"]}
