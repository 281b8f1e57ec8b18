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


# -- a change in points after a share is the share's ---------------------------------------

BUSINESS = excerpt(
    "岚川电气股份有限公司 2026 年半年度报告",
    "第三节 业务回顾\n"
    "储能电池出货量 42.5 GWh，同比增长 33%，储能业务收入占营业收入的 28.5%。\n"
    "光伏逆变器业务毛利率为 28.6%，海外收入占比 62.0%。\n"
    "报告期内，创新业务收入 9.4 亿元，占营业收入的 19.9%，较上年同期提升 3.2 个百分点。\n",
)


def test_a_change_in_points_after_a_share_is_no_growth_of_the_part():
    # 较上年同期提升 3.2 个百分点 follows 占营业收入的 19.9%: the share rose, and the
    # revenue's own growth is not written
    blocks = answer("岚川电气创新业务收入同比增长多少？", [BUSINESS])
    assert not_found(blocks) and "[[cite:" not in "".join(blocks), blocks
    for question in (
        "岚川电气创新业务收入占比较上年同期提升多少？",
        "岚川电气创新业务收入是多少？",
    ):
        first = answer(question, [BUSINESS])[0]
        assert "占营业收入的 19.9%，较上年同期提升 3.2 个百分点" in first, (question, first)


# -- a qualifier before the word it qualifies ----------------------------------------------


def test_a_qualifier_written_elsewhere_before_its_head_is_not_stated_by_the_whole():
    # 海外收入 is written (光伏逆变器's); 储能业务收入占营业收入的 28.5% is the segment's
    # whole share, not its overseas revenue's
    blocks = answer("岚川电气储能业务海外收入占比是多少？", [BUSINESS])
    assert not_found(blocks) and "[[cite:" not in "".join(blocks), blocks
    first = answer("岚川电气储能业务收入占比是多少？", [BUSINESS])[0]
    assert "储能业务收入占营业收入的 28.5%" in first, first
    first = answer("岚川电气光伏逆变器业务海外收入占比是多少？", [BUSINESS])[0]
    assert "海外收入占比 62.0%" in first, first


# -- a table's rows are siblings of one another --------------------------------------------

SOLVENCY = excerpt(
    "岚远保险集团股份有限公司 2026 年年度报告摘要",
    "三、偿付能力\n单位：%\n\n"
    "公司 | 核心偿付能力充足率 | 综合偿付能力充足率\n\n"
    "集团合并 | 142.6 | 231.8\n\n"
    "岚远人寿 | 118.3 | 206.5\n\n"
    "岚远财险 | 176.4 | 248.9\n",
)


def test_a_subsidiary_no_row_names_is_not_answered_by_its_siblings_rows():
    # 岚远资管 asked: the rows name 岚远人寿 and 岚远财险 in its place, and 集团合并
    blocks = answer("岚远保险岚远资管核心偿付能力充足率是多少？", [SOLVENCY])
    assert not_found(blocks) and "[[cite:" not in "".join(blocks), blocks
    first = answer("岚远保险岚远财险核心偿付能力充足率是多少？", [SOLVENCY])[0]
    assert "岚远财险（核心偿付能力充足率）：176.4" in first, first
    first = answer("岚远保险核心偿付能力充足率是多少？", [SOLVENCY])[0]
    assert "集团合并（核心偿付能力充足率）：142.6" in first, first


# -- a rate of the phrase's last word is not that word -------------------------------------

PRODUCTS = excerpt(
    "岚湖电子股份有限公司 2025 年年度报告摘要",
    "## 二、分产品经营情况\n\n"
    "表 2 营业收入、营业成本及毛利率（按产品）\n\n"
    "产品 | 营业收入（亿元） | 营业成本（亿元） | 毛利率 | 毛利率比上年增减\n\n"
    "汽车电子 | 96.5 | 70.2 | 27.3% | 增加 2.4 个百分点\n\n"
    "消费电子 | 78.1 | 63.4 | 18.8% | 减少 0.9 个百分点\n",
)


def test_a_margin_column_does_not_state_the_gross_profit_of_a_row():
    # 消费电子毛利 is an amount (gross profit): the row's 毛利率 column is its ratio, whose
    # head is 率 — the label and the column together state no 毛利
    for question in ("岚湖电子消费电子毛利是多少？", "岚湖电子消费电子业务的毛利同比增长多少？"):
        blocks = answer(question, [PRODUCTS])
        assert not_found(blocks) and "[[cite:" not in "".join(blocks), (question, blocks)
    first = answer("岚湖电子消费电子毛利率是多少？", [PRODUCTS])[0]
    assert "消费电子（毛利率）：18.8%" in first, first


# -- a share is of the whole the question names --------------------------------------------

PAYOUT = excerpt(
    "岚川精密机械股份有限公司 2026 年年度权益分派实施公告",
    "## 重要内容提示：\n\n每股分配比例：A 股每股现金红利 0.35 元（含税）\n\n"
    "## 二、分配方案\n\n本次利润分配以方案实施前的公司总股本 612,480,000 股为基数，"
    "每股派发现金红利 0.35 元（含税），共计派发现金红利 214,368,000.00 元。\n",
)
CUSTOMERS = excerpt(
    "岚川冷链股份有限公司 2026 年半年度报告",
    "第五节 其他重要事项\n报告期内，公司前五大客户合计销售额占营业收入的 21.6%。\n",
)


def test_a_share_asked_of_a_whole_needs_the_whole_stated():
    # 现金红利占净利润比例 is a payout ratio: no 净利润 is written, and 每股分配比例 is no
    # share of it
    blocks = answer("岚川精密现金红利占净利润比例是多少？", [PAYOUT])
    assert not_found(blocks) and "[[cite:" not in "".join(blocks), blocks
    first = answer("岚川精密每股现金红利是多少？", [PAYOUT])[0]
    assert "0.35 元" in first, first
    # the whole in the vocabulary's other spelling (营收 for 营业收入) is stated
    first = answer("岚川冷链前五大客户销售额占营收比例是多少？", [CUSTOMERS])[0]
    assert "占营业收入的 21.6%" in first, first
