"""Questions about a cited work ("who cites X", "which papers build on X", "what do the papers
say about X") answered from the citation contexts, on a real index of two demo PDFs (SPECTER
cites Ammar et al. 2018, N18-3011, once, and SciBERT, which is not in the index, 8 times) with
the scripted chat model: the run reads the citing sentences instead of searching, its citations quote them, and the
submission's evidence items are `citation_context` ones."""

from __future__ import annotations

import pytest

from agent.api import ask
from agent.runtime import resources
from tests.fakes import ScriptedChatModel
from tests.graph.conftest import claims_answer


@pytest.fixture
def scripted_on(cites_index, monkeypatch):
    monkeypatch.setenv("LITLOOP_INDEX", str(cites_index))
    from agent.settings import default_settings

    default_settings.cache_clear()
    models: dict[str, ScriptedChatModel] = {}

    def install(**scripts):
        for role, replies in scripts.items():
            models[role] = ScriptedChatModel(responses=list(replies), cycle=isinstance(replies, tuple))
        return models

    with resources.use_model_factory(lambda role, settings, model: models[role]):
        yield install
    default_settings.cache_clear()
    resources.reset()


def _never(messages):
    raise AssertionError("a question about a cited work is answered from its citing sentences, not searched")


def test_which_papers_build_on_a_paper_names_each_citing_paper_with_its_sentence(scripted_on):
    m = scripted_on(decompose=(_never,), verify=(_never,), read=(_never,), synthesize=(_never,))
    out = ask("Which papers build on Construction of the literature graph in Semantic Scholar?", preset="local-fast")
    assert not any(model.calls for model in m.values())  # no model call: the sentences are the answer
    answer = out["answer"]
    assert answer["papers"] == ["2020.acl-main.207"]
    (citation,) = answer["citations"]
    assert citation["source"] == "citation_context"
    assert "Semantic Scholar corpus (Ammar et al., 2018)" in citation["quote"]  # the citing sentence, as it stands
    assert citation["cited"][0]["cited"] == "N18-3011" and citation["locator"]["page"] == 5
    evidence = out["submission"]["evidence"]
    assert evidence and all(e["source_type"] == "citation_context" for e in evidence)
    assert {e["locator"]["citation_id"] for e in evidence} == {str(citation["cited"][0]["citation_id"])}
    assert out["submission"]["gold_papers"] == [{"paper_id": "2020.acl-main.207"}]


def test_what_papers_say_about_a_work_outside_the_index_is_written_from_its_citing_sentences(scripted_on):
    m = scripted_on(
        decompose=(_never,),
        verify=(_never,),
        read=(_never,),
        synthesize=[claims_answer(("SPECTER starts from SciBERT.", "SciBERT"))],
    )
    out = ask("What do the papers in the collection say about SciBERT?", preset="paper")
    call = m["synthesize"].calls[0]  # the synthesis (the support judge may ask the same model after it)
    shown = call.user
    assert "Beltagy et al., 2019" in shown  # the synthesis is shown the citing sentences
    answer = out["answer"]
    assert [c["text"] for c in answer["claims"]] and answer["citations"]
    assert all(c["source"] == "citation_context" for c in answer["citations"])
    assert all(c["cited"][0]["cited"].startswith("ref:") for c in answer["citations"])  # SciBERT: a reference record
    assert all(e["source_type"] == "citation_context" for e in out["submission"]["evidence"])


def test_a_question_about_something_nobody_cites_is_searched_as_usual(scripted_on):
    from tests.graph.conftest import SATISFIED

    m = scripted_on(
        decompose=({"subqueries": ["quantum gravity"]},),
        verify=[SATISFIED],
        read=({"sentences": [], "relevant": False, "finding": ""},),
        synthesize=[claims_answer()],
    )
    out = ask("Who cites quantum gravity?", preset="paper", read_papers=2, max_rounds=1)
    assert m["decompose"].calls  # nothing cites it: the Retrieve loop ran
    assert all(c.get("source") != "citation_context" for c in out["answer"].get("citations", []))
