"""The shape of the answer a question asks for, read from its wording without a model.

- `papers`: "Which papers ...", "What studies ...", "List the works that ...", "Papers that ...":
  the answer names every paper that qualifies, each with the sentence that shows it does.
- `comparison`: "Compare A and B on X and Y", "How do A and B differ in X?", "What is the
  difference between A and B?", "A vs B": a table, one row per paper, one column per aspect the
  question names (`comparison_columns`), each cell quoted from a sentence of that paper.
- `fact`: anything else (one number, one name, one finding, "how many papers does X hold"): one
  or two claims.

The shape sizes the reading (how many papers are covered) and the answer (how many claims);
`answer_shape` in the run's context overrides the guess.
"""

from __future__ import annotations

import re
from typing import Literal

Shape = Literal["fact", "papers", "comparison"]

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


# a comparison: "compare" opening the question, "how do A and B differ/compare", "difference(s)
# between", "vs" / "versus" (not "how does the model compare to the baseline": one paper's fact)
_COMPARE = re.compile(
    r"^\s*(?:please\s+)?(?:compare|contrast)\b"
    r"|\bhow\s+(?:do|did)\s+.+?\s+and\s+.+?\s+(?:differ|compare|contrast)\b"
    r"|\bdifferen(?:ce|ces|t)\s+between\b"
    r"|\b(?:vs\.?|versus)\s",
    re.IGNORECASE,
)
# where a comparison's aspects begin: after the things compared, "on", "in terms of", ...
_ASPECTS = re.compile(
    r"\b(?:compare|contrast|differ|compared?|difference|differences|vs\.?|versus)\b.*?"
    r"\s(?:in\s+terms\s+of|with\s+respect\s+to|regarding|as\s+to|on|in|by)\s+(?P<aspects>.+)$",
    re.IGNORECASE,
)
_DETERMINER = re.compile(r"^(?:the|their|its|his|her|our|a|an)\s+", re.IGNORECASE)
COMPARE_COLUMN = "finding"  # the one column of a comparison that names no aspect


def question_shape(question: str) -> Shape:
    """`comparison` for a question that compares (`_COMPARE`), `papers` for one that asks which
    papers (studies, works...) qualify, else `fact`."""
    if _COMPARE.search(question or ""):
        return "comparison"
    return "papers" if _PAPERS.search(question or "") else "fact"


def shape_for(question: str, asked: str = "auto") -> Shape:
    """The shape a run answers in: `asked` ("fact" / "papers" / "comparison") when given, else
    the question's."""
    return asked if asked in ("fact", "papers", "comparison") else question_shape(question)  # type: ignore[return-value]


def comparison_columns(question: str) -> list[str]:
    """The aspects a comparison asks about, the columns of its table: the words after "on", "in",
    "in terms of", ... that follow the things compared, split at commas, "and" and "or", without
    a leading article ("Compare SPECTER and S2ORC on their training data and evaluation tasks"
    gives "training data", "evaluation tasks"). One column, `COMPARE_COLUMN`, when it names none."""
    found = _ASPECTS.search((question or "").strip().rstrip("?.! "))
    if not found:
        return [COMPARE_COLUMN]
    parts = re.split(r"\s*,\s*(?:and\s+|or\s+)?|\s+and\s+|\s+or\s+", found.group("aspects"))
    columns = [_DETERMINER.sub("", p).strip() for p in parts]
    return list(dict.fromkeys(c for c in columns if c)) or [COMPARE_COLUMN]


def papers_to_read(ctx, question: str) -> int:
    """How many candidate papers a run covers: `read_papers`, and at least `list_papers` for a
    "which papers" question or a comparison."""
    n = ctx.read_papers
    return max(n, ctx.list_papers) if shape_for(question, ctx.answer_shape) != "fact" else n


def claims_cap(ctx, question: str) -> int:
    """The most claims an answer may make: a fact at most `fact_claims` (and `synthesize_claims`);
    a "which papers" answer one per paper it may name, at least `list_papers`."""
    shape = shape_for(question, ctx.answer_shape)
    if shape == "papers":
        return max(ctx.synthesize_claims, ctx.list_papers)
    if shape == "comparison":  # one claim per cell: each paper on each aspect
        return max(ctx.synthesize_claims, ctx.compare_papers * len(comparison_columns(question)))
    return min(ctx.synthesize_claims, ctx.fact_claims)


def reads_jointly(ctx, question: str) -> bool:
    """Whether a run reads its candidates together, with no model call per paper: a "which
    papers" question or a comparison unless `list_reading` is "per_paper"; a fact when `reading`
    is "joint"."""
    if shape_for(question, ctx.answer_shape) != "fact":
        return ctx.list_reading != "per_paper"
    return ctx.reading == "joint"


# --- questions about citations ---------------------------------------------------------------

_END = r"\s*[?.!]*\s*$"
_SOMEONE = r"(?:who|which|what)(?:\s+(?:other\s+)?(?:papers?|works?|studies|articles?|authors))?"
_MINE = r"(?:the\s+|my\s+|our\s+|other\s+|these\s+)?(?:papers?|works?|studies|articles?|authors)"
_WHERE = r"(?:\s+(?:in|of)\s+(?:the|my|our|this)\s+(?:collection|corpus|index|library))?"
_CITATION_QUESTIONS = tuple(
    re.compile(pattern + r"(?P<subject>.+?)" + _END, re.IGNORECASE)
    for pattern in (
        rf"^\s*{_SOMEONE}\s+(?:cites?|cited|build\s+on|builds\s+on|built\s+on|extends?|extended)\s+",
        rf"^\s*what\s+do(?:es)?\s+{_MINE}{_WHERE}\s+say\s+about\s+",
        rf"^\s*how\s+do(?:es)?\s+{_MINE}{_WHERE}\s+(?:describe|cite|discuss)\s+",
    )
)
# what a subject may end with that names no title word ("the SPECTER paper")
_GENERIC_TAIL = re.compile(r"\s+(?:paper|work|article|tool|method|model|system|dataset|corpus)$", re.IGNORECASE)


def citation_subject(question: str) -> str | None:
    """The cited work a question asks about ("who cites X", "which papers build on X", "what do
    the papers say about X", "how do my papers describe X"): X, without quotes and a leading
    article; None for any other question. Whether X names a cited work is for the index to say
    (tools/citations/query.py); a question about something no paper cites is answered as usual."""
    m = next((m for p in _CITATION_QUESTIONS if (m := p.search(question or ""))), None)
    if m is None:
        return None
    subject = m.group("subject").strip().strip("\"'“”‘’").strip()
    subject = re.sub(r"^(?:the|a|an)\s+", "", subject, flags=re.IGNORECASE)
    return subject or None


def subject_names(subject: str) -> list[str]:
    """The names to look a subject up by: as asked, then without a generic last word."""
    bare = _GENERIC_TAIL.sub("", subject).strip()
    return list(dict.fromkeys(n for n in (subject, bare) if n))
