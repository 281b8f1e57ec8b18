"""publication/text.py at the very ends of a text: a cut at index 0 or 1, a number that starts
the text, the character just past the tag range, and a limit shorter than the truncation note."""

from publication.text import TRUNCATION_NOTE, render_text, safe_cut


def test_a_cut_after_the_first_character_backs_off_to_the_start():
    assert safe_cut("a\u0301b", 1) == 0
    assert safe_cut("12", 1) == 0


def test_a_cut_at_the_start_stays_at_the_start():
    assert safe_cut("\u0301ab", 0) == 0
    assert safe_cut("a\u200d", 0) == 0
    assert safe_cut("123", 0) == 0


def test_a_number_starting_the_text_backs_off_to_the_start_and_no_further():
    assert safe_cut("123", 1) == 0
    assert safe_cut("123", 2) == 0


def test_a_cut_inside_a_number_after_a_word_moves_one_by_one_to_its_first_digit():
    assert safe_cut("a12", 2) == 1
    assert safe_cut("a1234", 4) == 1


def test_the_character_just_past_the_tags_does_not_attach():
    assert safe_cut("ab\U000e0080cd", 2) == 2


def test_a_letter_next_to_a_number_is_not_part_of_it():
    assert safe_cut("aX5", 2) == 2
    assert safe_cut("a5X", 2) == 2


def test_a_limit_shorter_than_the_note_keeps_only_the_note():
    assert render_text("abcdefghijklmnopqrstuvwxyz", {}, limit=5) == (TRUNCATION_NOTE, True, [])
