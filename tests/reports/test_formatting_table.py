"""format_table lays out plain tables itself; rich, the independent method, agrees."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from reports.formatting import _plain, format_table, rich_table

#: Cells as the commands make them: words, numbers with separators, percentages, routes.
_WORD = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=12).map(str.strip)
_CELL = st.one_of(_WORD, st.integers(-10**7, 10**9),
                  st.floats(-1e7, 1e9, allow_nan=False, allow_infinity=False),
                  st.sampled_from(["97.4%", "0,1", "1,234", "-", "", "inf", "nan", "1e-9"]))


@st.composite
def tables(draw):
    ncols = draw(st.integers(1, 5))
    headers = draw(st.lists(_WORD, min_size=ncols, max_size=ncols))
    rows = draw(st.lists(st.lists(_CELL, min_size=ncols, max_size=ncols), max_size=6))
    return headers, rows


def test_a_table_by_hand() -> None:
    text = format_table(["metric", "value"], [["makespan (us)", 24059.8], ["chunks", 64],
                                               ["name", "ring"]])
    assert text.split("\n") == [
        "metric         value",
        "-------------- --------",
        "makespan (us)  24,059.8",
        "chunks               64",
        "name           ring",
    ]


@settings(max_examples=300, deadline=None)
@given(tables())
def test_plain_tables_as_rich_lays_them_out(table) -> None:
    headers, rows = table
    from reports.formatting import _fmt

    cells = [[_fmt(c) for c in r] for r in rows]
    assert _plain(headers, cells) == all(any([h] + [r[j] for r in cells])
                                         for j, h in enumerate(headers))
    assert format_table(headers, rows) == rich_table(headers, cells)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(max_size=6), min_size=1, max_size=3), st.data())
def test_any_text_is_laid_out_as_rich_does(headers, data) -> None:
    """Non-ASCII, wide and combining characters, tabs, spaces at the ends: rich's layout."""
    rows = data.draw(st.lists(st.lists(st.text(max_size=6), min_size=len(headers),
                                       max_size=len(headers)), max_size=4))
    assert format_table(headers, rows) == rich_table(headers, rows)


def test_what_goes_to_rich() -> None:
    assert _plain(["a"], [["1"]])
    assert not _plain(["a"], [["µs"]])
    assert not _plain(["a"], [["x "]])
    assert not _plain(["a"], [["x\ty"]])
    assert not _plain(["a", "b"], [["1"]])
    assert not _plain([], [])
    assert not _plain(["a", ""], [["1", ""]])  # an empty column
