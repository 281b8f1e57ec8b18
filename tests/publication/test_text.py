"""Mechanical text rules of Publication: cleanup and the 60,000-character bound,
with the cut placed deliberately at every position inside each kind of atom."""

import pytest

from publication.text import (
    MAX_DISPLAY_CHARS,
    TRUNCATION_NOTE,
    VALUE_UNAVAILABLE,
    clean_text,
    render_content,
    render_text,
)

BUDGET = MAX_DISPLAY_CHARS - len(TRUNCATION_NOTE)
CITE = "[[cite:cite_abcdefghijklmnopqrstuvwx]]"
LEGACY = "[cite_abcdefghijklmnopqrstuvwx]"
BLOCK = "[[block:pub_abcdefghijklmnopqrstuvwx]]"
HANDLE = "num_abcdefghijklmnopqrstuvwx"
VALUES = {HANDLE: "1,234.5亿元"}


def straddling(atom_text: str, display: str):
    """Bodies where the atom's display starts 1 … len-1 characters before the cut."""
    for before_cut in range(1, len(display)):
        head = "营" * (BUDGET - before_cut)
        yield head, head + atom_text + "收" * 50


@pytest.mark.parametrize(
    ("atom", "display"),
    [
        (CITE, CITE),
        (LEGACY, LEGACY),
        (BLOCK, BLOCK),
        (f"[[num:{HANDLE}]]", VALUES[HANDLE]),
        ("[[num:num_bogus]]", VALUE_UNAVAILABLE),
    ],
    ids=["citation", "legacy citation", "block reference", "rendered value", "value unavailable"],
)
def test_the_cut_never_falls_inside_a_marker_or_a_rendered_value(atom, display):
    for head, body in straddling(atom, display):
        text, truncated, _ = render_text(body, VALUES)
        assert truncated
        assert text == head + TRUNCATION_NOTE
        assert len(text) <= MAX_DISPLAY_CHARS


def test_an_atom_that_ends_exactly_at_the_cut_is_kept_whole():
    head = "营" * (BUDGET - len(VALUES[HANDLE]))
    text, truncated, handles = render_text(head + f"[[num:{HANDLE}]]" + "收" * 50, VALUES)
    assert truncated
    assert text == head + VALUES[HANDLE] + TRUNCATION_NOTE
    assert handles == [HANDLE]
    assert len(text) == MAX_DISPLAY_CHARS


def test_a_marker_the_cut_drops_is_not_reported_as_kept():
    head = "营" * (BUDGET - 3)
    _, _, handles = render_text(head + f"[[num:{HANDLE}]]" + "收" * 50, VALUES)
    assert handles == []


def test_a_literal_number_is_not_cut_short():
    head = "营" * (BUDGET - 3)
    text, truncated, _ = render_text(head + "增长 1234567.89% 收" + "收" * 50, {})
    assert truncated
    assert text == head + "增长" + TRUNCATION_NOTE


@pytest.mark.parametrize("cluster", ["👨\u200d👩\u200d👧", "e\u0301\u0301", "❤\ufe0f", "👍🏽"])
def test_a_grapheme_cluster_is_not_split(cluster):
    for before_cut in range(1, len(cluster)):
        head = "营" * (BUDGET - before_cut)
        text, _, _ = render_text(head + cluster + "收" * 50, {})
        assert text == head + TRUNCATION_NOTE


def test_exactly_60000_display_characters_are_kept_whole():
    body = "营" * (MAX_DISPLAY_CHARS - len(VALUES[HANDLE])) + f"[[num:{HANDLE}]]"
    text, truncated, _ = render_text(body, VALUES)
    assert not truncated
    assert len(text) == MAX_DISPLAY_CHARS

    text, truncated, _ = render_text(body + "收", VALUES)
    assert truncated
    assert len(text) <= MAX_DISPLAY_CHARS


def test_a_table_over_the_bound_keeps_its_columns_and_the_rows_that_fit():
    row = ["营" * 1000, f"[[num:{HANDLE}]]"]
    rendered = render_content({"type": "table", "columns": ["a", "b"], "rows": [row] * 100}, VALUES)
    assert rendered.truncated
    rows = rendered.content["rows"]
    total = 2 + sum(len(c) for r in rows for c in r)
    assert total <= MAX_DISPLAY_CHARS
    assert all(len(r) == 2 for r in rows)
    assert rows[0] == ["营" * 1000, VALUES[HANDLE]]
    assert all(c in ("", VALUES[HANDLE]) or set(c) == {"营"} for r in rows for c in r)


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("a\r\nb\rc\nd", "a\nb\nc\nd"),
        ("a\u2028b\u2029c\x85d", "a\nb\nc\nd"),
        ("\x00a\x01b\x08c\x0bd\x0ce\x1ff\x7fg\x9bh", "abcdefgh"),
        ("tab\tstays", "tab\tstays"),
        ("zero\u200bwidth\ufeff", "zerowidth"),
        ("bidi \u202eevil\u202c \u2066iso\u2069", "bidi evil iso"),
        ("lone \ud800 surrogate", "lone \ufffd surrogate"),
        ("家👨\u200d👩\u200d👧", "家👨\u200d👩\u200d👧"),
    ],
)
def test_control_characters_are_removed_and_line_endings_unified(raw, clean):
    assert clean_text(raw) == clean


# --- the text with nothing to render (docs/performance.md "Publication commit") -------


@pytest.mark.parametrize(
    "text",
    [
        "",
        "营收增长",
        f"营收 {CITE} 与 {LEGACY} 承接 {BLOCK}",
        "[[num:]] 与 [[num:x y]] 与 [num:x]",  # shaped like no value marker, or a broken one
        f"值 [[num:{HANDLE}]] 与 [[num:num_bogus]]",
        "营" * MAX_DISPLAY_CHARS,
        "营" * (MAX_DISPLAY_CHARS + 1),
        "营" * (MAX_DISPLAY_CHARS - 3) + CITE,
    ],
    ids=[
        "empty",
        "plain",
        "markers",
        "broken value markers",
        "values",
        "at the bound",
        "over the bound",
        "marker over the bound",
    ],
)
def test_a_text_renders_as_its_pieces_say_whether_or_not_it_takes_the_shortcut(text):
    """The shortcut (no value marker, within the bound: the text itself) gives what the
    pieces give, for every kind of text on either side of it."""
    from publication import text as module

    pieces = module._pieces(text, VALUES)
    joined = "".join(p.text for p in pieces)
    rendered, truncated, handles = render_text(text, VALUES)
    if len(joined) <= MAX_DISPLAY_CHARS:
        assert (rendered, truncated, handles) == (
            joined,
            False,
            [p.handle for p in pieces if p.handle],
        )
    else:
        assert truncated and rendered.endswith(TRUNCATION_NOTE)


def test_a_text_without_a_value_marker_within_the_bound_is_not_split_into_pieces(monkeypatch):
    from publication import text as module

    def split(*args):
        raise AssertionError("split into pieces")

    monkeypatch.setattr(module, "_pieces", split)

    assert render_text(f"营收 {CITE} {LEGACY} {BLOCK}", VALUES) == (
        f"营收 {CITE} {LEGACY} {BLOCK}",
        False,
        [],
    )
    with pytest.raises(AssertionError, match="pieces"):
        render_text(f"值 [[num:{HANDLE}]]", VALUES)
