"""safe_cut (publication/text.py) on short strings: the cut backs off every kind of character
that attaches to the one before it, and off a number it would split, at each range's edges."""

import pytest

from publication.text import body_texts, clean_text, safe_cut


@pytest.mark.parametrize(
    "attached",
    [
        "\u0301",  # Mn: combining acute
        "\u0903",  # Mc: Devanagari visarga
        "\u20dd",  # Me: enclosing circle
        "\u200d",  # zero-width joiner
        "\ufe00",  # first variation selector
        "\ufe0f",  # last variation selector
        "\U0001f3fb",  # first skin tone
        "\U0001f3ff",  # last skin tone
        "\U000e0020",  # first tag
        "\U000e007f",  # cancel tag
    ],
)
def test_a_cut_before_an_attached_character_backs_off_its_base(attached):
    assert safe_cut("ab" + attached + "cd", 2) == 1


@pytest.mark.parametrize(
    "free", ["\ufdff", "\ufe10", "\U0001f3fa", "\U0001f400", "\U000e001f", "x"]
)
def test_a_cut_before_a_character_just_outside_the_ranges_stays(free):
    assert safe_cut("ab" + free + "cd", 2) == 2


def test_a_cut_right_after_a_joiner_backs_off_the_joined_pair():
    assert safe_cut("a\U0001f468\u200d\U0001f469b", 3) == 1


@pytest.mark.parametrize("sep", [".", ",", "%", "‰", "5"])
def test_a_cut_inside_a_number_moves_before_the_number(sep):
    assert safe_cut("约12" + sep + "3元", 3) == 1


def test_a_cut_between_a_word_and_a_number_stays():
    assert safe_cut("ab12", 2) == 2
    assert safe_cut("12ab", 2) == 2


def test_the_number_backoff_is_bounded_to_64_characters():
    text = "x" + "1" * 100
    assert safe_cut(text, 80) == 80 - 64
    assert safe_cut("x" + "1" * 64 + "1", 65) == 1


def test_the_cut_is_clamped_to_the_text():
    assert safe_cut("abc", -5) == 0
    assert safe_cut("abc", 10) == 3
    assert safe_cut("12", 10) == 2
    assert safe_cut("a\u0301", 2) == 2


def test_a_lone_surrogate_becomes_a_replacement_character():
    assert clean_text("a\ud800b\x00\r\nc") == "a\ufffdb\nc"


def test_body_texts_reads_a_text_a_table_and_nothing_else():
    assert body_texts({"type": "text", "text": "正文"}) == ["正文"]
    assert body_texts({"type": "text"}) == [""]
    table = {"type": "table", "columns": ["a", 1], "rows": [["b", 2], ["c"]]}
    assert body_texts(table) == ["a", "1", "b", "2", "c"]
    assert body_texts({"type": "table"}) == []
    assert body_texts({"type": "table", "columns": None, "rows": None}) == []
    assert body_texts("text") == []
    assert body_texts(None) == []
