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
    return SimpleNamespace(title="", source_ref={"type": "document", "page": page} if page else {})


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


# --- title and heading lines are never highlighted (by the excerpt's structure) ----------

SEED_TITLE = "北辰医药股份有限公司 2026 年第三季度报告"
# Page 1 of the demo's seed report (demo/manifest.yaml): its title, then headed sections.
SEED_PAGE = (
    f"{SEED_TITLE}\n\n第一节 重要提示\n公司董事会保证季度报告内容的真实、准确、完整。\n\n"
    "第二节 主要财务数据\n2026 年第三季度，公司实现营业收入 48.6 亿元，同比增长 18.4%。"
)
FUND_PAGE = (
    "§3 管理人报告\n报告期末组合久期为 3.6 年，杠杆率 118%。\n\n"
    "§4 投资组合报告\n报告期末，债券投资占基金资产净值的 92.7%。"
)


def marked(content: str, spans) -> list[str]:
    return [content[start:end] for start, end in spans]


def test_the_documents_title_and_its_section_headings_are_never_highlighted():
    """The answer writes the year, the section's words and the figures; only the body's
    sentences light up — not ``2026 年第`` of the title, nor 主要财务数据 of the heading."""
    answer = "主要财务数据：2026 年第三季度，公司实现营业收入 48.6 亿元，同比增长 18.4%"
    spans = highlight_spans(SEED_PAGE, [answer], title=SEED_TITLE)
    body = SEED_PAGE.index("2026 年第三季度，")
    assert spans and all(start >= body for start, _ in spans)
    assert "48.6 亿元，同比增长 18.4%" in "".join(marked(SEED_PAGE, spans))
    # the title line is the document's title even when the answer quotes it whole
    quoted = highlight_spans(SEED_PAGE, [SEED_TITLE], title=SEED_TITLE)
    assert all(start > len(SEED_TITLE) for start, _ in quoted)


def test_a_title_with_punctuation_is_known_by_the_documents_title():
    """The memo's title has a colon (no heading by its shape): the document's title names it."""
    title = "内部投研纪要：北辰医药调研（2026 年 10 月）"
    content = f"{title}\n调研时间：2026 年 10 月 30 日，地点为公司总部。"
    answer = ["北辰医药调研时间为 2026 年 10 月 30 日"]
    # without the document's title, its year and month would light up
    assert any(end <= len(title) for _, end in highlight_spans(content, answer))
    spans = highlight_spans(content, answer, title=title)
    assert spans and all(start > len(title) for start, _ in spans)


def test_a_section_number_the_answer_writes_does_not_light_up_a_numbered_heading():
    """``§4 投资组合报告``: a short line standing alone above its text is a heading."""
    spans = highlight_spans(FUND_PAGE, ["第 4 投资组合的债券投资占 92.7%"])
    assert marked(FUND_PAGE, spans) == ["92.7%"]


def test_a_quoted_piece_is_found_in_the_body_after_a_heading_that_also_holds_it():
    content = "营收增长较快\n报告期内，营收增长较快，利润稳定。"
    spans = highlight_spans(content, ["营收增长较快"])
    assert spans == [(content.index("，营收") + 1, content.index("，利润"))]


def test_rows_of_a_table_and_a_single_line_excerpt_are_content_not_headings():
    table = "项目 本期 上年同期\n营业收入 48.6 亿元 41.0 亿元\n净利润 6.2 亿元 5.1 亿元"
    assert marked(table, highlight_spans(table, ["营业收入48.6亿元"])) == ["48.6 亿元"]
    assert highlights.heading_ranges(table) == []
    assert highlights.heading_ranges("营收增长利润下降研发投入") == []
    assert highlights.heading_ranges("# 概况\n正文，第一句。") == [(0, 4)]
