"""Sentences as the unit of evidence: a chunk cut into sentences with character offsets, and the
sentences of a few chunks that best match a question, within a budget.

A reader and the synthesis are shown numbered sentences and answer with their ids, so a quote is
always a sentence of the paper, never text a model wrote. Splitting uses pysbd (rule-based,
handles "et al.", "e.g.", "Fig. 2", decimals); a table row and an equation count as one sentence.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, TypedDict

from tools.retrieval.text import tokenize
from tools.tables import is_separator

# a sentence shorter than this (after stripping) is glued to the one before it: a stray "(1)"
# or "Table 2." is not evidence on its own
MIN_SENTENCE_CHARS = 12
# characters per token, to budget prompts by tokens without a tokenizer (English prose)
CHARS_PER_TOKEN = 4


class Sentence(TypedDict):
    """One sentence of a chunk: `text` is `chunk.text[start:end]`, stripped."""

    chunk_id: str
    start: int
    end: int
    text: str


@lru_cache(maxsize=1)
def _segmenter() -> Any:
    import pysbd  # pure Python, but kept out of import time of everything that imports tools

    return pysbd.Segmenter(language="en", clean=False, char_span=True)


# a blank line; captured, so that splitting at it keeps every character (offsets stay exact)
_BLANK = re.compile(r"(\n[ \t]*\n)")


def _spans_of_prose(text: str) -> list[tuple[int, int]]:
    """pysbd's sentence spans, re-anchored on `text` (pysbd's own offsets drift when a sentence
    repeats earlier text) and trimmed of surrounding whitespace. A blank line ends a sentence
    (two footnotes, "pronounced “stork”" and the next, are two); a single line break does not."""
    spans: list[tuple[int, int]] = []
    at = 0
    for part in _BLANK.split(text):
        if part.strip():
            spans.extend((at + s, at + e) for s, e in _spans_of_part(part))
        at += len(part)
    return spans


def _spans_of_part(text: str) -> list[tuple[int, int]]:
    spans, cursor = [], 0
    text = text.replace("\n", " ")  # a PDF line break is not a sentence end; same length, same offsets
    for piece in _segmenter().segment(text):
        sent = piece.sent.strip()
        if not sent:
            continue
        start = text.find(sent, cursor)
        if start < 0:  # pysbd changed the text (it should not with clean=False): skip
            continue
        spans.append((start, start + len(sent)))
        cursor = start + len(sent)
    return spans


def _spans_of_lines(text: str) -> list[tuple[int, int]]:
    spans, pos = [], 0
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped and not is_separator(stripped):  # the `|---|` line under a header says nothing
            start = pos + line.index(stripped)
            spans.append((start, start + len(stripped)))
        pos += len(line) + 1
    return spans


def _glue_short(spans: list[tuple[int, int]], text: str) -> list[tuple[int, int]]:
    """Spans with each too-short sentence glued to its neighbour ("Fig. 2." to what follows),
    never across a blank line: a short footnote stays itself."""
    out: list[tuple[int, int]] = []
    for s, e in spans:
        if out and len(text[s:e].strip()) < MIN_SENTENCE_CHARS and not _BLANK.search(text, out[-1][1], s):
            out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    if (
        len(out) > 1
        and len(text[out[0][0] : out[0][1]].strip()) < MIN_SENTENCE_CHARS
        and not _BLANK.search(text, out[0][1], out[1][0])
    ):
        out[1] = (out[0][0], out[1][1])
        out.pop(0)
    return out


def split_sentences(chunk_id: str, text: str, kind: str = "text") -> list[Sentence]:
    """The sentences of one chunk with their offsets in `text`. Tables: one row (line) per
    sentence, the caption included; equations: the whole chunk; prose (text, figure captions,
    titles and abstracts): pysbd's sentences, a line break inside a paragraph being a space."""
    if not text.strip():
        return []
    if kind == "equation":
        s = len(text) - len(text.lstrip())
        spans = [(s, len(text.rstrip()))]
    elif kind == "table":
        spans = _spans_of_lines(text)
    else:
        spans = _glue_short(_spans_of_prose(text), text)
    return [Sentence(chunk_id=chunk_id, start=s, end=e, text=" ".join(text[s:e].split())) for s, e in spans]


def sentence_scores(sentences: Sequence[Sentence], queries: Sequence[str], stem: bool = False) -> list[float]:
    """BM25 of each sentence for the query terms (the question and its subqueries), the
    sentences being the collection: a term found in few of them weighs more. With `stem`, terms
    are Snowball stems ("titles" matches "title")."""
    docs = [set(tokenize(s["text"], stem)) for s in sentences]
    terms = list(dict.fromkeys(t for q in queries for t in tokenize(q, stem)))
    n = len(docs)
    if not n or not terms:
        return [0.0] * n
    lengths = [max(1, len(d)) for d in docs]
    avg = sum(lengths) / n
    k1, b = 1.2, 0.75
    scores = [0.0] * n
    for t in terms:
        df = sum(t in d for d in docs)
        if not df:
            continue
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        for i, d in enumerate(docs):
            if t in d:
                scores[i] += idf * (k1 + 1) / (1 + k1 * (1 - b + b * lengths[i] / avg))
    return scores


def select_sentences(
    sentences: Sequence[Sentence], queries: Sequence[str], budget_chars: int, keep_first: int = 0, stem: bool = False
) -> list[Sentence]:
    """The sentences that best match `queries`, added best first until `budget_chars` is
    reached, returned in their original order (chunk order, then position). The first
    `keep_first` sentences are always kept (e.g. a table's caption). A sentence longer than the
    whole budget is still taken when it is the best one, so a long table row is not lost."""
    scores = sentence_scores(sentences, queries, stem)
    order = sorted(range(len(sentences)), key=lambda i: (i >= keep_first, -scores[i], i))
    chosen = within_budget(order, [len(s["text"]) for s in sentences], budget_chars)
    return [sentences[i] for i in sorted(chosen)]


def within_budget(order: Sequence[int], sizes: Sequence[int], budget_chars: int) -> list[int]:
    """The items of `order` (best first) taken while they fit in `budget_chars`, each costing its
    size plus one separator; the first is always taken, and an item that does not fit is skipped
    so that smaller ones after it may still fit."""
    chosen: list[int] = []
    used = 0
    for i in order:
        size = sizes[i] + 1
        if chosen and used + size > budget_chars:
            continue
        chosen.append(i)
        used += size
    return chosen


_ID = re.compile(r"^S(\d+)$")


def sentence_ids(n: int) -> list[str]:
    """The ids a prompt shows for n sentences: S1..Sn."""
    return [f"S{i}" for i in range(1, n + 1)]


def sentence_index(sid: str) -> int | None:
    """0-based position of a shown id ("S3" -> 2), None for anything else."""
    m = _ID.match(sid.strip().upper()) if isinstance(sid, str) else None
    return int(m.group(1)) - 1 if m else None
