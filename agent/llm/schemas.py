"""LLM output contracts. The field descriptions are the specification the model sees."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, Field, create_model
from pydantic.json_schema import SkipJsonSchema

SUBQUERY_CHARS = 120  # longest subquery the schema allows (a search query, not a paragraph)


class Decomposition(BaseModel):
    subqueries: list[Annotated[str, Field(json_schema_extra={"maxLength": SUBQUERY_CHARS})]] = Field(
        description="Short search queries, each targeting one piece of information the question needs. "
        "Empty when nothing new is worth searching."
    )


def decomposition_model(max_subqueries: int) -> type[Decomposition]:
    """Decomposition with its list bounded in the schema (`maxItems`, and `maxLength` per
    subquery), so a grammar-constrained model cannot repeat a list until its token cap. The
    bounds are schema hints, not validation: an endpoint that writes more is cut, not refused."""
    return create_model(
        "Decomposition",
        __base__=Decomposition,
        subqueries=(
            list[Annotated[str, Field(json_schema_extra={"maxLength": SUBQUERY_CHARS})]],  # type: ignore[maybe-unrecognized-str-typeform]  # a field type pydantic reads at run time
            Field(
                description=Decomposition.model_fields["subqueries"].description,
                json_schema_extra={"maxItems": max(1, max_subqueries)},
            ),
        ),
    )


class Verification(BaseModel):
    evidence_papers: list[str] = Field(
        description="Ids (as listed) of the papers whose chunks hold evidence for the question."
    )
    sufficient: bool = Field(description="True when the listed evidence answers every part of the question.")
    missing: str = Field(default="", description="What information is still missing (empty when sufficient).")


class PaperReading(BaseModel):
    """What a reader returns for one paper: the ids of the shown sentences that answer the
    question (never text of its own as evidence), its relevance verdict, an optional finding."""

    sentences: list[str] = Field(
        default_factory=list,
        description="Ids (S1, S2, ...) of the sentences that state what answers the question; empty when none does.",
    )
    relevant: bool = Field(description="Does this paper answer the question, or part of it?")
    finding: str = Field(
        default="",
        description="One sentence: what the selected sentences say that answers "
        "the question, with numbers and names exactly as written there.",
    )


def _ids(ids: Sequence[str]) -> Any:
    """A string that the schema restricts to the shown ids (an enum: a grammar-constrained model
    cannot write another id). Validation accepts any string, so the caller drops an unknown id
    and records it instead of failing the whole reply."""
    return Annotated[str, Field(json_schema_extra={"enum": list(ids)})]


M = TypeVar("M", bound=BaseModel)


def _with_shown_ids(base: type[M], ids: Sequence[str], max_sentences: int) -> type[M]:
    """`base` whose `sentences` field takes only the shown ids, at most `max_sentences` (schema
    hints), with its own description."""
    return create_model(
        base.__name__,
        __base__=base,
        sentences=(
            list[_ids(ids)],  # type: ignore[misc, arg-type]  # the shown ids, a type built at run time
            Field(
                description=base.model_fields["sentences"].description,
                json_schema_extra={"maxItems": max(1, max_sentences)},
            ),
        ),
    )


def reading_model(ids: Sequence[str], max_sentences: int) -> type[PaperReading]:
    """PaperReading whose `sentences` are the shown ids, at most `max_sentences` (schema hints).
    `sentences` is required, so a grammar writes it before `relevant` (llama.cpp orders required
    properties first): the evidence is chosen before the verdict."""
    return _with_shown_ids(PaperReading, ids, max_sentences)


class PaperSelection(BaseModel):
    """What a joint reading of several papers returns for a "which papers" question: the ids of
    the shown sentences that show their paper qualifies (never text of its own)."""

    sentences: list[str] = Field(
        default_factory=list,
        description="Ids (S1, S2, ...) of the sentences showing that their paper is one the question "
        "asks for, one or two per such paper; empty when no paper qualifies.",
    )


def selection_model(ids: Sequence[str], max_sentences: int) -> type[PaperSelection]:
    """PaperSelection whose `sentences` are the shown ids, at most `max_sentences`."""
    return _with_shown_ids(PaperSelection, ids, max_sentences)


class Claim(BaseModel):
    text: str = Field(
        description="One statement of the answer, with numbers, units and names exactly as the "
        "cited sentences give them; no citation markers."
    )
    sentences: list[str] = Field(description="Ids of the sentences (S1, S2, ...) that state this claim.")


class Synthesis(BaseModel):
    """The answer as claims, each resting on shown sentence ids; the prose is rendered from
    them. `choice` and `table_rows` exist only in the schema of a question that asks for them."""

    claims: list[Claim] = Field(
        default_factory=list, description="The answer, one claim per statement, in the order a reader should read them."
    )
    choice: str = Field(default="", description="For multiple choice: the option label the claims support.")
    table_rows: list[dict[str, str]] = Field(
        default_factory=list, description="For table answers: one object per row with exactly the requested columns."
    )
    insufficient_evidence: bool = Field(
        default=False, description="True when the sentences do not answer the question."
    )


def synthesis_model(
    ids: Sequence[str], max_claims: int, options: Sequence[str] = (), table: bool = False
) -> type[Synthesis]:
    """Synthesis for one question: claims cite the shown ids (1-3 each, at most `max_claims`
    claims); `choice` one of the option labels when there are options (required in the schema,
    so the model must choose); no `table_rows` unless a table is asked for."""
    claim = create_model(
        "Claim",
        __base__=Claim,
        sentences=(  # type: ignore[arg-type]  # as above
            list[_ids(ids)],  # type: ignore[misc]  # as above
            Field(
                description=Claim.model_fields["sentences"].description,
                json_schema_extra={"minItems": 1, "maxItems": 3},
            ),
        ),
    )
    fields: dict[str, Any] = {  # claims required: a grammar writes them before the choice
        "claims": (
            list[claim],
            Field(
                description=Synthesis.model_fields["claims"].description,
                json_schema_extra={"maxItems": max(1, max_claims)},
            ),
        ),
    }
    if options:
        fields["choice"] = (
            str,
            Field(description=Synthesis.model_fields["choice"].description, json_schema_extra={"enum": list(options)}),
        )
    else:  # no options: the model is not asked for a choice
        fields["choice"] = (SkipJsonSchema[str], Field(default=""))
    if not table:
        fields["table_rows"] = (SkipJsonSchema[list[dict[str, str]]], Field(default_factory=list))
    return create_model("Synthesis", __base__=Synthesis, **fields)


class CopiedFact(BaseModel):
    """A fact's answer copied from the one sentence chosen as answering it: the value first (in
    the schema an enum of the sentence's own word spans, so a grammar-constrained model cannot
    write a figure or name the sentence does not hold), then the claim written around it."""

    value: str = Field(description="The words of the sentence that answer the question, copied exactly.")
    claim: str = Field(
        description="One sentence answering the question that states the value exactly as written; no citation markers."
    )


def copied_fact_model(values: Sequence[str]) -> type[CopiedFact]:
    """CopiedFact whose `value` is one of `values` (an enum); both fields required, `value`
    first, so a grammar writes the copied value before the claim."""
    return create_model(
        "CopiedFact",
        __base__=CopiedFact,
        value=(
            str,
            Field(description=CopiedFact.model_fields["value"].description, json_schema_extra={"enum": list(values)}),
        ),
    )


class KnowledgeDeclaration(BaseModel):
    """KADR step 3 (docs/design.md section 6): what the question needs and what one document holds."""

    needed: list[str] = Field(
        default_factory=list,
        description="The knowledge elements the question needs, as short phrases (an entity, a number, "
        "a relation, a comparison), whether or not this document has them.",
    )
    held: list[str] = Field(
        default_factory=list,
        description="The needed elements this document holds, each as a short phrase with the fact it "
        "gives (e.g. 'F1 of the CRF tagger: 95.7'). Empty when it holds none.",
    )


class KnowledgeStatements(BaseModel):
    """KADR step 4: two complementary statements of the knowledge the question needs."""

    statement_1: str = Field(
        description="One sentence naming one facet of the knowledge the answer needs (what to look "
        "for, not the answer), e.g. the first entity of a comparison and the property asked."
    )
    statement_2: str = Field(
        description="One sentence naming a different, complementary facet; it must not repeat statement_1."
    )
