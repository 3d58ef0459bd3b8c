"""Evidence as numbered sentences: what the reader and the synthesis are shown, and what a
citation quotes.

A prompt lists sentences as S1..Sn under their chunk's locator; a model answers with those ids,
which map back to (chunk id, start, end) in the index, so every quote is the paper's own text.
Sentences that address their reader instead of reporting (an imperative such as "reply" or
"cite", a reader greeted or told what it must do, the answer being written: agent/reading/injection.py)
are withheld from every prompt and every citation, and a header's title and section go through
the same gate (`agent.reading.injection.shown_field`): paper text is data, and a paper cannot steer what
gets cited.
"""

from __future__ import annotations

import functools
import re
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from collections.abc import Set as AbstractSet
from typing import Any, Generic, TypeVar

from agent.reading.injection import addresses_reader, body_language, cues_of, shown_field
from tools.retrieval.retrieve import chunk_of
from tools.retrieval.sentences import Sentence, select_sentences, sentence_ids, split_sentences, within_budget
from tools.retrieval.text import normalize, stem_words, tokenize
from tools.tables import column_names, labelled_row, table_parts

# Words that frame a question ("which papers use ...", "what studies propose ...") rather than
# say what the papers must be about: not content terms, so a paper is not asked to contain them
_FRAME = (
    "which what paper papers work works study studies article articles publication publications "
    "use uses used using apply applies applied propose proposes proposed describe describes present "
    "presents build builds address addresses analyse analyze analyses employ employs "
    # the words that frame an overview or a list request, not its topic ("Give me an overview of
    # the literature on active learning" is about active learning)
    "overview literature research known know published written done summarize summarise summary "
    "survey review main key approaches findings themes exist exists discuss discusses tell give "
    "list show find anything everything"
)


def is_instruction(text: str) -> bool:
    """True for a sentence that addresses its reader (a person or a model) rather than reporting:
    withheld from prompts and citations (`agent.reading.injection.addresses_reader`)."""
    return addresses_reader(text)


def reader_addressed(sentence: Sentence, chunk_text: str, kind: str, language: str | None = None) -> bool:
    """Whether a sentence of a chunk (as `split_sentences` cuts `chunk_text`) is withheld: it
    addresses its reader or is written in another language than its paper's body `language`
    (`addresses_reader`), read alone and on the chunk's own structure (`withheld_spans`, which
    reads every sentence of the chunk once)."""
    return (sentence["start"], sentence["end"]) in withheld_spans(chunk_text, kind, language)


@functools.lru_cache(maxsize=4096)
def withheld_spans(chunk_text: str, kind: str, language: str | None = None) -> frozenset[tuple[int, int]]:
    """The (start, end) of each sentence of a chunk that is withheld, each read alone and on the
    chunk's structure: the first sentence of a title-and-abstract chunk holds the head ("[VENUE
    YEAR] Title", no full stop, on the chunk's first line) glued to the abstract's first
    sentence, so the part after the head is read on its own too (an abstract that opens with an
    order is withheld with its head); and two adjacent sentences of prose are read together for
    the shapes that span a sentence boundary (a question written out with its answer, a chat
    turn's label), so one that the splitter cut in two ("Q: Which parser is best?" / "A: Ours.")
    is withheld whole."""
    sentences = split_sentences("", chunk_text, kind)
    alone = [addresses_reader(s["text"], language) for s in sentences]
    out = {(s["start"], s["end"]) for s, a in zip(sentences, alone, strict=True) if a}
    if kind == "title_abstract" and sentences:
        first = sentences[0]
        raw = chunk_text[first["start"] : first["end"]]
        if "\n" in raw and addresses_reader(raw.split("\n", 1)[1], language):
            out.add((first["start"], first["end"]))
    for i in range(len(sentences) - 1 if kind != "table" else 0):  # a table's rows are records of their own
        a, b = sentences[i], sentences[i + 1]
        if not (alone[i] or alone[i + 1]) and _JOINT_CUES & set(cues_of(f"{a['text']} {b['text']}")):
            out.update({(a["start"], a["end"]), (b["start"], b["end"])})
    return frozenset(out)


# the cues whose shape spans a sentence boundary: a question and its answer, a chat turn's label
_JOINT_CUES = frozenset({"question and answer", "chat markup"})


def withheld_text(text: str, kind: str = "text", language: str | None = None) -> str:
    """A chunk's text without the sentences that address their reader or are in another language
    than its paper's `language`, for prompts that show whole chunks (the verifier's, KADR's)."""
    sentences = split_sentences("", text, kind)
    kept = [s["text"] for s in sentences if not reader_addressed(s, text, kind, language)]
    if len(kept) == len(sentences):
        return text
    return "\n".join(kept) if kind == "table" else " ".join(kept)


V = TypeVar("V")


class PaperCache(Generic[V]):
    """What one function computed for each paper of an open index, kept for the index's lifetime
    (weakly keyed: gone with it) but only for the papers used last: at most
    `LITLOOP_EVIDENCE__CACHE_PAPERS` per index, the least recently used dropped first, so a
    long-running server's memory does not grow with every paper ever read. Thread-safe: the
    value is computed outside the lock (two threads may both compute it; one copy is kept)."""

    def __init__(self) -> None:
        self._by_index: weakref.WeakKeyDictionary[Any, OrderedDict[str, V]] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def get(self, idx: Any, paper_id: str, make: Callable[[], V]) -> V:
        with self._lock:
            per = self._by_index.get(idx)
            if per is not None and paper_id in per:
                per.move_to_end(paper_id)
                return per[paper_id]
        value = make()
        limit = _cache_papers()
        with self._lock:
            per = self._by_index.setdefault(idx, OrderedDict())
            value = per.setdefault(paper_id, value)
            per.move_to_end(paper_id)
            while len(per) > limit:
                per.popitem(last=False)
        return value

    def size(self, idx: Any) -> int:
        with self._lock:
            return len(self._by_index.get(idx) or ())


def _cache_papers() -> int:
    from agent.settings import default_settings

    return default_settings().evidence.cache_papers


_steering: PaperCache[list[str]] = PaperCache()
_languages: PaperCache[str | None] = PaperCache()
_flagged: PaperCache[list[tuple[str, str]]] = PaperCache()
_sequences: PaperCache[list[tuple[str, ...]]] = PaperCache()
_stems: PaperCache[frozenset[str]] = PaperCache()


def paper_language(idx, paper_id: str) -> str | None:
    """The language a paper's body is written in (`agent.reading.injection.body_language`, from
    its body chunks, or its title and abstract when it has no body), None when it cannot be told."""

    def find() -> str | None:
        chunks = idx.paper_chunks(paper_id)
        body = [c.text for c in chunks if c.kind == "text"] or [c.text for c in chunks if c.kind != "table"]
        return body_language(body)

    return _languages.get(idx, paper_id, find)


def steering_sentences(idx, paper_id: str) -> list[str]:
    """The sentences of a paper that try to steer an answer (`agent.reading.injection.steers`,
    also on the part of a title-and-abstract chunk's first sentence after its head): a paper
    with any is flagged in the answer, and its other sentences cannot be a claim's only support."""
    return _steering.get(
        idx,
        paper_id,
        lambda: [
            s["text"]
            for c in idx.paper_chunks(paper_id)
            for s in split_sentences(c.chunk_id, c.text, c.kind)
            if reader_addressed(s, c.text, c.kind)
        ],
    )


def flagged_sentences(idx, paper_id: str) -> list[tuple[str, str]]:
    """Every withheld sentence of a paper with why, (sentence, "addresses its reader" or "in
    another language than the paper (en)"): what the answer names under its flagged papers. A
    sentence in another language is withheld and shown here, and the figures beside it support
    no claim alone (`withheld_by_chunk`), but it does not make the paper's other sentences
    untrusted: a bilingual abstract is not an attack."""

    def find() -> list[tuple[str, str]]:
        language = paper_language(idx, paper_id)
        steering = set(steering_sentences(idx, paper_id))
        out = []
        for c in idx.paper_chunks(paper_id):
            for s in split_sentences(c.chunk_id, c.text, c.kind):
                if s["text"] in steering:
                    out.append((s["text"], "addresses its reader"))
                elif reader_addressed(s, c.text, c.kind, language):
                    out.append((s["text"], f"in another language than the paper ({language})"))
        return out

    return _flagged.get(idx, paper_id, find)


_withheld: PaperCache[dict[str, str]] = PaperCache()


def withheld_by_chunk(idx, paper_id: str) -> dict[str, str]:
    """The chunks of a paper that hold a withheld sentence (`reader_addressed`), each with the
    first such sentence: the paragraph, caption or table around an instruction, whose other
    sentences may be the instruction's own set-up (a false figure stated plainly, then an order
    to repeat it) and so cannot be a figure's only support (`agent.answer.claims`)."""

    def find() -> dict[str, str]:
        language = paper_language(idx, paper_id)
        out: dict[str, str] = {}
        for c in idx.paper_chunks(paper_id):
            for s in split_sentences(c.chunk_id, c.text, c.kind):
                if reader_addressed(s, c.text, c.kind, language):
                    out.setdefault(c.chunk_id, s["text"])
                    break
        return out

    return _withheld.get(idx, paper_id, find)


def question_aspects(question: str) -> list[frozenset[str]]:
    """What a question asks about, as groups of content terms (its Snowball stems without
    stopwords and without the words that frame a question about papers, `_FRAME`) of which a
    paper must mention one: each term alone, except that alternatives joined by "or" ("GROBID
    or ScienceParse"; "navigation, wandering or visual": a comma list that "or" ends) are one
    aspect. Only the words right beside "or" and its commas are joined."""
    frame = _frame_stems()
    tokens = re.findall(r"\w+|,", normalize(question))
    stems = [[t for t in tokenize(w, stem=True) if t not in frame] if w != "," else [] for w in tokens]
    group = list(range(len(tokens)))  # each token its own group; "or" merges its neighbours'

    def root(i: int) -> int:
        while group[i] != i:
            i = group[i]
        return i

    for i, w in enumerate(tokens):
        if w != "or" or not 0 < i < len(tokens) - 1 or not stems[i - 1] or not stems[i + 1]:
            continue
        group[root(i + 1)] = root(i - 1)
        j = i - 1
        while j >= 2 and tokens[j - 1] == "," and stems[j - 2]:  # "a, b or c": a joins too
            group[root(j - 2)] = root(j)
            j -= 2
    aspects: dict[int, set[str]] = {}
    for i, st in enumerate(stems):
        if st:
            aspects.setdefault(root(i), set()).update(st)
    return list(dict.fromkeys(frozenset(a) for a in aspects.values()))


def question_phrases(question: str) -> list[tuple[str, ...]]:
    """The phrases of a question: each run of two or more adjacent content words ("conditional
    random fields", "text classification"), as stems, cut at stopwords, the words that frame a
    question about papers (`_FRAME`), commas and "or". A paper that names one of them in full is
    about what the question names; one that shares one of its words ("fields") may not be."""
    frame = _frame_stems()
    runs: list[list[str]] = [[]]
    for w in re.findall(r"\w+|,", normalize(question)):
        st = [t for t in tokenize(w, stem=True) if t not in frame and len(t) > 1] if w != "," else []
        if st:
            runs[-1].extend(st)
        elif runs[-1]:
            runs.append([])
    return list(dict.fromkeys(tuple(r) for r in runs if len(r) >= 2))


def says_phrase(idx, paper_id: str, phrase: tuple[str, ...]) -> bool:
    """Whether one sentence of the paper's citable text says a phrase of the question
    (`question_phrases`) in full: its content words in that order and adjacent (stopwords
    between them do not count)."""
    sequences = _sequences.get(
        idx,
        paper_id,
        lambda: [
            tuple(tokenize(s["text"], stem=True))
            for c in idx.paper_chunks(paper_id)
            for s in citable_sentences(c, paper_language(idx, paper_id))
        ],
    )
    n = len(phrase)
    return any(seq[i : i + n] == phrase for seq in sequences for i in range(len(seq) - n + 1))


def phrase_coverage(idx, paper_id: str, aspects: Sequence[frozenset[str]], phrases: Sequence[tuple[str, ...]]) -> float:
    """`term_coverage` where each phrase of the question (`question_phrases`) is one aspect, met
    only when the paper says it in full (`says_phrase`): "conditional random fields" is one
    thing a paper on Markov random fields does not mention, not two words of three it does."""
    in_phrase = {t for p in phrases for t in p}
    single = [a for a in aspects if not (len(a) == 1 and a <= in_phrase)]
    total = len(single) + len(phrases)
    if not total:
        return 1.0
    have = len(single) * term_coverage(idx, paper_id, single) if single else 0.0
    have += sum(1 for p in phrases if says_phrase(idx, paper_id, p))
    return have / total


def term_coverage(idx, paper_id: str, aspects: Sequence[frozenset[str]]) -> float:
    """The share of a question's aspects (`question_aspects`) that the paper's citable text
    (title, abstract, every chunk) mentions: how much of what the question asks about the paper
    speaks of at all. 1.0 for a question with none."""
    if not aspects:
        return 1.0
    stems = _stems.get(
        idx,
        paper_id,
        lambda: frozenset(
            t
            for c in idx.paper_chunks(paper_id)
            for s in citable_sentences(c, paper_language(idx, paper_id))
            for t in tokenize(s["text"], stem=True)
        ),
    )
    return (len(aspects) - len(_missing(aspects, stems))) / len(aspects)


def _missing(aspects: Sequence[frozenset[str]], have: AbstractSet[str]) -> list[frozenset[str]]:
    """The aspects none of whose stems is in `have`: the one rule by which a text covers an
    aspect, for a whole paper (`term_coverage`) and for the sentences shown (`uncovered_aspects`)."""
    return [a for a in aspects if not a & have]


# Words that ask for a value ("how many", "what F1 does it reach") rather than say what the answer
# is about: the sentence that states the value seldom repeats them, so coverage does not ask for
# them (on the development questions of bench/data/selector_gold.jsonl, looking for them sent
# seven in ten questions to a second round, and it showed the answering sentence no more often)
_ASKING = (
    "many much number total get gets got reach reaches reached score scores scored achieve achieves "
    "achieved obtain obtains obtained perform performs performed"
)


def coverage_aspects(question: str) -> list[frozenset[str]]:
    """The aspects of a question (`question_aspects`) that the coverage verdict looks for in the
    evidence: all but those made only of words that ask for a value (`_ASKING`)."""
    asking = _asking_stems()
    return [a for a in question_aspects(question) if not a <= asking]


@functools.cache
def _asking_stems() -> frozenset[str]:
    return frozenset(tokenize(_ASKING, stem=True))


def uncovered_aspects(aspects: Sequence[frozenset[str]], texts: Iterable[str]) -> list[frozenset[str]]:
    """The aspects (`question_aspects`) that none of `texts` mentions: no Snowball stem of the
    aspect occurs in them, so "titles" in a sentence covers "title" in the question."""
    return _missing(aspects, {t for text in texts for t in tokenize(text, stem=True)})


def aspect_words(question: str, aspects: Sequence[frozenset[str]]) -> list[str]:
    """The question's own words (lower-cased, in its order, once each) whose stems belong to one
    of `aspects`: what an LLM-free subquery searches for an aspect, in the question's words
    rather than as stems."""
    wanted = frozenset().union(*aspects)
    words = tokenize(question)
    return list(dict.fromkeys(w for w, st in zip(words, stem_words(words), strict=True) if st in wanted))


@functools.cache
def _frame_stems() -> frozenset[str]:
    return frozenset(tokenize(_FRAME, stem=True))


def chunk_sentences(idx, chunk_id: str) -> list[Sentence]:
    """The citable sentences of one indexed chunk (instruction-like ones, and those in another
    language than the paper's body, withheld)."""
    chunk = chunk_of(idx, chunk_id)
    return citable_sentences(chunk, paper_language(idx, chunk.paper_id))


def citable_sentences(chunk, language: str | None = None) -> list[Sentence]:
    """The sentences of a chunk record that may be shown and cited (those addressing their reader,
    and those in another language than the paper's body `language`, withheld)."""
    return [
        s
        for s in split_sentences(chunk.chunk_id, chunk.text, chunk.kind)
        if not reader_addressed(s, chunk.text, chunk.kind, language)
    ]


def pick_sentences(
    idx, chunk_ids: Iterable[str], queries: Sequence[str], budget_chars: int, stem: bool = False
) -> list[Sentence]:
    """The sentences of these chunks that best match the queries, within `budget_chars`, in
    chunk order (the order of `chunk_ids`), then position."""
    every = [s for cid in dict.fromkeys(chunk_ids) for s in chunk_sentences(idx, cid)]
    return select_sentences(every, queries, budget_chars, stem=stem)


# how much more a sentence that holds a figure weighs for a question that asks for one, in the
# extractive quote (agent/answer/selection.py) and bench.selector's `overlap+figures` (set before
# measuring; docs/benchmarks.md, "Evidence selection on its own")
FIGURE_WEIGHT = 1.5


def holds_figure(text: str) -> bool:
    """True when the text states a figure (`agent.reading.figures.numbers`), a year alone
    ("(2019)", "in 2020") not counting: what a question asking for a quantity needs."""
    from agent.reading.figures import numbers

    return any(unit or not (value == value.to_integral() and 1900 <= value <= 2099) for value, unit, _ in numbers(text))


def paper_sentences_ranked(
    idx,
    paper_id: str,
    queries: Sequence[str],
    near: Iterable[str] = (),
    shortlist: int = 20,
    with_table_context: bool = True,
    dense: bool = True,
) -> list[Sentence]:
    """Every citable sentence of a paper, best first for `queries`: BM25 over Snowball stems with
    each table row scored beside its caption and column names; the best `shortlist` of that
    ranking, and the sentences of the chunks in `near` (the reader's chunks), re-ranked by the
    embedder's cosine and the two orders fused by RRF (k 10); the rest follow by BM25.
    `with_table_context` and `dense` off are the ablations bench/selector.py measures.

    Measured on its own in bench/selector.py (variant `paper`)."""
    import numpy as np

    from tools.retrieval.fusion import rrf_scores
    from tools.retrieval.sentences import sentence_scores

    every: list[Sentence] = []
    scored: list[Sentence] = []
    language = paper_language(idx, paper_id)
    for c in idx.paper_chunks(paper_id):
        for s in citable_sentences(c, language):
            every.append(s)
            scored.append(in_table_context(s, c.kind, c.text) if with_table_context else s)
    if not every:
        return []
    lex = sentence_scores(scored, queries, stem=True)
    order = sorted(range(len(every)), key=lambda i: (-lex[i], i))
    if not dense:
        return [every[i] for i in order]
    near_ids = set(near)
    pick = list(dict.fromkeys([*order[:shortlist], *(i for i, s in enumerate(every) if s["chunk_id"] in near_ids)]))
    embedder = idx.embedder
    q = np.asarray(embedder.encode([" ".join(queries)])[0])
    cos = dict(zip(pick, (np.asarray(embedder.encode([scored[i]["text"] for i in pick])) @ q).tolist(), strict=True))
    fused = rrf_scores([[i for i in order if i in cos], sorted(pick, key=lambda i: (-cos[i], i))], k=10)
    ranked = sorted(pick, key=lambda i: (-fused[i], i)) + [i for i in order if i not in cos]
    return [every[i] for i in ranked]


def pick_paper_sentences(
    idx, paper_id: str, queries: Sequence[str], budget_chars: int, near: Iterable[str] = ()
) -> list[Sentence]:
    """The paper's sentences that `paper_sentences_ranked` puts first, added best first until
    `budget_chars` (the best one always), returned in the paper's order."""
    ranked = paper_sentences_ranked(idx, paper_id, queries, near)
    chosen = [ranked[i] for i in within_budget(range(len(ranked)), [len(s["text"]) for s in ranked], budget_chars)]
    return sorted(chosen, key=lambda s: (idx.chunk_row[s["chunk_id"]], s["start"]))


def pick_mixed_sentences(
    idx,
    paper_id: str,
    chunk_ids: Iterable[str],
    queries: Sequence[str],
    budget_chars: int,
    wide_share: float = 0.4,
) -> list[Sentence]:
    """The reader's chunks' best sentences (`pick_sentences`) with the paper-wide selector's best
    ones (`paper_sentences_ranked`) added first, within `wide_share` of the budget: a sentence
    from anywhere in the paper, and the neighbours of the chunks the reader reads, in one budget.
    Returned in the paper's order."""
    ids = list(dict.fromkeys(chunk_ids))
    ranked = paper_sentences_ranked(idx, paper_id, queries, ids)
    wide = [
        ranked[i]
        for i in within_budget(range(len(ranked)), [len(s["text"]) for s in ranked], int(budget_chars * wide_share))
    ]
    taken = {(s["chunk_id"], s["start"]) for s in wide}
    used = sum(len(s["text"]) + 1 for s in wide)
    rest = [s for cid in ids for s in chunk_sentences(idx, cid) if (s["chunk_id"], s["start"]) not in taken]
    near = select_sentences(rest, queries, max(1, budget_chars - used)) if rest and used < budget_chars else []
    return sorted([*wide, *near], key=lambda s: (idx.chunk_row[s["chunk_id"]], s["start"]))


def pick_evidence(
    idx,
    selector: str,
    paper_id: str,
    chunk_ids: Iterable[str],
    queries: Sequence[str],
    budget_chars: int,
) -> list[Sentence]:
    """A paper's sentences for `queries` within `budget_chars`, by the run's `evidence_selector`:
    "chunks", those of `chunk_ids` (`pick_sentences`); "paper", every sentence of the paper
    (`pick_paper_sentences`); "mixed", both in one budget (`pick_mixed_sentences`). The one
    place the reader, the joint reading and the synthesis choose sentences."""
    if selector == "paper":
        return pick_paper_sentences(idx, paper_id, queries, budget_chars, chunk_ids)
    if selector == "mixed":
        return pick_mixed_sentences(idx, paper_id, chunk_ids, queries, budget_chars)
    return pick_sentences(idx, chunk_ids, queries, budget_chars)


def listing(
    idx,
    sentences: Sequence[Sentence],
    with_paper: bool = False,
    labelled_rows: bool = False,
    ids: Sequence[str] | None = None,
) -> str:
    """Sentences numbered S1..Sn (or by `ids`), grouped under a header per chunk (its kind and
    locator; with `with_paper`, the paper's id and title too; with `labelled_rows`, a table row's
    cells after their column names, `shown_text`)."""
    lines: list[str] = []
    last = None
    for sid, s in zip(ids if ids is not None else sentence_ids(len(sentences)), sentences, strict=True):
        if s["chunk_id"] != last:
            chunk = chunk_of(idx, s["chunk_id"])
            where = shown_field(chunk.locator.describe(), "section")
            title = shown_field(idx.papers[chunk.paper_id].title, "title")
            paper = f"paper {chunk.paper_id}: {title}; " if with_paper else ""
            lines.append(f"[{paper}{chunk.kind}; {where}]")
            if chunk.kind == "table" and (context := table_context(chunk.text)):
                lines.append(context)  # what a row's cells are: not a sentence, not citable
            last = s["chunk_id"]
        lines.append(f"{sid} {shown_text(idx, s) if labelled_rows else s['text']}")
    return "\n".join(lines)


def shown_text(idx, s: Sentence) -> str:
    """A sentence as a prompt shows it: its text, and a table row with each cell named by its
    column (`tools.tables.labelled_row`), so a model can tell which figure is the F1 of which
    row (`reading_hints`). Citations and checks use the row as the paper has it."""
    chunk = chunk_of(idx, s["chunk_id"])
    return labelled_row(chunk.text, s["text"]) if chunk.kind == "table" else s["text"]


def table_context(text: str) -> str:
    """The line shown under a table chunk's header so its rows can be read alone: its caption's
    first sentence and its column names ("(Table 2: ... columns: Approach | CS prec. | Bio prec.)")."""
    caption, header, _ = table_parts(text)
    if not header:
        return ""
    head = " ".join(caption).strip()
    first = split_sentences("", head)[0]["text"] if head else ""
    first = first if len(first) <= 160 else first[:157].rsplit(" ", 1)[0] + " …"
    return f"({first + ' ' if first else ''}columns: {' | '.join(column_names(text))})"


def in_table_context(s: Sentence, kind: str, chunk_text: str) -> Sentence:
    """A sentence as a lexical ranker scores it: a table row (a sentence of a `table` chunk)
    beside its table's caption and column names (`table_context`: what its cells are); any other
    sentence as it is."""
    if kind != "table":
        return s
    return Sentence(
        chunk_id=s["chunk_id"], start=s["start"], end=s["end"], text=f"{s['text']} {table_context(chunk_text)}".strip()
    )


def support_context(idx, sentences: Sequence[Sentence]) -> list[str]:
    """Text in which a claim's names may also be found: the cited papers' titles, abstracts,
    venues and years, and for a cited table row its table's caption and header (the first
    lines of the chunk), so "F1" in a claim can come from the column a number stands in."""
    out: list[str] = []
    for pid in dict.fromkeys(chunk_of(idx, s["chunk_id"]).paper_id for s in sentences):
        paper = idx.papers[pid]
        out.append(" ".join(str(x) for x in (paper.title, paper.abstract, paper.venue, paper.year) if x))
    for cid in dict.fromkeys(s["chunk_id"] for s in sentences):
        chunk = chunk_of(idx, cid)
        if chunk.kind == "table":  # its caption and header rows name what the cells are
            caption, header, _ = table_parts(chunk.text)
            out.append(" ".join([*caption, *header] if header else chunk.text.split("\n")[:4]))
    return out


def sentence_record(idx, s: Sentence) -> dict[str, Any]:
    """A sentence as an answer records it: where it is (chunk, paper, locator, offsets) and its text."""
    chunk = chunk_of(idx, s["chunk_id"])
    return {
        "chunk_id": s["chunk_id"],
        "paper_id": chunk.paper_id,
        "start": s["start"],
        "end": s["end"],
        "text": s["text"],
        "locator": chunk.locator.at(s["start"], s["end"]).to_dict(),
    }
