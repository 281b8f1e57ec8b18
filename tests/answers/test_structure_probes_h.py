"""Lists and tables asked whole: a row asked by all its figures (各项指标), … One test per
rule, each on a document of its own (not the sets' fixtures), driven without a database
(tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt, not_found

PRODUCTS = excerpt(
    "澜汐电子股份有限公司 2025 年年度报告摘要",
    "## 二、分产品经营情况\n\n"
    "表 2 营业收入、营业成本及毛利率（按产品）\n\n"
    "产品 | 营业收入（亿元） | 营业成本（亿元） | 毛利率 | 毛利率比上年增减\n\n"
    "储能模组 | 52.4 | 40.1 | 23.5% | 增加 1.8 个百分点\n\n"
    "车载电源 | 31.7 | 25.9 | 18.3% | 减少 0.7 个百分点\n\n"
    "合计 | 84.1 | 66.0 | 21.5% | 增加 0.9 个百分点\n\n"
    "储能模组业务受益于海外大储项目交付，收入同比增长 21.6%；车载电源业务受价格竞争影响，"
    "收入同比下降 3.2%。",
)


# -- a row asked by all its figures -----------------------------------------------------------


def test_every_figure_of_a_row_is_its_whole_row():
    # 各项指标 / 各项数据 names no figure of its own: it asks everything the row named before
    # it says — the row quoted whole, not the prose about the segment, nor another row
    for question in ("澜汐电子储能模组的各项指标？", "澜汐电子车载电源各项数据是多少"):
        first = answer(question, [PRODUCTS])[0]
        row = (
            "储能模组 | 52.4 | 40.1 | 23.5% | 增加 1.8"
            if "储能" in question
            else ("车载电源 | 31.7 | 25.9 | 18.3% | 减少 0.7")
        )
        assert row in first, (question, first)
        assert "合计" not in first and "收入同比" not in first, (question, first)
    # a row the table does not have stays unanswered
    assert not_found(answer("澜汐电子光伏组件的各项指标？", [PRODUCTS]))
