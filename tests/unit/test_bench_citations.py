"""The citation benchmark's metric (bench/citations.py) on hand-made cases."""

from __future__ import annotations

from bench.citations import names_entry, score

WU_A = "Felix Wu, Amauri Souza, and Tianyi Zhang. 2019a. Simplifying graph convolutional networks. In ICML."
WU_B = "Zonghan Wu, Shirui Pan, and Philip S Yu. 2019b. A comprehensive survey on graph neural networks."
MAATEN = "Laurens van der Maaten. 2014. Accelerating t-SNE using tree-based algorithms. JMLR."


def test_a_gold_citation_names_its_entry_by_surname_and_year_with_its_letter():
    assert names_entry("Wu 2019a", WU_A) and not names_entry("Wu 2019a", WU_B)
    assert names_entry("Wu 2019", WU_A)  # no letter in the gold: the year is enough
    assert names_entry("van der Maaten 2014", MAATEN) and not names_entry("Maaten 2015", MAATEN)
    assert not names_entry("Tree 2014", MAATEN)  # a title word is not an author


def test_precision_and_recall_match_one_to_one_on_the_page():
    gold = {1: ["Wu 2019a", "Wu 2019a"], 2: ["van der Maaten 2014"]}
    found = [(1, WU_A), (1, WU_A), (1, WU_A), (3, MAATEN)]
    result = score(found, gold)
    assert (result["right"], result["found"], result["gold"]) == (2, 4, 3)
    assert result["precision"] == 0.5 and abs(result["recall"] - 2 / 3) < 1e-9
    assert result["missed"] == [{"page": 2, "citation": "van der Maaten 2014"}]
    assert [w["page"] for w in result["wrong"]] == [1, 3]
