"""The shape of a question read from its meaning: a softmax regression over the bundled embedder's
vectors of labelled example questions (agent/data/question_shapes.jsonl), so that wordings no
pattern lists ("Give me an overview of ...", "Do any of the indexed documents discuss ...") are
read as what they ask for. `agent.reading.shape` calls it after its patterns, as the second pass.

A question is read as two vectors side by side: the whole question, and its first
`OPENING_WORDS` words, where English puts what a question asks for ("Give me an overview of",
"How many", "Which papers"); the topic of a question says little about its shape, so while
training each example is also seen with its topic swapped for others
(agent/data/question_topics.txt). The examples are the development set of the shape benchmark
(`python -m bench.shapes`); its held-out set (bench/data/question_shapes_test.jsonl, wording
families written apart) is never trained on. The reader is fitted on the embedder the settings
name, so a user who configures another embedder gets a reader fitted to it; the fitted weights
are kept under the data folder (`cache/shape-reader-*.npy`), so only the first run pays the few
seconds of fitting.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[1] / "data"
EXAMPLES = DATA / "question_shapes.jsonl"
TOPICS = DATA / "question_topics.txt"
SHAPES = ("fact", "papers", "overview", "comparison", "citation")
OPENING_WORDS = 5
SWAPS = 5  # topic swaps per example while fitting
_WORD = re.compile(r"[A-Za-z0-9][\w'-]*")

# training: full-batch gradient descent on the cross-entropy with an L2 penalty; vectors are unit
# length, so one learning rate fits every embedder
_STEPS = 400
_RATE = 2.0
_PENALTY = 1e-3


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
    """P(shape | question) from a question's embedding: `fit` on labelled questions, then
    `probabilities` for any question. `encode` maps texts to unit-length rows."""

    def __init__(self, encode: Callable[[Sequence[str]], Any]):
        self.encode = encode
        self.weights: Any = None
        self.shapes: tuple[str, ...] = SHAPES

    def fit(self, questions: Sequence[str], shapes: Sequence[str]) -> ShapeReader:
        import numpy as np

        x = self._features(questions)
        y = np.zeros((len(shapes), len(self.shapes)))
        y[np.arange(len(shapes)), [self.shapes.index(s) for s in shapes]] = 1.0
        w = np.zeros((x.shape[1], len(self.shapes)))
        for _ in range(_STEPS):
            p = _softmax(x @ w)
            w -= _RATE * (x.T @ (p - y) / len(x) + _PENALTY * w)
        self.weights = w
        return self

    def probabilities(self, questions: Sequence[str]) -> list[dict[str, float]]:
        if self.weights is None:
            raise RuntimeError("ShapeReader.fit must run before probabilities")
        p = _softmax(self._features(questions) @ self.weights)
        return [dict(zip(self.shapes, map(float, row), strict=True)) for row in p]

    def _features(self, questions: Sequence[str]):
        import numpy as np

        texts = [q.strip() for q in questions]
        vecs = np.asarray(self.encode([*texts, *(opening(q) or q for q in texts)]), dtype=float)
        vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        whole, start = vecs[: len(texts)], vecs[len(texts) :]
        return np.hstack([whole, start, np.ones((len(texts), 1))])  # the last column is the bias


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
                    f"{OPENING_WORDS},{SWAPS},{_STEPS},{_RATE},{_PENALTY}",
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
