"""A stranger's questions over filings and notes of the kind the ledger fixture holds (a
bank's interim report, a broker's sector note, a board's resolutions, a fund's quarterly
report), asked in an analyst's words. One test per rule, each on a document of its own (not
the sets' fixtures), driven without a database (tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt, not_found

# -- a forecast year ----------------------------------------------------------------------

NOTE = excerpt(
    "岩川证券 券商板块 2026 年中报综述：经纪回暖",
    "## 重点公司估值表\n\n"
    "公司 | 代码 | 评级 | 目标价（元） | 2026E EPS（元） | 2026E PE（倍）\n\n"
    "汀洲证券 | 600901 | 买入 | 18.40 | 1.12 | 14.2\n\n"
    "霞浦证券 | 600902 | 增持 | 11.60 | 0.74 | 13.5\n\n"
    "资料来源：Wind，岩川证券研究所（2026E 为岩川证券预测）",
)


def test_a_year_marked_e_is_the_forecast_asked():
    # 2026E is the note's forecast for 2026: EPS预测 is its column, not a word the table lacks
    first = answer("霞浦证券2026年EPS预测是多少？", [NOTE])[0]
    assert "0.74" in first and "1.12" not in first, first
    assert f"[[cite:{NOTE['id']}]]" in first, first
    # a forecast of a figure the table has no column of stays "not found"
    assert not_found(answer("霞浦证券2026年营收预测是多少？", [NOTE]))


# -- a resolution's content -----------------------------------------------------------------


def test_a_clause_of_purpose_is_no_segment_the_sentence_is_about():
    # 为适应公司业务发展需要 is an adverbial of purpose: its 业务 is no segment's head, and the
    # sentence answers what the resolution adjusts
    board = excerpt(
        "溪岩科技股份有限公司第三届董事会第九次会议决议公告",
        "二、董事会会议审议情况\n\n"
        "（三）审议通过《关于调整公司组织架构的议案》\n\n"
        "为适应公司业务发展需要，同意设立储能事业部，并将原质量部更名为质量管理中心。",
    )
    first = answer("溪岩科技组织架构怎么调整？", [board])[0]
    assert "设立储能事业部" in first, first
    assert f"[[cite:{board['id']}]]" in first, first


def test_what_a_section_heading_names_is_said_first_under_it():
    # asked in its heading's words, a resolution is answered by the sentence that opens its
    # section, not by the vote every section closes with
    board = excerpt(
        "溪岩科技股份有限公司第三届董事会第十次会议决议公告",
        "二、董事会会议审议情况\n\n"
        "（一）审议通过《关于变更公司经营范围的议案》\n\n"
        "同意增加储能系统集成、充电设施运营及技术咨询服务，并相应修订《公司章程》相关条款。\n\n"
        "表决结果：同意 7 票，反对 0 票，弃权 0 票。\n\n"
        "（二）审议通过《关于召开临时股东大会的议案》\n\n"
        "同意于 2026 年 11 月 3 日召开临时股东大会。\n\n"
        "表决结果：同意 7 票，反对 0 票，弃权 0 票。",
    )
    first = answer("溪岩科技经营范围怎么变更？", [board])[0]
    assert "储能系统集成" in first and "表决结果" not in first, first
    assert f"[[cite:{board['id']}]]" in first, first


# -- a change of the whole, a part named after it --------------------------------------------

LOANS = excerpt(
    "汀川银行股份有限公司 2026 年半年度报告摘要",
    "三、经营情况讨论与分析\n"
    "截至报告期末，本行各项贷款余额 2,164.20 亿元，较上年末增加 181.35 亿元，\n"
    "其中公司贷款 1,402.77 亿元，个人贷款 652.18 亿元，票据贴现 109.25 亿元。",
)


def test_the_company_of_a_legal_name_qualifies_no_part_asked():
    # 公司 of 汀川银行股份有限公司 is the bank's name: 公司贷款 is named only after the change,
    # which is the whole's (各项贷款余额…较上年末增加 181.35 亿元)
    assert not_found(answer("汀川银行公司贷款较上年末增长多少？", [LOANS]))
    whole = answer("汀川银行贷款较上年末增加多少？", [LOANS])[0]
    assert "181.35" in whole, whole
    assert f"[[cite:{LOANS['id']}]]" in whole, whole


# -- two names compared by a question word before their shared head ---------------------

SECTOR = excerpt(
    "岩川证券 农商行 2026 年中报综述：资产质量分化",
    "## 汀洲农商行：拨备充足\n\n"
    "上半年营收同比增长 2.16%。不良率 1.12%，较年初下降 0.02 个百分点。\n\n"
    "## 霞浦农商行：息差承压\n\n"
    "上半年营收同比下降 1.35%。不良率 1.47%，较年初上升 0.06 个百分点。",
)


def test_who_of_two_names_asks_the_head_of_each():
    # 谁的 / 哪家 between the names coordinated and the head they share is the comparison's
    # grammar: each one's 不良率 is quoted, from its own section
    for question in (
        "汀洲农商行和霞浦农商行谁的不良率高？",
        "汀洲农商行和霞浦农商行哪家不良率高？",
    ):
        first = answer(question, [SECTOR])[0]
        assert "1.12%" in first and "1.47%" in first, (question, first)
        assert first.index("汀洲农商行") < first.index("1.12%") < first.index("霞浦农商行"), first
        assert f"[[cite:{SECTOR['id']}]]" in first, first


# -- the year before's column, asked by its year -------------------------------------------

_INTERIM = "汀川银行股份有限公司 2026 年半年度报告摘要"
INCOME = excerpt(
    _INTERIM,
    "（一）主要会计数据和财务指标\n单位：人民币百万元\n"
    "项目 2026 年 1—6 月 2025 年 1—6 月 本期比上年同\n 期增减(%)\n"
    "营业收入 5,214.30 4,987.62 4.54\n归属于本行股东的净利润 1,902.45 1,811.07 5.05",
)
BALANCES = excerpt(
    _INTERIM,
    "单位：人民币百万元\n\n项目 | 本期末 | 上年末 | 本期末比上年末增减(%)\n\n"
    "资产总额 | 451,207.33 | 420,918.64 | 7.20\n\n吸收存款总额 | 318,442.10 | 296,035.87 | 7.57",
)
CAPITAL = excerpt(
    _INTERIM,
    "（三）资本充足率\n单位：人民币百万元、%\n"
    "项目 本期末（2026 年 6 月 30 日） 上年末（2025 年 12 月 31 日）\n 并表 非并表 并表 非并表\n"
    "资本充足率 13.02 12.86 13.31 13.12\n"
    "风险加权资产合计 342,815.20 334,107.55 327,640.18 319,552.04",
)


def test_the_year_ends_column_before_a_reports_own_is_the_year_before_s():
    # 2025年末 of a 2026 interim report is its 上年末 column: the row of 资产总额, not another
    # table's row whose header writes 2025 年 12 月 31 日 (风险加权资产合计)
    docs = [INCOME, BALANCES, CAPITAL]
    first = answer("汀川银行2025年末资产总额是多少？", docs)[0]
    assert "420,918.64" in first and "327,640.18" not in first, first
    assert f"[[cite:{BALANCES['id']}]]" in first, first
    # a column that writes its date answers it too
    capital = answer("汀川银行2025年末资本充足率是多少？", docs)[0]
    assert "（上年末（2025年12月31日）并表）：13.31" in capital, capital
    # the end of the report's own year is no column of an interim report
    assert not_found(answer("汀川银行2026年末资产总额是多少？", docs))


# -- two clauses, each its own question ---------------------------------------------------


def test_clauses_each_asking_their_own_thing_are_answered_each():
    # 是谁？…多少？ ask a person and a number: the sentence of the phone number states the
    # secretary only by its section's heading and names no one; the appointment names her
    board = excerpt(
        "溪岩科技股份有限公司第三届董事会第一次会议决议公告",
        "（四）审议通过《关于聘任公司董事会秘书的议案》\n\n"
        "经董事长提名，同意聘任柯晚晴女士为公司董事会秘书，任期与第三届董事会任期一致。"
        "联系电话：0591-8765 4321，电子邮箱：ir@xiyan-tech.com。\n\n"
        "表决结果：同意 7 票，反对 0 票，弃权 0 票。",
    )
    first = answer("溪岩科技的董事会秘书是谁？联系电话多少？", [board])[0]
    assert "柯晚晴" in first and "0591-8765 4321" in first, first
    assert first.index("柯晚晴") < first.index("0591-8765 4321"), first
    assert f"[[cite:{board['id']}]]" in first, first


# -- a typeset table's rows of ratios -------------------------------------------------------

TYPESET = excerpt(
    "汀川银行股份有限公司 2026 年半年度报告摘要",
    "（一）主要会计数据和财务指标\n单位：人民币百万元\n"
    "项目 2026 年 1—6 月 2025 年 1—6 月 本期比上年同\n 期增减(%)\n"
    "营业收入 5,214.30 4,987.62 4.54\n"
    "基本每股收益（元/股） 0.41 0.39 5.13\n"
    "加权平均净资产收益率（年化，%） 11.86 12.20 下降 0.34 个百分点\n"
    "成本收入比（%） 29.14 30.02 下降 0.88 个百分点\n"
    "第 1 页 共 4 页",
)


def test_a_ratios_row_of_a_typeset_table_is_a_row_under_its_header():
    # the comma inside 加权平均净资产收益率（年化，%） is the label's, not a sentence's, and
    # a change written in words (下降 0.88 个百分点) is its change column's figure: the rows
    # stay the table's, read under its header's 本期比上年同期增减
    first = answer("汀川银行成本收入比同比变化多少？", [TYPESET])[0]
    assert "下降 0.88 个百分点" in first and "表格" in first, first
    assert f"[[cite:{TYPESET['id']}]]" in first, first
    roe = answer("汀川银行加权平均净资产收益率较上年变化多少？", [TYPESET])[0]
    assert "下降 0.34 个百分点" in roe and "表格" in roe, roe


# -- a table's row pointed to --------------------------------------------------------------


def test_a_row_pointed_to_by_its_name_is_asked_whole():
    # 那一行 points to the row the name asked of labels: grammar, no thing the table lacks
    first = answer("重点公司估值表中霞浦证券那一行各项数据是多少？", [NOTE])[0]
    assert "霞浦证券 | 600902 | 增持 | 11.60 | 0.74 | 13.5" in first, first
    assert "汀洲证券 |" not in first, first
    assert f"[[cite:{NOTE['id']}]]" in first, first
