"""A paper's title as an answer shows it: some records carry the abstract's first sentence in the
title field ("Shopbots and Pricebots Shopbots are agents that automatically search the Internet
..."); an answer that quotes that sentence as evidence would show it twice. `title_only` cuts
such a title where the sentence starts, and leaves every other title as it is."""

from __future__ import annotations

import re

# words a title writes in lower case ("Learning to Rank for Information Retrieval")
_FUNCTION = frozenset(
    str.split(
        "a an and as at by for from in into of on or the to via with without vs versus using based through "
        "over under towards toward across between within beyond about against among per upon onto"
    )
)
# words that open a sentence, where a title's own words would not stand ("... Search Engines The
# Web robots are programs ...")
_STARTERS = frozenset(
    str.split(
        "the a an this these that those in we our it its there although though while due as with for many "
        "most recent recently current existing since when given one several traditional previous today "
        "despite unlike because how what modern much some such"
    )
)
_TOKEN = re.compile(r"\S+")
MIN_SENTENCE_WORDS = 5  # a tail shorter than this is no sentence
LONG_TITLE_WORDS = 18  # a title longer than this is cut where a sentence starts, even without a full stop


def _capital(word: str) -> bool:
    w = word.lstrip("(\"'“‘[")
    return bool(w) and (w[0].isupper() or w[0].isdigit())


def _plain(word: str) -> str:
    return re.sub(r"[^\w-]", "", word).lower()


def title_only(title: str) -> str:
    """`title` without a sentence run into its end: cut where the title's opening words come again
    ("The Open Agent Architecture: ... Systems The Open Agent Architecture (OAA), developed ..."),
    else before the capitalised word that opens the first run of lower-case words ("Categorisation
    by Context Assistance in retrieving of documents ..."). Only a title that ends with a full
    stop or has more than `LONG_TITLE_WORDS` words is cut, and only to leave two words or more
    before a tail of at least `MIN_SENTENCE_WORDS`; a title in sentence case keeps its words."""
    text = " ".join((title or "").split())
    words = _TOKEN.findall(text)
    if not (text.endswith(".") or len(words) > LONG_TITLE_WORDS) or len(words) < 2 + MIN_SENTENCE_WORDS:
        return text
    head = [_plain(w) for w in words[:2]]
    for j in range(2, len(words) - 1):
        if [_plain(w) for w in words[j : j + 2]] == head and len(words) - j >= MIN_SENTENCE_WORDS:
            return " ".join(words[:j])
    first_lower = next(
        (i for i, w in enumerate(words) if not _capital(w) and _plain(w) not in _FUNCTION and _plain(w)), None
    )
    if first_lower is None:
        return text
    # the sentence opens with a starter among the capitalised words before its first lower-case
    # one ("Although Programming by Demonstration (PBD) has ..."), else with the last of them
    run = [i for i in range(first_lower - 1, -1, -1) if _capital(words[i]) or _plain(words[i]) in _FUNCTION]
    run = [i for n, i in enumerate(run) if i == first_lower - 1 - n]  # the words just before it
    start = next((i for i in run if _plain(words[i]) in _STARTERS and _capital(words[i])), None)
    if start is None:
        start = next((i for i in run if _capital(words[i])), None)
    if start is None or start < 2 or len(words) - start < MIN_SENTENCE_WORDS:
        return text
    return re.sub(r"(?:\s+abstract)?[\s.:;,-]*$", "", " ".join(words[:start]), flags=re.IGNORECASE)
