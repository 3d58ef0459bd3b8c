"""The shape of a question read from its meaning: a multinomial logistic regression over labelled
example questions (agent/data/question_shapes.jsonl), so that wordings no pattern lists ("Bring me
up to speed on ...", "Do the indexed documents cover ...") are read as what they ask for.
`agent.reading.shape` calls it after its patterns, as the second pass.

A question is read as four blocks of features side by side: the bundled embedder's vector of the
whole question and of its first `OPENING_WORDS` words (where English puts what a question asks
for: "Give me an overview of", "How many", "Which papers"), and hashed word one- and two-grams
and character three- to five-grams (scikit-learn's `HashingVectorizer`: stateless, so nothing but
the weights is kept; the characters carry a typo like "overveiw"). The topic of a question says
little about its shape, so while training each example is also seen with its topic swapped for
others (agent/data/question_topics.txt). The examples are the training set of the shape benchmark
(`python -m bench.shapes`); its development and held-out sets (bench/data/) are never trained on.
The reader is fitted on the embedder the settings name, so a user who configures another embedder
gets a reader fitted to it; the fitted weights are kept under the data folder
(`cache/shape-reader-*.npy`), so only the first run pays the seconds of fitting.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import threading
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[1] / "data"
EXAMPLES = DATA / "question_shapes.jsonl"
TOPICS = DATA / "question_topics.txt"
SHAPES = ("fact", "papers", "overview", "comparison", "citation")
OPENING_WORDS = 5
SWAPS = 5  # topic swaps per example while fitting
_WORD = re.compile(r"[A-Za-z0-9][\w'-]*")

# the hashed n-gram blocks' widths, and the inverse L2 penalty of the regression (chosen on the
# development set: docs/benchmarks.md, "Shape from meaning")
HASHED = 2**15
_C = 4.0


def load_examples(path: Path = EXAMPLES) -> list[dict[str, Any]]:
    """The labelled questions (`question`, `shape`, `family`), each line checked."""
    rows = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        if row.get("shape") not in SHAPES or not str(row.get("question", "")).strip():
            raise ValueError(f"{path}:{n}: needs a question and a shape among {', '.join(SHAPES)}")
        rows.append(row)
    return rows


def load_topics(path: Path = TOPICS) -> list[str]:
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [t.strip() for t in lines if t.strip() and not t.startswith("#")]


def opening(question: str, words: int = OPENING_WORDS) -> str:
    """The first `words` words of a question."""
    return " ".join(_WORD.findall(question)[:words])


def with_swapped_topics(
    rows: Sequence[tuple[str, str]], topics: Sequence[str], swaps: int = SWAPS, seed: int = 0
) -> list[tuple[str, str]]:
    """Each (question, shape) as given and `swaps` times with every topic of `topics` it names
    replaced by another of them (a fixed seed: the same rows every time)."""
    if not topics:
        return list(rows)
    pattern = re.compile("|".join(re.escape(t) for t in sorted(topics, key=len, reverse=True)), re.IGNORECASE)
    rnd = random.Random(seed)
    out = []
    for question, shape in rows:
        out.append((question, shape))
        if pattern.search(question):
            out.extend((pattern.sub(lambda _m: rnd.choice(topics), question), shape) for _ in range(swaps))
    return out


class ShapeReader:
    """P(shape | question) from a question's features (`features`): `fit` on labelled questions,
    then `probabilities` for any question. `encode` maps texts to rows of the embedder's vectors.
    `weights` is one array: a row per feature, the last row the bias, a column per shape."""

    def __init__(self, encode: Callable[[Sequence[str]], Any]):
        self.encode = encode
        self.weights: Any = None
        self.shapes: tuple[str, ...] = SHAPES

    def fit(self, questions: Sequence[str], shapes: Sequence[str]) -> ShapeReader:
        import numpy as np
        from sklearn.linear_model import LogisticRegression

        missing = sorted(set(self.shapes) - set(shapes))
        if missing:
            raise ValueError(f"the shape examples need at least one question of each shape; none for {missing}")
        model = LogisticRegression(C=_C, max_iter=3000).fit(self.features(questions), list(shapes))
        order = [list(model.classes_).index(s) for s in self.shapes]
        self.weights = np.vstack([model.coef_[order].T, model.intercept_[order][None, :]])
        return self

    def probabilities(self, questions: Sequence[str]) -> list[dict[str, float]]:
        if self.weights is None:
            raise RuntimeError("ShapeReader.fit must run before probabilities")
        x = self.features(questions)
        p = _softmax(x @ self.weights[:-1] + self.weights[-1])
        return [dict(zip(self.shapes, map(float, row), strict=True)) for row in p]

    def features(self, questions: Sequence[str]):
        """One sparse row per question: the embedder's unit vectors of the whole question and of its
        opening, then its hashed word and character n-grams (each block of unit length)."""
        import numpy as np
        from scipy import sparse

        texts = [q.strip() for q in questions]
        vecs = np.asarray(self.encode([*texts, *(opening(q) or q for q in texts)]), dtype=float)
        vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        words, chars = _hashers()
        dense = sparse.csr_matrix(np.hstack([vecs[: len(texts)], vecs[len(texts) :]]))
        return sparse.hstack([dense, words.transform(texts), chars.transform(texts)]).tocsr()


@lru_cache(maxsize=1)
def _hashers():
    from sklearn.feature_extraction.text import HashingVectorizer

    common = {"n_features": HASHED, "alternate_sign": False, "norm": "l2", "lowercase": True}
    return (
        HashingVectorizer(ngram_range=(1, 2), **common),
        HashingVectorizer(analyzer="char_wb", ngram_range=(3, 5), **common),
    )


def _softmax(z):
    import numpy as np

    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


_lock = threading.Lock()
_readers: dict[str, ShapeReader] = {}


def fitted(encode: Callable[[Sequence[str]], Any], examples: Sequence[dict], topics: Sequence[str]) -> ShapeReader:
    """A reader fitted on `examples`, each also with its topics swapped (`with_swapped_topics`)."""
    rows = with_swapped_topics([(e["question"], e["shape"]) for e in examples], topics)
    return ShapeReader(encode).fit([q for q, _ in rows], [s for _, s in rows])


def default_reader() -> ShapeReader:
    """The reader of this process: fitted on the shipped examples with the settings' embedder
    (one per embedder model), once, and kept on disk for the next process."""
    import numpy as np

    from agent.settings import get_settings
    from tools.ingest.plan import settings_embedder

    settings = get_settings()
    key = f"{settings.embedder.model}|{settings.embedder.backend}"
    with _lock:
        if key in _readers:
            return _readers[key]
        embedder = settings_embedder(settings)
        digest = hashlib.sha256(
            "|".join(
                [
                    key,
                    EXAMPLES.read_text(encoding="utf-8"),
                    TOPICS.read_text(encoding="utf-8"),
                    f"{OPENING_WORDS},{SWAPS},{HASHED},{_C},lr2",
                ]
            ).encode()
        ).hexdigest()[:16]
        kept = Path(settings.data_dir).expanduser() / "cache" / f"shape-reader-{digest}.npy"
        reader = ShapeReader(embedder.encode)
        try:
            reader.weights = np.load(kept)
        except (OSError, ValueError):
            reader = fitted(embedder.encode, load_examples(), load_topics())
            try:  # a cache that cannot be written costs the next run a few seconds, nothing more
                kept.parent.mkdir(parents=True, exist_ok=True)
                tmp = kept.with_suffix(".tmp.npy")
                np.save(tmp, reader.weights)
                tmp.replace(kept)
            except OSError:
                pass
        _readers[key] = reader
        return reader
