"""A table goes on forward only: rows that begin an excerpt take the header of the nearest
excerpt before them in their document, never of a table after them; and 上年 / 上年末 is
a time, the column of the year before (docs/extractive-provider.md)."""

from tests.answers.reader import answer, excerpt

TITLE = "澄平保险集团股份有限公司 2026 年年度报告摘要"


def _at(result: dict, start: int, end: int) -> dict:
    result["sourceRef"] = {
        "type": "document",
        "id": "chengping-2026",
        "page": 1,
        "locator": {"start": start, "end": end},
    }
    return result


def _excerpts() -> list[dict]:
    # the main indicators' header closes the first chunk; the rows open the second; an
    # investment table of as many columns stands later in the document
    head = _at(
        excerpt(
            TITLE,
            "二、主要经营指标\n\n项目 | 本年 | 上年 | 变动（%）\n\n"
            "原保险保费收入 | 186,432.57 | 172,908.14 | 7.82",
        ),
        0,
        80,
    )
    rows = _at(
        excerpt(
            TITLE,
            "加权平均净资产收益率（%） | 11.84 | 11.02 | 上升 0.82 个百分点\n\n"
            "总投资收益率（%） | 4.62 | 3.95 | 上升 0.67 个百分点",
        ),
        82,
        160,
    )
    later = _at(
        excerpt(
            TITLE,
            "（四）投资资产\n\n投资品种 | 期末账面价值 | 占比（%） | 上年末占比（%）\n\n"
            "定期存款 | 98,317.42 | 7.62 | 8.31",
        ),
        900,
        1000,
    )
    # retrieval ranks the later table's excerpt before the header's
    return [rows, later, head]


def test_rows_take_the_header_before_them_not_the_one_of_a_later_table():
    first = answer("澄平保险加权平均净资产收益率是多少？", _excerpts())[0]
    assert "11.84" in first
    assert "本年" in first and "投资品种" not in first


def test_the_year_before_asked_in_a_follow_up_is_that_column_of_the_same_row():
    earlier = "澄平保险加权平均净资产收益率是多少？"
    first = answer("上年呢？", _excerpts(), [{"question": earlier}])[0]
    assert "11.02" in first
    assert "8.31" not in first and "98,317.42" not in first
