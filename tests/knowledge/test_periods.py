"""Periods, one canonical form (knowledge.periods): what a question names, what a report's
title covers, and retrieval ranking a report of another period after the others."""

import pytest

from knowledge.periods import other_period, periods_in
from knowledge.retrieval import retrieve
from tests.factories import add_document, lease, make_knowledge, publish


@pytest.mark.parametrize(
    ("text", "periods"),
    [
        ("海川物流2026年半年度营收", {"2026", "H1"}),
        ("海川物流中报营业收入", {"H1"}),
        ("精锐机床26Q3单季度营业收入", {"Q3"}),
        ("金禾酒业2026年第三季度股东户数", {"2026", "Q3"}),
        ("三季报", {"Q3"}),
        ("海川医药年报基本每股收益", {"FY"}),
        ("华信银行2025年度ROE", {"2025", "FY"}),
        ("星河能源：星河能源股份有限公司2025年年度报告", {"2025", "FY"}),
        ("前三季度营收同比增长多少", {"YTD", "YOY"}),
        ("毛利率比上年提高多少", {"YOY"}),
        # an income statement's comparative column is the year before's same period
        ("项目 | 本期发生额 | 上期发生额", {"YOY"}),
        ("上期末余额", set()),
        # a statement's months: from January cumulative, else the quarter or half they span
        ("合并利润表（节选）  2026 年 1—9 月", {"2026", "YTD"}),
        ("7-9月", {"Q3"}),
        ("2026年1～6月", {"2026", "H1"}),
        ("2026 年 10 月 28 日", {"2026"}),
        # the year's end, a balance: not the year-on-year period, a change since the year's
        # start (比年初 asks it)
        ("比上年末增长", {"BOY"}),
        ("第九届董事会第十次会议决议公告", set()),
        # an interim dividend is the half year's; a medium-term note is no period
        ("中期分红每股多少", {"H1"}),
        ("2026年度中期利润分配方案", {"2026", "H1", "FY"}),
        ("发行中期票据20亿元", set()),
    ],
)
def test_a_text_names_its_periods_in_one_form(text, periods):
    assert periods_in(text) == periods


@pytest.mark.parametrize(
    ("question", "title", "other"),
    [
        ("中报营业收入", "2025年年度报告", True),
        ("中报营业收入", "2026年半年度报告", False),
        ("2026年Q3营业收入", "2025年年度报告", True),  # another year
        ("2025年第四季度营业收入", "2025年年度报告", False),  # an annual report covers Q4
        ("前三季度营业收入", "2026年第三季度报告", False),  # a Q3 report covers the YTD
        ("年报每股收益", "2026年半年度报告", True),
        ("2026年中报营业收入", "向特定对象发行股票预案", False),  # names no period
        ("营业收入是多少", "2025年年度报告", False),  # asks none
    ],
)
def test_a_report_is_of_another_period_only_when_its_title_says_so(question, title, other):
    assert other_period(periods_in(question), periods_in(title)) is other


@pytest.mark.django_db
def test_a_report_of_another_period_ranks_after_the_period_asked(tenant, app, alice, context):
    version = make_knowledge(tenant)
    add_document(
        version,
        ["分季度营业收入：第一季度营业收入45亿元；第二季度营业收入50亿元；营业收入合计190亿元。"],
        key="annual",
        title="海川物流：海川冷链物流股份有限公司2025年年度报告",
    )
    add_document(
        version,
        ["本报告期营业收入（万元）：1,028,893.96，同比增减9.05%。"],
        key="half",
        title="海川物流：海川冷链物流股份有限公司2026年半年度报告",
    )
    for n in range(10):  # more reports of another period than any fixed depth would read
        add_document(
            version,
            ["营业收入：营业收入增长，营业收入结构；营业收入45亿元。"],
            key=f"annual-{n}",
            title=f"海川物流：海川冷链物流股份有限公司{2010 + n}年年度报告",
        )
    publish(version)
    lease(app, version)

    def search(query, top_k):
        return retrieve(
            versions=[version], query=query, top_k=top_k, owner=alice, app=app, context=context
        )

    items = search("海川物流中报营业收入", 2)

    assert [item.document.key for item in items][0] == "half"  # however many outscore it
    assert items[1].document.key.startswith("annual")
    assert "1,028,893.96" in items[0].content
    assert items[0].score > items[1].score
    assert items.trace["periods"] == {"asked": ["H1"], "ranked_last": 1}
    # each of them outscores the report asked when no period is named
    assert [item.document.key for item in search("海川物流营业收入", 11)][-1] == "half"
