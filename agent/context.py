"""Per-run knobs of the agent: the graph's context schema (CONTRIBUTING.md: settings from one tree).

Process settings (paths, endpoints, keys) live in `agent.settings`; these are the choices of one
run. Presets are named JSON files in `agent/presets/` holding any subset of these fields;
precedence: explicit run values > preset > the defaults below (the paper's values).

Every value is validated where it enters, in one place (`Context.__post_init__`, whichever way
the context is built: a preset, `--set KEY=VALUE`, `ask(**overrides)`, the chat): its type, the
allowed values of a choice (`Literal`) and the range of a number. A bad one is a `ContextError`
(a ValueError) naming the field, the value and what is allowed, in the words of every
validation message of litloop (`tools.validation`), e.g.

    --set: field 'choice_scoring': expected one of 'model', 'scored', 'calibrated', got a string
    ('calibratd')

Strings are read as the field's type (`'5'` for a number, `'true'` for a switch), so command
line values need no typing of their own.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields, replace
from functools import cache
from pathlib import Path, PurePath
from typing import Annotated, Any, Literal, get_type_hints

from pydantic import BeforeValidator, Field, TypeAdapter, ValidationError, create_model

from agent.methods import method_for
from tools.validation import field_messages

PRESETS_DIR = Path(__file__).resolve().parent / "presets"

# an index directory given as a Path is kept as its string, as the CLI passes it
PathText = Annotated[str, BeforeValidator(lambda v: str(v) if isinstance(v, PurePath) else v)]
Count = Annotated[int, Field(ge=1)]  # papers, chunks, characters, rounds: at least one
Probability = Annotated[float, Field(ge=0.0, le=1.0)]  # thresholds and margins of probabilities
ChoiceScoring = Literal["model", "scored", "calibrated"]
Reranker = Literal["none", "cross-encoder", "llm"]  # as tools.settings.RerankSettings.backend
EvidenceSelector = Literal["chunks", "paper", "mixed"]
AnswerShape = Literal["auto", "fact", "papers", "overview", "comparison"]
ShapeReading = Literal["meaning", "wording"]
ReadingMode = Literal["per_paper", "joint"]
FactAnswer = Literal["write", "choose"]
ChooseBy = Literal["words", "letter", "yesno"]
ListReading = Literal["per_paper", "similarity", "judge", "pick"]
VerifyWithoutLLM = Literal["listing", "coverage"]


class ContextError(ValueError):
    """A run knob with a value of the wrong type, outside its choices or its range."""


@dataclass(frozen=True)
class Context:
    preset: str = "paper"
    index: PathText | None = None  # index directory; None: settings (LITLOOP_INDEX or the demo index)
    max_rounds: Count = 3  # SEE: docs/design.md section 3 (paper: 3)
    subqueries_per_round: Count = 4  # paper: 4
    # CPU cuts (preset local-fast): round 1 searches the question itself instead of asking the
    # LLM for subqueries; the verifier's verdict is given without the LLM. Both True in the
    # paper's method.
    decompose_with_llm: bool = True
    verify_with_llm: bool = True
    # the verdict without the LLM: "listing", the papers listed to the verifier are the evidence
    # and the loop ends; "coverage", the question's content terms (agent.reading.evidence.question_aspects)
    # are looked for in the best sentences of the pool's top `read_papers` papers (those the
    # reader would be shown): one that none mentions is `missing`, and the next round searches
    # for it (LLM-free, the question's words for it with the question's other content words)
    verify_without_llm: VerifyWithoutLLM = "listing"
    verify_papers: Count = 20  # papers listed to the verifier (paper: 20)
    verify_chunks_per_paper: Count = 2  # paper: 2
    verify_chunk_chars: Count = 1800  # paper: 1,800
    read_papers: Count = 50  # candidate papers read (paper: 50)
    read_chunks_per_paper: Count = 6  # chunks whose sentences the reader may be shown, per paper
    read_chunk_chars: Count = 1800  # characters of a chunk shown to the verifier's listing and KADR
    # the reader sees the sentences of its chunks that best match the question, up to this many
    # characters per paper (about 4 characters a token), and selects at most this many
    read_sentence_chars: Count = 6000
    # which sentences compete for those characters: "chunks", those of the paper's chunks to read
    # (pooled, then by BM25); "paper", every sentence of the paper, ranked by BM25 over stems (a
    # table row with its caption and column names) and the embedder (docs/benchmarks.md, "Evidence
    # selection on its own")
    evidence_selector: EvidenceSelector = "chunks"
    read_evidence_sentences: Count = 5
    # ask for the reader's token log-probabilities (OpenAI-compatible endpoints and the embedded
    # model give them) and accept a reading only when P(true) for `relevant` >= the threshold
    read_relevance_logprobs: bool = False
    read_relevance_threshold: Probability = 0.0
    read_concurrency: Count = 4
    # how a fact question's candidates are read: "per_paper", one model call judges each paper on
    # its own (the method's Read); "joint", no call per paper: the evidence selector picks each
    # candidate's best sentences and the synthesis reads them together
    reading: ReadingMode = "per_paper"
    # the answer's shape (agent/reading/shape.py): "auto" reads it from the question ("which papers ..."
    # is `papers`, "give me an overview of ..." `overview`, a question that compares
    # `comparison`, anything else `fact`). A fact gets at most `fact_claims` claims; a `papers`
    # answer covers at least `list_papers` candidates, shows each with up to `list_sentence_chars`
    # of its best sentences in a joint reading, and names each paper that qualifies
    answer_shape: AnswerShape = "auto"
    # how "auto" reads the shape: "meaning", the patterns and then, for a question none of them
    # matches, the bundled embedder against labelled example questions (agent/reading/shape_reader.py);
    # "wording", the patterns only
    shape_reading: ShapeReading = "meaning"
    # an overview covers at least this many candidates and groups the papers that qualify into
    # at most `overview_themes` themes, each named by its key terms (agent/answer/overview.py)
    overview_papers: Count = 20
    overview_themes: Count = 4
    # with `overview_leads`, each theme of two papers or more opens with one sentence of at most
    # `lead_words` words the model writes from its papers' quoted sentences, checked like any claim
    # and dropped when it fails (agent/answer/leads.py); off, an overview makes no model call
    overview_leads: bool = True
    lead_words: Count = 25
    # the answer's words as the model writes them: the synthesis (and choose-then-copy) call is
    # streamed and its claims so far go to the run's custom stream (`{"draft": ...}`; `ask()`
    # passes them to `on_event`), before they are checked; the chats turn it on. Off, nothing
    # streams (some endpoints refuse streamed usage)
    stream_drafts: bool = False
    fact_claims: Count = 2
    # how a fact's answer is written: "write", the synthesis writes claims from the sentences
    # shown; "choose", the shown sentences are ranked by the question's words (BM25, figures first
    # for a quantity question), the best `choose_sentences` are offered to one call that copies the
    # answer's value from them (an enum of their word spans in the schema: no figure or name they
    # do not hold) and writes the claim around it, checked as any claim; with no claim left the
    # quote starts with the sentence holding the value and names it (agent/answer/copy.py).
    # `choose_by` "letter" or "yesno" re-ranks the offered sentences by the model's next-token
    # probabilities first (each sentence's letter; each sentence's P(yes)); on the development
    # set P(yes) put the answering sentence first more often than the words, for 5 s a question,
    # and is not yet measured end to end (docs/benchmarks.md)
    # A fact answered by "choose" is read jointly (no model call per paper): the best-ranked
    # candidate's best sentences within `choose_chars` (half that for each other paper), at most
    # `choose_pool` of them ranked in all
    fact_answer: FactAnswer = "write"
    choose_sentences: Count = 3
    choose_by: ChooseBy = "words"
    choose_chars: Count = 3000
    choose_pool: Count = 24
    # show the model each table row's cells after their column names, and tell the reader and the
    # synthesis to give the number for a question that asks for a quantity. Off: on the factoid
    # development set it moved answers both ways with the 1.5B model (docs/benchmarks.md)
    reading_hints: bool = False
    list_papers: Count = 10
    list_sentence_chars: Count = 400
    # how the candidates of a "which papers" question are read: "per_paper", as a fact's with
    # `reading` "per_paper", and the synthesis names the papers; the others read them together
    # and name each paper that qualifies with its best sentences: "similarity", no model call,
    # the bundled embedder's cosine between the question and the paper's title with its best
    # sentences qualifies (below); "judge", the model's P(yes) for each paper on the
    # same text (one token a paper) reaches `list_threshold`; "pick", one call shown them all
    # picks the sentences that show their paper qualifies
    list_reading: ListReading = "per_paper"
    # under "similarity" a candidate qualifies when its cosine reaches `list_min_similarity` and
    # its score (the cosine + `list_coverage_weight` x the share of the question's content terms
    # its text mentions) is within `list_similarity_margin` of the best candidate's. Chosen on
    # the dev split of bench/data/multi_paper.jsonl (docs/benchmarks.md, "Breadth on the CPU")
    list_min_similarity: Annotated[float, Field(ge=-1.0, le=1.0)] = 0.35
    list_similarity_margin: Annotated[float, Field(ge=0.0, le=3.0)] = 0.25
    list_coverage_weight: Annotated[float, Field(ge=0.0, le=1.0)] = 0.25
    # under "similarity", a candidate whose text mentions less than this share of the question's
    # aspects does not qualify, however similar (1.0: every aspect)
    list_min_coverage: Probability = 0.0
    # under "similarity", each phrase of the question (a run of two or more content words,
    # "conditional random fields") is one aspect of the coverage, met only where one sentence of
    # the paper says it in full: a paper on Markov random fields shares two of its words, not
    # the phrase. Off: every content word is its own aspect
    list_phrase: bool = True
    list_threshold: Probability = 0.5
    # a comparison (agent/reading/shape.py) is a table of at most this many papers, those that qualify
    # as a "which papers" candidate does, one column per aspect the question names
    compare_papers: Count = 4
    synthesize_chunks: Count = 30  # chunks the synthesis's sentences may come from
    synthesize_sentences: Count = 40  # sentences shown to the synthesis (the readers' selections)
    synthesize_claims: Count = 8  # most claims an answer may make
    # multiple choice (agent/answer/choice.py): "model", the synthesis's own choice (written after its
    # claims); "scored", the option label most probable as the model's next token given the
    # question and the selected sentences; "calibrated", that probability divided by the same
    # prompt's without the evidence. Below `choice_abstain_margin` between the best two, the
    # "maybe"-like option. "model" is the default: on PubMedQA dev neither scoring rule beat it
    # (docs/benchmarks.md).
    choice_scoring: ChoiceScoring = "model"
    choice_abstain_margin: Probability = 0.0
    # after the deterministic check, ask the model whether a claim's sentences state it (one
    # token: P(yes)); a claim below `support_threshold` is dropped (docs/attribution.md). On the
    # labelled claims of bench/data/support_dev.jsonl the embedded model keeps 95% of supported
    # claims and drops 65% of unsupported ones at 0.5 (chosen two-fold; docs/benchmarks.md)
    support_judge: bool = True
    support_threshold: Probability = 0.5
    # A claim that fails is tried on this many other shown sentences (best word match first);
    # one that passes the deterministic check and the judge becomes its citation. 0: off.
    support_reanchor: Annotated[int, Field(ge=0)] = 2
    reranker: Reranker | None = None  # none | cross-encoder | llm; None: settings
    max_rerank: Count | None = None  # cap on chunks scored by the reranker per subquery
    decompose_model: str | None = None
    verify_model: str | None = None
    read_model: str | None = None
    synthesize_model: str | None = None
    # Registered corpora to search (tools/registry.py); several are fused, ids namespaced
    # `<corpus>:<id>`. Empty: `index` (or LITLOOP_INDEX, or the demo index).
    corpora: list[str] = field(default_factory=list)
    # The method (agent/methods/): rra, Retrieve-Relate-Read (docs/design.md sections 3-5); kadr,
    # knowledge-aware diverse reranking (section 6); both in the same seven nodes.
    mode: str = "rra"
    kadr_n_know: Count = 5  # SEE: docs/design.md section 6 -- documents the LLM declares knowledge for (5)
    kadr_n_rank: Count = 20  # top of the first reranking reranked again per knowledge statement
    kadr_n_ans: Count = 10  # SEE: docs/design.md section 6 -- documents the answer is written from (10)

    def __post_init__(self) -> None:
        values = _checked({f.name: getattr(self, f.name) for f in fields(self)}, "context")
        for name, value in values.items():  # the typed values ('5' -> 5); frozen, hence setattr
            object.__setattr__(self, name, value)
        method_for(self.mode)  # an unknown mode is a ValueError naming the registered ones

    def model_for(self, role: str) -> str | None:
        return getattr(self, f"{role}_model", None)


@cache
def _schema() -> TypeAdapter[Any]:
    """A pydantic model of Context's fields (their annotated types), built once."""
    hints = get_type_hints(Context, include_extras=True)
    model = create_model("Context", **{f.name: (hints[f.name], ...) for f in fields(Context)})  # type: ignore[call-overload]  # field specs built from the dataclass
    return TypeAdapter(model)


def _checked(values: dict[str, Any], where: str) -> dict[str, Any]:
    """`values` (all of Context's fields) as their types, or a ContextError naming each bad one."""
    try:
        model = _schema().validate_python(values)
    except ValidationError as exc:
        raise ContextError(f"{where}: " + "; ".join(field_messages(exc))) from None
    return {name: getattr(model, name) for name in values}


def check_values(values: dict[str, Any], where: str) -> dict[str, Any]:
    """Some of Context's fields as their types: '5' -> 5 for a count. A ContextError, prefixed
    `where` (the preset's file, `--set`), names each bad field, its value and what is allowed;
    an unknown field is refused the same way."""
    known = {f.name for f in fields(Context)}
    if unknown := sorted(set(values) - known):
        raise ContextError(
            f"{where}: unknown field{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(map(repr, unknown))}; valid: {', '.join(sorted(known))}"
        )
    defaults = {f.name: getattr(_DEFAULT, f.name) for f in fields(Context)}
    typed = _checked({**defaults, **values}, where)
    return {name: typed[name] for name in values}


def preset_names() -> list[str]:
    return sorted(p.stem for p in PRESETS_DIR.glob("*.json"))


def load_preset(name: str, _seen: tuple[str, ...] = ()) -> dict[str, Any]:
    """A preset's values. A preset may name another it `extends`: that one's values first, then
    its own (`local-fast` is `local` with the Retrieve loop's LLM steps off)."""
    path = PRESETS_DIR / f"{name}.json"
    if not path.exists():
        raise ValueError(f"unknown preset {name!r}; choose one of {', '.join(preset_names())}")
    if name in _seen:
        raise ValueError(f"preset {name!r} ({path.name}): 'extends' loops: {' -> '.join((*_seen, name))}")
    data = json.loads(path.read_text())
    data.pop("description", None)
    base = data.pop("extends", None)
    values = load_preset(str(base), (*_seen, name)) if base is not None else {}
    values.update(check_values(data, f"preset {name!r} ({path.name})"))
    return values


def make_context(preset: str = "paper", **overrides: Any) -> Context:
    """Defaults, then the preset's values, then this run's (None means not given)."""
    values = load_preset(preset)
    values.update(check_values({k: v for k, v in overrides.items() if v is not None}, "run setting"))
    return replace(_DEFAULT, preset=preset, **values)


_DEFAULT = Context()
