"""Comparisons and the document asked: two figures are compared only when each is the
measure asked, read from its own cell or sentence; the document a question names by its
kind answers it. One test per rule, each on a document of its own (not the sets'
fixtures), driven without a database (tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt

# -- a row with fewer cells than its header ---------------------------------------------------

REVIEW = excerpt(
    "城商行 2027 年中报综述：息差企稳",
    "表 1 覆盖银行主要指标（2027 年 6 月末）\n\n"
    "公司 | 拨备覆盖率 | 净息差\n\n"
    "汐川银行 | 301.25% | 1.71%\n\n"
    "溪口银行 | 1.52%\n\n"
    "岚湾银行 | 244.10% | 1.63%",
)


def test_a_row_shorter_than_its_header_states_no_column_by_its_place():
    # 溪口银行 | 1.52% under 公司 | 拨备覆盖率 | 净息差: one cell is missing and which one is
    # unknown, so 1.52% is not read as its 拨备覆盖率, and no difference is drawn from it
    # (structure.row_cell)
    for question in ("汐川银行和溪口银行拨备覆盖率谁更高", "汐川银行和溪口银行的拨备覆盖率哪个高"):
        blocks = answer(question, [REVIEW])
        text = "\n".join(blocks)
        assert "相差" not in text and "299.73" not in text, text
        assert "溪口银行（拨备覆盖率）：1.52%" not in text, text


def test_full_rows_of_one_table_are_still_compared():
    # controls: rows with every cell are read by their place and compared
    first = answer("汐川银行和岚湾银行拨备覆盖率谁更高", [REVIEW])[0]
    assert "301.25" in first and "244.10" in first, first
    assert "汐川银行高于岚湾银行，相差 57.15 个百分点" in first, first
    first = answer("岚湾银行的净息差是多少", [REVIEW])[0]
    assert "1.63%" in first, first
    assert f"[[cite:{REVIEW['id']}]]" in first, first
    first = answer("汐川银行拨备覆盖率是多少", [REVIEW])[0]
    assert "301.25%" in first, first


# -- the report a question names by its kind, not a note about it -----------------------------

QUARTERLY = excerpt(
    "临岚科技股份有限公司 2027 年第三季度报告",
    "三、其他提醒事项\n"
    "公司提请投资者关注以下风险：（1）下游光伏行业资本开支放缓，可能导致订单下降；"
    "（2）铜材价格波动，可能影响毛利率。\n\n"
    "报告期内，公司实现营业收入 6.12 亿元，同比增长 12.5%。",
)
ON_QUARTERLY = excerpt(
    "临岚科技（300999）2027 年三季报点评：订单高增，盈利能力提升",
    "潮汐证券研究所 | 公司研究 | 2027 年 10 月 28 日\n\n"
    "## 风险提示\n\n1. 海外市场拓展不及预期；\n2. 应收账款回收不及预期。",
)


def test_a_report_named_by_its_kind_is_not_a_note_about_it():
    # 临岚科技三季报的风险提示 asks the company's third-quarter report: a broker's
    # …三季报点评 names that report as what it is about, not as what it is, so its
    # 风险提示 list is not the answer (selection.is_note_on_named_report)
    for question in ("临岚科技三季报的风险提示有哪些", "临岚科技三季报的风险提示"):
        blocks = answer(question, [QUARTERLY, ON_QUARTERLY])
        text = "\n".join(blocks)
        assert "海外市场拓展不及预期" not in text, text
        assert f"[[cite:{ON_QUARTERLY['id']}]]" not in text, text


def test_the_note_named_with_its_kind_still_answers():
    # controls: the note named as a note (三季报点评) answers with its list; the report's
    # own figure is still the report's
    first = answer("临岚科技三季报点评的风险提示有哪些", [QUARTERLY, ON_QUARTERLY])[0]
    assert "海外市场拓展不及预期" in first and "应收账款回收不及预期" in first, first
    assert f"[[cite:{ON_QUARTERLY['id']}]]" in first, first
    first = answer("临岚科技三季报的营业收入是多少", [QUARTERLY, ON_QUARTERLY])[0]
    assert "6.12" in first and f"[[cite:{QUARTERLY['id']}]]" in first, first
    first = answer("临岚科技的风险提示有哪些", [ON_QUARTERLY])[0]
    assert "海外市场拓展不及预期" in first, first


# -- names a note's sections are headed by, coordinated with a head glued to the last ----------

SECTIONS = excerpt(
    "城商行 2027 年中报综述：息差企稳",
    "## 重点公司估值表\n\n公司 | 代码 | 评级 | 目标价（元）\n\n"
    "汐川银行 | 601111 | 买入 | 7.20\n\n溪口银行 | 601222 | 增持 | 9.80\n\n"
    "## 汐川银行：零售转型见效\n\n上半年营收同比增长 1.82%，归母净利润同比增长 4.15%。\n\n"
    "## 溪口银行：息差低位\n\n上半年营收同比下降 2.47%，归母净利润同比增长 0.86%。",
)


def test_names_a_notes_sections_are_headed_by_share_a_glued_head():
    # 汐川银行和溪口银行营收增速: each name heads a section of the note (## 溪口银行：…), so
    # each is an entity's name, and 营收增速 glued to the last is asked of both — not
    # 汐川银行 alone, answered by its row of the valuation table (reading._shared_head_apart)
    for question in ("汐川银行和溪口银行营收增速哪个高", "溪口银行和汐川银行营收增速分别是多少"):
        first = answer(question, [SECTIONS])[0]
        assert "1.82%" in first and "2.47%" in first, first
        assert "601111" not in first and "601222" not in first, first


def test_a_head_written_apart_is_still_asked_of_each_section():
    # controls: with 的, and a column of the table asked of both
    first = answer("汐川银行和溪口银行的营收增速分别是多少", [SECTIONS])[0]
    assert "1.82%" in first and "2.47%" in first, first
    first = answer("汐川银行和溪口银行目标价分别是多少", [SECTIONS])[0]
    assert "7.20" in first and "9.80" in first, first
    first = answer("溪口银行营收增速是多少", [SECTIONS])[0]
    assert "2.47%" in first and "1.82%" not in first, first


# -- one company, its report and a note on it, compared with another ---------------------------

LINLAN = excerpt(
    "临岚科技装备股份有限公司 2027 年第三季度报告",
    "三、经营情况\n1. 新签订单：年初至报告期末，公司新签订单 41.6 亿元，同比增长 23.5%；\n"
    "2. 研发投入：年初至报告期末研发费用 28,697.15 万元，占营业收入的 8.13%；\n"
    "3. 应收账款：报告期末应收账款 18.42 亿元，较上年度末增长 14.8%。",
)
LINLAN_NOTE = excerpt(
    "临岚科技（300999）2027 年三季报点评：订单高增",
    "潮汐证券研究所 | 公司研究 | 2027 年 10 月 28 日\n\n"
    "前三季度公司新签订单 41.6 亿元，维持“买入”评级，目标价 32.50 元。",
)
TINGLAN = excerpt(
    "汀岚食品股份有限公司 2027 年半年度报告摘要",
    "报告期内销售费用 2.63 亿元，同比增长 9.8%；研发投入 5,812.46 万元，占营业收入的 2.04%。",
)


def test_a_company_named_by_its_report_and_a_note_is_one_entity_compared():
    # 临岚科技 names the company's report (临岚科技装备) and a note on it (临岚科技): one
    # company, since the note's short name begins the report's — so the question coordinates
    # two entities and each gets its own line, 汀岚食品's 2.04% with it
    # (comparison.one_entity)
    question = "临岚科技和汀岚食品研发投入占营收比例分别是多少"
    first = answer(question, [LINLAN, LINLAN_NOTE, TINGLAN])[0]
    assert "8.13%" in first and "2.04%" in first, first
    assert first.index("8.13%") < first.index("2.04%"), first
    assert f"[[cite:{TINGLAN['id']}]]" in first.split("汀岚食品", 1)[1], first


def test_entities_of_one_generic_word_are_still_not_one():
    # controls: each company alone, and the two asked by their own names
    first = answer("汀岚食品研发投入占营收比例是多少", [LINLAN, LINLAN_NOTE, TINGLAN])[0]
    assert "2.04%" in first and "8.13%" not in first, first
    first = answer("临岚科技和汀岚食品研发投入分别是多少", [LINLAN, TINGLAN])[0]
    assert "28,697.15" in first and "5,812.46" in first, first


# -- a second clause naming another subject with 呢 ---------------------------------------------

YANLAN = excerpt(
    "岩岚冷链物流股份有限公司 2027 年半年度报告",
    "报告期末资产负债率为 46.8%，较上年末下降 2.1 个百分点。",
)
HAILAN = excerpt(
    "海岚冷链供应链股份有限公司 2027 年半年度报告摘要",
    "报告期内，公司实现营业收入 52.7 亿元，同比增长 6.3%。报告期末资产负债率为 55.2%。",
)


def test_another_subject_with_ne_asks_the_same_of_it():
    # 岩岚冷链资产负债率多少？海岚冷链呢: 呢 after another company's name alone asks again what
    # was just asked, of it — each company's figure on its own line, cited to its own report
    # (reading._asked_alike_of_another)
    first = answer("岩岚冷链资产负债率多少？海岚冷链呢", [YANLAN, HAILAN])[0]
    assert "46.8%" in first and "55.2%" in first, first
    assert f"[[cite:{HAILAN['id']}]]" in first.split("46.8%", 1)[1], first


def test_a_thing_with_ne_is_not_another_subject():
    # controls: the two asked together in one clause, one asked alone
    first = answer("岩岚冷链和海岚冷链资产负债率分别是多少", [YANLAN, HAILAN])[0]
    assert "46.8%" in first and "55.2%" in first, first
    first = answer("岩岚冷链资产负债率多少？", [YANLAN, HAILAN])[0]
    assert "46.8%" in first and "55.2%" not in first, first


def test_a_name_with_another_first_character_is_another_company():
    # 海岚冷链 is not 岩岚冷链物流: it writes all of the name but its first character, after
    # another — another company, whose report does not answer (selection.is_about)
    first = answer("海岚冷链资产负债率多少？", [YANLAN, HAILAN])[0]
    assert "55.2%" in first and "46.8%" not in first, first
    assert f"[[cite:{YANLAN['id']}]]" not in first, first
