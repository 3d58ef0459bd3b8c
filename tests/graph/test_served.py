"""The served graph (agent/serve/graph.py): a run whose context names no preset runs the preset
`litloop ask` uses, one that names a preset or sets fields gets them; the real graph index, the
scripted model."""

from __future__ import annotations

import pytest

from agent.api import ask
from agent.context import ContextError, make_context
from agent.graph import build_graph
from agent.serve.graph import served_context, served_preset

pytestmark = pytest.mark.graph

QUESTION = "Which papers use hidden Markov models?"


def test_a_served_context_is_the_served_presets_unless_the_run_says_otherwise():
    served = served_context("local-fast")
    assert served().preset == "local-fast" and served().max_rounds == make_context("local-fast").max_rounds
    assert served(read_papers=3).read_papers == 3 and served(read_papers=3).list_reading == "similarity"
    paper = served(preset="paper", read_papers=4)
    expected = make_context("paper", read_papers=4)
    assert paper.preset == "paper" and paper.read_papers == 4
    assert paper.max_rounds == expected.max_rounds and paper.list_reading == expected.list_reading
    with pytest.raises(ContextError, match="read_papers"):
        served(read_papers=0)
    with pytest.raises(ValueError, match="unknown preset 'fastest'"):
        served(preset="fastest")


def test_the_served_graphs_schema_shows_the_served_preset():
    schema = build_graph(context_schema=served_context("local")).get_context_jsonschema()
    assert schema["properties"]["preset"]["default"] == "local"
    assert schema["properties"]["max_rounds"]["default"] == make_context("local").max_rounds


def test_a_served_preset_is_asks_on_this_machine_or_the_setting(monkeypatch):
    from agent.api import default_preset
    from agent.settings import default_settings

    monkeypatch.delenv("LITLOOP_SERVE__PRESET", raising=False)
    default_settings.cache_clear()
    assert served_preset() == default_preset()
    monkeypatch.setenv("LITLOOP_SERVE__PRESET", "kadr")
    default_settings.cache_clear()
    assert served_preset() == "kadr"
    monkeypatch.setenv("LITLOOP_SERVE__PRESET", "fastest")
    default_settings.cache_clear()
    with pytest.raises(ValueError, match="unknown preset 'fastest'"):
        served_preset()
    default_settings.cache_clear()


def test_a_served_run_with_no_context_answers_as_ask_does(scripted):
    # local-fast answers a "which papers" question with no model call; the bare defaults (the
    # paper's preset) would ask the decomposer first, which has no script here
    m = scripted(read=[], synthesize=[])
    graph = build_graph(context_schema=served_context("local-fast"))
    served = graph.invoke({"question": QUESTION}, context={})
    asked = ask(QUESTION, preset="local-fast")
    assert m["read"].calls == [] and m["synthesize"].calls == []
    assert served["answer"]["papers"] == asked["answer"]["papers"] == ["hmm"]
    assert served["answer"]["text"] == asked["answer"]["text"]


def test_litloop_serve_refuses_an_unknown_preset_before_starting():
    from typer.testing import CliRunner

    from agent.cli.main import app

    r = CliRunner().invoke(app, ["serve", "--preset", "fastest"])
    assert r.exit_code == 2 and "unknown preset 'fastest'" in r.output
