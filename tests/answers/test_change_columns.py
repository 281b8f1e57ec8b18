"""What a table's columns and a question's asks mean beyond their words
(docs/extractive-provider.md): a change column beside the year before is the change on
that year (同比); two clauses each asking a figure are answered by both; a figure asked in
a scale (多少亿) is answered as written in it; 业务 inside the name asked (新业务价值) heads
no segment."""

from tests.answers.reader import answer, excerpt, not_found

TITLE = "澜石化工股份有限公司 2026 年年度报告摘要"


def _indicators() -> list[dict]:
    return [
        excerpt(
            TITLE,
            "二、主要会计数据\n\n单位：人民币万元\n\n项目 | 本年 | 上年 | 增减（%）\n\n"
            "营业收入 | 82,416.30 | 75,902.11 | 8.58\n\n"
            "归属于上市公司股东的净利润 | 9,318.42 | 8,106.27 | 14.95",
        )
    ]


def test_a_change_column_beside_the_year_before_answers_a_year_on_year_change():
    first = answer("澜石化工2026年归母净利润同比增长多少？", _indicators())[0]
    assert "14.95" in first


def test_a_year_on_year_change_asked_as_a_follow_up_is_the_same_rows_change_column():
    earlier = "澜石化工2026年营业收入是多少？"
    first = answer("同比增长多少？", _indicators(), [{"question": earlier}])[0]
    assert "8.58" in first and "14.95" not in first


def test_a_change_column_beside_the_year_ends_balance_is_not_a_year_on_year_change():
    balances = [
        excerpt(
            TITLE,
            "三、资产负债\n\n单位：人民币万元\n\n项目 | 本年末 | 上年末 | 增减（%）\n\n"
            "总资产 | 182,416.30 | 165,902.11 | 9.95",
        )
    ]
    assert not_found(answer("澜石化工2026年总资产同比增长多少？", balances))


FORECAST = "岚江电子股份有限公司 2026 年度业绩预告"


def test_two_clauses_each_asking_a_figure_are_answered_by_both_figures():
    notice = [
        excerpt(
            FORECAST,
            "一、本期业绩预计情况\n\n"
            "营业收入：预计 86,000 万元 至 92,000 万元；上年同期为 71,204.33 万元。\n\n"
            "基本每股收益：预计 0.45 元/股 至 0.52 元/股；上年同期为 0.38 元/股。",
        )
    ]
    first = answer("岚江电子2026年营收预计多少，上年同期是多少？", notice)[0]
    assert "86,000" in first and "92,000" in first and "71,204.33" in first


def test_two_asks_in_prose_quote_the_sentence_that_states_both():
    notice = [
        excerpt(
            FORECAST,
            "公司预计 2026 年实现营业收入 86,000 万元至 92,000 万元，上年同期为 71,204.33 万元，"
            "增长主要来自海外订单。",
        )
    ]
    first = answer("岚江电子2026年营收预计多少，上年同期是多少？", notice)[0]
    assert "86,000" in first and "71,204.33" in first


INSURER = "澜川保险集团股份有限公司 2026 年年度报告摘要"


def _insurer() -> list[dict]:
    return [
        excerpt(
            INSURER,
            "二、主要经营指标\n\n单位：人民币百万元\n\n项目 | 本年 | 上年 | 变动（%）\n\n"
            "原保险保费收入 | 96,432.57 | 92,908.14 | 3.79\n\n"
            "新业务价值 | 6,846.30 | 6,275.62 | 9.09",
        ),
        excerpt(
            INSURER,
            "五、经营情况讨论与分析\n\n2026 年，澜川人寿实现新业务价值 68.46 亿元，"
            "同比增长 9.09%；新业务价值率为 21.6%。",
        ),
    ]


def test_a_word_of_the_name_asked_is_no_segment_s_head():
    # 业务 in 新业务价值 (NBV) heads no segment: the sentence is the company's, in 亿元
    first = answer("澜川保险2026年NBV多少亿？", _insurer())[0]
    assert "68.46 亿元" in first


def test_a_figure_asked_in_a_scale_prefers_the_unit_stating_it_in_that_scale():
    table = _insurer()[0]
    prose = excerpt(
        INSURER,
        "五、经营情况讨论与分析\n\n寿险方面，澜川人寿的新业务价值为 68.46 亿元，代理人渠道"
        "贡献过半，银保渠道的价值率也明显提升，个险渠道的人均产能同样有所改善。",
    )
    first = answer("澜川保险2026年NBV多少亿？", [table, prose])[0]
    assert "68.46 亿元" in first
