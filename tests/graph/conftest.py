"""Whole-graph tests: a real small index (real BM25, Chroma, embedder, graph) and the scripted
chat model in place of the LLM (the only fake allowed)."""

from __future__ import annotations

import json
import re

import pytest

from agent import resources
from agent.settings import get_settings
from tests.fakes import ScriptedChatModel

PAPERS = [
    ("crf", "Conditional random fields for sequence labeling", "We present conditional random fields, which reach 95.7 F1 on chunking and beat HMMs.", ["hmm", "memm"]),
    ("hmm", "Hidden Markov models for part-of-speech tagging", "An HMM tagger with 96.1 accuracy on the Penn Treebank.", []),
    ("memm", "Maximum entropy Markov models for information extraction", "MEMMs segment FAQs; they suffer from label bias.", ["hmm"]),
    ("lstm", "Bidirectional LSTM-CRF models for sequence tagging", "A BiLSTM with a CRF layer reaches 90.9 F1 on CoNLL-2003 NER.", ["crf", "hmm"]),
    ("cook", "Slow cooking tomato sauce", "Simmer tomatoes with garlic and basil for two hours.", []),
    ("bread", "Sourdough bread baking", "A long fermentation gives sourdough its flavour.", []),
]


@pytest.fixture(scope="session")
def graph_index(tmp_path_factory):
    from tools.index import build_index

    d = tmp_path_factory.mktemp("graph-corpus")
    rows = [{"paper_id": p, "title": t, "abstract": a, "references": r, "venue": "ACL", "year": 2005}
            for p, t, a, r in PAPERS]
    (d / "papers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    build_index([d / "papers.jsonl"], d / "idx", get_settings())
    return d / "idx"


@pytest.fixture
def scripted(graph_index, monkeypatch):
    """Install one scripted model per role; returns a function that sets their scripts."""
    monkeypatch.setenv("LITLOOP_INDEX", str(graph_index))
    from agent.settings import default_settings

    default_settings.cache_clear()
    models: dict[str, ScriptedChatModel] = {}

    def install(**scripts):
        for role, replies in scripts.items():
            cycle = isinstance(replies, tuple)
            models[role] = ScriptedChatModel(responses=list(replies), cycle=cycle)
        return models

    with resources.use_model_factory(lambda role, settings, model: models[role]):
        yield install
    default_settings.cache_clear()
    resources.reset()


CHUNK_ID = re.compile(r"CHUNK (\S+#c\d+)")


def cite_first_chunk(messages):
    """A reader reply that cites the first chunk it was shown and calls the paper relevant."""
    text = "\n".join(m.text for m in messages)
    ids = CHUNK_ID.findall(text)
    relevant = "crf" in text.lower() or "conditional random" in text.lower()
    return {"relevant": relevant, "sufficient": relevant, "evidence_chunk_ids": ids[:1] if relevant else [],
            "finding": "CRFs reach 95.7 F1 on chunking." if relevant else ""}
