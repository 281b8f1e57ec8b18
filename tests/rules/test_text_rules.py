"""render_content (publication/text.py) on small bounds: a text body and a table rendered
whole within the bound, with their handles; over it, a table keeps its columns and the rows
that fit, marked truncated, and reports only the handles that survived."""

from publication.text import TRUNCATION_NOTE, VALUE_UNAVAILABLE, render_content

H1, H2 = "num_" + "a" * 24, "num_" + "b" * 24
VALUES = {H1: "12%", H2: "3.4亿"}


def test_a_text_body_within_the_bound_is_rendered_whole_with_its_handles():
    rendered = render_content({"type": "text", "text": f"增长[[num:{H1}]]。"}, VALUES, limit=10)
    assert rendered.content == {"type": "text", "text": "增长12%。"}
    assert rendered.truncated is False
    assert rendered.handles == [H1]


def test_a_text_body_over_the_bound_is_cut_and_marked():
    body = "营" * 40 + f"[[num:{H1}]]"
    limit = len(TRUNCATION_NOTE) + 5
    rendered = render_content({"type": "text", "text": body}, VALUES, limit=limit)
    assert rendered.content == {"type": "text", "text": "营" * 5 + TRUNCATION_NOTE}
    assert rendered.truncated is True
    assert rendered.handles == []


def _table() -> dict:
    return {
        "type": "table",
        "columns": ["指标", f"[[num:{H1}]]"],
        "rows": [["营收", f"[[num:{H2}]]"], ["利润", "[[num:num_missing]]"]],
    }


def test_a_table_within_the_bound_is_rendered_whole_with_its_handles():
    total = len("指标") + 3 + len("营收") + 4 + len("利润") + len(VALUE_UNAVAILABLE)
    for limit in (total, total + 1):
        rendered = render_content(_table(), VALUES, limit=limit)
        assert rendered.content == {
            "type": "table",
            "columns": ["指标", "12%"],
            "rows": [["营收", "3.4亿"], ["利润", VALUE_UNAVAILABLE]],
        }
        assert rendered.truncated is False
        # A handle rendered as "value unavailable" is still reported: its marker was kept.
        assert rendered.handles == [H1, H2, "num_missing"]


def test_a_table_over_the_bound_keeps_its_columns_and_the_rows_that_fit():
    # Columns (5) and the first row's label (2) fit; its value (4) does not.
    rendered = render_content(_table(), VALUES, limit=8)
    assert rendered.content == {"type": "table", "columns": ["指标", "12%"], "rows": [["营收", ""]]}
    assert rendered.truncated is True
    assert rendered.handles == [H1]


def test_a_table_over_the_bound_keeps_every_row_that_fits_whole():
    # Columns (5) and the first row (6) fit; one character of the second row's label is left.
    rendered = render_content(_table(), VALUES, limit=12)
    assert rendered.content["rows"] == [["营收", "3.4亿"], ["利", ""]]
    assert rendered.truncated is True
    assert rendered.handles == [H1, H2]
