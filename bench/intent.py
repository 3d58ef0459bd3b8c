"""Citation intent: the classifier against the hand-labelled citing sentences.

    python -m bench.intent [--split dev|test|all] [--method cues|centroid|hybrid|background] [--json]
    python -m bench.intent agreement        # the two labelling passes: raw agreement and kappa

The set is bench/data/citation_intents.jsonl (bench/data/README.md says how it was built; split
by paper, tune on dev, report test). A row prints per-class precision, recall and F1, macro-F1,
accuracy and the confusion matrix (rows gold, columns predicted).

Methods:
- `cues`: `tools.citations.intent.classify_intent` with the marker span and section (the
  classifier the index uses);
- `centroid`: nearest class centroid of the bundled embedder's vectors (all-MiniLM-L6-v2),
  centroids from the dev split (for `--split dev`, leave-one-paper-out: each dev paper is
  classified by centroids of the other dev papers, so no sentence sees its own label);
- `hybrid`: the cue's label when a cue fires, else the centroid's;
- `background`: every context background (the majority class), the floor to beat.
Per-context seconds of each method are printed too (the cores may be shared: indicative only).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from typing import Any

from bench.intent_set import DATA, Context, load
from tools.citations.intent import INTENTS, Intent, classify_intent

# --- metrics -----------------------------------------------------------------------------------


def confusion(gold: Sequence[str], pred: Sequence[str], labels: Sequence[str] = INTENTS) -> list[list[int]]:
    """counts[i][j]: items of gold label i predicted as label j."""
    index = {label: i for i, label in enumerate(labels)}
    counts = [[0] * len(labels) for _ in labels]
    for g, p in zip(gold, pred, strict=True):
        counts[index[g]][index[p]] += 1
    return counts


def per_class(counts: list[list[int]], labels: Sequence[str] = INTENTS) -> dict[str, dict[str, float | int]]:
    """Precision, recall, F1 and support (gold count) of each label; 0.0 where undefined."""
    out: dict[str, dict[str, float | int]] = {}
    for i, label in enumerate(labels):
        tp = counts[i][i]
        predicted = sum(row[i] for row in counts)
        support = sum(counts[i])
        p = tp / predicted if predicted else 0.0
        r = tp / support if support else 0.0
        f = 2 * p * r / (p + r) if p + r else 0.0
        out[label] = {"precision": p, "recall": r, "f1": f, "support": support, "predicted": predicted}
    return out


def macro_f1(classes: dict[str, dict[str, float | int]]) -> float:
    """Mean F1 over the labels that occur in the gold or the predictions (as scikit-learn's
    `f1_score(average="macro")`): a label absent from both says nothing about the classifier."""
    seen = [c for c in classes.values() if c["support"] or c["predicted"]]
    return sum(float(c["f1"]) for c in seen) / len(seen) if seen else 0.0


def accuracy(counts: list[list[int]]) -> float:
    total = sum(map(sum, counts))
    return sum(counts[i][i] for i in range(len(counts))) / total if total else 0.0


def cohen_kappa(a: Sequence[str], b: Sequence[str], labels: Sequence[str] = INTENTS) -> float:
    """Cohen's kappa of two labellings of the same items: (p_o - p_e) / (1 - p_e)."""
    counts = confusion(a, b, labels)
    n = sum(map(sum, counts))
    if not n:
        return 0.0
    p_o = accuracy(counts)
    p_e = sum(sum(counts[i]) * sum(row[i] for row in counts) for i in range(len(labels))) / (n * n)
    return (p_o - p_e) / (1 - p_e) if p_e < 1 else 1.0


# SciCite's three classes (Cohan et al., 2019): background, method, result comparison.
SCICITE = {
    "background": "background",
    "uses": "method",
    "extends": "method",
    "compares": "result",
    "contrasts": "result",
}


def scores(gold: Sequence[str], pred: Sequence[str]) -> dict[str, Any]:
    """Accuracy, macro-F1 over the five labels seen, macro-F1 over the four labels other than
    `extends` (one gold item in the whole set), and macro-F1 after mapping to SciCite's three."""
    counts = confusion(gold, pred)
    classes = per_class(counts)
    sci = ("background", "method", "result")
    sci_classes = per_class(confusion([SCICITE[g] for g in gold], [SCICITE[p] for p in pred], sci), sci)
    return {
        "n": len(gold),
        "accuracy": accuracy(counts),
        "macro_f1": macro_f1(classes),
        "macro_f1_no_extends": macro_f1({k: v for k, v in classes.items() if k != "extends"}),
        "scicite_macro_f1": macro_f1(sci_classes),
        "classes": classes,
        "confusion": counts,
    }


# --- methods ---------------------------------------------------------------------------------


def cue_intents(contexts: Sequence[Context]) -> list[Intent]:
    """The index's classifier: the first marker's span and the section name."""
    return [
        classify_intent(c.sentence, marker=(c.markers[0].start, c.markers[0].end), section=c.section) for c in contexts
    ]


def centroid_labels(train: Sequence[Context], items: Sequence[Context]) -> list[str]:
    """Nearest class centroid (cosine) of the bundled embedder, centroids from `train`'s labels."""
    import numpy as np

    train_vecs = _vectors([c.sentence for c in train])
    labels = sorted({c.label for c in train if c.label})
    centroids = _unit(
        np.stack([train_vecs[[i for i, c in enumerate(train) if c.label == lab]].mean(axis=0) for lab in labels])
    )
    vecs = _vectors([c.sentence for c in items])
    return [labels[int(j)] for j in (vecs @ centroids.T).argmax(axis=1)]


_VECTORS: dict[str, Any] = {}


def _vectors(sentences: Sequence[str]) -> Any:
    """Unit vectors of `sentences`, each sentence embedded once per process."""
    import numpy as np

    from tools.models.embed import get_embedder

    new = [s for s in dict.fromkeys(sentences) if s not in _VECTORS]
    if new:
        _VECTORS.update(zip(new, _unit(get_embedder(device="cpu").encode(new)), strict=True))
    return np.stack([_VECTORS[s] for s in sentences])


def _unit(x: Any) -> Any:
    import numpy as np

    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def centroid_predictions(split: str) -> list[str]:
    """Centroids from dev; dev itself leave-one-paper-out."""
    items = load(DATA, split)
    dev = load(DATA, "dev")
    if split == "test":
        return centroid_labels(dev, items)
    out: dict[str, str] = {}
    for paper in sorted({c.paper_id for c in items}):
        held = [c for c in items if c.paper_id == paper]
        train = [c for c in dev if c.paper_id != paper]
        out.update(zip([c.id for c in held], centroid_labels(train, held), strict=True))
    return [out[c.id] for c in items]


def predict(method: str, split: str) -> tuple[list[str], list[str | None], float]:
    """Predicted labels, cues (None where none decided) and seconds per context."""
    items = load(DATA, split)
    if method == "background":
        return ["background"] * len(items), [None] * len(items), 0.0
    if method != "cues":  # load the model before the clock starts: index builds load it once
        from tools.models.embed import get_embedder

        get_embedder(device="cpu").encode(["warm-up"])
    start = time.perf_counter()
    if method == "cues":
        intents = cue_intents(items)
        labels, cues = [i.label for i in intents], [i.cue for i in intents]
    else:
        if split == "all":
            raise SystemExit("--method centroid/hybrid needs --split dev or test (the centroids come from dev)")
        labels = centroid_predictions(split)
        cues = [None] * len(items)
        if method == "hybrid":
            intents = cue_intents(items)
            labels = [i.label if i.cue else lab for i, lab in zip(intents, labels, strict=True)]
            cues = [i.cue for i in intents]
    return labels, cues, (time.perf_counter() - start) / max(1, len(items))


# --- report ----------------------------------------------------------------------------------


def agreement(contexts: Sequence[Context]) -> dict[str, Any]:
    """The two labelling passes against each other, and each against the adjudicated label."""
    p1 = [c.pass1 or "" for c in contexts]
    p2 = [c.pass2 or "" for c in contexts]
    final = [c.label or "" for c in contexts]
    return {
        "n": len(contexts),
        "raw": sum(a == b for a, b in zip(p1, p2, strict=True)) / len(contexts),
        "kappa": cohen_kappa(p1, p2),
        "pass1_vs_final": sum(a == b for a, b in zip(p1, final, strict=True)) / len(contexts),
        "pass2_vs_final": sum(a == b for a, b in zip(p2, final, strict=True)) / len(contexts),
        "confusion_pass1_pass2": confusion(p1, p2),
    }


def format_report(result: dict[str, Any]) -> str:
    lines = [
        f"{result['method']} on {result['split']} ({result['n']} contexts): "
        f"accuracy {result['accuracy']:.3f}, macro-F1 {result['macro_f1']:.3f} "
        f"(without extends {result['macro_f1_no_extends']:.3f}; SciCite's 3 classes "
        f"{result['scicite_macro_f1']:.3f}), {result['seconds_per_context'] * 1e3:.3f} ms/context",
        f"{'label':<11} {'P':>6} {'R':>6} {'F1':>6} {'gold':>5} {'pred':>5}",
    ]
    for label, c in result["classes"].items():
        lines.append(
            f"{label:<11} {c['precision']:6.3f} {c['recall']:6.3f} {c['f1']:6.3f} {c['support']:5d} {c['predicted']:5d}"
        )
    lines.append("confusion (rows gold, columns predicted): " + " ".join(f"{lab[:4]:>5}" for lab in INTENTS))
    for label, row in zip(INTENTS, result["confusion"], strict=True):
        lines.append(f"  {label:<11}" + "".join(f"{v:6d}" for v in row))
    return "\n".join(lines)


def run(method: str, split: str) -> dict[str, Any]:
    items = load(DATA, split)
    gold = [c.label or "" for c in items]
    pred, cues, per = predict(method, split)
    result = {"method": method, "split": split, **scores(gold, pred), "seconds_per_context": per}
    result["errors"] = [
        {"id": c.id, "gold": g, "pred": p, "cue": cue, "sentence": c.sentence}
        for c, g, p, cue in zip(items, gold, pred, cues, strict=True)
        if g != p
    ]
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.intent", description=__doc__.splitlines()[0])
    ap.add_argument("command", nargs="?", default="score", choices=["score", "agreement"])
    ap.add_argument("--split", choices=["dev", "test", "all"], help="default: dev (score), all (agreement)")
    ap.add_argument("--method", default="cues", choices=["cues", "centroid", "hybrid", "background"])
    ap.add_argument("--errors", action="store_true", help="list the misclassified contexts")
    ap.add_argument("--json", action="store_true", help="the full result as JSON")
    args = ap.parse_args(argv)
    if args.split is None:
        args.split = "all" if args.command == "agreement" else "dev"
    if args.command == "agreement":
        result = agreement(load(DATA, args.split))
        if args.json:
            print(json.dumps(result, indent=1))
        else:
            print(
                f"{result['n']} contexts ({args.split}): pass 1 vs pass 2 raw agreement {result['raw']:.3f}, "
                f"Cohen's kappa {result['kappa']:.3f}; adjudicated label = pass 1 for "
                f"{result['pass1_vs_final']:.3f}, = pass 2 for {result['pass2_vs_final']:.3f}"
            )
        return 0
    result = run(args.method, args.split)
    if args.json:
        print(json.dumps(result, indent=1, ensure_ascii=False))
        return 0
    print(format_report(result))
    if args.errors:
        for e in result["errors"]:
            print(f"- {e['id']}: gold {e['gold']}, predicted {e['pred']} (cue {e['cue']!r}): {e['sentence']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
