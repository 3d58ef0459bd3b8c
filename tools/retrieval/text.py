"""Tokenisation shared by both BM25 indexes and the query side.

The tokenizer's settings are written into every index manifest: an index built with other
tokens cannot be searched with these, so a change here bumps TOKENIZER_VERSION.

Stemming is the Snowball English stemmer of PyStemmer (a kept library, in C): "titles" and
"title" are one term, as are "embeddings" and "embedding". It is one more step after the
stopword filter, so a stemmed tokenizer has its own name.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Callable

from tools.settings import STEMMED_TOKENIZER, TOKENIZER_ALIASES, TOKENIZER_VERSION, TOKENIZERS

# A short English stopword list (function words only): content words such as "model" or
# "learning" are kept, since in a scientific corpus they still discriminate between papers.
STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "also",
        "et",
        "al",
        "via",
        "using",
        "use",
        "used",
        "may",
        "might",
        "must",
        "shall",
        "within",
        "without",
        "upon",
    ]
)

_WORD = re.compile(r"\w+", re.UNICODE)


def normalize(text: str) -> str:
    """NFKC (folds ligatures such as 'ﬁ' that PDFs produce) and lower case."""
    return unicodedata.normalize("NFKC", text).lower()


def tokenize(text: str, stem: bool = False) -> list[str]:
    """Lower-cased word tokens without stopwords and without lone underscores; with `stem`,
    each reduced to its Snowball English stem."""
    tokens = [t for t in _WORD.findall(normalize(text)) if t not in STOPWORDS and t != "_"]
    return stem_words(tokens) if stem else tokens


def tokenize_stemmed(text: str) -> list[str]:
    """`tokenize` with Snowball stemming: the query side of an index built with STEMMED_TOKENIZER."""
    return tokenize(text, stem=True)


_local = threading.local()  # a PyStemmer stemmer is not thread-safe: one per thread


def stem_words(words: list[str]) -> list[str]:
    """The Snowball English stems of `words` (PyStemmer keeps a cache of recent words)."""
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        import Stemmer

        stemmer = _local.stemmer = Stemmer.Stemmer("english")
    stems: list[str] = stemmer.stemWords(words)
    return stems


def tokenizer_for(name: str) -> Callable[[str], list[str]]:
    """The tokenize function an index built with tokenizer `name` queries with (a manifest's
    name, or an alias of LITLOOP_RETRIEVAL__TOKENIZER)."""
    name = TOKENIZER_ALIASES.get(name, name)
    if name == TOKENIZER_VERSION:
        return tokenize
    if name == STEMMED_TOKENIZER:
        return tokenize_stemmed
    raise ValueError(f"unknown tokenizer {name!r}; this litloop knows {', '.join(TOKENIZERS)}")


def normalize_title(title: str) -> str:
    """Key for matching a bibliography title to a corpus title: letters and digits only."""
    return " ".join(_WORD.findall(normalize(title).replace("_", " ")))
