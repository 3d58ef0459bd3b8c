"""How well the answer's shape is read from a question (agent/reading/shape.py, agent/reading/shape_reader.py).

    python -m bench.shapes --lofo [--confidence 0.5 ...]   # training examples, one wording family out at a time
    python -m bench.shapes                                  # held out: fitted on every example; score once

Each labelled question (`question`, `shape`: fact, papers, overview, comparison or citation,
`family`: its wording family) is read three ways:
- `wording`: the patterns only (`shape_by_wording`, `fact` when none matches);
- `meaning`: the reader's most probable shape alone (a citation as `papers` unless a citation
  pattern reads its subject, as the graph routes it);
- `both`: the patterns, then the reader for what they leave (`question_shape`, the default).
A question is `citation` when `citation_subject` reads a cited work from it (the graph's route
to the citation contexts), whatever the passes say.

`--lofo` fits the reader on the training examples (agent/data/question_shapes.jsonl) less one
wording family and scores that family, for each family: how a wording nobody wrote an example
for fares. Without it the reader is fitted on all of them and scored on
bench/data/question_shapes_heldout.jsonl: families written after the reader was fixed, sharing no
template and no topic with the examples or the topic list (bench/data/README.md).
`facts_as_lists` counts fact questions read as anything else (a fact must not become a list).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agent.reading.shape import MEANING_CONFIDENCE, citation_subject, shape_by_meaning, shape_by_wording, shape_from
from agent.reading.shape_reader import EXAMPLES, SHAPES, ShapeReader, fitted, load_examples, load_topics

HELDOUT = Path(__file__).resolve().parent / "data" / "question_shapes_heldout.jsonl"
WAYS = ("wording", "meaning", "both")


def read(question: str, probs: dict[str, float], way: str, confidence: float) -> str:
    """The shape `way` reads (see the module's doc); `both` is `agent.reading.shape.shape_from`, what a
    run does, with the reader's `probs` for this question."""
    if citation_subject(question):
        return "citation"
    if way == "wording":
        return shape_by_wording(question) or "fact"
    if way == "meaning":
        return shape_by_meaning(probs, confidence=0.0)
    return shape_from(question, lambda _q: probs, confidence)


def score(rows: Sequence[dict[str, Any]], reader: ShapeReader, confidences: Sequence[float]) -> list[dict[str, Any]]:
    probs = reader.probabilities([r["question"] for r in rows])
    out = []
    for r, p in zip(rows, probs, strict=True):
        out.append(
            {
                "id": r["id"],
                "shape": r["shape"],
                "family": r["family"],
                **{f"{w}@{c}": read(r["question"], p, w, c) for w in WAYS for c in confidences},
            }
        )
    return out


def summarise(scored: Sequence[dict[str, Any]], confidences: Sequence[float]) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for w in WAYS:
        for c in confidences if w == "both" else confidences[:1]:
            key = f"{w}@{c}"
            name = f"both (confidence {c})" if w == "both" else w
            hits = [s[key] == s["shape"] for s in scored]
            per = {
                sh: round(sum(1 for s in scored if s["shape"] == sh and s[key] == sh) / n, 3)
                for sh in SHAPES
                if (n := sum(1 for s in scored if s["shape"] == sh))
            }
            table[name] = {
                "accuracy": round(sum(hits) / len(hits), 3),
                "per_shape": per,
                "facts_as_lists": sum(1 for s in scored if s["shape"] == "fact" and s[key] != "fact"),
                "confusions": Counter(f"{s['shape']}->{s[key]}" for s in scored if s[key] != s["shape"]).most_common(6),
            }
    return table


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lofo", action="store_true", help="leave one wording family of the examples out at a time")
    ap.add_argument("--data", type=Path, default=HELDOUT, help="the labelled questions scored without --lofo")
    ap.add_argument("--confidence", type=float, nargs="*", default=[MEANING_CONFIDENCE])
    ap.add_argument("--out", type=Path, help="write each question's readings here as JSON lines")
    args = ap.parse_args(argv)

    from agent.settings import get_settings
    from tools.ingest.plan import settings_embedder

    embedder = settings_embedder(get_settings())
    cache: dict[str, Any] = {}

    def encode(texts: Sequence[str]):
        import numpy as np

        missing = [t for t in dict.fromkeys(texts) if t not in cache]
        if missing:
            cache.update(zip(missing, embedder.encode(missing), strict=True))
        return np.stack([cache[t] for t in texts])

    examples, topics = load_examples(EXAMPLES), load_topics()
    t = time.perf_counter()
    scored: list[dict[str, Any]] = []
    if args.lofo:
        families = sorted({(e["shape"], e["family"]) for e in examples})
        for fam in families:
            held = [e for e in examples if (e["shape"], e["family"]) == fam]
            kept = [e for e in examples if (e["shape"], e["family"]) != fam]
            scored += score(held, fitted(encode, kept, topics), args.confidence)
        rows = examples
    else:
        rows = load_examples(args.data)
        scored = score(rows, fitted(encode, examples, topics), args.confidence)
    report = {
        "set": "training examples, one family out at a time" if args.lofo else args.data.name,
        "questions": len(rows),
        "families": len({(r["shape"], r["family"]) for r in rows}),
        "seconds": round(time.perf_counter() - t, 1),
        "ways": summarise(scored, args.confidence),
    }
    print(json.dumps(report, indent=1))
    if args.out:
        args.out.write_text("".join(json.dumps(s) + "\n" for s in scored), encoding="utf-8")


if __name__ == "__main__":
    main()
