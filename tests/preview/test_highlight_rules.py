"""The highlight rules of a preview (citations/highlights.py), without a database: which
ranges of an excerpt the answer's passages highlight, how neighbouring ones merge, the
paragraph a highlight is located at, and where the passages come from."""

from types import SimpleNamespace

import pytest

from citations import highlights
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


def test_a_short_piece_does_not_end_the_passage_the_pieces_after_it_are_highlighted():
    assert highlight_spans(EXCERPT, ["营收，研发投入增加"]) == [(20, 26)]


def test_a_piece_the_excerpt_holds_twice_is_highlighted_where_it_first_appears():
    content = "营收增长较快。后来营收增长较快"
    assert highlight_spans(content, ["营收增长较快"]) == [(0, 6)]


# --- the location, and where the passages come from ---------------------------------


@pytest.fixture
def passages(monkeypatch):
    """Publication's passage source replaced for one test (restored after it)."""
    monkeypatch.setattr(highlights, "_passage_source", highlights._passage_source)
    monkeypatch.setattr(highlights, "_passage_annotations", highlights._passage_annotations)

    def use(*quoted: str) -> None:
        highlights.register_passage_source(lambda reference: list(quoted))

    return use


def _reference(page=None):
    return SimpleNamespace(source_ref={"type": "document", "page": page} if page else {})


def test_the_paragraph_counts_the_non_empty_lines_before_the_first_highlight(passages):
    passages("研发投入增加")
    content = "第一 段落\n\n第二段落\n第三段落：研发投入增加"

    out = highlights.highlights_and_location(_reference(page=3), content, paragraph=5)

    assert out["highlights"]  # found, so the location is the highlight's own line
    assert out["location"] == {"page": 3, "paragraph": 7}


def test_a_highlight_across_lines_is_located_at_the_line_it_starts_on(passages):
    passages("第二段落内容；第三段落内容")
    content = "第一段落\n第二段落内容\n第三段落内容"

    out = highlights.highlights_and_location(_reference(), content, paragraph=1)

    assert out["location"] == {"paragraph": 2}


def test_without_a_highlight_the_location_is_the_chunks_own_paragraph(passages):
    passages("这里没有引用的文字")
    out = highlights.highlights_and_location(_reference(), "第一段落\n第二段落", paragraph=4)
    assert out == {"location": {"paragraph": 4}}


def test_the_registered_passage_source_is_what_highlights_read(passages):
    reference = _reference()
    highlights.register_passage_source(
        lambda ref: ["甲乙丙丁"] if ref is reference else [], lambda: {"passages": 1}
    )
    assert highlights.cited_passages(reference) == ["甲乙丙丁"]
    assert highlights.passage_annotations() == {"passages": 1}


def test_with_no_passage_source_registered_nothing_is_cited_or_annotated(monkeypatch):
    monkeypatch.setattr(highlights, "_passage_source", None)
    monkeypatch.setattr(highlights, "_passage_annotations", None)
    assert highlights.cited_passages(_reference()) == []
    assert highlights.passage_annotations() == {}
