"""The built-in financial vocabulary finds what the filings print for what an analyst
types: each case is one analyst's word against a version where only one page prints the
filing's word for it and another page holds the same company's boilerplate."""

import pytest

from knowledge.periods import periods_in
from knowledge.retrieval import search_managed
from tests.factories import add_document, make_knowledge, publish

pytestmark = pytest.mark.django_db

CASES = [
    # an insurer's indicators
    ("澄远保险NBV", "新业务价值为 128.46 亿元。"),
    ("澄远保险EV是多少", "内含价值为 2,635.18 亿元。"),
    ("澄远保险COR", "综合成本率为 97.6%。"),
    # the consolidated statements' wording of the parent's share of profit
    ("澄远保险归母净利润", "归属于母公司股东的净利润 142.15 亿元。"),
    # a dividend's dates, a plan's price
    ("澄远保险除息日", "除权（息）日：2027 年 5 月 20 日。"),
    ("澄远保险股权激励授予价", "限制性股票的授予价格为每股 12.60 元。"),
    ("澄远保险独董有几位", "独立董事三名。"),
]


@pytest.mark.parametrize(("question", "answer"), CASES, ids=[q for q, _ in CASES])
def test_an_analysts_word_finds_the_page_that_prints_the_filings(tenant, alice, question, answer):
    version = make_knowledge(tenant)
    for n in range(3):
        add_document(
            version, ["澄远保险集团股份有限公司经营稳健，澄远保险持续发展。"], key=f"filler-{n}"
        )
    add_document(version, [f"澄远保险：{answer}"], key="answer")
    publish(version)

    found = search_managed([version], query=question, top_k=1, owner=alice)
    assert [item.document.key for item in found] == ["answer"]


def test_an_interim_dividend_asks_the_half_year():
    assert periods_in("中期分红每股多少") == {"H1"}
    assert periods_in("发行中期票据") == frozenset()
