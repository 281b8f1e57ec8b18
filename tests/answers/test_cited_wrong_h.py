"""Cited wrong answers: a figure of another thing quoted with a verified citation because a
phrase was pieced from two rows' labels, a change was read as the thing's named earlier in
the sentence, a sentence measured on the thing (以总股本为基数) was read as its figure, a
period was lost between a sentence's ；-joined parts, a whole or a sibling segment answered
for a part asked. Each must be "not found" with nothing cited, while what the document does
state is still answered. One test per rule, each on a document of its own (not the sets'
fixtures), driven without a database (tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt, not_found

QUARTER = excerpt(
    "沅江精工股份有限公司 2026 年第三季度报告",
    "一、主要财务数据\n单位：万元  币种：人民币\n"
    "项目 本报告期 本报告期比上年同 年初至报告期末 年初至报告期末比上\n"
    " 期增减变动幅度(%) 年同期增减变动幅度(%)\n"
    "营业收入 61,204.37 11.20 170,552.18 9.45\n"
    "归属于上市公司股东的净利润 6,812.40 16.70 18,905.33 13.02\n"
    "经营活动产生的现金流量净额 不适用 不适用 12,330.51 27.80\n"
    "基本每股收益（元/股） 0.21 16.67 0.58 13.73\n"
    "加权平均净资产收益率（%） 2.41 增加0.22个百分点 6.75 增加0.58个百分点\n"
    " 本报告期末 上年度末 本报告期末比上年度末增减变动幅度(%)\n"
    "总资产 512,906.14 470,228.65 9.08\n"
    "归属于上市公司股东的所有者权益 233,410.72 219,877.30 6.15\n",
)


# -- a phrase is stated within one row's label ----------------------------------------------


def test_a_phrase_is_not_pieced_from_two_rows_labels():
    # 每股净资产 is neither 基本每股收益's 每股 nor 加权平均净资产收益率's 净资产 (a modifier
    # of 收益率 there): the table has no such row
    blocks = answer("沅江精工每股净资产是多少？", [QUARTER])
    assert not_found(blocks) and "[[cite:" not in "".join(blocks), blocks
    first = answer("沅江精工基本每股收益是多少？", [QUARTER])[0]
    assert "基本每股收益（元/股） 0.21" in first and "[[cite:" in first, first
    first = answer("沅江精工净资产收益率是多少？", [QUARTER])[0]
    assert "加权平均净资产收益率（%） 2.41" in first and "[[cite:" in first, first


def test_a_modifier_and_its_head_asked_apart_name_the_row_that_writes_them_together():
    # 归属于上市公司股东的所有者权益 is read as two phrases cut at 的; the row writing both is
    # the one asked — not 总资产, nor another row pieced with the labels
    first = answer("沅江精工归属于上市公司股东的所有者权益比上年度末增长多少？", [QUARTER])[0]
    assert "6.15" in first and "9.08" not in first and "[[cite:" in first, first


def test_a_column_of_another_report_period_does_not_answer_the_quarter():
    # 第三季度 of a third-quarter report is 本报告期, whose cell is 不适用: the 年初至报告期末
    # column is the year to date's, whatever the title names
    blocks = answer("沅江精工第三季度经营活动产生的现金流量净额是多少？", [QUARTER])
    assert not_found(blocks) and "[[cite:" not in "".join(blocks), blocks
    first = answer("沅江精工前三季度经营活动产生的现金流量净额是多少？", [QUARTER])[0]
    assert "12,330.51" in first and "[[cite:" in first, first


# -- a basis gives no figure of it ----------------------------------------------------------

DIVIDEND = excerpt(
    "沐川电子股份有限公司 2025 年年度报告摘要",
    "## 四、利润分配\n\n公司拟以总股本为基数，向全体股东每 10 股派发现金红利 2.80 元（含税）。",
)
SHARES = excerpt(
    "沐川电子股份有限公司 2025 年年度报告摘要",
    "## 四、利润分配\n\n公司拟以总股本 41,600 万股为基数，向全体股东每 10 股派发现金红利 2.80 元"
    "（含税）。",
)


def test_a_thing_written_only_as_a_basis_is_given_no_figure():
    blocks = answer("沐川电子总股本是多少？", [DIVIDEND])
    assert not_found(blocks) and "[[cite:" not in "".join(blocks), blocks
    # the figure written inside the frame is the thing's own
    first = answer("沐川电子总股本是多少？", [SHARES])[0]
    assert "41,600" in first and "[[cite:" in first, first


# -- a change belongs to the thing its clause names -----------------------------------------

LOANS = excerpt(
    "溧川银行股份有限公司 2026 年半年度报告摘要",
    "三、经营情况\n"
    "截至报告期末，本行各项贷款余额 2,104.55 亿元，较上年末增加 160.30 亿元，其中公司贷款 "
    "1,301.20 亿元，个人贷款 688.14 亿元；普惠型小微企业贷款余额 301.72 亿元，较上年末增长 "
    "12.6%。",
)


def test_a_change_after_another_thing_and_its_figure_is_that_things():
    # 12.6% follows 普惠型小微企业贷款余额 301.72 亿元: it is not 个人贷款's growth
    blocks = answer("溧川银行个人贷款较上年末增长多少？", [LOANS])
    assert not_found(blocks) and "[[cite:" not in "".join(blocks), blocks
    first = answer("溧川银行普惠型小微企业贷款较上年末增长多少？", [LOANS])[0]
    assert "12.6%" in first and "[[cite:" in first, first
    first = answer("溧川银行各项贷款较上年末增加多少？", [LOANS])[0]
    assert "160.30" in first and "[[cite:" in first, first


# -- a period goes on through a sentence's ；-joined parts ----------------------------------

NOTE = excerpt(
    "沅江精工（603211）2026 年三季报点评：盈利改善",
    "## 核心观点\n\n"
    "**事件**：公司发布 2026 年三季报，前三季度实现营业收入 17.06 亿元，同比增长 9.45%；"
    "归母净利润 1.89 亿元，同比增长 13.02%；其中 Q3 单季实现营收 6.12 亿元，同比增长 11.20%；"
    "归母净利润 0.68 亿元，同比增长 16.70%，业绩符合预期。",
)


def test_a_part_after_a_year_to_date_part_is_the_year_to_dates():
    first = answer("沅江精工第三季度归母净利润同比增长多少？", [NOTE])[0]
    assert "16.70%" in first and "13.02%" not in first and "[[cite:" in first, first
    # (the part naming the year to date answers it)
    first = answer("沅江精工前三季度营业收入同比增长多少？", [NOTE])[0]
    assert "9.45%" in first and "[[cite:" in first, first


# -- a whole, or a sibling segment, does not answer for a part asked ------------------------

INSURER = excerpt(
    "沧远保险集团股份有限公司 2026 年年度报告摘要",
    "五、经营情况讨论与分析\n"
    "（一）寿险业务\n"
    "2026 年，沧远人寿实现新业务价值 86.20 亿元，同比增长 11.40%。\n"
    "（二）财产险业务\n"
    "沧远财险实现原保险保费收入 318.44 亿元，同比增长 4.90%，其中车险保费收入 190.12 亿元，"
    "非车险保费收入 128.32 亿元。\n"
    "综合成本率为 98.1%，同比下降 0.7 个百分点。\n",
    {"key": "综合成本率", "label": "综合成本率", "display": "98.1%"},
)


def test_a_segments_figure_is_not_its_siblings():
    # 寿险业务 asked under （二）财产险业务: 财产险 and 寿险 are the segments told apart
    blocks = answer("沧远保险寿险业务原保险保费收入多少？", [INSURER])
    assert not_found(blocks) and "[[cite:" not in "".join(blocks), blocks
    first = answer("沧远保险财产险业务原保险保费收入多少？", [INSURER])[0]
    assert "318.44" in first and "[[cite:" in first, first


def test_a_wholes_ratio_does_not_answer_for_a_part_the_documents_name():
    # 非车险 is a part the report gives figures of (非车险保费收入): the whole's 综合成本率
    # is not its
    blocks = answer("沧远保险非车险综合成本率是多少？", [INSURER])
    assert not_found(blocks) and "[[cite:" not in "".join(blocks), blocks
    first = answer("沧远财险综合成本率是多少？", [INSURER])[0]
    assert "98.1%" in first and "[[cite:" in first, first
    first = answer("沧远财险非车险保费收入是多少？", [INSURER])[0]
    assert "128.32" in first and "[[cite:" in first, first
