"""The intent of a citation: why a sentence cites a work, from cue phrases near the marker.

Five labels (INTENTS), a coarse version of the ACL-ARC scheme (Jurgens et al., 2018) that keeps
the distinctions a reader of "who cites X" asks about:

- `uses`: the citing work uses the cited one's method, tool, data, definition or protocol
  ("we use X", "following X", "as described previously", "initialised with GloVe");
- `extends`: it builds on the cited work and changes it ("extends", "generalizes");
- `compares`: it sets its own method or results beside the cited work's, whether they agree or
  one is better ("compared with", "outperforms", "baseline", "consistent with");
- `contrasts`: it states a disagreement with, a limitation of, or a difference from the cited
  work ("unlike", "in contrast to", "fails to", "does not");
- `background`: everything else, the default: the cited work informs the reader.

SciCite's three classes (background, method, result) map onto these as background, uses +
extends, compares + contrasts; ACL-ARC's six as background + motivation + future, uses, extends,
compare-or-contrast.

Each cue is a regular expression with a weight; a cue counts for less the further it is from
the citation marker (the caller's span, else markers found in the sentence, else the sentence's
end), and the section name moves the weights a little ("Related work" towards background,
"Methods" towards uses, "Results"/"Discussion" towards compares). The label with the highest
score above MIN_SCORE wins and its cue is reported; with none, the label is `background` and the
cue None. Pure Python: no model, well under a millisecond per sentence, so every citation can
be labelled at index build time. docs/citation-intent.md has the measured figures.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

INTENTS = ("background", "uses", "extends", "compares", "contrasts")

# The constants below (and the cue weights, `near` and the section leans) were set on the dev
# split of bench/data/citation_intents.jsonl; over HALF_DISTANCE 60-180 and MIN_SCORE 0.35-0.55
# accuracy on dev stays within 0.79-0.85 (75 sentences). SEE: docs/citation-intent.md.
# A cue this far (characters) from the marker weighs half as much as one next to it.
HALF_DISTANCE = 120
# A label needs at least this score: a cue of weight 1 reaches it up to about 150 characters from the marker.
MIN_SCORE = 0.45


@dataclass(frozen=True)
class Intent:
    """A citation's intent: `label` one of INTENTS, `cue` the phrase that decided it (None when
    the label is the default, background, because no cue fired)."""

    label: str
    cue: str | None = None


@dataclass(frozen=True)
class Cue:
    """A phrase that signals `label`; `near`: it counts only this close (characters) to the
    marker, for words that signal the label only next to a citation ("than [12]", "using X (4)")."""

    label: str
    weight: float
    pattern: re.Pattern[str]
    near: int | None = None


def _cues(label: str, weight: float, *patterns: str, near: int | None = None) -> list[Cue]:
    return [Cue(label, weight, re.compile(p, re.IGNORECASE), near) for p in patterns]


_VERB_USE = r"(?:use[sd]?|using|adopt(?:s|ed)?|follow(?:s|ed)?|employ(?:s|ed)?|appl(?:y|ies|ied)|utili[sz]e[sd]?|rel(?:y|ies|ied) on|build on|built on|take|took)"

# Order matters only for ties: the first cue of the highest score wins.
CUES: list[Cue] = [
    *_cues(
        "contrasts",
        1.2,
        r"\bunlike\b",
        r"\bin contrast (?:to|with)\b",
        r"\bcontrary to\b",
        r"\b(?:do|does|did|can)(?: not|n't)\b(?! only)",
        r"\bcannot\b",
        r"\bfail(?:s|ed)? to\b",
        r"\bunable to\b",
        r"\bwere not (?:expressed|found|observed|detected|confirmed|reproduced)\b",
        r"\b(?:is|are|was|were) restricted to\b",
        r"\b(?:limitation|drawback|shortcoming)s? of\b",
        r"\bdisagree(?:s|d)? with\b",
        r"\binconsistent with\b",
        r"\bin disagreement\b",
        r"\bunrealistic\b",
    ),
    *_cues(
        "extends",
        1.2,
        r"\bwe extend\b",
        r"\bextend(?:s|ed|ing)? (?:the )?(?:work|model|method|approach|results?|framework|idea)s? (?:of|in)\b",
        r"\bgenerali[sz]es? (?:the )?(?:results?|work|model|method|approach|framework)\b",
        r"\bimprov(?:e|es|ed|ing) (?:up)?on\b",
        r"\bbuilds? upon\b",
        r"\ba (?:modified|generali[sz]ed|extended) version of\b",
    ),
    *_cues(
        "compares",
        1.2,
        r"\bcompar(?:e|es|ed|ing) (?:to|with|against)\b",
        r"\b(?:in )?comparison (?:to|with)\b",
        r"\bcompar(?:e|es|ed|ing)\b",
        r"\boutperform(?:s|ed|ing)?\b",
        r"\bbaselines?\b",
        r"\b(?:consistent|in (?:agreement|accordance|line)|agrees?) with\b",
        r"\bsimilar to (?:the one|those|that)s? (?:in|of|presented|reported|found|described)\b",
        r"\b(?:the )?same as\b",
        r"\bas (?:described|reported|observed|shown|suggested) by others\b",
        r"\bsimilar to those (?:found|reported|observed)\b",
        r"\balso (?:demonstrated|showed|shown|found|reported|observed)\b",
    ),
    *_cues("compares", 0.8, r"\bsimilar(?:ly)? to\b"),
    # "than" compares only when the cited work is what is compared: "better than [12]"
    *_cues(
        "compares",
        1.0,
        r"\bthan(?: (?:those|that|the (?:ones?|results?|methods?)))?(?: (?:of|in|by|reported in))?",
        near=3,
    ),
    *_cues(
        "uses",
        1.0,
        rf"\bwe (?:also )?{_VERB_USE}\b",
        r"\bfollowing\b",
        r"\baccording to (?:the )?(?:methods?|procedures?|protocols?)?\b",
        r"\bas (?:described|reported|proposed|outlined) (?:previously|earlier|elsewhere|before|in|by)\b",
        r"\b(?:procedures?|methods?|protocols?|conditions?) (?:described|reported) (?:previously|earlier|elsewhere)\b",
        r"\bas previously (?:described|reported)\b",
        r"\b(?:based|built) on\b",
        r"\binspired by\b",
        r"\bimplemented (?:with|in|using)\b",
        r"\binitiali[sz](?:e|es|ed|ing) (?:[\w-]+ ){0,3}?(?:with|from)\b",
        r"\btrained on\b",
        r"\b(?:was|were) (?:used|performed|carried out|staged|prepared|measured|determined)\b",
        r"\bfollows?\b",
    ),
    *_cues(
        "uses",
        0.8,
        r"\b(?:data ?sets?|corpus|corpora|(?:data|standard|test|train(?:ing)?) splits?|benchmark)\b",
        r"\b(?:program|software|package|toolkit|kit|primers?|analy[sz]er|instrument)\b",
        r"\b(?:by )?using\b",
        r"\bwith the\b",
        near=40,
    ),
]

_NEGATION = re.compile(r"\b(?:not|never|no|without)\s+(?:\w+\s+){0,2}$", re.IGNORECASE)

# Citation markers, for a sentence given without the caller's marker: "(Lo et al., 2020)",
# "[12]", "[3, 5-7]", "(14, 28)", "Devlin et al. (2019)".
_MARKER = re.compile(
    r"\[\d+(?:\s*[-–,;]\s*\d+)*(?:,[^\]]{0,20})?\]"
    r"|\((?:[^()]*?\b(?:19|20)\d{2}[a-z]?\b[^()]*?|\d+[a-z]?(?:\s*[-–,;]\s*\d+[a-z]?)*)\)"
    r"|\b[A-Z][\w'-]+(?: et al\.| and [A-Z][\w'-]+)? \((?:19|20)\d{2}[a-z]?\)"
)

_SECTION_LEAN = (
    (
        re.compile(r"related work|background|introduction|previous work|literature", re.I),
        {"uses": 0.6, "compares": 0.6},
    ),
    (re.compile(r"method|material|implementation|setup|procedure|experimental design|data", re.I), {"uses": 1.2}),
    (re.compile(r"result|discussion|evaluation|experiment|analysis|comparison", re.I), {"compares": 1.2}),
)


def _marker_spans(sentence: str) -> list[tuple[int, int]]:
    return [m.span() for m in _MARKER.finditer(sentence)] or [(len(sentence), len(sentence))]


def _other_markers(sentence: str, marker: tuple[int, int]) -> list[tuple[int, int]]:
    """The sentence's other citations: markers found in it that do not overlap `marker`."""
    return [(s, e) for s, e in (m.span() for m in _MARKER.finditer(sentence)) if e <= marker[0] or s >= marker[1]]


def _belongs_elsewhere(span: tuple[int, int], marker: tuple[int, int], others: list[tuple[int, int]]) -> bool:
    """Whether a cue is another citation's: a cue belongs to the first marker after it ("unlike
    X [2]"), or, with none after it, to the last one before it ("[3] ... consistent with")."""
    everyone = [marker, *others]
    after = [m for m in everyone if m[0] >= span[1]]
    before = [m for m in everyone if m[1] <= span[0]]
    owner = min(after) if after else max(before) if before else marker
    return owner != marker


def _distance(span: tuple[int, int], markers: list[tuple[int, int]]) -> int:
    """Characters between a cue and the nearest marker, doubled for a cue after the marker: the
    phrase that says why usually comes first ("we use X [1]", "unlike [1]", "compared with [1]")."""
    s, e = span
    return min(max(ms - e, 2 * (s - me), 0) for ms, me in markers)


def _section_weights(section: str | None) -> dict[str, float]:
    weights: dict[str, float] = {}
    if section:
        for pattern, lean in _SECTION_LEAN:
            if pattern.search(section):
                for label, w in lean.items():
                    weights[label] = weights.get(label, 1.0) * w
    return weights


def classify_intent(
    sentence: str,
    *,
    marker: tuple[int, int] | None = None,
    section: str | None = None,
) -> Intent:
    """The intent of the citation in `sentence`. `marker`: the citation's (start, end) in the
    sentence, so that cues near it weigh more (without it, markers are looked for in the
    sentence); `section`: the section's name, which leans the weights."""
    if marker is not None and not 0 <= marker[0] <= marker[1] <= len(sentence):
        raise ValueError(
            f"marker {marker} is not a span of the {len(sentence)}-character sentence; "
            "give the citation's (start, end) offsets in the sentence"
        )
    markers = [marker] if marker is not None else _marker_spans(sentence)
    # with the caller's marker, cues that belong to the sentence's other citations do not count
    given, others = (marker, _other_markers(sentence, marker)) if marker is not None else (None, [])
    lean = _section_weights(section)
    best: tuple[float, str, str] | None = None
    for cue in CUES:
        for m in cue.pattern.finditer(sentence):
            if cue.label != "contrasts" and _NEGATION.search(sentence[: m.start()]):
                continue  # "we do not use X": not a use (the negation itself may be a contrast)
            if _inside(m.span(), markers):
                continue  # a word of the marker itself ("(Jones and Using, 2010)")
            distance = _distance(m.span(), markers)
            if cue.near is not None and distance > cue.near:
                continue
            if given is not None and others and _belongs_elsewhere(m.span(), given, others):
                continue
            score = cue.weight * lean.get(cue.label, 1.0) * HALF_DISTANCE / (HALF_DISTANCE + distance)
            if best is None or score > best[0]:
                best = (score, cue.label, m.group(0).strip())
    if best is None or best[0] < MIN_SCORE:
        return Intent("background")
    return Intent(best[1], best[2])


def _inside(span: tuple[int, int], markers: list[tuple[int, int]]) -> bool:
    return any(ms <= span[0] and span[1] <= me for ms, me in markers)
