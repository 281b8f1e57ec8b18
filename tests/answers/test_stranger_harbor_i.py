"""A stranger's questions over a quarterly report, a broker's note and a placement plan:
the documents state the thing, the reader refused it or answered in part (a filing's tick
boxes under a heading, a cause written after its change…). One test per rule, each on a
document of its own (not the sets' fixtures), driven without a database
(tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt, not_found

QUARTER = "青澜机械股份有限公司 2026 年第三季度报告"


# -- a filing's form: its tick boxes and page numbers are no headings ----------------------


def test_tick_boxes_under_a_heading_leave_the_heading_over_its_list():
    # √适用 □不适用 answers the heading's form; the list after it is still the section's
    report = excerpt(
        QUARTER,
        "（三）主要会计数据、财务指标发生变动的情况、原因\n"
        "√适用  □不适用\n"
        "1. 营业收入年初至报告期末同比增长 12.10%，\n"
        "主要系海外订单交付放量所致；\n"
        "2. 经营活动产生的现金流量净额年初至报告期末同比增长 30.02%，\n"
        "主要系销售回款增加所致。\n"
        "第 2 页 共 5 页",
    )
    first = answer("青澜机械经营活动现金流量净额增长的原因是什么？", [report])[0]
    assert "销售回款增加" in first and "30.02" in first, first


# -- a cause is written after the change it explains ----------------------------------------


def test_a_cause_asked_is_stated_by_the_clause_after_the_change():
    report = excerpt(
        QUARTER,
        "三、其他提醒事项\n"
        "1. 应收账款：报告期末应收账款 9.64 亿元，较上年度末增长 11.2%，"
        "主要系部分项目验收后回款周期延长。\n"
        "2. 新签订单：年初至报告期末，公司新签订单 22.5 亿元，同比增长 16.0%。",
    )
    first = answer("青澜机械应收账款增长的原因", [report])[0]
    assert "回款周期延长" in first and "11.2" in first, first
    # (no cause written: not found)
    assert not_found(answer("青澜机械新签订单增长的原因是什么？", [report]))


# -- a statement's rows ---------------------------------------------------------------------


def test_a_row_led_by_less_goes_on_the_table_and_the_total_after_it():
    # 减：所得税影响额 184.06 519.45 is a row (its colon is the label's lead), so the rows
    # after it, 合计 included, stay the table's
    report = excerpt(
        QUARTER,
        "（二）非经常性损益项目和金额\n"
        "单位：万元  币种：人民币\n\n"
        "非经常性损益项目 | 本期金额 | 年初至报告期末金额\n\n"
        "计入当期损益的政府补助 | 512.30 | 1,408.66\n\n"
        "委托他人投资或管理资产的损益 | 128.40 | 377.15\n\n"
        "减：所得税影响额 96.10 267.87\n"
        "少数股东权益影响额（税后） 1.05 12.44\n"
        "合计 543.55 1,505.50",
    )
    first = answer("青澜机械前三季度非经常性损益合计是多少？", [report])[0]
    assert first.index("1,505.50") < first.index("[[cite:"), first


# -- an analyst's words for a note's --------------------------------------------------------

NOTE = excerpt(
    "青澜机械（603999）2026 年三季报点评：订单高增",
    "## 盈利预测与估值\n\n"
    "指标 | 2025A | 2026E | 2027E\n\n"
    "营业收入（百万元） | 2,236 | 2,602 | 3,081\n\n"
    "EPS（元/股） | 0.86 | 1.02 | 1.25\n\n"
    "P/E（倍） | 31.4 | 26.5 | 21.6",
)


def test_a_price_earnings_ratio_in_chinese_is_the_tables_p_e():
    first = answer("青澜机械2026E市盈率是多少？", [NOTE])[0]
    assert "26.5" in first.split("[[cite:")[0].split("\n")[0], first
    # (no P/B printed: 市净率 stays not found)
    assert not_found(answer("青澜机械市净率是多少？", [NOTE]))


# -- a top N asked is N things --------------------------------------------------------------


def test_the_top_n_holders_are_the_table_of_n_rows_not_a_note_on_them():
    # 前五大 is the table's 前 5 名 (a count in digits is the same count), and a note on
    # them (上述股东关联关系…的说明：) of two sentences is not the five asked
    report = excerpt(
        QUARTER,
        "二、股东信息\n"
        "（一）普通股股东总数及前五名股东持股情况表\n"
        "单位：股\n"
        "前 5 名股东持股情况\n"
        "股东名称 股东性质 持股数量 持股比例(%)\n"
        "青澜控股有限公司 境内非国有法人 90,120,000 30.04\n"
        "沈砚 境内自然人 18,300,000 6.10\n"
        "香港中央结算有限公司 境外法人 6,021,004 2.01\n"
        "远岫价值混合型证券投资基金 其他 4,500,300 1.50\n"
        "沈墨 境内自然人 3,000,000 1.00\n"
        "上述股东关联关系或一致行动的说明：沈砚为青澜控股有限公司的控股股东，"
        "沈墨与沈砚为兄弟关系。公司未知其他股东之间是否存在关联关系。",
    )
    first = answer("青澜机械前五大股东有哪些？", [report])[0]
    assert "青澜控股有限公司" in first and "沈墨 境内自然人" in first, first
    assert "兄弟关系" not in first, first


# -- a sentence the layout broke ------------------------------------------------------------


def test_a_line_ending_with_a_modifiers_de_goes_on_in_the_next():
    # …交易均价的 / 80%。: the figure closing the sentence is the sentence's
    plan = excerpt(
        "青澜机械股份有限公司 2026 年度向特定对象发行 A 股股票预案",
        "三、定价基准日、发行价格及定价原则\n"
        "本次发行的定价基准日为发行期首日，发行价格不低于定价基准日前二十个交易日公司股票交易均价的\n"
        "80%。\n"
        "四、发行数量\n"
        "本次发行的股票数量不超过 60,000,000 股（含本数）。",
    )
    first = answer("青澜机械定增发行价格怎么定？", [plan])[0]
    assert "不低于" in first and "80%" in first, first


# -- the year before's end is a date of its own ---------------------------------------------


def test_a_balance_at_the_year_befores_end_is_not_the_base_of_a_change():
    # 较上年度末增长 11.2% compares the period end's 9.64 亿元 with a balance it does not give
    report = excerpt(
        QUARTER,
        "三、其他提醒事项\n"
        "1. 应收账款：报告期末应收账款 9.64 亿元，较上年度末增长 11.2%。\n"
        "2. 存货：报告期末存货 5.10 亿元，上年度末为 4.80 亿元。",
        {"key": "receivables", "label": "应收账款", "display": "9.64亿元"},
    )
    assert not_found(answer("青澜机械上年末应收账款是多少？", [report]))
    first = answer("青澜机械上年末存货是多少？", [report])[0]
    assert "4.80" in first, first
    assert "9.64" in answer("青澜机械报告期末应收账款是多少？", [report])[0]


def test_a_line_of_prose_broken_mid_phrase_goes_on_in_the_next():
    # the layout broke …的持股比例 / 为 24.62%，…: one sentence, its figure its own
    plan = excerpt(
        "青澜机械股份有限公司 2026 年度向特定对象发行 A 股股票预案",
        "七、本次发行是否导致公司控制权发生变化\n"
        "截至本预案公告日，青澜控股有限公司持有公司 32.00% 的股份，为公司控股股东；\n"
        "沈砚先生为公司实际控制人。按发行数量上限测算，本次发行完成后青澜控股有限公司持股比例\n"
        "为 24.62%，仍为公司控股股东，本次发行不会导致公司控制权发生变化。",
    )
    first = answer("发行后青澜控股持股比例是多少？", [plan])[0]
    assert "24.62" in first.split("[[cite:")[0], first


# -- a document named by its kind -----------------------------------------------------------


def test_a_note_named_by_its_kind_is_named_by_its_title():
    # 研报 is the note: its chunk naming the analyst writes no 点评 of its own, its title does
    tail = excerpt(
        "青澜机械（603999）2026 年三季报点评：订单高增",
        "## 风险提示\n\n1. 下游资本开支不及预期；\n2. 原材料价格大幅波动。\n\n"
        "分析师：林岫（执业证书编号：S0960524070009）",
    )
    report = excerpt(QUARTER, "三、其他提醒事项\n公司提请投资者关注汇率波动风险。")
    first = answer("研报的分析师是谁？", [tail, report])[0]
    assert "林岫" in first, first
    first = answer("研报列出了哪些风险提示？", [tail, report])[0]
    assert "原材料价格大幅波动" in first, first


# -- each of a kind -------------------------------------------------------------------------


def test_each_item_of_a_kind_asks_every_row_its_label_names():
    # 各项费用 is every row whose label is a 费用, not the best-scored one (各项, written in
    # the text, is no part of the thing asked: 项费用)
    statement = excerpt(
        QUARTER,
        "合并利润表（节选）  2026 年 1—9 月\n"
        "单位：万元  币种：人民币\n\n"
        "项目 | 本期发生额 | 上期发生额\n\n"
        "其中：营业成本 | 120,100.20 | 101,200.50\n\n"
        "销售费用 | 7,410.11 | 6,802.30\n\n"
        "管理费用 | 5,630.42 | 5,101.77\n\n"
        "研发费用 | 12,008.90 | 10,220.16\n\n"
        "财务费用 | -602.18 | 190.25\n\n"
        "除上述各项之外，报告期内无其他重大费用变动。",
    )
    first = answer("青澜机械利润表里各项费用分别是多少？", [statement])[0]
    for cell in ("7,410.11", "5,630.42", "12,008.90", "-602.18"):
        assert cell in first, first
    assert "120,100.20" not in first, first


# -- a state after a planned event ----------------------------------------------------------


def test_a_figure_after_a_planned_event_answers_only_that_event_asked():
    # 本次发行完成后…持股比例为 24.62% is a pro forma: the holding now is 32.00%
    plan = excerpt(
        "青澜机械股份有限公司 2026 年度向特定对象发行 A 股股票预案",
        "四、发行数量\n"
        "本次发行的股票数量不超过 60,000,000 股（含本数）。\n"
        "七、本次发行是否导致公司控制权发生变化\n"
        "截至本预案公告日，控股股东青澜控股有限公司持有公司 96,000,000 股，占总股本的 32.00%。"
        "按发行数量上限测算，本次发行完成后青澜控股有限公司的持股比例为 24.62%，仍为公司控股股东。",
    )
    first = answer("青澜机械控股股东持股比例是多少？", [plan])[0]
    assert "32.00" in first and "24.62" not in first, first
    first = answer("青澜机械定增发行数量上限是多少？", [plan])[0]
    assert "60,000,000" in first, first
    first = answer("发行后青澜控股持股比例是多少？", [plan])[0]
    assert "24.62" in first, first


def test_a_plan_named_by_its_title_and_a_modal_before_the_verb_of_reaching():
    # 定增 is what the plan's title names (向特定对象发行), not its page's text; 会 (will)
    # goes with 降到, the verb linking the thing to the level it reaches
    page = excerpt(
        "青澜机械股份有限公司 2026 年度向特定对象发行 A 股股票预案",
        "七、本次发行是否导致公司控制权发生变化\n"
        "按发行数量上限测算，本次发行完成后青澜控股有限公司的持股比例为 24.62%，仍为公司控股股东。",
    )
    first = answer("定增完成后青澜控股持股比例会降到多少", [page])[0]
    assert "24.62" in first, first


def test_a_table_named_by_what_it_lists_is_where_to_look():
    # 非经常性损益表 is the section 非经常性损益项目和金额: its 表 names where, not what
    report = excerpt(
        QUARTER,
        "（二）非经常性损益项目和金额\n"
        "单位：万元  币种：人民币\n\n"
        "非经常性损益项目 | 本期金额 | 年初至报告期末金额\n\n"
        "计入当期损益的政府补助 | 512.30 | 1,408.66\n\n"
        "委托他人投资或管理资产的损益 | 128.40 | 377.15",
    )
    first = answer("青澜机械非经常性损益表里，政府补助年初至报告期末金额是多少", [report])[0]
    assert "1,408.66" in first.split("\n")[0], first


def test_a_breakdown_asked_by_its_kind_is_the_tables_column_of_it():
    # 按产品分 is the table's 分产品: its rows are the kinds asked
    summary = excerpt(
        "青澜食品股份有限公司 2026 年半年度报告摘要",
        "（二）主营业务分析\n\n"
        "分产品 | 营业收入（万元） | 毛利率\n\n"
        "速冻水饺 | 58,426.35 | 31.01%\n\n"
        "速冻汤圆 | 32,384.17 | 26.30%\n\n"
        "合计 | 90,810.52 | 29.30%",
    )
    first = answer("青澜食品按产品分有哪几类？", [summary])[0]
    assert "速冻水饺" in first and "速冻汤圆" in first, first
