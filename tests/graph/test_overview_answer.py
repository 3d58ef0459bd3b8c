"""Overview questions through the whole graph: the papers that qualify (as a "which papers"
question finds them) grouped into themes, every line quoting its paper, no model call, and the
same record in the answer a client reads. The real graph index, the scripted model."""

from __future__ import annotations

import json
import re

import pytest

from agent.api import ask

pytestmark = pytest.mark.graph

OVERVIEW = "Give me an overview of the literature on Markov models for tagging or information extraction."
WHICH = "Which papers use Markov models for tagging or information extraction?"
KNOBS = dict(preset="local-fast", list_min_similarity=0.2, overview_leads=False)


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


def _first_words(messages, words=8):
    """A lead made of the first words of the first sentence the prompt shows (S1)."""
    prompt = messages[-1].content
    first = next(line for line in prompt.splitlines() if line.startswith("S1 "))
    return " ".join(re.sub(r"\[[^]]*\]", "", first).split()[1 : words + 1]).rstrip(",;:")


def test_each_theme_opens_with_a_lead_the_model_wrote_and_the_checks_kept(scripted):
    m = scripted(read=[], synthesize=(lambda msgs: {"text": _first_words(msgs), "sentences": ["S1"]},))
    answer = ask(OVERVIEW, **{**KNOBS, "overview_leads": True})["answer"]
    themes = answer["themes"]
    written = [c for c in m["synthesize"].calls if c.method]  # not the support judge's probes
    several = [n for n, t in enumerate(themes, 1) if len(t["papers"]) >= 2]  # a theme of one has none
    assert answer["shape"] == "overview" and len(written) == len(several) >= 1
    assert all(not t.get("lead") for n, t in enumerate(themes, 1) if n not in several)
    lines = answer["text"].splitlines()
    for n in several:
        theme = themes[n - 1]
        # the lead is the line under the theme's heading, cited, and a claim of the answer
        head = lines.index(next(x for x in lines if x.startswith(f"Theme {n}: ")))
        assert lines[head + 1].startswith(theme["lead"]) and "[" in lines[head + 1]
        claim = next(c for c in answer["claims"] if c.get("theme") == n)
        assert claim["text"] == theme["lead"] and claim["citations"]
        # written from the theme's own papers' sentences
        assert {s["paper_id"] for s in claim["sentences"]} <= set(theme["papers"])


def test_a_lead_that_says_what_its_sentences_do_not_is_dropped(scripted):
    scripted(
        read=[], synthesize=({"text": "These papers report 97.3% accuracy on every corpus.", "sentences": ["S1"]},)
    )
    answer = ask(OVERVIEW, **{**KNOBS, "overview_leads": True})["answer"]
    assert answer["themes"] and not any(t.get("lead") for t in answer["themes"])
    assert "97.3" not in answer["text"]
    dropped = [r for r in answer["rejected_claims"] if r.get("theme")]
    several = [t for t in answer["themes"] if len(t["papers"]) >= 2]
    assert len(dropped) == len(several) >= 1 and all("97.3" in r["reason"] for r in dropped)
