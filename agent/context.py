"""Per-run knobs of the agent: the graph's context schema (STYLE.md habit 9).

Process settings (paths, endpoints, keys) live in `agent.settings`; these are the choices of one
run. Presets are named JSON files in `agent/presets/` holding any subset of these fields;
precedence: explicit run values > preset > the defaults below (the paper's values).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from agent.methods import method_for

PRESETS_DIR = Path(__file__).resolve().parent / "presets"


@dataclass(frozen=True)
class Context:
    preset: str = "paper"
    index: str | None = None  # index directory; None: settings (LITLOOP_INDEX or the demo index)
    max_rounds: int = 3  # SEE: DESIGN.md section 3 (paper: 3)
    subqueries_per_round: int = 4  # paper: 4
    # CPU cuts (preset local-fast): round 1 searches the question itself instead of asking the
    # LLM for subqueries; the verifier's listing is taken as the evidence (no LLM verdict, so no
    # second round). Both True in the paper's method.
    decompose_with_llm: bool = True
    verify_with_llm: bool = True
    verify_papers: int = 20  # papers listed to the verifier (paper: 20)
    verify_chunks_per_paper: int = 2  # paper: 2
    verify_chunk_chars: int = 1800  # paper: 1,800
    read_papers: int = 50  # candidate papers read (paper: 50)
    read_chunks_per_paper: int = 6  # chunks whose sentences the reader may be shown, per paper
    read_chunk_chars: int = 1800  # characters of a chunk shown to the verifier's listing and KADR
    # the reader sees the sentences of its chunks that best match the question, up to this many
    # characters per paper (about 4 characters a token), and selects at most this many
    read_sentence_chars: int = 6000
    read_evidence_sentences: int = 5
    # ask for the reader's token log-probabilities (OpenAI-compatible endpoints and the embedded
    # model give them) and accept a reading only when P(true) for `relevant` >= the threshold
    read_relevance_logprobs: bool = False
    read_relevance_threshold: float = 0.0
    read_concurrency: int = 4
    synthesize_chunks: int = 30  # chunks the synthesis's sentences may come from
    synthesize_sentences: int = 40  # sentences shown to the synthesis (the readers' selections)
    synthesize_claims: int = 8  # most claims an answer may make
    # multiple choice (agent/choice.py): "model", the synthesis's own choice (written after its
    # claims); "scored", the option label most probable as the model's next token given the
    # question and the selected sentences; "calibrated", that probability divided by the same
    # prompt's without the evidence. Below `choice_abstain_margin` between the best two, the
    # "maybe"-like option. "model" is the default: on PubMedQA dev neither scoring rule beat it
    # (docs/benchmarks.md).
    choice_scoring: str = "model"
    choice_abstain_margin: float = 0.0
    # after the deterministic check, ask the model whether a claim's sentences state it (one
    # token: P(yes)); a claim below `support_threshold` is dropped (docs/attribution.md). On the
    # labelled claims of bench/data/support_dev.jsonl the embedded model keeps 95% of supported
    # claims and drops 65% of unsupported ones at 0.5 (chosen two-fold; docs/benchmarks.md)
    support_judge: bool = True
    support_threshold: float = 0.5
    # A claim that fails is tried on this many other shown sentences (best word match first);
    # one that passes the deterministic check and the judge becomes its citation. 0: off.
    support_reanchor: int = 2
    reranker: str | None = None  # none | cross-encoder | llm; None: settings
    max_rerank: int | None = None  # cap on chunks scored by the reranker per subquery
    decompose_model: str | None = None
    verify_model: str | None = None
    read_model: str | None = None
    synthesize_model: str | None = None
    # Registered corpora to search (tools/registry.py); several are fused, ids namespaced
    # `<corpus>:<id>`. Empty: `index` (or LITLOOP_INDEX, or the demo index).
    corpora: list[str] = field(default_factory=list)
    # The method (agent/methods/): rra, Retrieve-Relate-Read (DESIGN.md sections 3-5); kadr,
    # knowledge-aware diverse reranking (section 6); both in the same seven nodes.
    mode: str = "rra"
    kadr_n_know: int = 5  # SEE: DESIGN.md section 6 -- documents the LLM declares knowledge for (5)
    kadr_n_rank: int = 20  # top of the first reranking reranked again per knowledge statement
    kadr_n_ans: int = 10  # SEE: DESIGN.md section 6 -- documents the answer is written from (10)

    def __post_init__(self) -> None:
        method_for(self.mode)  # an unknown mode is a ValueError naming the registered ones

    def model_for(self, role: str) -> str | None:
        return getattr(self, f"{role}_model", None)


def preset_names() -> list[str]:
    return sorted(p.stem for p in PRESETS_DIR.glob("*.json"))


def load_preset(name: str) -> dict[str, Any]:
    path = PRESETS_DIR / f"{name}.json"
    if not path.exists():
        raise ValueError(f"unknown preset {name!r}; choose one of {', '.join(preset_names())}")
    data = json.loads(path.read_text())
    known = {f.name for f in fields(Context)}
    unknown = set(data) - known - {"description"}
    if unknown:
        raise ValueError(f"{path}: unknown fields {sorted(unknown)}; valid: {sorted(known)}")
    data.pop("description", None)
    return data


def make_context(preset: str = "paper", **overrides: Any) -> Context:
    """Defaults, then the preset's values, then this run's (None means not given)."""
    values = load_preset(preset)
    values.update({k: v for k, v in overrides.items() if v is not None})
    return replace(Context(), preset=preset, **values)
