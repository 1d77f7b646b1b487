"""How a lesson's pandas tables show in JupyterLab: every character as written, prose left-aligned.

JupyterLab typesets text between two ``$`` as math in HTML outputs too, so ``${DB_HOST}:${DB_PORT:-5432}``
in a table cell would lose its ``${`` and ``}``; pandas marks its tables ``mathjax_ignore`` when
``display.html.use_mathjax`` is off. JupyterLab also right-aligns every table cell, which suits numbers and
makes a column of sentences hard to read, so ``tables()`` left-aligns the text columns (``text_table`` does
the same in plain text).
"""

from __future__ import annotations

import uuid

import pandas as pd
from pandas.api.types import is_bool_dtype, is_numeric_dtype


def text_columns(frame: pd.DataFrame) -> list[int]:
    """The positions (1-based) of the columns that hold text rather than numbers or flags."""
    return [
        i for i, (_, column) in enumerate(frame.items(), 1) if not (is_numeric_dtype(column) or is_bool_dtype(column))
    ]


def table_html(frame: pd.DataFrame) -> str | None:
    """The table's own notebook HTML, with a style that left-aligns its text columns (cells and headers)."""
    html = frame._repr_html_()
    columns = text_columns(frame)
    if not html or not columns or "<table" not in html or frame.columns.nlevels > 1:
        return html
    table_id = f"table-{uuid.uuid4().hex[:12]}"  # unique across every notebook open in one page
    levels = frame.index.nlevels
    rules = [
        f"#{table_id} tbody td:nth-of-type({i}), #{table_id} thead tr:first-child th:nth-of-type({i + levels})"
        for i in columns
    ]
    style = f"<style>{', '.join(rules)} {{text-align: left;}}</style>"
    return style + html.replace("<table ", f'<table id="{table_id}" ', 1)


def text_table(frame: pd.DataFrame) -> str:
    """The table as plain text for a widget's answer, its headers and text columns left-aligned."""
    columns = [frame.columns[i - 1] for i in text_columns(frame)]
    widths = {column: int(frame[column].astype(str).str.len().max()) for column in columns}
    return frame.to_string(
        formatters={column: f"{{:<{width}}}".format for column, width in widths.items()}, justify="left"
    )


def tables(max_colwidth: int | None = None) -> None:
    """Set up pandas for a lesson: whole cells (or cut at ``max_colwidth``), no math, text columns left-aligned."""
    pd.set_option("display.max_colwidth", max_colwidth)
    pd.set_option("display.html.use_mathjax", False)
    from IPython import get_ipython

    shell = get_ipython()
    if shell is not None:
        shell.display_formatter.formatters["text/html"].for_type(pd.DataFrame, table_html)
