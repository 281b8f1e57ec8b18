"""The preview says what the citing block cited in the excerpt — highlights as UTF-16
ranges of ``content`` — and where the excerpt is: its page and paragraph."""

import pytest

from tests.answers.conftest import cited_ids

pytestmark = pytest.mark.django_db(transaction=True)


def utf16_slice(text: str, start: int, end: int) -> str:
    return text.encode("utf-16-le")[2 * start : 2 * end].decode("utf-16-le")


def test_a_figure_answer_highlights_the_figure_and_the_clause_that_state_it(demo):
    answer = demo.ask("北辰医药三季度归母净利润是多少？")
    (cite,) = cited_ids(answer.texts[0])
    body = answer.preview(cite)
    marked = [utf16_slice(body["content"], h["start"], h["end"]) for h in body["highlights"]]
    assert any("6.2 亿元" in m for m in marked)
    assert any("归属于上市公司股东的净利润" in m for m in marked)
    assert "北辰医药股份有限公司 2026 年第三季度报告" not in "".join(marked)


def test_the_location_is_the_page_and_the_paragraph_of_what_was_cited(demo):
    answer = demo.ask("北辰医药的研发费用率是多少？")
    (cite,) = cited_ids(answer.texts[0])
    body = answer.preview(cite)
    # Page 2: 第三节… (1), 报告期内… (2), 仿制药… (3), 公司持续加大研发投入… (4).
    assert body["location"] == {"page": 2, "paragraph": 4}
    (first, *_) = body["highlights"]
    assert utf16_slice(body["content"], first["start"], first["end"]).startswith(
        "公司持续加大研发投入"
    )


def test_highlights_are_utf16_ranges_inside_the_content(second):
    answer = second.ask("青松新能源的资产负债率是多少？")
    for cite in cited_ids(answer.text):
        body = answer.preview(cite)
        length = len(body["content"].encode("utf-16-le")) // 2
        for h in body.get("highlights", []):
            assert 0 <= h["start"] < h["end"] <= length


def test_a_citation_the_answer_does_not_cite_has_no_highlights(demo):
    answer = demo.ask("北辰医药三季度归母净利润是多少？")
    cited = set(cited_ids(answer.text))
    uncited = [r.pk for r in answer.run.citations.all() if r.pk not in cited]
    assert uncited
    body = answer.preview(uncited[0])
    assert "highlights" not in body
    assert body["location"]["page"] >= 1


def test_the_seed_reports_title_and_headings_are_never_highlighted(demo):
    """The answer writes the year and the period of the report's title line and the section
    heading above the figures: only the body's text lights up (citations/highlights.py)."""
    answer = demo.ask("北辰医药2026年第三季度营业收入是多少？")
    (cite, *_) = cited_ids(answer.texts[0])
    body = answer.preview(cite)
    assert body["highlights"]
    lines = body["content"].split("\n")
    headings = {
        "北辰医药股份有限公司 2026 年第三季度报告",
        "第一节 重要提示",
        "第二节 主要财务数据",
    }
    assert headings & {line.strip() for line in lines}
    for h in body["highlights"]:
        start, end = h["start"], h["end"]
        before = utf16_slice(body["content"], 0, start)
        line = lines[before.count("\n")]
        assert line.strip() not in headings, utf16_slice(body["content"], start, end)
