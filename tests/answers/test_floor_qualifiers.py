"""The floor on the thing asked, qualifiers included (docs/extractive-provider.md, the
relevance floor): an answer comes only from a unit that states the topic *and* what the
question qualifies it by — the holder, the segment, the period, a change or a level. A
qualifier the unit does not state, or contradicts, refuses the unit: "not found" with no
citation rather than a cited sentence about something else. Each rule on a document of its
own, driven without a database (tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt, not_found

# -- a time between a thing and its measure does not make two things asked -------------

NOTE = excerpt(
    "城投证券 2026 年城商行中报综述：息差企稳",
    "# 城投证券 2026 年城商行中报综述：息差企稳\n\n"
    "## 重点公司估值表\n\n"
    "公司 | 评级 | 目标价（元） | 2026E PB（倍）\n\n"
    "松江银行 | 买入 | 7.20 | 0.65\n\n"
    "柳川农商行 | 增持 | 9.80 | 0.58\n\n"
    "## 松江银行：规模稳健\n\n"
    "上半年营收同比增长 2.10%，归母净利润同比增长 5.02%。净息差 1.80%，同比下降 0.10 个百分点。\n\n"
    "## 柳川农商行：零售见效\n\n"
    "上半年营收同比增长 1.40%，归母净利润同比增长 3.30%；零售贷款占比提升至 40.2%。",
)


def test_a_time_between_a_holder_and_its_measure_does_not_ask_them_apart():
    # 柳川农商行|上半年|净息差 is one thing: its section states no 净息差 (the note's
    # headline after 综述： — in its title or its first heading — is what the note says,
    # not what a sentence or a row under it states), and 松江银行's does not state 柳川's
    blocks = answer("柳川农商行上半年净息差是多少？", [NOTE])
    assert not_found(blocks), blocks
    first = answer("松江银行上半年净息差是多少？", [NOTE])[0]
    assert "1.80" in first and "[[cite:" in first, first


FORECAST = excerpt(
    "澜岸光学股份有限公司 2026 年度业绩预告",
    "一、本期业绩预告情况\n"
    "预计 2026 年度实现营业收入 320,000.00 万元至 340,000.00 万元。\n"
    "上年同期为 268,415.77 万元。\n"
    "三、本期业绩变化的主要原因\n"
    "1. 报告期内，微型投影镜头需求快速增长，公司该类产品出货量同比增长约 85%，成为业绩增长的"
    "主要来源；",
)


def test_a_product_and_its_revenue_with_a_time_between_are_one_thing_asked():
    # 微型投影镜头|去年|收入: the item names the product but no revenue, and 上年同期为 … 万元
    # is the company's revenue, not the product's
    blocks = answer("澜岸光学微型投影镜头去年收入多少？", [FORECAST])
    assert not_found(blocks), blocks


# -- a colloquial verb of the vocabulary names its figure only as the head -----------------

INSURER = excerpt(
    "岱屿保险集团股份有限公司 2026 年年度报告摘要",
    "二、主要经营指标\n\n单位：人民币百万元\n\n项目 | 本年 | 上年 | 变动（%）\n\n"
    "原保险保费收入 | 96,432.57 | 90,908.14 | 6.08\n\n"
    "归属于母公司股东的净利润 | 7,215.08 | 6,736.51 | 7.10",
)


def test_a_one_character_verb_before_a_noun_is_part_of_its_name():
    # 已赚保费 (earned premium) is not 保费 earned as 净利润: 赚 → 净利润 is the vocabulary's
    # for 赚了多少, where the verb is what is asked
    blocks = answer("岱屿保险2026年的已赚保费是多少？", [INSURER])
    assert not_found(blocks), blocks
    first = answer("岱屿保险2026年赚了多少？", [INSURER])[0]
    assert "7,215.08" in first and "[[cite:" in first, first


# -- a level asked is not answered by its change --------------------------------------------

REASONS = excerpt(
    "汐湾电子股份有限公司 2026 年度业绩预告",
    "一、本期业绩预告情况\n"
    "预计 2026 年度实现归属于上市公司股东的净利润 52,000.00 万元至 56,000.00 万元。\n"
    "三、本期业绩变化的主要原因\n"
    "1. 报告期内，公司马来西亚生产基地于 2026 年二季度全面投产，规模效应显现，综合毛利率较上年"
    "同期提升约 2.3 个百分点；\n"
    "2. 期间费用率同比下降 0.8 个百分点。",
)


def test_a_level_asked_is_not_answered_by_a_change_of_it():
    # 综合毛利率是多少 asks the margin; 较上年同期提升约 2.3 个百分点 is only its change
    blocks = answer("汐湾电子2026年综合毛利率是多少？", [REASONS])
    assert not_found(blocks), blocks
    first = answer("汐湾电子2026年综合毛利率同比提升了多少？", [REASONS])[0]
    assert "2.3" in first and "[[cite:" in first, first


# -- the quarter alone is the reporting period's column ------------------------------------

QUARTER = excerpt(
    "汀岸机械股份有限公司 2026 年第三季度报告",
    "一、主要财务数据\n\n单位：万元\n\n"
    "项目 | 本报告期 | 本报告期比上年同期增减变动幅度(%) | 年初至报告期末 | "
    "年初至报告期末比上年同期增减变动幅度(%)\n\n"
    "营业收入 | 58,645.32 | 18.27 | 152,918.06 | 15.64\n\n"
    "经营活动产生的现金流量净额 | 不适用 | 不适用 | 21,287.55 | 36.42",
)


def test_the_quarter_alone_asked_is_the_reporting_periods_column():
    # 单季 asks 本报告期 (the quarter's three months): 不适用 there is no figure, and the
    # year to date's 21,287.55 is not the quarter's
    blocks = answer("汀岸机械第三季度单季经营活动现金流净额是多少？", [QUARTER])
    assert not_found(blocks), blocks
    first = answer("汀岸机械第三季度单季营业收入是多少？", [QUARTER])[0]
    assert "58,645.32" in first and "[[cite:" in first, first
    first = answer("汀岸机械年初至报告期末经营活动现金流净额是多少？", [QUARTER])[0]
    assert "21,287.55" in first and "[[cite:" in first, first


# -- a sibling the section's heading names in the qualifier's place ---------------------------

SEGMENTS = excerpt(
    "岱屿保险集团股份有限公司 2026 年年度报告摘要",
    "五、经营情况讨论与分析\n"
    "（一）寿险业务\n"
    "2026 年，岱屿人寿实现新业务价值 28.46 亿元，同比增长 13.93%。"
    "13 个月保单继续率为 94.3%，25 个月保单继续率为 89.7%。\n"
    "（二）财产险业务\n"
    "岱屿财险实现原保险保费收入 152.17 亿元，同比增长 5.36%。综合成本率为 97.6%。",
)


def test_a_qualifier_whose_sibling_the_sections_heading_names_is_contradicted():
    # 财险 asked under （一）寿险业务: the heading names 寿险 where 财险 stands
    blocks = answer("岱屿财险13个月保单继续率是多少？", [SEGMENTS])
    assert not_found(blocks), blocks
    first = answer("岱屿人寿13个月保单继续率是多少？", [SEGMENTS])[0]
    assert "94.3" in first and "[[cite:" in first, first


BANKS = excerpt(
    "城投证券 2026 年农商行中报综述：息差企稳",
    "## 松江农商行：规模稳健\n\n"
    "上半年营收同比增长 2.10%。净息差 1.80%，同比下降 0.10 个百分点。\n\n"
    "## 柳川农商行：零售见效\n\n"
    "上半年营收同比增长 1.40%；零售贷款占比提升至 40.2%。",
)


def test_a_holder_whose_sibling_the_sections_heading_names_is_contradicted():
    # 柳川农商行 asked under ## 松江农商行: 农商行 is stated, and the heading names 松江 where
    # 柳川 stands
    blocks = answer("柳川农商行上半年净息差是多少？", [BANKS])
    assert not_found(blocks), blocks
    first = answer("松江农商行上半年净息差是多少？", [BANKS])[0]
    assert "1.80" in first and "[[cite:" in first, first


# -- a change is of what its sentence names before it ----------------------------------------

ORDERS = excerpt(
    "汀岸机械股份有限公司 2026 年第三季度报告",
    "三、其他提醒事项\n"
    "1. 新签订单：年初至报告期末，公司新签订单 41.6 亿元，同比增长 23.5%，其中海外订单 12.3 亿元，"
    "占新签订单的 29.6%；\n"
    "2. 订单结构：前三季度新签订单同比增长 23.5%，海外订单占比提升至 29.6%。",
)
ORDERS_EACH = excerpt(
    "汐湾电子股份有限公司 2026 年第三季度报告",
    "三、其他提醒事项\n"
    "新签订单：年初至报告期末，公司新签订单 21.6 亿元，同比增长 13.5%，其中海外订单 6.3 亿元，"
    "同比增长 40.1%。",
)


def test_a_change_written_before_a_part_is_named_is_the_wholes():
    # 同比增长 23.5% is of 新签订单: 海外 is named only after it (其中海外订单…, 海外订单占比…)
    blocks = answer("汀岸机械海外新签订单同比增长了多少？", [ORDERS])
    assert not_found(blocks), blocks
    first = answer("汀岸机械新签订单同比增长了多少？", [ORDERS])[0]
    assert "23.5" in first and "[[cite:" in first, first
    first = answer("汐湾电子海外新签订单同比增长了多少？", [ORDERS_EACH])[0]
    assert "40.1" in first and "[[cite:" in first, first


# -- a longer term of the vocabulary names another figure --------------------------------------


def test_a_longer_term_of_the_vocabulary_is_not_the_term_it_ends_with():
    # where the note writes both, 扣非归母净利润 (after non-recurring items) is another figure
    # than the 归母净利润 it ends with
    note = excerpt(
        "松屿证券：汀岸机械 2026 年三季报点评",
        "2025 年公司归母净利润 4.21 亿元。2026 年前三季度扣非归母净利润 3.49 亿元，同比增长 21.77%。",
    )
    blocks = answer("汀岸机械2026年前三季度归母净利润是多少？", [note])
    assert not_found(blocks), blocks
    first = answer("汀岸机械2026年前三季度扣非归母净利润是多少？", [note])[0]
    assert "3.49" in first and "[[cite:" in first, first


# -- the quarter alone is not stated by a quarterly report's title ---------------------------

NOTE_TITLE = "汀岸机械（603871）2026 年三季报点评：订单高增"
EVENT = excerpt(
    NOTE_TITLE,
    "## 核心观点\n\n**事件**：公司发布 2026 年三季报，前三季度实现营业收入 35.29 亿元，同比增长 "
    "15.64%；归母净利润 3.76 亿元，同比增长 19.08%。",
)
FORECAST_TABLE = excerpt(
    NOTE_TITLE,
    "## 盈利预测与估值\n\n指标 | 2025A | 2026E | 2027E\n\n"
    "营业收入（百万元） | 4,236 | 4,902 | 5,781\n\n归母净利润（百万元） | 421 | 503 | 612",
)
REPORT_TABLE = excerpt(
    "汀岸机械股份有限公司 2026 年第三季度报告",
    "一、主要财务数据\n\n单位：万元\n\n"
    "项目 | 本报告期 | 本报告期比上年同期增减变动幅度(%) | 年初至报告期末 | "
    "年初至报告期末比上年同期增减变动幅度(%)\n\n"
    "归属于上市公司股东的净利润 | 14,203.85 | 22.41 | 37,615.40 | 19.08",
)


def test_the_quarter_alone_is_not_stated_by_a_quarterly_reports_title():
    # 单季 over a 三季报点评: its 前三季度 sentence is the year to date's, and its forecast
    # table's columns (2025A, 2026E) are whole years — the title's 三季报 states neither
    for excerpts in ([EVENT], [FORECAST_TABLE]):
        blocks = answer("汀岸机械第三季度单季归母净利润是多少？", excerpts)
        assert not_found(blocks), blocks
    first = answer("汀岸机械第三季度单季归母净利润是多少？", [EVENT, FORECAST_TABLE, REPORT_TABLE])[
        0
    ]
    assert "14,203.85" in first and f"[[cite:{REPORT_TABLE['id']}]]" in first, first
    assert "3.76" not in first and "503" not in first, first
    # (a quarter asked without 单季: still no column of a whole year answers it)
    blocks = answer("汀岸机械第三季度归母净利润是多少？", [FORECAST_TABLE])
    assert not_found(blocks), blocks
    first = answer("汀岸机械2026年归母净利润预测是多少？", [FORECAST_TABLE])[0]
    assert "503" in first and "[[cite:" in first, first
