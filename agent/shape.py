"""The shape of the answer a question asks for, read from its wording without a model.

- `papers`: "Which papers ...", "What studies ...", "List the works that ...", "Papers that ...":
  the answer names every paper that qualifies, each with the sentence that shows it does.
- `fact`: anything else (one number, one name, one finding, "how many papers does X hold"): one
  or two claims.

The shape sizes the reading (how many papers are covered) and the answer (how many claims);
`answer_shape` in the run's context overrides the guess.
"""

from __future__ import annotations

import re
from typing import Literal

Shape = Literal["fact", "papers"]

_WORKS = r"(?:papers?|works?|studies|study|articles?|publications?|documents?|references?|sources?)"
# the words that may stand between "which" and "papers" ("which of the demo papers"); not any
# word, or "what share of papers ..." would ask for papers
_FEW = r"(?:of|the|these|those|my|our|its|other|demo|indexed|listed|recent|earlier|later|published|related|\w+-?based)"
_PAPERS = re.compile(
    rf"""
    \b(?:which|what)\s+(?:{_FEW}\s+){{0,3}}{_WORKS}\b  # which papers, which of the demo papers, what other studies
    | \b(?:list|name|find|show|give|identify|enumerate)\s+(?:me\s+)?(?:all\s+|the\s+|every\s+|some\s+)*
      (?:{_FEW}\s+){{0,2}}{_WORKS}\b                                 # list the papers, name all studies
    | ^\s*(?:all\s+|the\s+)?{_WORKS}\s+(?:that|which|who|where|on|about|using|with)\b  # "Papers that ..."
    | \bare\s+there\s+(?:any\s+)?{_WORKS}\b                         # are there papers ...
    """,
    re.IGNORECASE | re.VERBOSE,
)


# what a question asking for a quantity says: "how many", "how much", "by how much", "what
# share / F1 / accuracy ..." (the measure within a few words of "what" or "which")
_MEASURES = (
    r"share|percentage|percent|proportion|fraction|ratio|rate|number|count|amount|size|total|average|mean|"
    r"median|f1|f-score|f-measure|accuracy|precision|recall|score|value|bleu|rouge|auc|error|speed|cost"
)
_QUANTITY = re.compile(
    rf"\bhow\s+(?:many|much|large|big|long|often|fast|high|low)\b"
    rf"|\b(?:what|which)\s+(?:[\w'-]+\s+){{0,4}}?(?:{_MEASURES})\b",
    re.IGNORECASE,
)


def asks_quantity(question: str) -> bool:
    """True for a question that asks for a number ("How many ...", "What F1 does ...", "What
    share of ..."): its claims must state that number, and sentences that hold one are preferred
    as its evidence."""
    return bool(_QUANTITY.search(question or ""))


def question_shape(question: str) -> Shape:
    """`papers` for a question that asks which papers (studies, works...) qualify, else `fact`."""
    return "papers" if _PAPERS.search(question or "") else "fact"


def shape_for(question: str, asked: str = "auto") -> Shape:
    """The shape a run answers in: `asked` ("fact" / "papers") when given, else the question's."""
    return asked if asked in ("fact", "papers") else question_shape(question)  # type: ignore[return-value]


def papers_to_read(ctx, question: str) -> int:
    """How many candidate papers a run covers: `read_papers`, and at least `list_papers` for a
    "which papers" question."""
    n = ctx.read_papers
    return max(n, ctx.list_papers) if shape_for(question, ctx.answer_shape) == "papers" else n


def claims_cap(ctx, question: str) -> int:
    """The most claims an answer may make: a fact at most `fact_claims` (and `synthesize_claims`);
    a "which papers" answer one per paper it may name, at least `list_papers`."""
    if shape_for(question, ctx.answer_shape) == "papers":
        return max(ctx.synthesize_claims, ctx.list_papers)
    return min(ctx.synthesize_claims, ctx.fact_claims)


def reads_jointly(ctx, question: str) -> bool:
    """Whether a run reads its candidates together, with no model call per paper: a "which
    papers" question unless `list_reading` is "per_paper"; a fact when `reading` is "joint"."""
    if shape_for(question, ctx.answer_shape) == "papers":
        return ctx.list_reading != "per_paper"
    return ctx.reading == "joint"
