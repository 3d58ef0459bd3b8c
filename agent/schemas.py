"""LLM output contracts. The field descriptions are the specification the model sees."""

from __future__ import annotations

from pydantic import BaseModel, Field


class Decomposition(BaseModel):
    subqueries: list[str] = Field(
        description="Short search queries, each targeting one piece of information the question needs. "
        "Empty when nothing new is worth searching."
    )


class Verification(BaseModel):
    evidence_papers: list[str] = Field(
        description="Ids (as listed) of the papers whose chunks hold evidence for the question."
    )
    sufficient: bool = Field(description="True when the listed evidence answers every part of the question.")
    missing: str = Field(
        default="", description="What information is still missing (empty when sufficient)."
    )


class PaperReading(BaseModel):
    relevant: bool = Field(description="Does this paper address the question?")
    sufficient: bool = Field(description="Does this paper alone hold enough evidence for its part of the answer?")
    evidence_chunk_ids: list[str] = Field(
        default_factory=list,
        description="Ids of the chunks (exactly as listed, e.g. 'P3#c12') that support the answer.",
    )
    finding: str = Field(default="", description="One or two sentences: what the paper says that answers the question, with any numbers.")


class Fact(BaseModel):
    value: str = Field(description="The value or statement, e.g. '91.2' or 'uses a CRF layer'.")
    unit: str = Field(default="", description="Unit of the value, if any (e.g. 'F1', '%', 'ms').")
    paper_id: str = Field(description="Id of the paper that reports it.")
    chunk_id: str = Field(description="Id of the chunk that supports it, exactly as listed.")


class Synthesis(BaseModel):
    facts: list[Fact] = Field(default_factory=list, description="The facts the answer rests on, one per supporting chunk.")
    reasoning: str = Field(default="", description="Any arithmetic or comparison, done step by step.")
    answer: str = Field(description="The answer in prose, citing chunk ids in square brackets, e.g. [P3#c12].")
    choice: str = Field(default="", description="For multiple choice: the single option label, e.g. 'B'; else empty.")
    table_rows: list[dict[str, str]] = Field(
        default_factory=list, description="For table answers: one object per row with exactly the requested columns."
    )
    insufficient_evidence: bool = Field(
        default=False, description="True when the evidence does not support an answer."
    )


class KnowledgeDeclaration(BaseModel):
    """KADR step 3 (DESIGN.md section 6): what the question needs and what one document holds."""

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
