"""The agent over several registered corpora: chosen by name in the context, fused, ids
namespaced end to end (pool, reading, citations, submission)."""

from __future__ import annotations

import json

import pytest

from agent.api import ask
from tools.registry import REGISTRY, Corpus

from .conftest import PAPERS, cite_first_chunk

pytestmark = pytest.mark.graph

# Two corpora that share a paper id ("crf"), which namespacing must keep apart.
MED = [("crf", "Chronic renal failure in the elderly", "Renal failure raises mortality; dialysis helps.", []),
       ("intub", "Intubation in helicopters", "Flight nurses intubate as well in flight as on the ground.", [])]


@pytest.fixture
def two_corpora(tmp_path_factory):
    d = tmp_path_factory.mktemp("corpora-src")
    for name, rows in (("nlp", PAPERS), ("med", MED)):
        recs = [{"paper_id": p, "title": t, "abstract": a, "references": r} for p, t, a, r in rows]
        (d / f"{name}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in recs))
    for name in ("nlp", "med"):
        REGISTRY.register(Corpus(name, f"test corpus {name}", lambda s, n=name: [d / f"{n}.jsonl"]),
                          replace_existing=True)
    yield
    for name in ("nlp", "med"):
        REGISTRY.unregister(name)


def test_ask_over_two_corpora_namespaces_ids(scripted, two_corpora):
    answer = {"facts": [{"value": "95.7", "unit": "F1", "paper_id": "nlp:crf", "chunk_id": "nlp:crf#c0"}],
              "reasoning": "", "answer": "CRFs reach 95.7 F1 [nlp:crf#c0].", "choice": "", "table_rows": []}
    m = scripted(decompose=[{"subqueries": ["conditional random fields F1", "renal failure"]}],
                 verify=[{"evidence_papers": ["nlp:crf"], "sufficient": True, "missing": ""}],
                 read=(cite_first_chunk,), synthesize=[answer])
    out = ask("What F1 do CRFs reach on chunking?", preset="paper", corpora=["nlp", "med"], read_papers=4,
              subqueries_per_round=2)
    assert not out["errors"]
    assert out["candidates"] and all(c.split(":")[0] in ("nlp", "med") for c in out["candidates"])
    assert {"nlp:crf", "med:crf"} <= set(out["candidates"])  # same local id, two papers
    verify_prompt = m["verify"].calls[0].user
    assert "PAPER nlp:crf" in verify_prompt and "PAPER med:crf" in verify_prompt
    assert [c["chunk_id"] for c in out["answer"]["citations"]] == ["nlp:crf#c0"]
    assert out["answer"]["citations"][0]["title"].startswith("Conditional random fields")
    assert out["submission"]["gold_papers"] == [{"paper_id": "nlp:crf"}]


def test_one_corpus_keeps_its_own_ids(scripted, two_corpora):
    scripted(decompose=[{"subqueries": ["renal failure"]}],
             verify=[{"evidence_papers": ["crf"], "sufficient": True, "missing": ""}],
             read=({"relevant": False, "sufficient": False, "evidence_chunk_ids": [], "finding": ""},),
             synthesize=[])
    out = ask("What raises mortality in renal failure?", preset="paper", corpora=["med"], read_papers=2,
              subqueries_per_round=1)
    assert set(out["candidates"]) <= {"crf", "intub"} and "crf" in out["candidates"]


def test_unknown_corpus_in_the_context_is_a_clear_error(scripted):
    scripted(decompose=[{"subqueries": ["x"]}], verify=[], read=[], synthesize=[])
    with pytest.raises(ValueError, match="unknown corpus 'nope'; registered: .*demo.*pubmed"):
        ask("anything?", preset="paper", corpora=["nope"])
