"""The reranker's pure parts: order, settings, yes/no arithmetic, prompts, the server protocol.

The server path is driven by `httpx.MockTransport` answering in the formats a llama.cpp server
and an OpenAI-style server really send (recorded from xllamacpp 2026.10.11549).
"""

from __future__ import annotations

import json
import logging
import math
import socket
import subprocess
import sys

import httpx
import pytest
from pydantic import ValidationError

from tools.models.embed import ModelNotAvailable
from tools.models.rerank import (
    CHATML_TEMPLATE,
    NoReranker,
    PromptTemplate,
    Reranker,
    ServerYesNoReranker,
    build_reranker,
    choose_llm_runtime,
    completion_top_logprobs,
    precision_for,
    user_turn,
    yes_probability,
)
from tools.retrieval.fusion import rerank_order
from tools.settings import RerankSettings

pytestmark = pytest.mark.unit


# --- none and rerank_order -------------------------------------------------------------------


def test_none_keeps_the_given_order():
    reranker = build_reranker(RerankSettings())
    texts = ["c", "a", "b", "a"]
    scores = reranker.score("q", texts)
    assert isinstance(reranker, NoReranker) and isinstance(reranker, Reranker)
    assert len(scores) == len(texts)
    assert rerank_order(scores) == [0, 1, 2, 3]
    assert reranker.score("q", []) == []


def test_rerank_order_descending_with_stable_ties():
    assert rerank_order([1.0, 3.0, 3.0, 2.0, 3.0]) == [1, 2, 4, 3, 0]
    assert rerank_order([0.5, 0.5, 0.5]) == [0, 1, 2]
    assert rerank_order([]) == []


def test_rerank_order_puts_nan_last():
    assert rerank_order([float("nan"), 0.1, -5.0]) == [1, 2, 0]


# --- settings --------------------------------------------------------------------------------


def test_settings_defaults_and_descriptions():
    s = RerankSettings()
    assert (s.backend, s.max_chunks, s.max_chars, s.batch_size) == ("none", 200, 1800, 32)
    assert all(f.description for f in RerankSettings.model_fields.values())


def test_cross_encoder_without_model_names_the_setting():
    with pytest.raises(ValidationError, match="LITLOOP_RERANK__MODEL"):
        RerankSettings(backend="cross-encoder")


@pytest.mark.parametrize(
    "bad",
    [
        {"backend": "bm25"},
        {"batch_size": 0},
        {"max_chunks": 0},
        {"max_chars": 0},
        {"llm_runtime": "vllm"},
        {"timeout_s": 0},
        {"instruction": ""},
    ],
)
def test_settings_reject_invalid_values(bad):
    with pytest.raises(ValidationError):
        RerankSettings(**bad)


def test_settings_normalise_server_url_and_hide_the_key():
    s = RerankSettings(backend="llm", server_url="http://127.0.0.1:8080/v1/", api_key="secret")
    assert s.server_url == "http://127.0.0.1:8080/v1"
    assert "secret" not in repr(s)


def test_settings_read_from_the_environment_when_mounted(monkeypatch):
    """The lead mounts RerankSettings as Settings.rerank: LITLOOP_RERANK__* must parse."""
    from pydantic_settings import BaseSettings, SettingsConfigDict

    class Mounted(BaseSettings):
        model_config = SettingsConfigDict(env_prefix="LITLOOP_", env_nested_delimiter="__")
        rerank: RerankSettings = RerankSettings()

    monkeypatch.setenv("LITLOOP_RERANK__BACKEND", "llm")
    monkeypatch.setenv("LITLOOP_RERANK__MAX_CHUNKS", "20")
    monkeypatch.setenv("LITLOOP_RERANK__SERVER_URL", "http://h:1/v1")
    s = Mounted().rerank
    assert (s.backend, s.max_chunks, s.server_url) == ("llm", 20, "http://h:1/v1")


# --- device, precision and runtime policies -------------------------------------------------


@pytest.mark.parametrize(
    "device, dtype",
    [
        ("cuda", "float16"),
        ("cuda:1", "float16"),
        ("cpu", "float32"),
        ("mps", "float32"),
    ],
)
def test_precision_policy(device, dtype):
    assert precision_for(device) == dtype


@pytest.mark.parametrize(
    "runtime, device, url, model, expected",
    [
        ("auto", "cuda", "http://s/v1", "dir", "transformers"),
        ("auto", "cpu", "http://s/v1", "dir", "server"),
        ("auto", "cpu", None, "dir", "transformers"),
        ("auto", "cuda", "http://s/v1", None, "server"),
        ("server", "cuda", "http://s/v1", "dir", "server"),
        ("transformers", "cpu", "http://s/v1", "dir", "transformers"),
    ],
)
def test_llm_runtime_policy(runtime, device, url, model, expected):
    assert choose_llm_runtime(runtime, device, url, model) == expected


def test_llm_without_model_or_server_names_the_settings():
    with pytest.raises(ModelNotAvailable, match="LITLOOP_RERANK__SERVER_URL.*LITLOOP_RERANK__MODEL"):
        build_reranker(RerankSettings(backend="llm"), device="cpu")


# --- yes/no arithmetic and prompts -----------------------------------------------------------


def test_yes_probability_hand_worked():
    # P(yes)/(P(yes)+P(no)) = e^-0.5 / (e^-0.5 + e^-1) = 1/(1+e^-0.5)
    assert yes_probability([("yes", -0.5), ("no", -1.0), ("The", -2.0)]) == pytest.approx(1 / (1 + math.exp(-0.5)))


def test_yes_probability_adds_spellings():
    p = yes_probability([("yes", math.log(0.3)), (" Yes", math.log(0.1)), ("No", math.log(0.2))])
    assert p == pytest.approx(0.4 / 0.6)


def test_yes_probability_edges():
    assert yes_probability([("The", -0.1)]) is None
    assert yes_probability([]) is None
    assert yes_probability([("yes", -3.0)]) == 1.0
    assert yes_probability([("no", -3.0)]) == 0.0


def test_prompt_is_qwen3_reranker_form():
    prompt = CHATML_TEMPLATE.fill("SYS", user_turn("Judge it", "What does a CRF model?", "A CRF ..."))
    assert prompt == (
        "<|im_start|>system\nSYS<|im_end|>\n<|im_start|>user\n<Instruct>: Judge it\n"
        "<Query>: What does a CRF model?\n<Document>: A CRF ...<|im_end|>\n<|im_start|>assistant\n"
    )


def test_template_fill_leaves_passage_text_alone():
    prompt = CHATML_TEMPLATE.fill("S", "doc mentions @@LITLOOP_SYSTEM@@ literally")
    assert "doc mentions @@LITLOOP_SYSTEM@@ literally" in prompt


def test_template_without_system_turn_puts_system_in_user_turn():
    t = PromptTemplate("<s>[INST] @@LITLOOP_USER@@ [/INST]")
    assert t.fill("S", "U") == "<s>[INST] S\n\nU [/INST]"


def test_completion_top_logprobs_both_formats():
    llama = {
        "choices": [
            {
                "logprobs": {
                    "content": [
                        {
                            "token": "yes",
                            "logprob": -0.8,
                            "top_logprobs": [
                                {"id": 1, "token": "yes", "logprob": -0.8},
                                {"id": 2, "token": "no", "logprob": -0.9},
                            ],
                        }
                    ]
                }
            }
        ]
    }
    openai = {"choices": [{"logprobs": {"tokens": ["yes"], "top_logprobs": [{"yes": -0.8, " no": -0.9}]}}]}
    assert completion_top_logprobs(llama) == [("yes", -0.8), ("no", -0.9)]
    assert completion_top_logprobs(openai) == [("yes", -0.8), (" no", -0.9)]
    assert completion_top_logprobs({"choices": [{"text": "yes"}]}) == []


# --- the server runtime against a scripted server --------------------------------------------


def _llama_cpp(top: dict[str, float], seen: list[dict]) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append({"path": request.url.path, "auth": request.headers.get("authorization"), **body})
        if request.url.path == "/apply-template":
            return httpx.Response(
                200,
                json={
                    "prompt": "<|im_start|>system\n@@LITLOOP_SYSTEM@@<|im_end|>\n"
                    "<|im_start|>user\n@@LITLOOP_USER@@<|im_end|>\n<|im_start|>assistant\n"
                },
            )
        entries = [{"id": i, "token": t, "logprob": lp} for i, (t, lp) in enumerate(top.items())]
        return httpx.Response(
            200, json={"choices": [{"text": "x", "logprobs": {"content": [{**entries[0], "top_logprobs": entries}]}}]}
        )

    return httpx.MockTransport(handler)


def test_server_scores_one_completion_per_passage():
    seen: list[dict] = []
    settings = RerankSettings(
        backend="llm", llm_runtime="server", server_url="http://h:1/v1/", api_key="k", max_chars=10
    )
    reranker = ServerYesNoReranker(settings, transport=_llama_cpp({"yes": -0.5, "no": -1.0}, seen))
    scores = reranker.score("q", ["a passage longer than ten characters", "b"])
    assert scores == pytest.approx([1 / (1 + math.exp(-0.5))] * 2)
    calls = [c for c in seen if c["path"] == "/v1/completions"]
    assert [c["path"] for c in seen] == ["/apply-template", "/v1/completions", "/v1/completions"]
    assert all(c["max_tokens"] == 1 and c["logprobs"] >= 5 and c["auth"] == "Bearer k" for c in calls)
    assert "<Document>: a passage<|im_end|>" in calls[0]["prompt"]  # cut to max_chars


def test_server_neither_answer_scores_half_with_a_warning(caplog):
    settings = RerankSettings(backend="llm", llm_runtime="server", server_url="http://h:1")
    reranker = ServerYesNoReranker(settings, transport=_llama_cpp({"The": -0.1, "A": -2.0}, []))
    with caplog.at_level(logging.WARNING, logger="tools.models.rerank.llm"):
        assert reranker.score("q", ["p"]) == [0.5]
    assert "neither 'yes' nor 'no'" in caplog.text


def test_server_falls_back_to_chatml_without_apply_template():
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/apply-template":
            return httpx.Response(404, text="not found")
        return httpx.Response(200, json={"choices": [{"logprobs": {"top_logprobs": [{"no": -0.1}]}}]})

    settings = RerankSettings(backend="llm", llm_runtime="server", server_url="http://h:1/v1")
    reranker = ServerYesNoReranker(settings, transport=httpx.MockTransport(handler))
    assert reranker.score("q", ["p"]) == [0.0]
    assert reranker.template() is CHATML_TEMPLATE


def test_server_unreachable_names_url_and_setting():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    reranker = build_reranker(RerankSettings(backend="llm", llm_runtime="server", server_url=url))
    with pytest.raises(ModelNotAvailable, match=f"{url}.*LITLOOP_RERANK__SERVER_URL"):
        reranker.score("q", ["p"])


def test_server_error_status_is_reported():
    transport = httpx.MockTransport(
        lambda r: httpx.Response(404 if r.url.path == "/apply-template" else 401, text="invalid api key")
    )
    settings = RerankSettings(backend="llm", llm_runtime="server", server_url="http://h:1")
    with pytest.raises(RuntimeError, match="401.*invalid api key"):
        ServerYesNoReranker(settings, transport=transport).score("q", ["p"])


# --- heavy imports ---------------------------------------------------------------------------


def test_import_and_none_backend_do_not_load_torch():
    code = (
        "import sys\nimport tools.models.rerank as r\n"
        "r.build_reranker(r.RerankSettings()).score('q', ['a', 'b'])\n"
        "r.build_reranker(r.RerankSettings(backend='llm', llm_runtime='server', server_url='http://h:1'))\n"
        "print(','.join(m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules))"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == ""
