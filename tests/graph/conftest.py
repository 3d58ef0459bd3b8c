"""Whole-graph tests: a real small index (real BM25, Chroma, embedder, graph) and the scripted
chat model in place of the LLM (the only fake allowed)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from agent.runtime import resources
from tests.conftest import DEMO_PDFS
from tests.fakes import ScriptedChatModel

# Scripted replies and run sizes shared by the whole-graph tests.
SMALL = dict(preset="paper", read_papers=3, read_concurrency=2, subqueries_per_round=2)
NOT_SATISFIED = {"evidence_papers": ["crf"], "sufficient": False, "missing": "the F1 of the HMM baseline"}
SATISFIED = {"evidence_papers": ["crf"], "sufficient": True, "missing": ""}


def numbered(prefix):
    """Decompositions that always bring new subqueries."""
    n = iter(range(1000))
    return (lambda _m: {"subqueries": [f"{prefix} {next(n)}", f"{prefix} {next(n)}"]},)


@pytest.fixture
def use_endpoint(graph_index, monkeypatch, tmp_path):
    """`use(base_url, **llm)` points litloop at an OpenAI-compatible endpoint (the tests' stub) on
    the graph tier's index, with `LITLOOP_LLM__<KEY>` set from `llm` (e.g. `TIMEOUT_S="0.5"`);
    traces in tmp_path."""
    from agent.settings import default_settings

    monkeypatch.setenv("LITLOOP_TRACING__DIR", str(tmp_path / "traces"))

    def use(base_url: str, **llm: str) -> None:
        values = {"INDEX": str(graph_index), "LLM__BASE_URL": base_url, "LLM__MODEL": "stub-model"}
        for name, value in {**values, **{f"LLM__{k}": v for k, v in llm.items()}}.items():
            monkeypatch.setenv(f"LITLOOP_{name}", value)
        default_settings.cache_clear()

    yield use
    default_settings.cache_clear()


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


CITES_PAPERS = ("N18-3011", "2020.acl-main.207")


@pytest.fixture(scope="session")
def cites_index(tmp_path_factory) -> Path:
    """A real index of two demo PDFs with their citation contexts (read only), built once a
    session: SPECTER (2020.acl-main.207) cites Ammar et al. 2018 (N18-3011) once, on page 5, and
    SciBERT, which is not in the index, 8 times."""
    from agent.settings import get_settings
    from tools.index import build_index

    folder = tmp_path_factory.mktemp("cites-pdfs")
    pdfs = folder / "pdfs"
    pdfs.mkdir()
    for name in CITES_PAPERS:
        for suffix in (".pdf", ".meta.json"):
            shutil.copy(DEMO_PDFS / f"{name}{suffix}", pdfs / f"{name}{suffix}")
    build_index([pdfs], folder / "idx", get_settings())
    return folder / "idx"


UI_TOKEN = "graph-tier-ui-token-0123456789"


@pytest.fixture
def chat_env(scripted, monkeypatch, tmp_path):
    """An endpoint is named (the scripted factory answers instead), data in a fresh folder."""
    monkeypatch.setenv("LITLOOP_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("LITLOOP_LLM__BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("LITLOOP_LLM__MODEL", "scripted")
    from agent.settings import default_settings

    default_settings.cache_clear()
    return scripted


@pytest.fixture
def cites_chat_env(chat_env, cites_index, monkeypatch):
    """`chat_env` on the index of two PDFs with citation contexts."""
    monkeypatch.setenv("LITLOOP_INDEX", str(cites_index))
    from agent.settings import default_settings

    default_settings.cache_clear()
    return chat_env


@pytest.fixture(autouse=True)
def ui_access(monkeypatch):
    """The web chat answers only a session whose URL carries the token `litloop ui` printed
    (agent/chat/access.py). Every AppTest of this tier is the user who has it, unless the test
    takes it away (`at.query_params.pop("token")`); the endpoint the sidebar starts from is taken
    afresh for each test."""
    monkeypatch.setenv("LITLOOP_UI_TOKEN", UI_TOKEN)
    try:
        from streamlit.testing.v1 import AppTest
    except ImportError:  # the tests that need it skip themselves
        yield
        return
    from agent.chat.access import configured_endpoint

    real = AppTest.from_file.__func__

    def from_file(cls, *args, **kwargs):
        at = real(cls, *args, **kwargs)
        at.query_params["token"] = UI_TOKEN
        return at

    monkeypatch.setattr(AppTest, "from_file", classmethod(from_file))
    configured_endpoint.cache_clear()
    yield
    configured_endpoint.cache_clear()


def logprob_reply(**probs):
    """A one-token reply whose top log-probabilities are `probs` (label -> probability)."""
    import math

    from langchain_core.messages import AIMessage

    top = [{"token": k, "logprob": math.log(v)} for k, v in probs.items()]
    best = max(probs, key=probs.get)
    return AIMessage(
        content=best,
        response_metadata={
            "logprobs": {"content": [{"token": best, "logprob": math.log(probs[best]), "top_logprobs": top}]}
        },
    )


SENTENCE = re.compile(r"^(S\d+) (.*)$", re.MULTILINE)


def shown_sentences(messages) -> list[tuple[str, str]]:
    """(id, text) of the numbered sentences in a call's last user prompt."""
    user = next(m.text for m in reversed(messages) if m.type == "human")
    return SENTENCE.findall(user)


def ids_with(messages, fragment: str) -> list[str]:
    """The shown sentence ids whose text contains `fragment` (case-insensitive)."""
    return [sid for sid, text in shown_sentences(messages) if fragment.lower() in text.lower()]


def cite_first_chunk(messages):
    """A reader that calls a CRF paper relevant and selects its sentence with "95.7" (else its
    first sentence); any other paper is not relevant."""
    text = "\n".join(m.text for m in messages).lower()
    relevant = "crf" in text or "conditional random" in text
    ids = (ids_with(messages, "95.7") or [sid for sid, _ in shown_sentences(messages)][:1]) if relevant else []
    return {
        "sentences": ids[:1],
        "relevant": relevant,
        "finding": "CRFs reach 95.7 F1 on chunking." if relevant else "",
    }


def claims_answer(*claims: tuple[str, str], **fields):
    """A synthesis reply: each claim (text, fragment) cites the shown sentences containing
    `fragment`; `fields` adds choice, insufficient_evidence, table_rows."""

    def reply(messages):
        return {"claims": [{"text": t, "sentences": ids_with(messages, f)[:1]} for t, f in claims], **fields}

    return reply


ANSWER = claims_answer(("CRFs reach 95.7 F1.", "95.7"))
