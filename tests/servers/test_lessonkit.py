"""A lesson's tables: never typeset as math, text columns left-aligned, numbers and flags left as they are."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from servers import lessonkit


@pytest.fixture(autouse=True)
def pandas_as_it_was():
    yield
    pd.reset_option("display.max_colwidth")
    pd.reset_option("display.html.use_mathjax")


def frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "case": [1, 2],
            "as written": ["${DB_HOST}:${DB_PORT:-5432}", "$750"],
            "isError": [True, False],
            "bytes": [10, 20],
            "reason": ["a sentence", "another"],
        }
    ).set_index("case")


def test_tables_are_marked_for_math_to_leave_alone() -> None:
    lessonkit.tables()
    html = lessonkit.table_html(frame())
    assert re.search(r'<table id="table-\w+" border="1" class="dataframe[^"]*\bmathjax_ignore\b', html)
    assert "${DB_HOST}:${DB_PORT:-5432}" in html


def test_only_text_columns_are_left_aligned() -> None:
    lessonkit.tables()
    assert lessonkit.text_columns(frame()) == [1, 4]
    style = lessonkit.table_html(frame()).split("</style>", 1)[0]
    assert "td:nth-of-type(1)" in style and "td:nth-of-type(4)" in style
    assert "td:nth-of-type(2)" not in style and "td:nth-of-type(3)" not in style


def test_each_table_gets_its_own_id() -> None:
    ids = {re.search(r'<table id="(table-\w+)"', lessonkit.table_html(frame())).group(1) for _ in range(3)}
    assert len(ids) == 3


def test_a_table_of_numbers_is_left_as_pandas_shows_it() -> None:
    numbers = pd.DataFrame({"a": [1, 2], "b": [0.5, 1.5]})
    assert lessonkit.table_html(numbers) == numbers._repr_html_()


def test_cells_are_shown_whole_unless_a_width_is_given() -> None:
    lessonkit.tables()
    assert pd.get_option("display.max_colwidth") is None
    lessonkit.tables(max_colwidth=80)
    assert pd.get_option("display.max_colwidth") == 80


def test_a_plain_text_table_puts_text_and_headers_on_the_left() -> None:
    lines = lessonkit.text_table(frame()).splitlines()
    assert lines[0].split() == ["as", "written", "isError", "bytes", "reason"]
    assert lines[0].index("reason") == lines[2].index("a sentence") == lines[3].index("another")
    assert lines[2].index("${DB_HOST}") == lines[3].index("$750")
