"""How a question's words are read, from a stranger's questions the tuned sets did not
ask: a vocabulary word written with the entity's class word left to the name (…指数基金二季度
末规模 asks its 基金规模); the items' kind after a which-question's measure word
(前三大重仓是哪几只股票); a modal of what will be before a verb of the level reached
(会降到); the coverb of an instrument (用闲置募集资金做现金管理). One test per rule, each on
a document of its own (not the sets' fixtures), driven without a database
(tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt, not_found

FUND = excerpt(
    "汐岭中证500指数证券投资基金 2027 年第 1 季度报告",
    "§1 主要财务指标\n本报告期基金份额净值增长率为 3.12%。\n报告期末基金资产净值 86.4 亿元，"
    "跟踪误差 0.37%。\n\n§2 投资组合\n报告期末前三名股票投资明细：\n1. 汐岭电力，占基金资产净值 2.3%；\n"
    "2. 南屿化工，占基金资产净值 2.1%；\n3. 北湾医疗，占基金资产净值 1.8%。",
)


def test_a_word_written_with_the_names_class_word_is_that_word():
    # 规模 after the fund's name asks its 基金规模 (the vocabulary's word, stated as
    # 基金资产净值): the name took the word 基金 (reading.topic_phrases, classes)
    first = answer("汐岭中证500指数基金一季度末规模多少亿？", [FUND])[0]
    assert "86.4" in first, first


def test_a_word_no_class_word_makes_one_of_is_still_not_found():
    # 换手率 is no word of the vocabulary with 基金 before it, and nothing states it
    blocks = answer("汐岭中证500指数基金一季度末换手率多少？", [FUND])
    assert not_found(blocks), blocks[0]


def test_the_items_kind_after_a_which_question_joins_what_they_are():
    # 前三大重仓是哪几只股票 asks the 重仓股: 股票 names what the 前三大重仓 are
    # (reading._kind_joined)
    first = answer("汐岭中证500指数基金前三大重仓是哪几只股票？", [FUND])[0]
    for name in ("汐岭电力", "南屿化工", "北湾医疗"):
        assert name in first, first


PLAN = excerpt(
    "汐岭食品股份有限公司 2027 年度向特定对象发行 A 股股票预案",
    "截至本预案公告日，汐岭控股集团有限公司持有公司 45.10% 的股份，为公司控股股东。"
    "按发行数量上限测算，本次发行完成后汐岭控股集团有限公司的持股比例为 34.69%，仍为公司控股股东。",
)


def test_a_modal_of_what_will_be_goes_with_the_verb_of_the_level():
    # 会降到 is no thing asked: 会 goes with 降到 as 要 goes with 达到 (grammar.PREDICATE_AFTER)
    first = answer("汐岭食品发行完成后汐岭控股集团持股比例会降到多少？", [PLAN])[0]
    assert "34.69%" in first, first


RESOLUTION = excerpt(
    "汐岭新材料股份有限公司第三届董事会第九次会议决议公告",
    "（四）审议通过《关于使用部分闲置募集资金进行现金管理的议案》\n\n"
    "同意公司使用额度不超过人民币 2.8 亿元的闲置募集资金购买保本型理财产品，使用期限 12 个月。",
)


def test_the_coverb_of_an_instrument_is_no_word_of_the_thing():
    # 用闲置募集资金: what is used is 闲置募集资金 (reading._INSTRUMENT)
    first = answer("汐岭新材用闲置募集资金做现金管理的额度是多少", [RESOLUTION])[0]
    assert "2.8" in first, first


MEMO = excerpt(
    "汐岭医药调研纪要",
    "调研对象：汐岭医药董事会秘书\n\n要点一：公司内部预期全年生物药收入占比超过 35%。",
)


def test_what_is_expected_is_asked_either_way():
    # 预计 and 预期 are one verb of expecting (knowledge/vocabulary.py); 能到 is 能 and the
    # verb of the level reached (grammar.PREDICATE_AFTER)
    first = answer("汐岭医药预计全年生物药收入占比能到多少", [MEMO])[0]
    assert "35%" in first, first


def test_an_expectation_of_another_figure_is_not_found():
    blocks = answer("汐岭医药预计全年营业收入多少", [MEMO])
    assert not_found(blocks), blocks[0]


GAINS = excerpt(
    "汐岭智能装备股份有限公司 2027 年第一季度报告",
    "（二）非经常性损益项目和金额\n\n单位：万元\n\n非经常性损益项目 | 本期金额\n\n"
    "非流动性资产处置损益 | 21.30\n\n计入当期损益的政府补助 | 640.18",
)


def test_a_table_looked_in_is_where_to_look_not_what_is_asked():
    # 非经常性损益表里 names the table to look in (grammar.LIGHT_HEADS 表): what is
    # asked is the 政府补助 row
    first = answer("汐岭智能非经常性损益表里，政府补助本期金额是多少", [GAINS])[0]
    assert "640.18" in first, first


def test_a_row_the_table_looked_in_does_not_hold_is_not_found():
    blocks = answer("汐岭智能非经常性损益表里，捐赠支出本期金额是多少", [GAINS])
    assert not_found(blocks), blocks[0]


BY_PRODUCT = excerpt(
    "汐岭食品股份有限公司 2027 年半年度报告摘要",
    "（二）主营业务分析\n\n分产品 | 营业收入（万元） | 毛利率\n\n速冻水饺 | 88,410.20 | 31.20%\n\n"
    "速冻汤圆 | 41,207.66 | 27.45%\n\n合计 | 129,617.86 | 30.03%",
)


def test_a_grouping_asked_with_an_is_the_tables_grouping():
    # 按产品分 is how the table heads its rows (分产品): every row is answered
    # (reading._BREAKDOWN)
    first = answer("汐岭食品按产品分有哪几类？", [BY_PRODUCT])[0]
    assert "速冻水饺" in first and "速冻汤圆" in first, first


def test_a_grouping_the_excerpts_do_not_write_is_not_found():
    blocks = answer("汐岭食品按地区分有哪几类？", [BY_PRODUCT])
    assert not_found(blocks), blocks[0]


HOLDERS_NOTE = excerpt(
    "汐岭银行股份有限公司 2027 年半年度报告摘要",
    "前十名股东持股情况\n\n股东名称 | 股东性质 | 持股比例(%)\n\n汐岭市财政局 | 国家 | 10.12\n\n"
    "汐岭城投集团有限公司 | 国有法人 | 8.40\n\n汐岭交投集团有限公司 | 国有法人 | 6.95\n\n"
    "上述股东关联关系或一致行动的说明：汐岭城投集团有限公司和汐岭交投集团有限公司均为汐岭市财政局"
    "实际控制的企业。",
)


def test_the_things_a_which_question_picks_among_are_where_to_look():
    # 前十大股东里哪些是… picks among the holders: what is asked is the property that
    # follows, stated by the note under the table (reading._picked_among)
    first = answer("汐岭银行前十大股东里哪些是汐岭市财政局实际控制的企业？", [HOLDERS_NOTE])[0]
    assert "汐岭城投集团" in first and "汐岭交投集团" in first, first


def test_a_property_no_excerpt_states_is_not_found():
    blocks = answer("汐岭银行前十大股东里哪些是外资股东？", [HOLDERS_NOTE])
    assert not_found(blocks), blocks[0]


OWN_REPORT = excerpt(
    "汐岭精工股份有限公司 2027 年第一季度报告",
    "股东名称 | 股东性质 | 持股比例(%)\n\n汐岭控股集团有限公司 | 境内非国有法人 | 35.20\n\n"
    "澜岳量化优选股票型证券投资基金 | 其他 | 0.66",
)
BROKER_NOTE = excerpt(
    "汐岭精工（688001）2027 年一季报点评：订单饱满",
    "澜岳证券研究所 | 公司研究\n\n给予 2028 年 22 倍 PE，目标价 41.20 元，维持“买入”评级。\n\n"
    "**风险提示**：\n1. 下游需求不及预期；\n2. 原材料价格波动。",
)


def test_a_documents_owner_before_its_de_wrote_it():
    # 澜岳证券的汐岭点评 names the note by its broker, as 澜岳证券那篇 does: 澜岳证券 is who
    # wrote it, not a thing asked — the holder table naming a 澜岳 fund answers nothing
    # (reading._author_apart)
    first = answer("澜岳证券的汐岭点评给的目标价是多少", [OWN_REPORT, BROKER_NOTE])[0]
    assert "41.20" in first, first
    assert "澜岳量化" not in first and "0.66" not in first, first
    first = answer("澜岳证券的汐岭点评有哪些风险提示", [OWN_REPORT, BROKER_NOTE])[0]
    assert "下游需求不及预期" in first and "原材料价格波动" in first, first
    assert "澜岳量化" not in first, first


def test_a_line_of_nothing_but_a_bold_phrase_heads_its_list():
    # **风险提示**： heads the numbered lines under it (knowledge.text.SECTION_HEADING): its
    # * is no bullet and its colon no list of its own, so the items answer, not the heading
    note = excerpt(
        "汐岭精工（688001）2027 年一季报点评",
        "给予目标价 41.20 元。\n\n**风险提示**：\n1. 下游需求不及预期；\n2. 原材料价格波动。",
    )
    first = answer("汐岭精工点评有哪些风险提示", [note])[0]
    assert "下游需求不及预期" in first and "原材料价格波动" in first, first


def test_a_bold_line_saying_something_is_no_heading():
    # **投资评级：买入（维持）** states the rating: it answers, as a sentence does
    note = excerpt(
        "汐岭精工（688001）2027 年一季报点评", "**投资评级：买入（维持）**\n\n给予目标价 41.20 元。"
    )
    first = answer("汐岭精工点评的投资评级是什么", [note])[0]
    assert "买入" in first, first
