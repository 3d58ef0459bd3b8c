"""In-text citations found in plain text and linked to the paper's bibliography
(tools/citations/intext.py), and cited works keyed and shared across papers
(tools/citations/model.py, tools/citations/resolve.py). Examples are written by hand in the
styles of the shipped ACL papers; the real papers are tested in tests/integration/test_citations.py."""

from __future__ import annotations

from tools.base import BibEntry, Paper
from tools.citations.intext import Linker, fold
from tools.citations.model import reference_id, work_key
from tools.citations.resolve import citation_targets

BIB = [
    BibEntry(
        title="S2ORC: The Semantic Scholar Open Research Corpus",
        year=2020,
        raw="Kyle Lo, Lucy Lu Wang, Mark Neumann, Rodney Kinney, and Daniel Weld. 2020. S2ORC: The Semantic "
        "Scholar Open Research Corpus. In ACL.",
        key="b0",
    ),
    BibEntry(
        title="Construction of the literature graph in semantic scholar",
        year=2018,
        raw="Waleed Ammar, Dirk Groeneveld, and Chandra Bhagavatula. 2018. Construction of the literature "
        "graph in semantic scholar. In NAACL.",
        key="b1",
    ),
    BibEntry(
        title="Long short-term memory",
        year=1997,
        raw="Sepp Hochreiter and Jürgen Schmidhuber. 1997. Long short-term memory. Neural computation.",
        key="b2",
    ),
    BibEntry(
        title="Frustratingly easy domain adaptation",
        year=2007,
        raw="Hal Daumé III. 2007. Frustratingly easy domain adaptation. In ACL.",
        key="b3",
    ),
    BibEntry(
        title="Inductive representation learning",
        year=2017,
        raw="William L. Hamilton, Rex Ying, and Jure Leskovec. 2017a. Inductive representation learning on large graphs. In NeurIPS.",
        key="b4",
    ),
    BibEntry(
        title="Representation learning on graphs",
        year=2017,
        raw="William L. Hamilton, Rex Ying, and Jure Leskovec. 2017b. Representation learning on graphs: Methods and applications. IEEE Data Eng. Bull.",
        key="b5",
    ),
    BibEntry(
        title="A second Lo paper",
        year=2021,
        raw="Kyle Lo and Lucy Lu Wang. 2021. A second Lo paper. In EMNLP.",
        key="b6",
    ),
    BibEntry(
        title="Neural machine translation",
        year=2017,
        raw="Aäron van den Oord, Yazhe Li, and Oriol Vinyals. 2017. Neural discrete representation learning. In NeurIPS.",
        key="b7",
    ),
]


def cited(text: str, bib=BIB) -> list[tuple[str, str]]:
    return [(text[f.start : f.end], f.key) for f in Linker(bib).find(text)]


def test_parenthetical_group_gives_one_citation_per_work():
    text = "Corpora built from PDFs (e.g., Lo et al., 2020; Ammar et al., 2018) are large."
    assert cited(text) == [("Lo et al., 2020", "b0"), ("Ammar et al., 2018", "b1")]


def test_narrative_two_authors_and_one_author_with_accent():
    text = "Following Hochreiter and Schmidhuber (1997), and unlike Daumé (2007), we train."
    assert cited(text) == [("Hochreiter and Schmidhuber (1997", "b2"), ("Daumé (2007", "b3")]


def test_year_letters_and_several_years_each_name_their_entry():
    assert [k for _, k in cited("graph methods (Hamilton et al., 2017a,b) differ")] == ["b4", "b5"]
    # the one Lo 2021 entry is 'Lo and Wang': 'et al.' only breaks ties, it does not veto
    assert [k for _, k in cited("as Lo et al. (2020, 2021) show")] == ["b0", "b6"]
    assert [k for _, k in cited("as Lo and Wang (2021) show")] == ["b6"]


def test_particles_name_the_first_author():
    assert [k for _, k in cited("VQ-VAE (van den Oord et al., 2017) and Oord et al. (2017)")] == ["b7", "b7"]


def test_names_and_years_that_name_no_entry_are_not_citations():
    assert cited("Table 2, 2019 shows that Lo et al. (2019) and In 2020, we did it.") == []
    assert cited("Smith et al. (2020) disagree.") == []


def test_numeric_citations_only_in_a_numbered_bibliography():
    numbered = [
        BibEntry(title=f"Paper {n}", year=2000 + n, raw=f"[{n}] A. Author. Paper {n}.", key=f"b{n}")
        for n in range(1, 9)
    ]
    assert [k for _, k in cited("as shown [3, 5-7] and [2]", numbered)] == ["b3", "b5", "b6", "b7", "b2"]
    assert cited("the interval [0, 1] and [5, 10, 15]", numbered) == []  # 0, 10 and 15 are no entries
    assert cited("as shown [3]") == []  # BIB is author-year: brackets are not citations there


def test_fold_ignores_accents_case_and_hyphens():
    assert fold("Daumé III") == fold("daume iii") and fold("Demner-Fushman") == "demner fushman"


def test_one_reference_record_per_work_across_papers():
    grobid = BibEntry(title="GROBID: Combining automatic bibliographic data recognition", year=2009, key="b3")
    grobid_again = BibEntry(
        title="Grobid: combining automatic bibliographic data recognition.", year=2008, key="BIBREF12"
    )
    assert work_key(grobid) == work_key(grobid_again) and reference_id(work_key(grobid)).startswith("ref:")
    hmm = Paper("hmm", title="A tutorial on hidden Markov models", year=1989)
    a = Paper(
        "a", title="Paper A", bibliography=(grobid, BibEntry(title="A tutorial on hidden Markov models", key="b1"))
    )
    b = Paper("b", title="Paper B", bibliography=(grobid_again,))
    targets, refs = citation_targets([a, b, hmm])
    assert len(refs) == 1 and refs[0].title == grobid.title  # the first entry met describes it
    by_entry = {(t.paper_id, t.key): (t.target, t.kind) for t in targets}
    assert by_entry[("a", "b3")] == by_entry[("b", "BIBREF12")] == (refs[0].ref_id, "reference")
    assert by_entry[("a", "b1")] == ("hmm", "paper")  # resolved as the citation graph resolves it


def test_short_titles_key_works_by_their_raw_entry():
    one = BibEntry(title="BERT", raw="Devlin et al. 2019. BERT. In NAACL.", key="b0")
    other = BibEntry(title="BERT", raw="Someone Else. 2020. BERT. A blog.", key="b0")
    assert work_key(one) != work_key(other)
