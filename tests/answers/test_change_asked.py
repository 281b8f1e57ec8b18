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


# -- a sentence of a subsidiary's section is labelled with the subsidiary ----------------

INSURER = excerpt(
    "汐川保险集团股份有限公司 2026 年年度报告摘要",
    "五、经营情况讨论与分析\n（一）寿险业务\n"
    "2026 年，汐川人寿实现新业务价值 88.20 亿元，同比增长 10.52%；新业务价值率为 21.4%，"
    "同比上升 1.5 个百分点。个人代理人月均人数 32,118 人，同比下降 5.2%。\n"
    "（二）偿付能力\n"
    "本公司及主要保险子公司偿付能力充足率均满足监管要求。汐川人寿核心偿付能力充足率为 118.3%。"
    "综合偿付能力充足率为 206.5%。\n",
)


def test_a_clause_of_a_subsidiarys_section_is_labelled_with_it():
    first = answer("汐川人寿新业务价值率是多少？", [INSURER])[0]
    assert first.startswith("**回答**（汐川保险集团 · 汐川人寿）：新业务价值率为 21.4%"), first
    assert "[[cite:" in first
    first = answer("汐川人寿个人代理人月均人数多少？", [INSURER])[0]
    assert first.startswith("**回答**（汐川保险集团 · 汐川人寿）："), first
    assert "32,118 人" in first and "[[cite:" in first


def test_a_section_whose_lead_opens_with_the_company_keeps_its_name():
    first = answer("汐川保险集团偿付能力充足率是否满足监管要求？", [INSURER])[0]
    assert first.startswith("**回答**（汐川保险集团）："), first
