"""A title is a title: a sentence run into a record's title field is not shown as its title."""

from __future__ import annotations

import pytest

from agent.answer.titles import title_only


@pytest.mark.parametrize(
    ("title", "shown"),
    [
        (
            "Shopbots and Pricebots Shopbots are agents that automatically search the Internet to obtain "
            "information about prices and other attributes of goods and services.",
            "Shopbots and Pricebots",
        ),
        (
            "On Using Regression for Range Data Fusion In the paper, we consider an occupancy-based "
            "approach for range data fusion, as it is used in mobile robotics.",
            "On Using Regression for Range Data Fusion",
        ),
        (
            "The Open Agent Architecture: A Framework for Building Distributed Software Systems The Open "
            "Agent Architecture (OAA), developed and used for several years at SRI",
            "The Open Agent Architecture: A Framework for Building Distributed Software Systems",
        ),
        (
            "Categorisation by Context Assistance in retrieving of documents on the World Wide Web is "
            "provided either by search engines.",
            "Categorisation by Context",
        ),
        # titles that are only titles keep every word
        (
            "SPECTER: Document-level Representation Learning using Citation-informed Transformers",
            "SPECTER: Document-level Representation Learning using Citation-informed Transformers",
        ),
        ("Learning to rank using gradient descent.", "Learning to rank using gradient descent."),
        (
            "A study of the effect of document length normalisation on the retrieval of long web documents.",
            "A study of the effect of document length normalisation on the retrieval of long web documents.",
        ),
        ("", ""),
    ],
)
def test_a_sentence_run_into_a_title_is_cut_and_a_title_is_kept(title, shown):
    assert title_only(title) == shown


def test_a_papers_line_does_not_quote_its_title_twice():
    from agent.answer.assemble import _after_title

    title = "A Hierarchical Approach to Wrapper Induction"
    quote = title + " With the tremendous amount of information that becomes available on the Web ..."
    assert (
        _after_title(quote, title)
        == "… With the tremendous amount of information that becomes available on the Web ..."
    )
    assert _after_title("We advocate wrapper induction.", title) == "We advocate wrapper induction."
    assert _after_title(title, title) == title  # nothing after it: the quote stays whole
