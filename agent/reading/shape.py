"""The shape of the answer a question asks for, read from its wording without a model.

- `papers`: "Which papers ...", "What studies ...", "List the works that ...", "Papers that ...":
  the answer names every paper that qualifies, each with the sentence that shows it does.
- `comparison`: "Compare A and B on X and Y", "How do A and B differ in X?", "What is the
  difference between A and B?", "A vs B": a table, one row per paper, one column per aspect the
  question names (`comparison_columns`), each cell quoted from a sentence of that paper.
- `overview`: "Give me an overview of ...", "What is known about ...", "What has been published
  on ...", "What are the main approaches to ...": the papers that qualify, as for `papers`, from
  more candidates (`overview_papers`), grouped into themes (agent/answer/overview.py).
- `fact`: anything else (one number, one name, one finding, "how many papers does X hold"): one
  or two claims.

The shape is read in two passes: the patterns below, which know common wordings and decide when
they match; then, for a question none of them matches, the meaning of the question
(agent/reading/shape_reader.py: the bundled embedder's vector against labelled example questions), which
moves a question off `fact` only when it is confident (`MEANING_CONFIDENCE`), so a fact question
does not become a list. `shape_reading` "wording" keeps the first pass only. The shape sizes the
reading (how many papers are covered) and the answer (how many claims); `answer_shape` in the
run's context overrides the guess.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Literal

Shape = Literal["fact", "papers", "overview", "comparison"]
SHAPES: tuple[Shape, ...] = ("fact", "papers", "overview", "comparison")
# the meaning pass moves a question that no pattern matched off `fact` only when the reader
# gives the other shape at least this probability (chosen on the labelled examples, leaving one
# wording family out at a time: docs/benchmarks.md, "Shape from meaning")
MEANING_CONFIDENCE = 0.4

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
    | \bdo(?:es)?\s+(?:any(?:thing)?|some)\s+(?:of\s+)?(?:{_FEW}\s+){{0,3}}(?:{_WORKS}\s+)?(?:here\s+|in\s+\w+\s+\w+\s+)?
      (?:discuss|use|apply|address|study|report|describe|propose|mention|cover|evaluate)  # do any of the papers discuss
    | ^\s*any(?:thing)?\s+(?:{_WORKS}\s+|work\s+|research\s+)?(?:on|about|using|that)\b     # anything on ...
    | \bis\s+there\s+(?:any\s+)?(?:work|research|literature)\s+(?:on|about|that)\b
    | \bwho\s+(?:else\s+)?(?:has|have|had)\s+(?:\w+\s+)?(?:worked|used|applied|studied|proposed|built)\b
    | \b(?:point|direct)\s+me\s+(?:to|at|towards)\b | \brecommend\s+(?:some\s+)?{_WORKS}
    | \b(?:looking|searching)\s+for\s+(?:{_FEW}\s+)?(?:{_WORKS}|work)\b | \bneed\s+(?:some\s+)?{_WORKS}\b
    | \breading\s+list\b | \blist\s+(?:everything|anything|all)\b
    | \bwho\s+(?:else\s+)?(?:uses|applies|studies|works\s+on)\b | \bwhich\s+(?:authors|researchers|(?:research\s+)?groups|labs)\b
    | \b(?:suggest|pull\s+up|get\s+me|want)\s+(?:some\s+|the\s+|all\s+)?(?:{_FEW}\s+)?{_WORKS}\b
    | ^\s*(?:{_WORKS}|work)\s+(?:that|which|on|about|using|with|applying)\b
    """,
    re.IGNORECASE | re.VERBOSE,
)


# an overview: the literature on a topic as a whole, its approaches or its findings
_OVERVIEW = re.compile(
    r"""
    \boverview\b | \bsumm?ar(?:y|ise|ize|ising|izing)\b | \bsum\s+up\b
    | \bsurvey\s+(?:of|the|on|research|work|papers|literature)\b | ^\s*(?:please\s+)?survey\b
    | \b(?:literature|research)\s+(?:review|landscape|overview)\b | \breview\s+(?:of\s+)?the\s+(?:literature|papers|work|research)\b
    | \bwhat(?:\s+is|'s|\s+are)\s+(?:currently\s+)?(?:known|understood)\b | \bwhat\s+do\s+we\s+know\b
    | \bwhat\s+does\s+the\s+literature\s+(?:know|say|tell)\b
    | \bwhat\s+(?:has|have)\s+(?:\w+\s+)?been\s+(?:published|written|done|proposed|studied|reported|found)\b
    | \bwhat\s+(?:research|work|studies|literature)\s+(?:exists?|is\s+there|has\s+been)\b
    | \b(?:main|key|major|different|principal|common)\s+(?:approaches|methods|techniques|findings|results|themes|lines|strands|ideas)\b
    | \b(?:which|what)\s+(?:\w+\s+)?(?:approaches|methods|techniques)\s+(?:have|has|are|were|exist)\b
    | \bhow\s+(?:has|have)\s+.+?\s+been\s+(?:approached|studied|tackled|addressed|investigated)\b
    | \btell\s+me\s+(?:about|what)\s+(?:the\s+)?(?:research|work|literature|papers|studies)\b
    | \bwalk\s+me\s+through\s+(?:the\s+)?(?:research|work|literature)\b
    | \bstate\s+of\s+(?:the\s+)?research\b | \bwhat\s+have\s+(?:studies|papers|researchers)\s+found\b
    """,
    re.IGNORECASE | re.VERBOSE,
)

# "the SPECTER paper", "this article": a question about one paper ("the main results of the
# PageRank paper") is not an overview, whatever else it says
_ONE_PAPER = re.compile(
    r"\b(?:the|this|that|their)\s+(?:[\w'-]+\s+){0,3}?(?:paper|article|study)\b(?!s)", re.IGNORECASE
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


_MEASURE = re.compile(rf"\b(?:{_MEASURES})\b", re.IGNORECASE)


def asks_quantity(question: str) -> bool:
    """True for a question that asks for a number ("How many ...", "What F1 does ...", "What
    share of ..."): its claims must state that number, and sentences that hold one are preferred
    as its evidence."""
    return bool(_QUANTITY.search(question or ""))


# a question that asks for an explanation ("How does X use Y?", "Why ...", "Explain ..."): its
# answer is written from the sentences, not one value copied from them (agent/answer/copy.py)
_EXPLANATION = re.compile(
    r"^\s*(?:(?:and|so|but)\s+)?(?:how\s+(?:does|do|did|is|are|was|were|can|could)\b(?!\s+(?:many|much)\b)"
    r"|why\b|explain\b|describe\b|in\s+what\s+(?:way|ways|manner)\b|by\s+what\s+(?:means|mechanism)\b"
    r"|what\s+(?:role|purpose)\b|walk\s+me\s+through\b)",
    re.IGNORECASE,
)


def asks_explanation(question: str) -> bool:
    """True for a question that asks how or why ("How does SPECTER use citations ...?", "Why
    does ...", "Explain ..."), unless it asks for a quantity or names a measure ("How does the
    model compare to the baseline on F1?" asks for the figures)."""
    q = question or ""
    return bool(_EXPLANATION.search(q)) and not asks_quantity(q) and not _MEASURE.search(q)


# a comparison: "compare" opening the question, "how do A and B differ/compare", "difference(s)
# between", "vs" / "versus" (not "how does the model compare to the baseline": one paper's fact)
_COMPARE = re.compile(
    r"^\s*(?:please\s+)?(?:compare|contrast)\b"
    r"|\bhow\s+(?:do|did)\s+.+?\s+and\s+.+?\s+(?:differ|compare|contrast)\b"
    r"|\bdifferen(?:ce|ces|t)\s+between\b"
    r"|\b(?:vs\.?|versus)\s"
    r"|\b(?:distinguishes|sets)\s+.+?\s+(?:from|apart)\b"
    r"|\bwhich\s+(?:is|are|one\s+is|works?|performs?|ranks?)\s+(?:\w+\s+){0,3}?(?:better|worse|faster|more|less|best)\b.*\bor\b"
    r"|\b(?:side\s+by\s+side|in\s+common|similarities\s+between|stacks?\s+up\s+against)\b"
    r"|\bhow\s+(?:are|is)\s+.+?\s+and\s+.+?\s+(?:similar|alike|related)\b"
    r"|\bhow\s+(?:do|does|did)\s+.+?\s+differ\b|\bcomparing\b|\bsimilarities\b"
    r"|\b(?:are|is)\s+.+?\s+and\s+.+?\s+(?:similar|alike)\b|\bin\s+what\s+(?:respects?|ways?)\s+.+?\s+(?:alike|similar|differ)"
    r"|\bwhat\s+do\s+.+?\s+and\s+.+?\s+(?:share|have\s+in\s+common)\b"
    r"|\b[\w-]+\s+or\s+[\w-]+\s*[:,]\s*which\b"
    r"|^\s*(?:is|are|does|do|did)\s+\S+(?:\s+\S+)?\s+or\s+\S+(?:\s+\S+)?\s+(?:more|less|better|worse|faster|slower)\b",
    re.IGNORECASE,
)
# where a comparison's aspects begin: after the things compared, "on", "in terms of", ...
_ASPECTS = re.compile(
    r"\b(?:compare|contrast|differ|compared?|difference|differences|vs\.?|versus)\b.*?"
    r"\s(?:in\s+terms\s+of|with\s+respect\s+to|regarding|as\s+to|on|in|by)\s+(?P<aspects>.+)$",
    re.IGNORECASE,
)
# A comparison relates two or more things: a conjunction, a relating word or preposition, or a
# list. A question with none of them is not read as a comparison by meaning (the reader leans
# on words like "best" that a one-answer question shares with comparisons).
_RELATES_TWO = re.compile(
    r"\b(?:and|or|vs\.?|versus|between|among|against|with|than|from|to|over|instead|relative|next|both"
    r"|two|three|each\s+other|alike|similar\w*|differ\w*|compar\w*|contrast\w*)\b|[,/]",
    re.IGNORECASE,
)
_DETERMINER = re.compile(r"^(?:the|their|its|his|her|our|a|an)\s+", re.IGNORECASE)
COMPARE_COLUMN = "finding"  # the one column of a comparison that names no aspect


def shape_by_wording(question: str) -> Shape | None:
    """The first pass: `comparison` for a question that compares (`_COMPARE`), `overview` for one
    that asks what the literature holds on a topic (`_OVERVIEW`), `papers` for one that asks which
    papers (studies, works...) qualify; None when no pattern matches."""
    q = question or ""
    if _COMPARE.search(q):
        return "comparison"
    if _OVERVIEW.search(q) and not _ONE_PAPER.search(q):
        return "overview"
    return "papers" if _PAPERS.search(q) else None


@lru_cache(maxsize=4096)
def question_shape(question: str, reading: str = "meaning") -> Shape:
    """The question's shape: the patterns' when one matches; else, with `reading` "meaning", the
    meaning pass's shape when it is at least `MEANING_CONFIDENCE` probable (a question about
    citations that no citation pattern reads is answered as a list of papers); else `fact`."""

    def meaning(q: str) -> dict[str, float]:
        from agent.reading.shape_reader import default_reader

        return default_reader().probabilities([q])[0]

    return shape_from(question, meaning if reading == "meaning" else None)


def shape_from(
    question: str,
    probabilities: Callable[[str], dict[str, float]] | None,
    confidence: float = MEANING_CONFIDENCE,
) -> Shape:
    """The two passes: the patterns' shape when one matches; else, given the reader's
    `probabilities` (called only then), its shape at `confidence` (`shape_by_meaning`), except
    that a question asking for a quantity stays a fact and one that names nothing to compare is no
    comparison; `fact` when there is no reader."""
    worded = shape_by_wording(question)
    if worded is not None or probabilities is None or not (question or "").strip():
        return worded or "fact"
    if asks_quantity(question):  # "What share of papers ...", "How many ...": a number is one fact
        return "fact"
    probs = probabilities(question)
    if not _RELATES_TWO.search(question):  # nothing to compare: "Which model is best on X?" is one fact
        probs = {**probs, "comparison": 0.0}
    return shape_by_meaning(probs, confidence)


def shape_by_meaning(probs: dict[str, float], confidence: float = MEANING_CONFIDENCE) -> Shape:
    """The second pass's shape from the reader's probabilities: the most probable shape when it
    is not `fact` and reaches `confidence` (a citation question counts as `papers`), else `fact`."""
    probs = dict(probs)
    probs["papers"] = probs.get("papers", 0.0) + probs.pop("citation", 0.0)
    best = max(probs, key=lambda k: probs[k])
    return best if best != "fact" and probs[best] >= confidence else "fact"  # type: ignore[return-value]


def shape_for(question: str, asked: str = "auto", reading: str = "meaning") -> Shape:
    """The shape a run answers in: `asked` ("fact" / "papers" / "overview" / "comparison") when
    given, else the question's (`reading`: "meaning" or "wording", the run's `shape_reading`)."""
    return asked if asked in SHAPES else question_shape(question, reading)


def shape_of(ctx, question: str) -> Shape:
    """The shape of `question` in the run `ctx` configures."""
    return shape_for(question, ctx.answer_shape, getattr(ctx, "shape_reading", "meaning"))


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
    shape = shape_of(ctx, question)
    if shape == "overview":
        return max(n, ctx.list_papers, ctx.overview_papers)
    return max(n, ctx.list_papers) if shape != "fact" else n


def claims_cap(ctx, question: str) -> int:
    """The most claims an answer may make: a fact at most `fact_claims` (and `synthesize_claims`);
    a "which papers" answer one per paper it may name, at least `list_papers`."""
    shape = shape_of(ctx, question)
    if shape in ("papers", "overview"):
        return max(ctx.synthesize_claims, ctx.list_papers, ctx.overview_papers if shape == "overview" else 0)
    if shape == "comparison":  # one claim per cell: each paper on each aspect
        return max(ctx.synthesize_claims, ctx.compare_papers * len(comparison_columns(question)))
    return min(ctx.synthesize_claims, ctx.fact_claims)


def reads_jointly(ctx, question: str) -> bool:
    """Whether a run reads its candidates together, with no model call per paper: a "which
    papers" question or a comparison unless `list_reading` is "per_paper"; a fact when `reading`
    is "joint"."""
    if shape_of(ctx, question) != "fact":
        return ctx.list_reading != "per_paper"
    return ctx.reading == "joint"


# --- questions about citations ---------------------------------------------------------------

_END = r"\s*[?.!]*\s*$"
_SOMEONE = r"(?:who|which|what)(?:\s+(?:other\s+)?(?:papers?|works?|studies|articles?|authors|documents))?"
_MINE = r"(?:the\s+|my\s+|our\s+|other\s+|these\s+)?(?:papers?|works?|studies|articles?|authors)"
_WHERE = r"(?:\s+(?:in|of)\s+(?:the|my|our|this)\s+(?:collection|corpus|index|library))?"
_CITATION_QUESTIONS = tuple(
    re.compile(pattern + r"(?P<subject>.+?)" + _END, re.IGNORECASE)
    for pattern in (
        rf"^\s*{_SOMEONE}\s+(?:cites?|cited|build\s+on|builds\s+on|built\s+on|extends?|extended)\s+",
        rf"^\s*what\s+do(?:es)?\s+{_MINE}{_WHERE}\s+say\s+about\s+",
        rf"^\s*how\s+do(?:es)?\s+{_MINE}{_WHERE}\s+(?:describe|cite|discuss)\s+",
        rf"^\s*where\s+do(?:es)?\s+{_MINE}\s+cite\s+",
        rf"^\s*{_SOMEONE}\s+(?:references?|referenced|refers?\s+to|mentions?\s+and\s+cites?|cites?\s+and\s+uses?)\s+",
        r"^\s*(?:show\s+me\s+|find\s+|give\s+me\s+|list\s+)?(?:all\s+)?(?:the\s+)?(?:citations?|citing\s+sentences|contexts?)"
        r"\s+(?:of|to|for|in\s+which|where)\s+",
    )
)
# "where is X cited", "in which papers is X cited", "is X cited by any paper": the subject
# stands between the verb and "cited"
_CITED_PASSIVE = re.compile(
    r"^\s*(?:where|in\s+which\s+(?:papers|works|documents)|by\s+which\s+papers|is|are)\s+(?:is\s+|are\s+)?"
    r"(?P<subject>.+?)\s+(?:cited|referenced)\b.*$",
    re.IGNORECASE,
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
        m = _CITED_PASSIVE.search(question or "")
    if m is None:
        return None
    subject = m.group("subject").strip().strip("\"'“”‘’").strip()
    subject = re.sub(
        r"\s+(?:is|are)\s+cited$|\s+in\s+(?:my|our|the)\s+(?:papers|collection)$", "", subject, flags=re.IGNORECASE
    )
    subject = re.sub(r"^(?:the|a|an)\s+", "", subject, flags=re.IGNORECASE)
    return subject or None


def subject_names(subject: str) -> list[str]:
    """The names to look a subject up by: as asked, then without a generic last word."""
    bare = _GENERIC_TAIL.sub("", subject).strip()
    return list(dict.fromkeys(n for n in (subject, bare) if n))
