"""Tables as an analyst asks of them (docs/extractive-provider.md, "Tables"): a balance at a
period's end (6月末, 三季度末), a capital table's two bases asked as 母公司口径 / 合并口径, a
fund's share classes (A类, C份额) as columns, a performance table's period rows, a fund's
facts table — each rule on a small document of its own, driven without a database
(tests/answers/reader.py)."""

from knowledge.periods import periods_in
from tests.answers.reader import answer, excerpt, not_found

BANK = "松岭银行股份有限公司 2026 年半年度报告摘要"
QUALITY = excerpt(
    BANK,
    "（二）资产质量\n单位：人民币百万元、%\n\n"
    "项目 | 本期末 | 上年末 | 比上年末增减\n\n"
    "不良贷款余额 | 2,716.40 | 2,588.02 | 增加 128.38\n\n"
    "不良贷款率 | 1.12 | 1.15 | 下降 0.03 个百分点",
)
CAPITAL = excerpt(
    BANK,
    "（三）资本充足率\n单位：人民币百万元、%\n\n"
    "项目 | 本期末 | 本期末 | 上年末 | 上年末\n\n"
    " | 并表 | 非并表 | 并表 | 非并表\n\n"
    "核心一级资本充足率 | 9.87 | 9.51 | 9.93 | 9.66\n\n"
    "一级资本充足率 | 11.02 | 10.74 | 11.20 | 10.95",
)


# -- a balance at a period's end ---------------------------------------------------------


def test_a_months_end_is_the_balance_date_of_the_report_period_ending_then():
    assert periods_in("6月末") == {"H1"}
    assert periods_in("九月底") == {"Q3"}
    assert periods_in("2026年12月末") == {"2026", "FY"}
    assert periods_in("三季度末") == {"Q3"} and periods_in("Q3末") == {"Q3"}
    assert periods_in("5月末") == frozenset()  # the end of no report period


def test_a_balance_asked_at_a_months_end_is_the_half_year_reports_period_end():
    blocks = answer("松岭银行6月末不良贷款余额多少？", [QUALITY])
    assert "2,716.40" in blocks[0] and f"[[cite:{QUALITY['id']}]]" in blocks[0]
    # 3月末 is a first quarter's: a half-year report does not state it
    assert not_found(answer("松岭银行3月末不良贷款余额多少？", [QUALITY]))


# -- a capital table's two bases ---------------------------------------------------------


def test_the_parent_banks_basis_is_the_non_consolidated_column():
    blocks = answer("松岭银行6月末母公司口径的核心一级资本充足率是多少？", [CAPITAL])
    assert blocks[0].startswith("**回答**（松岭银行）：核心一级资本充足率（本期末非并表）：9.51")
    assert f"[[cite:{CAPITAL['id']}]]" in blocks[0]
    blocks = answer("松岭银行合并口径的一级资本充足率是多少？", [CAPITAL])
    assert blocks[0].startswith("**回答**（松岭银行）：一级资本充足率（本期末并表）：11.02")


# -- a fund's holdings -------------------------------------------------------------------

FUND = "松岭成长优选混合型证券投资基金 2026 年第三季度报告"
HOLDINGS = excerpt(
    FUND,
    "5.2 报告期末按公允价值占基金资产净值比例大小排序的前十名股票投资明细\n\n"
    "序号 | 股票代码 | 股票名称 | 数量（股） | 公允价值（元） | 占基金资产净值比例（%）\n\n"
    "1 | 688101 | 石岩光电 | 2,400,000 | 192,000,000.00 | 8.12\n\n"
    "2 | 300655 | 栖霞材料 | 5,100,000 | 160,650,000.00 | 6.79\n\n"
    "3 | 601877 | 松岭银行 | 30,000,000 | 150,300,000.00 | 6.35",
)


def test_a_holdings_market_value_is_its_fair_value():
    blocks = answer("松岭成长优选持有的栖霞材料市值是多少？", [HOLDINGS])
    assert blocks[0].startswith(
        "**回答**（松岭成长优选混合基金）：栖霞材料（公允价值（元））：160,650,000.00"
    )
    assert f"[[cite:{HOLDINGS['id']}]]" in blocks[0]


def test_two_clauses_asking_figures_of_one_row_are_answered_by_its_two_cells():
    blocks = answer("松岭成长优选持有的栖霞材料市值是多少，占净值比例多少？", [HOLDINGS])
    first = blocks[0]
    assert "160,650,000.00" in first and "6.79" in first
    assert "松岭银行" not in first and "6.35" not in first  # not another row's share
    assert f"[[cite:{HOLDINGS['id']}]]" in first


# -- a fund's share classes and its performance stages -----------------------------------

INDICATORS = excerpt(
    FUND,
    "3.1 主要财务指标（单位：人民币元）\n\n"
    "主要财务指标 | 报告期（2026 年 7 月 1 日—2026 年 9 月 30 日） |\n\n"
    " | 松岭成长优选混合 A | 松岭成长优选混合 C\n\n"
    "1.本期利润 | 120,400,000.00 | 8,600,000.00\n\n"
    "2.期末基金份额净值 | 1.2210 | 1.2034",
)
PERFORMANCE = excerpt(
    FUND,
    "3.2 基金净值表现\n\n"
    "3.2.1 本报告期基金份额净值增长率及其与同期业绩比较基准收益率的比较\n\n"
    "松岭成长优选混合 A\n\n"
    "阶段 | 份额净值增长率① | 业绩比较基准收益率② | ①－②\n\n"
    "过去三个月 | 5.20% | 4.10% | 1.10%\n\n"
    "过去一年 | 11.35% | 8.02% | 3.33%\n\n"
    "松岭成长优选混合 C\n\n"
    "阶段 | 份额净值增长率① | 业绩比较基准收益率② | ①－②\n\n"
    "过去三个月 | 5.05% | 4.10% | 0.95%\n\n"
    "过去一年 | 10.71% | 8.02% | 2.69%\n\n"
    "4.2 报告期内基金的业绩表现\n\n"
    "本报告期松岭成长优选混合 A 基金份额净值增长率为 5.20%，同期业绩比较基准收益率为 4.10%。",
)


def test_a_share_class_asked_by_its_letter_and_lei_is_that_classs_column():
    blocks = answer("松岭成长优选C类的期末基金份额净值是多少？", [INDICATORS])
    assert (
        "期末基金份额净值（报告期（2026 年 7 月 1 日—2026 年 9 月 30 日）松岭成长优选混合 C）：1.2034"
        in (blocks[0])
    )
    assert f"[[cite:{INDICATORS['id']}]]" in blocks[0]


def test_a_stage_asked_as_near_one_year_is_the_row_past_one_year():
    blocks = answer("松岭成长优选A份额近一年的净值增长率是多少？", [PERFORMANCE])
    assert "过去一年（份额净值增长率①）：11.35%" in blocks[0]
    assert "10.71" not in blocks[0]  # the C class's row
    assert f"[[cite:{PERFORMANCE['id']}]]" in blocks[0]


def test_a_question_word_inside_a_name_the_excerpts_write_is_part_of_the_name():
    # 比较 (compare) of 业绩比较基准收益率: one thing asked, the column of that name
    blocks = answer("松岭成长优选A份额过去一年的业绩比较基准收益率是多少？", [PERFORMANCE])
    assert "过去一年（业绩比较基准收益率②）：8.02%" in blocks[0]


def test_follow_ups_go_on_with_the_stage_asked_before():
    first = "松岭成长优选A份额近一年的净值增长率是多少？"
    history = [{"question": first, "answer": answer(first, [PERFORMANCE])[0]}]
    # another class of the same stage (C类呢？), then the benchmark of that stage (同期)
    blocks = answer("C类呢？", [PERFORMANCE], history)
    assert blocks[0].startswith(
        "**回答**（松岭成长优选混合基金）：过去一年（份额净值增长率①）：10.71%"
    )
    history.append({"question": "C类呢？", "answer": blocks[0]})
    blocks = answer("同期的业绩比较基准收益率呢？", [PERFORMANCE], history)
    assert "过去一年（业绩比较基准收益率②）：8.02%" in blocks[0]
    assert "4.10" not in blocks[0]  # not the quarter's, which the prose calls 同期
    assert f"[[cite:{PERFORMANCE['id']}]]" in blocks[0]


# -- a balance against the year's start --------------------------------------------------

LOANS = excerpt(
    BANK,
    "三、经营情况讨论与分析\n"
    "截至报告期末，本行各项存款余额 2,804.10 亿元，同比增长 6.2%。普惠型小微企业贷款余额"
    " 301.26 亿元，较上年末增长 11.5%。",
)


def test_a_change_since_the_years_start_is_a_period_of_its_own():
    assert periods_in("比年初增长了多少") == {"BOY"}
    assert periods_in("较上年末增长 14.2%") == {"BOY"}
    assert periods_in("本期末比上年末增减(%)") == {"BOY"}
    assert periods_in("比上年同期") == {"YOY"}


def test_inclusive_small_business_loans_against_the_years_start():
    blocks = answer("松岭中报普惠小微贷款余额多少，比年初增长了多少？", [LOANS])
    assert blocks[0] == (
        "**回答**（松岭银行）：普惠型小微企业贷款余额 301.26 亿元，较上年末增长 11.5%。"
        f" [[cite:{LOANS['id']}]]"
    )
    # a change on the year before (同比) is not one since the year's start
    assert not_found(answer("松岭银行各项存款余额比年初增长了多少？", [LOANS]))


# -- a fund's facts table ----------------------------------------------------------------

FACTS = excerpt(
    FUND,
    "§2 基金产品概况\n\n"
    "基金简称 | 松岭成长优选混合\n\n"
    "基金主代码 | 016201\n\n"
    "报告期末基金份额总额 | 1,204,330,118.20 份\n\n"
    "基金经理 | 林叙白\n\n"
    "下属分级基金的基金简称 | 松岭成长优选混合 A / 松岭成长优选混合 C\n\n"
    "下属分级基金的交易代码 | 016201 / 016202",
)


def test_a_value_per_class_is_quoted_with_the_row_naming_the_classes():
    blocks = answer("松岭成长优选C份额的交易代码是多少？", [FACTS])
    assert blocks[0] == (
        "**回答**（松岭成长优选混合基金）：表格：基金简称 | 松岭成长优选混合\n"
        "下属分级基金的基金简称 | 松岭成长优选混合 A / 松岭成长优选混合 C\n"
        "  下属分级基金的交易代码 | 016201 / 016202"
        f" [[cite:{FACTS['id']}]]"
    )
    # a class the fund does not have
    assert not_found(answer("松岭成长优选E份额的交易代码是多少？", [FACTS]))


def test_each_clause_asking_a_figure_is_one_cell_of_the_row():
    # 年末股票投资 and 账面价值 are asked in one clause: no one cell of 债券投资's row states
    # them together (上年末占比 writes 年末, 期末账面价值 the value), whatever each states apart
    investments = excerpt(
        "松岭保险集团股份有限公司 2026 年年度报告摘要",
        "（四）投资资产\n单位：人民币百万元\n\n"
        "投资品种 | 期末账面价值 | 占比（%） | 上年末占比（%）\n\n"
        "定期存款 | 58,317.42 | 7.62 | 8.31\n\n"
        "债券投资 | 502,516.87 | 65.28 | 63.87",
    )
    question = "松岭保险年末股票投资的账面价值是多少，占投资资产的比例多少？"
    assert not_found(answer(question, [investments]))


def test_a_follow_up_goes_on_with_a_row_only_where_it_asks_something_of_it():
    statement = excerpt(
        BANK,
        "项目 | 本期 | 上年同期\n\n归属于本行股东的净利润 | 2,052.18 | 1,971.46\n\n"
        "（四）投资建议\n我们预测公司 2026 年归母净利润 41.2 亿元，当前股价对应 PE 5.3 倍。",
    )
    first = "松岭银行上半年归母净利润是多少？"
    history = [{"question": first, "answer": answer(first, [statement])[0]}]
    blocks = answer("对应的PE呢？", [statement], history)
    # (归母净利润 named the row through the vocabulary; PE is asked of no row of that table)
    assert blocks[0].startswith("**回答**（松岭银行）：我们预测公司 2026 年归母净利润 41.2 亿元")
    assert "2,052.18" not in blocks[0]


def test_a_non_answer_names_the_class_as_asked():
    blocks = answer("松岭成长优选A份额过去五年净值增长率是多少？", [PERFORMANCE])
    assert not_found(blocks)
    assert "没有一段写明「A份额过去五年净值增长率」" in blocks[0]
