from __future__ import annotations

import pytest

from tools.base import BibEntry, Paper
from tools.ingest.resolve import TitleResolver, resolve_references

pytestmark = pytest.mark.unit

CORPUS = [
    Paper(
        "crf", "Conditional Random Fields: Probabilistic Models for Segmenting and Labeling Sequence Data", year=2001
    ),
    Paper("hmm", "A Tutorial on Hidden Markov Models", year=1989),
    Paper("dup1", "Learning to Rank", year=2005),
    Paper("dup2", "Learning to Rank", year=2009),
]


def test_exact_normalised_title_match():
    r = TitleResolver(CORPUS)
    entry = BibEntry(
        title="Conditional random fields: probabilistic models for segmenting and labeling sequence data.", year=2001
    )
    assert r.resolve(entry) == "crf"


def test_year_must_agree_within_one():
    r = TitleResolver(CORPUS)
    assert r.resolve(BibEntry(title="A tutorial on hidden Markov models", year=1990)) == "hmm"
    assert r.resolve(BibEntry(title="A tutorial on hidden Markov models", year=1995)) is None
    assert r.resolve(BibEntry(title="A tutorial on hidden Markov models", year=None)) == "hmm"


def test_ambiguous_titles_resolve_only_with_year():
    r = TitleResolver(CORPUS)
    assert r.resolve(BibEntry(title="Learning to rank")) is None
    assert r.resolve(BibEntry(title="Learning to rank", year=2009)) == "dup2"


def test_title_found_inside_raw_entry_when_parsed_title_is_wrong():
    r = TitleResolver(CORPUS)
    raw = (
        "John Lafferty, Andrew McCallum, and Fernando Pereira. 2001. Conditional random fields: "
        "Probabilistic models for segmenting and labeling sequence data. In ICML."
    )
    assert r.resolve(BibEntry(title="In ICML", year=2001, raw=raw)) == "crf"


def test_link_wins_and_self_citation_ignored():
    r = TitleResolver(CORPUS)
    assert r.resolve(BibEntry(title="whatever", link="hmm")) == "hmm"
    assert r.resolve(BibEntry(title="A tutorial on hidden Markov models"), citing_id="hmm") is None


def test_unknown_reference_stays_unresolved():
    assert (
        TitleResolver(CORPUS).resolve(BibEntry(title="Deep residual learning for image recognition", year=2016)) is None
    )


def test_resolve_references_adds_ids_without_duplicates():
    citing = Paper(
        "new",
        "A new paper",
        references=("hmm",),
        bibliography=(
            BibEntry(title="A tutorial on hidden Markov models", year=1989),
            BibEntry(title="Conditional Random Fields: Probabilistic Models for Segmenting and Labeling Sequence Data"),
        ),
    )
    papers, n = resolve_references(CORPUS + [citing])
    assert papers[-1].references == ("hmm", "crf")
    assert n == 1
