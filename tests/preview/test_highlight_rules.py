"""The highlight rules of a preview (citations/highlights.py), without a database: which
ranges of an excerpt the answer's passages highlight, and how neighbouring ones merge."""

from citations.highlights import MAX_HIGHLIGHTS, highlight_spans

EXCERPT = "北辰医药三季度营收增长，利润下降了一些，研发投入增加。"


def test_a_quoted_clause_is_highlighted_where_the_excerpt_holds_it():
    assert highlight_spans(EXCERPT, ["研发投入增加"]) == [(20, 26)]


def test_a_piece_shorter_than_four_characters_is_not_highlighted():
    assert highlight_spans(EXCERPT, ["营收，研发"]) == []


def test_clauses_apart_only_by_punctuation_merge_into_one_range():
    assert highlight_spans(EXCERPT, ["三季度营收增长；利润下降了"]) == [(4, 17)]


def test_clauses_apart_by_other_text_stay_two_ranges():
    assert highlight_spans(EXCERPT, ["三季度营收增长；研发投入增加"]) == [(4, 11), (20, 26)]


def test_overlapping_and_touching_pieces_merge_keeping_the_furthest_end():
    content = "营收增长利润下降研发投入"
    # "营收增长利润" and "增长利润下降" overlap; "研发投入" touches the merged end.
    assert highlight_spans(content, ["营收增长利润，增长利润下降，研发投入"]) == [(0, 12)]
    # A piece inside another one keeps the outer end.
    assert highlight_spans(content, ["营收增长利润下降，长利润下"]) == [(0, 8)]


def test_ranges_are_sorted_and_merged_across_passages():
    assert highlight_spans(EXCERPT, ["研发投入增加", "三季度营收增长"]) == [(4, 11), (20, 26)]


def test_a_figure_is_highlighted_by_its_value_and_unit():
    content = "营收48.6 亿元，同比增长"
    spans = highlight_spans(content, ["营收达到48.6亿元"])
    assert spans and content[spans[0][0] : spans[0][1]].replace(" ", "") == "48.6亿元"


def test_at_most_the_limit_of_ranges_is_returned():
    pieces = [f"第{i:02d}项指标" for i in range(MAX_HIGHLIGHTS + 5)]
    content = "。甲乙。".join(pieces)
    spans = highlight_spans(content, ["，".join(pieces)])
    assert len(spans) == MAX_HIGHLIGHTS
    assert spans == sorted(spans)
