"""Tokenisation shared by both BM25 indexes and the query side.

The tokenizer's settings are written into every index manifest: an index built with other
tokens cannot be searched with these, so a change here bumps TOKENIZER_VERSION.
"""

from __future__ import annotations

import re
import unicodedata

TOKENIZER_VERSION = "lower-word-stop-v1"

# A short English stopword list (function words only): content words such as "model" or
# "learning" are kept, since in a scientific corpus they still discriminate between papers.
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    also et al via using use used may might must shall within without upon""".split()
)

_WORD = re.compile(r"\w+", re.UNICODE)


def normalize(text: str) -> str:
    """NFKC (folds ligatures such as 'ﬁ' that PDFs produce) and lower case."""
    return unicodedata.normalize("NFKC", text).lower()


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens without stopwords and without lone underscores."""
    return [t for t in _WORD.findall(normalize(text)) if t not in STOPWORDS and t != "_"]


def normalize_title(title: str) -> str:
    """Key for matching a bibliography title to a corpus title: letters and digits only."""
    return " ".join(_WORD.findall(normalize(title).replace("_", " ")))
