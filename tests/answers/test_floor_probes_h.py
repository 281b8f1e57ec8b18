"""The floor against questions on the topic of a document that it does not answer: a table's
caption read as the context of the prose after the table, a rate of a term read as the term,
a 同比 change read as a 环比 one. Each such answer would cite a sentence that is not the
thing asked; each must be "not found" with nothing cited, while the thing the document does
state is still answered. One test per rule, each on a document of its own (not the sets'
fixtures), driven without a database (tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt, not_found

SEGMENTS = excerpt(
    "岚川电气股份有限公司 2026 年半年度报告摘要",
    "## 二、分产品经营情况\n\n"
    "表 3 各业务收入及毛利率\n\n"
    "业务 | 营业收入（亿元） | 毛利率\n\n"
    "储能变流器 | 12.4 | 31.2%\n\n"
    "光伏逆变器 | 20.8 | 27.5%\n\n"
    "储能变流器业务受益于海外大储项目交付，收入同比增长 18.5%。\n",
)


# -- a caption heads its table's rows, not the prose after the table -----------------------


def test_a_tables_caption_is_no_context_of_the_prose_after_the_table():
    # 表 3 各业务收入及毛利率 names what the rows are; the sentence after the table states a
    # revenue's growth, not the 毛利率's change nor a 营业成本's
    for question in (
        "岚川电气储能变流器业务毛利率同比变化多少？",
        "岚川电气储能变流器业务毛利率同比提升了多少？",
    ):
        blocks = answer(question, [SEGMENTS])
        assert not_found(blocks) and "[[cite:" not in "".join(blocks), (question, blocks)
    # the row under the caption still answers its 毛利率, the sentence its revenue's growth
    first = answer("岚川电气储能变流器毛利率是多少？", [SEGMENTS])[0]
    assert "储能变流器（毛利率）：31.2%" in first, first
    first = answer("岚川电气储能变流器业务收入同比增长多少？", [SEGMENTS])[0]
    assert "收入同比增长 18.5%" in first, first


def test_a_numbered_section_still_heads_the_prose_after_its_table():
    # （二）资产质量 is a section, not a caption: the sentence after its table is under it
    report = excerpt(
        "岚汀银行股份有限公司 2026 年半年度报告摘要",
        "（二）资产质量\n\n"
        "项目 | 本期末 | 上年末\n\n"
        "不良贷款余额 | 40.2 | 37.8\n\n"
        "报告期内核销 9.86 亿元，比率为 1.04%。\n",
    )
    first = answer("岚汀银行资产质量方面核销了多少？", [report])[0]
    assert "9.86" in first, first


# -- the rate of a term is not the term ----------------------------------------------------

FUND = excerpt(
    "岚溪红利混合型证券投资基金 2026 年第 2 季度报告",
    "§1 主要财务指标\n"
    "本报告期基金份额净值增长率为 3.41%，同期业绩比较基准收益率为 2.02%。"
    "报告期末基金资产净值 12.6 亿元。\n",
)


def test_a_growth_rate_of_a_term_does_not_state_the_term():
    # 份额净值增长率 is a rate (its head is 增长率): it states no 份额净值, a level in 元
    blocks = answer("岚溪红利混合基金份额净值是多少？", [FUND])
    assert not_found(blocks) and "[[cite:" not in "".join(blocks), blocks
    # the rate asked as such, or as the term's change, is answered by it
    first = answer("岚溪红利混合基金份额净值增长率是多少？", [FUND])[0]
    assert "份额净值增长率为 3.41%" in first, first
    first = answer("岚溪红利混合基金这个季度净值涨了多少？", [FUND])[0]
    assert "3.41%" in first, first
    first = answer("岚溪红利混合基金资产净值是多少？", [FUND])[0]
    assert "12.6 亿元" in first, first


# -- 环比 is a change on the period before, not the year before -----------------------------

SHIPMENTS = excerpt(
    "岚川电气股份有限公司 2026 年半年度报告",
    "第三节 业务回顾\n储能电池出货量 42.5 GWh，同比增长 33%。\n",
)


def test_a_change_on_the_year_before_does_not_answer_one_on_the_period_before():
    blocks = answer("岚川电气储能电池出货量环比增长多少？", [SHIPMENTS])
    assert not_found(blocks) and "[[cite:" not in "".join(blocks), blocks
    first = answer("岚川电气储能电池出货量同比增长多少？", [SHIPMENTS])[0]
    assert "同比增长 33%" in first, first
    quarterly = excerpt(
        "岚川电气股份有限公司 2026 年第三季度报告",
        "第三节 经营情况\n核心产品第三季度销量环比增长 46%。\n",
    )
    first = answer("岚川电气核心产品销量环比增长多少？", [quarterly])[0]
    assert "环比增长 46%" in first, first
