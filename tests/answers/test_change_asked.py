"""A change asked is answered by a change, a unit by the holder it speaks of: each rule on a
document of its own (not the sets' fixtures). Driven without a database
(tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt, not_found

BANK = "汀州银行股份有限公司 2026 年半年度报告摘要"
ACCOUNTS = excerpt(
    BANK,
    "二、本行基本情况\n（一）主要会计数据和财务指标\n单位：人民币百万元\n\n"
    "项目 | 2026 年 1—6 月 | 2025 年 1—6 月 | 本期比上年同期增减(%)\n\n"
    "营业收入 | 5,210.40 | 5,012.10 | 3.96\n\n"
    "手续费及佣金净收入 | 812.30 | 880.90 | -7.79\n\n"
    "归属于本行股东的净利润 | 2,101.50 | 1,990.20 | 5.59",
)
LEVELS = excerpt(
    BANK,
    "二、本行基本情况\n表 2 收入增长情况\n单位：人民币百万元\n\n"
    "项目 | 2026 年 1—6 月 | 2025 年 1—6 月\n\n"
    "营业收入 | 5,210.40 | 5,012.10\n\n"
    "手续费及佣金净收入 | 812.30 | 880.90",
)


# -- a change asked of a table row is its change column's, never a level's ---------------


def test_a_rise_asked_of_a_row_is_answered_by_its_change_column():
    first = answer("汀州银行上半年营业收入增长多少？", [ACCOUNTS])[0]
    assert first.startswith("**回答**（汀州银行）：营业收入（本期比上年同期增减(%)）：3.96"), first
    assert "[[cite:" in first


def test_a_rise_asked_of_a_fall_gives_the_signed_change():
    for question in (
        "汀州银行上半年手续费及佣金净收入涨了多少？",
        "汀州银行上半年手续费及佣金净收入降了多少？",
    ):
        first = answer(question, [ACCOUNTS])[0]
        assert "手续费及佣金净收入（本期比上年同期增减(%)）：-7.79" in first, first
        assert "812.30 | 880.90 | -7.79 [[cite:" in first, first
        assert "：812.30" not in first


def test_a_level_asked_is_still_the_level():
    first = answer("汀州银行上半年营业收入是多少？", [ACCOUNTS])[0]
    assert "营业收入（2026 年 1—6 月）：5,210.40" in first, first


def test_a_change_asked_of_a_table_of_levels_is_not_found():
    assert not_found(answer("汀州银行上半年手续费及佣金净收入增长多少？", [LEVELS]))
    assert not_found(answer("汀州银行上半年手续费及佣金净收入涨了多少？", [LEVELS]))
