"""The agent over several registered corpora: chosen by name in the context, fused, ids
namespaced end to end (pool, reading, citations, submission)."""

from __future__ import annotations

import json

import pytest

from agent.api import ask
from tests.conftest import PAPERS
from tools.registry import REGISTRY, Corpus

from .conftest import cite_first_chunk, claims_answer

pytestmark = pytest.mark.graph

# Two corpora that share a paper id ("crf"), which namespacing must keep apart.
MED = [
    ("crf", "Chronic renal failure in the elderly", "Renal failure raises mortality; dialysis helps.", []),
    ("intub", "Intubation in helicopters", "Flight nurses intubate as well in flight as on the ground.", []),
]


@pytest.fixture
def two_corpora(tmp_path_factory):
    d = tmp_path_factory.mktemp("corpora-src")
    for name, rows in (("nlp", PAPERS), ("med", MED)):
        recs = [{"paper_id": p, "title": t, "abstract": a, "references": r} for p, t, a, r in rows]
        (d / f"{name}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in recs))
    for name in ("nlp", "med"):
        REGISTRY.register(
            Corpus(name, f"test corpus {name}", lambda s, n=name: [d / f"{n}.jsonl"]), replace_existing=True
        )
    yield
    for name in ("nlp", "med"):
        REGISTRY.unregister(name)


def test_ask_over_two_corpora_namespaces_ids(scripted, two_corpora):
    answer = claims_answer(("CRFs reach 95.7 F1.", "95.7"))
    m = scripted(
        decompose=[{"subqueries": ["conditional random fields F1", "renal failure"]}],
        verify=[{"evidence_papers": ["nlp:crf"], "sufficient": True, "missing": ""}],
        read=(cite_first_chunk,),
        synthesize=[answer],
    )
    out = ask(
        "What F1 do CRFs reach on chunking?",
        preset="paper",
        corpora=["nlp", "med"],
        read_papers=4,
        subqueries_per_round=2,
    )
    assert not out["errors"]
    assert out["candidates"] and all(c.split(":")[0] in ("nlp", "med") for c in out["candidates"])
    assert {"nlp:crf", "med:crf"} <= set(out["candidates"])  # same local id, two papers
    verify_prompt = m["verify"].calls[0].user
    assert "PAPER nlp:crf" in verify_prompt and "PAPER med:crf" in verify_prompt
    assert [c["chunk_id"] for c in out["answer"]["citations"]] == ["nlp:crf#c0"]
    assert out["answer"]["citations"][0]["title"].startswith("Conditional random fields")
    assert out["submission"]["gold_papers"] == [{"paper_id": "nlp:crf"}]


def test_one_corpus_keeps_its_own_ids(scripted, two_corpora):
    scripted(
        decompose=[{"subqueries": ["renal failure"]}],
        verify=[{"evidence_papers": ["crf"], "sufficient": True, "missing": ""}],
        read=({"sentences": [], "relevant": False},),
        synthesize=[],
    )
    out = ask(
        "What raises mortality in renal failure?",
        preset="paper",
        corpora=["med"],
        read_papers=2,
        subqueries_per_round=1,
    )
    assert set(out["candidates"]) <= {"crf", "intub"} and "crf" in out["candidates"]


def test_unknown_corpus_in_the_context_is_a_clear_error(scripted):
    m = scripted(decompose=[{"subqueries": ["x"]}], verify=[], read=[], synthesize=[])
    with pytest.raises(ValueError, match="unknown corpus 'nope'; registered: .*demo.*pubmed"):
        ask("anything?", preset="paper", corpora=["nope"])
    assert not m["decompose"].calls  # checked before the graph ran
    with pytest.raises(ValueError, match="either an index or corpora"):
        ask("anything?", preset="paper", corpora=["demo"], index="/some/index")


# --- the corpora from every entry point: batch, prompt rendering, both chats

NS_ANSWER = claims_answer(("CRFs reach 95.7 F1.", "95.7"))


def script_two(scripted):
    return scripted(
        decompose=({"subqueries": ["conditional random fields F1", "renal failure"]},),
        verify=({"evidence_papers": ["nlp:crf"], "sufficient": True, "missing": ""},),
        read=(cite_first_chunk,),
        synthesize=(NS_ANSWER,),
    )


def test_batch_run_prompt_render_and_terminal_chat_take_corpora(scripted, two_corpora, tmp_path):
    from typer.testing import CliRunner

    from agent.cli.main import app

    runner = CliRunner()
    script_two(scripted)
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        json.dumps({"query_id": "q1", "question": "What F1 do CRFs reach on chunking?", "answer_types": ["freeform"]})
        + "\n"
    )
    sub = tmp_path / "sub.jsonl"
    r = runner.invoke(
        app,
        [
            "run",
            "--input",
            str(questions),
            "--out",
            str(sub),
            "--preset",
            "paper",
            "--corpus",
            "nlp",
            "--corpus",
            "med",
        ],
    )
    assert r.exit_code == 0, r.output
    line = json.loads(sub.read_text())
    assert line["gold_papers"] == [{"paper_id": "nlp:crf"}] and line["evidence"][0]["paper_id"] == "nlp:crf"

    r = runner.invoke(
        app,
        [
            "prompt",
            "render",
            "--question",
            "What F1 do CRFs reach?",
            "--node",
            "verify",
            "--preset",
            "paper",
            "--corpus",
            "nlp",
            "--corpus",
            "med",
        ],
    )
    assert r.exit_code == 0, r.output
    assert "PAPER nlp:crf" in r.output and "PAPER med:crf" in r.output
    r = runner.invoke(app, ["prompt", "render", "--question", "x", "--corpus", "nope"])
    assert r.exit_code == 2 and "unknown corpus 'nope'" in r.output

    r = runner.invoke(
        app,
        ["chat", "--preset", "paper", "--corpus", "nlp", "--corpus", "med"],
        input="What F1 do CRFs reach on chunking?\n/quit\n",
    )
    assert r.exit_code == 0, r.output
    assert (
        "CRFs reach 95.7 F1 [1]." in r.output
        and "[1] Conditional random fields for sequence labeling (nlp:crf)" in r.output
    )
    r = runner.invoke(app, ["chat", "--corpus", "nope"], input="/quit\n")
    assert r.exit_code == 2 and "unknown corpus 'nope'" in r.output


def test_web_chat_sidebar_chooses_corpora(scripted, two_corpora, monkeypatch):
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    from agent.cli.chat import streamlit_command

    monkeypatch.setenv("LITLOOP_LLM__BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("LITLOOP_LLM__MODEL", "scripted")
    from agent.settings import default_settings

    default_settings.cache_clear()
    assert streamlit_command(8501, "127.0.0.1", ["nlp", "med"])[-5:] == ["--", "--corpus", "nlp", "--corpus", "med"]
    script_two(scripted)
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "agent" / "chat" / "app.py"), default_timeout=120)
    at.run()
    corpora = at.multiselect(key="corpora")
    assert {"nlp", "med", "demo", "pubmed"} <= set(corpora.options)
    corpora.set_value(["nlp", "med"]).run()
    assert any("Searching the corpora nlp, med" in c.value for c in at.caption)
    at.chat_input[0].set_value("What F1 do CRFs reach on chunking?").run()
    assert not at.exception, at.exception
    assert any("CRFs reach 95.7 F1 <span class='litloop-cite'" in m.value for m in at.markdown)  # [1] opens its quote
    assert any(m.value.startswith("[1] **Conditional random fields") for m in at.markdown)  # its card
    (passage,) = [e for e in at.expander if e.label.startswith("The passage of [1]")]
    assert "nlp:crf#c0" in passage.label


# --- MultiIndex over two real indexes (BM25 segments, Chroma, embedder, citation graph)


@pytest.fixture(scope="module")
def multi(tmp_path_factory):
    """The two corpora built for real and opened together, once for the tests below."""
    from agent.settings import get_settings
    from tools.registry import open_corpora

    d = tmp_path_factory.mktemp("multi-src")
    for name, rows in (("nlp", PAPERS), ("med", MED)):
        recs = [{"paper_id": p, "title": t, "abstract": a, "references": r} for p, t, a, r in rows]
        (d / f"{name}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in recs))
        REGISTRY.register(
            Corpus(name, f"test corpus {name}", lambda s, n=name: [d / f"{n}.jsonl"]), replace_existing=True
        )
    idx = open_corpora(["nlp", "med"], get_settings(data_dir=d / "data"))
    yield idx
    idx.close()
    for name in ("nlp", "med"):
        REGISTRY.unregister(name)


def test_multi_index_namespaces_ids_so_corpora_never_collide(multi):
    assert "nlp:crf" in multi.papers and "med:crf" in multi.papers
    assert len(multi.papers) == len(PAPERS) + len(MED)
    assert len(multi.chunks) == sum(len(p.chunks) for p in multi.parts.values())
    assert multi.papers["nlp:crf"].references == ("nlp:hmm", "nlp:memm")
    med_crf = [c for c in multi.chunks if c.paper_id == "med:crf"]
    assert med_crf and all(c.chunk_id.startswith("med:crf") and c.chunk_id in multi.chunk_row for c in med_crf)
    assert multi.title_abstract("med:intub").text.startswith("Intubation")


def test_multi_index_fuses_per_corpus_bm25_rankings(multi):
    from tools.base import Passage

    hits = multi.bm25_chunks("renal sequence", 10)
    # each corpus's own BM25 ranking, fused by rank: the two best come one from each corpus
    assert {h.paper_id.split(":")[0] for h in hits[:2]} == {"nlp", "med"}
    assert {h.paper_id for h in hits} >= {"nlp:crf", "med:crf"}
    assert all(isinstance(h, Passage) and h.chunk_id in multi.chunk_row for h in hits)
    assert multi.chunk_bm25.scores(["renal"]).shape == (len(multi.chunks),)


def test_pipeline_runs_unchanged_on_a_multi_index(multi):
    from tools.index.search import search
    from tools.retrieval.relate import ranking_b
    from tools.retrieval.retrieve import fused_with_prf, retrieval_hits

    ranking, _ = fused_with_prf(multi, "sequence labeling", multi.settings.retrieval)
    assert ranking.papers and all(":" in p for p in ranking.papers)
    chunks = retrieval_hits(multi, ranking, 10)
    assert chunks[0]["chunk_id"] in multi.chunk_row
    assert search(multi, "renal failure", "bm25", 3)[0].paper_id == "med:crf"
    b, why = ranking_b(multi, ["nlp:lstm"], multi.settings.relate)
    assert b[0] == "nlp:lstm"
    # the citation graph stays inside a corpus: lstm cites crf; a med paper is near only by text
    assert "direct:nlp:lstm" in why["nlp:crf"]
    graph_reasons = ("direct:", "coupling:", "cocitation:")
    assert not [r for p, rs in why.items() if p.startswith("med:") for r in rs if r.startswith(graph_reasons)]


def test_multi_index_closes_every_part(multi, monkeypatch):
    closed = []
    for name, part in multi.parts.items():
        monkeypatch.setattr(part, "close", lambda n=name: closed.append(n))
    multi.close()
    assert closed == ["nlp", "med"]
