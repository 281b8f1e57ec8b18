"""Tables and measure words a fifth hand's questions ask of: a row of a region asked as a
片区, a column asked by a word of the trade (冷库面积 for 冷链仓储面积), a count asked with a
vehicle's measure word (多少辆 over 冷藏车辆 … 台), a share whose part and whole are glued by
占. One test per rule, each on a document of its own (not the sets' fixtures), driven
without a database (tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt, not_found

NETWORK = excerpt(
    "汀岚冷运股份有限公司 2026 年半年度报告",
    "## 一、冷链网络\n\n"
    "截至报告期末，公司冷链仓储面积合计 51.9 万平方米，公司主要服务华中与东北区域的"
    "乳品客户。\n\n"
    "表 1 分区域冷链网络（报告期末）\n\n"
    "区域 | 冷链仓储面积（万平方米） | 干线线路（条） | 冷藏车辆（台） | 仓库出租率\n\n"
    "华中 | 31.6 | 58 | 604 | 90.1%\n\n"
    "西北 | 20.3 | 41 | 388 | 84.2%\n\n"
    "合计 | 51.9 | 99 | 992 | 88.0%\n\n"
    "## 二、经营情况\n\n"
    "报告期内，公司实现营业收入 40.2 亿元；公司前五大客户合计销售额占营业收入的 18.3%。",
)

FLEET = excerpt(
    "岚桥冷链股份有限公司 2026 年半年度报告摘要",
    "二、经营情况\n\n"
    "截至报告期末，公司冷链仓储面积 44.7 万平方米，开通干线线路 126 条，冷藏车辆 1,512 台。",
)


# -- a count's measure word -----------------------------------------------------------------


def test_a_vehicles_measure_word_counts_the_vehicles():
    # 多少辆 is a count with its measure word (not 辆冷藏车, a thing asked), and 辆 is no unit
    # the answer must write: 冷藏车辆 1,512 台 counts the same trucks
    first = answer("岚桥冷链有多少辆冷藏车？", [FLEET])[0]
    assert "1,512" in first, first
    assert f"[[cite:{FLEET['id']}]]" in first, first
    # what is asked is 冷藏车, as the non-answer over a report without trucks says
    storage = excerpt(
        "岚桥冷链股份有限公司 2026 年半年度报告摘要", "公司冷链仓储面积 44.7 万平方米。"
    )
    blocks = answer("岚桥冷链有多少辆冷藏车？", [storage])
    assert not_found(blocks) and "「冷藏车」" in blocks[0], blocks


def test_having_before_a_count_names_no_doer_of_an_act():
    # 有 before 几台 is the verb of having (like 有多少), not an act whose doer the document
    # need only name somewhere: the region before it is asked of the row that answers, so a
    # region the table has no row of is not answered by another row or the total
    assert not_found(answer("东北区域汀岚冷运有几台冷藏车？", [NETWORK]))
    first = answer("西北区域汀岚冷运有几台冷藏车？", [NETWORK])[0]
    assert "西北（冷藏车辆（台））：388" in first, first


# -- a region and a column in the trade's words ---------------------------------------------


def test_a_region_asked_as_a_pian_qu_is_the_tables_region():
    # 片区 is the vocabulary's 区域: the row 西北 under the header 区域
    first = answer("西北片区汀岚冷运有几台冷藏车", [NETWORK])[0]
    assert "西北（冷藏车辆（台））：388" in first, first
    assert f"[[cite:{NETWORK['id']}]]" in first, first


def test_a_cold_store_is_the_reports_cold_chain_storage():
    # 冷库面积 is the report's 冷链仓储面积 (the vocabulary): the region's cell answers
    first = answer("汀岚冷运华中区域的冷库面积有多大？", [NETWORK])[0]
    assert "华中（冷链仓储面积（万平方米））：31.6" in first, first
    assert f"[[cite:{NETWORK['id']}]]" in first, first


# -- a share's part and whole glued by 占 -----------------------------------------------------


def test_the_part_of_a_share_is_what_comes_before_its_verb():
    # 前五大客户销售额占营收比例: the part is 前五大客户销售额, 营收 the whole — the sentence
    # writing the part and its share of 营业收入 answers
    first = answer("汀岚冷运前五大客户销售额占营收比例", [NETWORK])[0]
    assert "18.3%" in first, first
    assert f"[[cite:{NETWORK['id']}]]" in first, first
    # another part of the same whole is still not stated by it (its head, 利润, is not)
    assert not_found(answer("汀岚冷运前五大客户利润占营收比例", [NETWORK]))


# -- a product line in an analyst's abbreviation --------------------------------------------

PRODUCTS = excerpt(
    "岳川精密股份有限公司 2025 年年度报告摘要",
    "## 二、分产品经营情况\n\n"
    "产品 | 营业收入（亿元） | 营业成本（亿元） | 毛利率\n\n"
    "医疗器械 | 33.8 | 21.5 | 36.4%\n\n"
    "工业控制 | 18.9 | 13.7 | 27.5%\n\n"
    "合计 | 52.7 | 35.2 | 33.2%",
)


def test_an_industry_abbreviated_names_the_product_row():
    # 工控 is the vocabulary's 工业控制: 工控产品的营业成本 is that row's cell, not the total
    first = answer("岳川精密工控产品的营业成本是多少亿？", [PRODUCTS])[0]
    assert "工业控制（营业成本（亿元））：13.7" in first, first
    assert f"[[cite:{PRODUCTS['id']}]]" in first, first


# -- a holding's weight ----------------------------------------------------------------------

HOLDINGS = excerpt(
    "岚溪中证500指数证券投资基金 2026 年第 2 季度报告",
    "§2 投资组合\n\n"
    "报告期末前三名股票投资明细：\n"
    "1. 汀川化工，占基金资产净值 2.7%；\n"
    "2. 岚溪电力，占基金资产净值 2.2%；\n"
    "3. 北岙医疗，占基金资产净值 1.9%。",
)


def test_a_holdings_weight_is_its_share_of_the_funds_net_assets():
    # 权重 asks a share (the vocabulary: 占基金资产净值), so the item's 占基金资产净值 2.2%
    # states it; the ordinal picks the second item of the ranked list
    first = answer("岚溪中证500的第二大重仓股是哪只，权重多少？", [HOLDINGS])[0]
    assert "2. 岚溪电力，占基金资产净值 2.2%" in first, first
    assert "汀川化工" not in first, first
    assert f"[[cite:{HOLDINGS['id']}]]" in first, first


# -- a follow-up naming a qualifier of what was asked before -------------------------------

CAPITAL = excerpt(
    "溪岭银行股份有限公司 2026 年半年度报告摘要",
    "（三）资本充足率\n单位：人民币百万元、%\n\n"
    "项目 | 本期末 | 本期末 | 上年末 | 上年末\n\n"
    " | 并表 | 非并表 | 并表 | 非并表\n\n"
    "核心一级资本充足率 | 8.96 | 8.71 | 9.08 | 8.83\n\n"
    "一级资本充足率 | 10.41 | 10.17 | 10.52 | 10.30\n\n"
    "资本充足率 | 12.77 | 12.49 | 12.95 | 12.61",
)


def test_a_follow_up_naming_a_qualifier_asks_the_qualified_thing_of_the_same_base():
    # 核心一级呢？ after …并表口径的资本充足率: the excerpts write 核心一级 before 资本充足率, so
    # it asks 核心一级资本充足率, on the base asked before (并表), not a thing of its own
    first = "溪岭银行 6 月末并表口径的资本充足率多少？"
    history = [{"question": first, "answer": answer(first, [CAPITAL])[0]}]
    assert "资本充足率（本期末并表）：12.77" in history[0]["answer"], history
    blocks = answer("核心一级呢？", [CAPITAL], history)
    lead = "**回答**（溪岭银行）：核心一级资本充足率（本期末并表）：8.96"
    assert blocks[0].startswith(lead), blocks
    assert f"[[cite:{CAPITAL['id']}]]" in blocks[0], blocks


# -- a fund's excess return over its benchmark, by stage and class ---------------------------

STAGES = excerpt(
    "岚汀稳进混合型证券投资基金 2026 年第三季度报告",
    "3.2 基金净值表现\n\n"
    "3.2.1 本报告期基金份额净值增长率及其与同期业绩比较基准收益率的比较\n\n"
    "岚汀稳进混合 A\n\n"
    "阶段 | 份额净值增长率① | 份额净值增长率标准差② | 业绩比较基准收益率③ | "
    "业绩比较基准收益率标准差④ | ①－③ | ②－④\n\n"
    "过去一年 | 9.62% | 0.88% | 6.15% | 0.70% | 3.47% | 0.18%\n\n"
    "自基金合同生效起至今 | 27.40% | 1.02% | 15.96% | 0.81% | 11.44% | 0.21%\n\n"
    "岚汀稳进混合 C\n\n"
    "阶段 | 份额净值增长率① | 份额净值增长率标准差② | 业绩比较基准收益率③ | "
    "业绩比较基准收益率标准差④ | ①－③ | ②－④\n\n"
    "过去一年 | 9.18% | 0.88% | 6.15% | 0.70% | 3.03% | 0.18%\n\n"
    "自基金合同生效起至今 | 25.33% | 1.02% | 15.96% | 0.81% | 9.37% | 0.21%",
)


def test_a_header_of_references_is_read_as_the_columns_it_refers_to():
    # ①－③ is 份额净值增长率① less 业绩比较基准收益率③: the excess over the benchmark
    # (超额收益, the vocabulary), which 相对业绩基准 qualifies in one cell; 成立以来 is the
    # stage 自基金合同生效起至今
    first = answer("岚汀稳进 A 成立以来相对业绩基准的超额收益是多少？", [STAGES])[0]
    assert "自基金合同生效起至今（①－③）：11.44%" in first, first
    assert f"[[cite:{STAGES['id']}]]" in first, first
    # the standard deviations' difference (②－④) is no excess return
    assert "0.21" not in first.split("表格：")[0], first


def test_what_a_figure_is_relative_to_is_asked_apart_from_it():
    # 相对基准的超额收益: 相对 is a coverb, 基准 what the excess is measured against — not a
    # phrase 相对基准 of which the table writes half
    first = answer("岚汀稳进 A 过去一年相对基准的超额收益是多少？", [STAGES])[0]
    assert "过去一年（①－③）：3.47%" in first, first
    assert f"[[cite:{STAGES['id']}]]" in first, first
    # (the letter apart names the A table: the C table's row of the stage is not quoted)
    assert "3.03" not in first, first


def test_a_class_letter_written_apart_names_its_table():
    # 岚汀稳进 C 成立以来…: the letter standing apart asks the C class's table, not the A's
    first = answer("岚汀稳进 C 成立以来的超额收益是多少？", [STAGES])[0]
    assert "自基金合同生效起至今（①－③）：9.37%" in first, first
    assert "11.44" not in first, first
