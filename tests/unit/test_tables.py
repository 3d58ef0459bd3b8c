"""Tables as grids: the pipe-table text (render, parse, cell locators, cutting by rows) and the
grid read from a table's words (columns from word coverage, wrapped cells, header rows)."""

from __future__ import annotations

import pytest

from tools.ingest.chunker import split_table
from tools.ingest.pdf.model import Word
from tools.ingest.pdf.tables import build_grid
from tools.tables import cell_locator, column_names, parse_grid, render_grid, table_parts

pytestmark = pytest.mark.unit

TABLE = "\n".join(
    [
        "Table 2: Document-level evaluation.",
        "| Approach | CS prec. | Bio prec. |",
        "|---|---|---|",
        "| Statistical | 98.4 | 94.4 |",
        "| Hybrid | 91.5 | 92.1 |",
    ]
)


def test_render_and_parse_are_inverse():
    rows = [["Approach", "CS prec.", "Bio prec."], ["Statistical", "98.4", "94.4"], ["Hybrid", "91.5", ""]]
    text = render_grid(rows, 1)
    assert text.splitlines() == [
        "| Approach | CS prec. | Bio prec. |",
        "|---|---|---|",
        "| Statistical | 98.4 | 94.4 |",
        "| Hybrid | 91.5 |  |",
    ]
    assert parse_grid(text) == (rows, 1)
    assert render_grid([["a|b", "c"]], 0) == "| a/b | c |"  # a bar inside a cell cannot split it


def test_a_cited_value_is_located_by_row_label_and_column_name():
    assert column_names(TABLE) == ["Approach", "CS prec.", "Bio prec."]
    assert cell_locator(TABLE, "| Hybrid | 91.5 | 92.1 |", "92.1") == {"row": "Hybrid", "column": "Bio prec."}
    assert cell_locator(TABLE, "| Hybrid | 91.5 | 92.1 |", "77.0") == {"row": "Hybrid"}  # in no cell: the row only
    assert cell_locator(TABLE, "not a row", "92.1") == {}


def test_table_parts_and_cutting_by_rows():
    caption, header, body = table_parts(TABLE)
    assert caption == ["Table 2: Document-level evaluation."] and header[-1] == "|---|---|---|" and len(body) == 2
    long = "\n".join(
        [
            TABLE.split("\n")[0] + " " + "Long caption words. " * 20,
            *TABLE.split("\n")[1:3],
            *[f"| Model {i} | {i}.5 | {i}.1 |" for i in range(120)],
        ]
    )
    pieces = split_table(long, cap=1000)
    assert len(pieces) > 2 and all(len(p) <= 1000 for p in pieces)
    assert all(p.split("\n")[1:3] == ["| Approach | CS prec. | Bio prec. |", "|---|---|---|"] for p in pieces)
    body_rows = [r for p in pieces for r in table_parts(p)[2]]
    assert body_rows == [f"| Model {i} | {i}.5 | {i}.1 |" for i in range(120)]  # every row once, in order
    assert pieces[0].startswith(long.split("\n")[0])  # the whole caption on the first piece


def _word(text, x0, top, size=9.0):
    width = 0.5 * size * len(text)
    return Word(
        text=text,
        x0=x0,
        x1=x0 + width,
        top=top,
        bottom=top + size,
        size=size,
        n_chars=len(text),
        n_bold=0,
        n_math=0,
        base=top + 0.8 * size,
    )


def _line(top, *cells):
    """Words of one printed line: (x, text) pairs, text split into words a space apart."""
    words = []
    for x, text in cells:
        for part in text.split():
            words.append(_word(part, x, top))
            x += 0.5 * 9.0 * len(part) + 2.5
    return words


def test_columns_come_from_what_no_row_covers_and_close_figures_stay_apart():
    # "82.0" ends at 118 and "86.4" starts at 121: one space apart, still two columns
    words = [
        *_line(10, (0, "Model"), (100, "F1"), (121, "AUC")),
        *_line(22, (0, "Random baseline"), (100, "4.8"), (121, "9.4")),
        *_line(34, (0, "Ours"), (100, "82.0"), (121, "86.4")),
        *_line(46, (0, "Avg. of 15 runs"), (100, "80.1"), (121, "85.0")),
    ]
    rows, heads = build_grid(words, rules=[(5, 1.0), (18, 1.0), (60, 1.0)])
    assert heads == 1
    assert rows == [
        ["Model", "F1", "AUC"],
        ["Random baseline", "4.8", "9.4"],
        ["Ours", "82.0", "86.4"],
        ["Avg. of 15 runs", "80.1", "85.0"],
    ]


def test_a_wrapped_cell_carries_on_its_row_and_a_group_row_does_not_merge_columns():
    words = [
        *_line(10, (0, "Title"), (150, "Area"), (200, "Year")),
        *_line(22, (0, "Region A")),
        *_line(34, (0, "Learning disentangled"), (150, "stat.ML"), (200, "2019")),
        *_line(46, (0, "representations")),
        *_line(58, (0, "Graph networks"), (150, "cs.AI"), (200, "2020")),
        *_line(70, (0, "Region B")),
        *_line(82, (0, "Sparse coding"), (150, "cs.LG"), (200, "2018")),
    ]
    # group rows sit under a rule of their own; a title-case wrap without one would be taken
    # for a group row's neighbour: the rules decide
    rows, heads = build_grid(words, rules=[(5, 1.0), (18, 1.0), (67, 1.0), (95, 1.0)])
    assert heads == 1 and rows[0] == ["Title", "Area", "Year"]
    assert ["Learning disentangled representations", "stat.ML", "2019"] in rows
    assert ["Region A", "", ""] in rows and len(rows) == 6


def test_header_lines_set_closer_than_the_rows_are_one_header_row():
    words = [
        *_line(10, (100, "Papers w/"), (160, "Citation")),
        *_line(16, (0, "Corpus")),
        *_line(22, (100, "body text"), (160, "contexts")),
        *_line(34, (0, "S2ORC"), (100, "8.1M"), (160, "full text")),
        *_line(46, (0, "AAN"), (100, "25k"), (160, "full text")),
    ]
    rows, heads = build_grid(words, rules=[(5, 1.0), (28, 1.0), (60, 1.0)])
    assert heads == 1 and rows[0] == ["Corpus", "Papers w/ body text", "Citation contexts"]
    assert rows[1:] == [["S2ORC", "8.1M", "full text"], ["AAN", "25k", "full text"]]


def test_a_cited_table_row_becomes_evidence_with_its_row_and_column():
    from agent.answer.citations import table_cell
    from agent.records.submission import evidence_items

    row = "| Hybrid | 91.5 | 92.1 |"
    assert table_cell(TABLE, row, "The hybrid approach reaches 92.1 precision on Bio.") == {
        "row": "Hybrid",
        "column": "Bio prec.",
    }
    assert table_cell(TABLE, row, "Hybrid rules help.") == {"row": "Hybrid"}
    assert table_cell(TABLE, "Table 2: Document-level evaluation.", "92.1") == {}
    citation = {
        "paper_id": "N18-3011",
        "kind": "table",
        "locator": {"page": 4, "table_id": "Table 2"},
        "sentences": [{"start": 0, "end": 9, "text": row, "row": "Hybrid", "column": "Bio prec."}],
    }
    assert evidence_items(citation) == [
        {
            "paper_id": "N18-3011",
            "source_type": "table",
            "locator": {"page": 4, "table_id": "Table 2", "row": "Hybrid", "column": "Bio prec."},
        }
    ]
    text = {"paper_id": "p", "kind": "text", "locator": {"page": 2, "section": "1 Intro"}, "sentences": []}
    assert evidence_items(text) == [
        {"paper_id": "p", "source_type": "text_span", "locator": {"page": 2, "section": "1 Intro"}}
    ]
