"""List layouts financial documents use, read as lists: a "which ones" question gets every
item, whatever the markers, however the items are set out (one a line, inline, with text
between them, in a table). And the general synonyms of the shared vocabulary that the
reader states a question's topic through. Each on a document of its own, driven without a
database (tests/answers/reader.py)."""

import pytest

from agents.providers.structure import marker, units
from tests.answers.reader import answer, excerpt, not_found

REPORT = "松涛化工股份有限公司 2026 年半年度报告"
RISKS = ("原材料价格波动风险", "汇率波动风险", "行业竞争加剧风险")
AFTER = "\n第五节 其他事项\n公司无重大诉讼。"


def _risks(lines: str) -> dict:
    return excerpt(REPORT, "第四节 风险提示\n" + lines + AFTER)


@pytest.mark.parametrize(
    "lines",
    [
        # one a line, after a lead-in, with each kind of marker
        "公司面临的主要风险如下：\n一、原材料价格波动风险\n二、汇率波动风险\n三、行业竞争加剧风险",
        "公司面临的主要风险：\n（一）原材料价格波动风险\n（二）汇率波动风险\n（三）行业竞争加剧风险",
        "公司面临的主要风险：\n①原材料价格波动风险\n②汇率波动风险\n③行业竞争加剧风险",
        "公司面临的主要风险：\n● 原材料价格波动风险\n● 汇率波动风险\n● 行业竞争加剧风险",
        # 一、 lines with no lead-in: consecutive items of one kind are a list, not headings
        "一、原材料价格波动风险\n二、汇率波动风险\n三、行业竞争加剧风险",
        # bracketed markers inline, with no punctuation before them
        "主要风险包括（1）原材料价格波动风险（2）汇率波动风险（3）行业竞争加剧风险。",
        # each item a paragraph of its own
        "（一）原材料价格波动风险。主要原材料价格波动较大。\n（二）汇率波动风险。出口以美元结算。\n"
        "（三）行业竞争加剧风险。行业新增产能较多。",
        # each item a title followed by its text: item n joins the list of item n − 1
        "1、原材料价格波动风险\n主要原材料价格波动较大。\n2、汇率波动风险\n出口以美元结算。\n"
        "3、行业竞争加剧风险\n行业新增产能较多。",
    ],
)
def test_a_which_question_gets_every_item_of_a_list_whatever_its_layout(lines):
    first = answer("松涛化工面临哪些主要风险？", [_risks(lines)])[0]
    for risk in RISKS:
        assert risk in first, first
    assert "公司无重大诉讼" not in first


def test_section_headings_numbered_like_items_stay_headings():
    content = "一、冷链网络\n截至报告期末，冷链仓储面积 169.9 万平方米。\n二、业务结构\n冷链仓储收入 31.4 亿元。"
    kinds = [u.kind for u in units(content)]
    assert kinds == ["heading", "sentence", "heading", "sentence"]


def test_a_list_item_wrapped_over_lines_is_read_whole():
    content = "公司面临的主要风险：\n1. 原材料价格波动风险，\n可能推高生产成本；\n2. 汇率波动风险。"
    (lst,) = [u for u in units(content) if u.kind == "list"]
    assert lst.clauses == ["1. 原材料价格波动风险，可能推高生产成本；", "2. 汇率波动风险。"]


def test_markers_are_read_by_kind_and_ordinal():
    assert marker("（三）行业竞争") == ("pcn", 3)
    assert marker("十二、其他") == ("cn", 12)
    assert marker("③汇率") == ("circled", 3)
    assert marker("(2) 汇率") == ("pnum", 2)
    assert marker("1.2 亿元") is None  # a decimal is not a marker


def test_a_caption_leads_in_the_list_it_titles():
    holdings = excerpt(
        "星河成长混合型证券投资基金 2026 年第三季度报告",
        "报告期末前五名股票投资明细\n\n1. 北辰医药，占基金资产净值 8.9%；\n\n2. 澜海新能源，占 7.6%；\n\n"
        "3. 远帆半导体，占 6.1%。",
    )
    first = answer("星河成长混合基金的前五大重仓股有哪些？", [holdings])[0]
    for name in ("北辰医药", "澜海新能源", "远帆半导体"):
        assert name in first, first


CUSTOMERS = excerpt(
    REPORT,
    "表 2 前五名客户\n\n客户名称 | 销售额（亿元） | 占年度销售总额比例\n\n客户甲 | 5.2 | 6.9%\n\n"
    "客户乙 | 4.1 | 5.5%\n\n客户丙 | 3.3 | 4.4%\n\n合计 | 12.6 | 16.8%",
)


def test_a_which_question_over_a_table_gets_its_rows_but_the_total():
    first = answer("松涛化工前三大客户是哪些？", [CUSTOMERS])[0]
    for name in ("客户甲", "客户乙", "客户丙"):
        assert name in first, first
    assert "合计" not in first


def test_a_row_is_read_with_its_table_s_caption():
    first = answer("松涛化工前五名客户的销售额分别是多少？", [CUSTOMERS])[0]
    for figure in ("5.2", "4.1", "3.3"):
        assert figure in first, first


# -- synonyms a filing prints instead (knowledge/vocabulary.py BUILTIN) -------------------

FILING = excerpt(
    REPORT,
    "公司主营环氧树脂与涂料。报告期内公司净利润率 7.2%。\n"
    "四、利润分配\n公司拟向全体股东每 10 股派发现金红利 2.80 元（含税）。\n"
    "本次募集资金拟投资于以下项目：\n1. 年产 10 万吨环氧树脂项目\n2. 研发中心建设项目",
)
FUND = excerpt(
    "松涛稳健债券型证券投资基金 2026 年第三季度报告",
    "报告期末基金份额净值为 1.0831 元。\n"
    "报告期末，债券投资占基金资产净值的 95.1%，其中利率债 50.2%、信用债 44.9%。",
)


@pytest.mark.parametrize(
    "question, source, expected",
    [
        ("松涛化工的分红方案是什么？", FILING, "2.80"),
        ("松涛化工的主营业务有哪些？", FILING, "环氧树脂与涂料"),
        ("松涛化工募投项目有哪些？", FILING, "研发中心建设项目"),
        ("松涛化工的净利率是多少？", FILING, "7.2%"),
        ("松涛化工的主要产品有哪些？", FILING, "环氧树脂与涂料"),
        ("松涛稳健债券基金期末单位净值是多少？", FUND, "1.0831"),
        ("松涛稳健债券基金的债券持仓分成哪几类，各占多少？", FUND, "44.9"),
    ],
)
def test_a_topic_is_stated_by_what_filings_print_instead(question, source, expected):
    first = answer(question, [source])[0]
    assert expected in first, first


def test_a_synonym_does_not_answer_what_the_document_does_not_state():
    assert not_found(answer("松涛稳健债券基金的分红是多少？", [FUND]))


# -- question grammar -----------------------------------------------------------------


@pytest.mark.parametrize(
    "question",
    [
        "松涛价值精选基金的净值增长率比基准高多少？",
        # a compared phrase holding 比较 itself
        "松涛价值精选基金净值增长率比业绩比较基准高多少？",
    ],
)
def test_compared_with_is_grammar_the_figures_answer(question):
    fund = excerpt(
        "松涛价值精选混合型证券投资基金 2026 年第 3 季度报告",
        "§1 主要财务指标\n本报告期基金份额净值增长率为 2.14%，同期业绩比较基准收益率为 1.77%。",
    )
    first = answer(question, [fund])[0]
    assert "2.14" in first and "1.77" in first, first


def test_a_vocabulary_word_keeps_its_light_head():
    # 基金规模 is 基金资产净值, not 基金 (which a holding's 占基金资产净值 also writes)
    fund = excerpt(
        "松涛价值精选混合型证券投资基金 2026 年第 3 季度报告",
        "松涛价值精选混合型证券投资基金 2026 年第 3 季度报告\n\n"
        "§1 主要财务指标\n本报告期基金份额净值增长率为 2.14%，同期业绩比较基准收益率为 1.77%。"
        "报告期末基金资产净值 12.4 亿元，股票仓位为 85.0%。\n\n"
        "§2 投资组合报告\n"
        "报告期末基金前三名股票投资明细：1. 松涛化工，占基金资产净值 6.6%；2. 岚山物流，占基金资产净值 5.1%。",
    )
    first = answer("松涛价值精选基金规模多大？", [fund])[0]
    assert "12.4" in first and "6.6" not in first, first


def test_a_piece_the_excerpts_write_keeps_its_edge_characters():
    # 在研管线 is what is looked for (not 研管线); a count names no pipeline: not found
    report = excerpt(REPORT, "截至报告期末，公司在研管线 12 项，其中 3 项处于三期临床。")
    first = answer("松涛化工有哪些在研管线？", [report])[0]
    assert not_found([first]) and "「在研管线」" in first, first


@pytest.mark.parametrize(
    "question", ["松涛化工的风险提示包括什么？", "松涛化工的风险提示包含哪些？"]
)
def test_what_it_includes_asks_every_item(question):
    lines = (
        "公司面临的主要风险如下：\n一、原材料价格波动风险\n二、汇率波动风险\n三、行业竞争加剧风险"
    )
    first = answer(question, [_risks(lines)])[0]
    for risk in RISKS:
        assert risk in first, first


def test_what_a_whole_is_made_of_is_asked_by_its_parts():
    report = excerpt(
        REPORT,
        "报告期内，环氧树脂收入 33.1 亿元，占营业收入的 51.2%；涂料收入 21.4 亿元，占营业收入的 33.1%；"
        "固化剂收入 9.8 亿元，占营业收入的 15.2%。",
    )
    first = answer("松涛化工的收入由哪几部分构成？", [report])[0]
    for part in ("环氧树脂收入", "涂料收入", "固化剂收入"):
        assert part in first, first


def test_a_follow_up_naming_another_entity_asks_it_the_earlier_question():
    songtao = excerpt(REPORT, "报告期内，公司实现营业收入 75.2 亿元，同比增长 6.1%。")
    lanshan = excerpt(
        "岚山物流股份有限公司 2026 年半年度报告摘要",
        "岚山物流股份有限公司 2026 年半年度报告摘要\n报告期内，公司实现营业收入 41.9 亿元。",
    )
    history = [{"question": "松涛化工上半年营业收入是多少？", "answer": "75.2 亿元"}]
    first = answer("岚山物流呢？", [songtao, lanshan], history=history)[0]
    assert "41.9" in first and "75.2" not in first, first
    assert "接上一问「松涛化工上半年营业收入是多少？」，按岚山物流理解" in first, first


def test_an_expense_ratio_is_stated_as_the_expense_s_share_of_revenue():
    report = excerpt(
        REPORT, "第二季度研发费用 3.1 亿元，占营业收入的 8.2%。报告期末资产负债率为 41.3%。"
    )
    first = answer("松涛化工研发费用率是多少？", [report])[0]
    assert "8.2%" in first, first


def test_a_hedge_on_the_figure_asked_is_grammar():
    report = excerpt(REPORT, "涂料业务毛利率保持在 21% 左右。")
    first = answer("松涛化工涂料业务毛利率大约多少？", [report])[0]
    assert "21%" in first, first
