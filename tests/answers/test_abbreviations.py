"""Short forms read by how Chinese abbreviations are made (agents/providers/abbreviations.py):
a term asked short (扣非净利, 董秘) is the term the excerpt writes in full, and an entity's
name written short (赤松稳利债基) is the name — with no list of abbreviations. One test per
rule, each on a document of its own (not the sets' fixtures), driven without a database
(tests/answers/reader.py)."""

from agents.providers.abbreviations import abbreviated
from tests.answers.reader import answer, excerpt, not_found

REPORT = excerpt(
    "赤松化工股份有限公司 2026 年第三季度报告",
    "一、主要财务数据\n\n"
    "报告期内，公司实现营业收入 21.4 亿元，同比增长 9.6%；归属于母公司股东的净利润 3.1 亿元，"
    "同比增长 12.2%；扣除非经常性损益后的净利润 2.7 亿元，同比增长 8.4%。\n\n"
    "二、股东信息\n\n"
    "报告期末普通股股东总数 18,604 户；应收账款周转天数为 63.5 天。",
)

FUND = excerpt(
    "赤松稳利收益债券型证券投资基金 2026 年第 3 季度报告",
    "§4 投资组合报告\n\n"
    "报告期末，本基金债券投资占基金资产净值的 94.1%，其中利率债 38.2%、信用债 52.6%。",
)


def test_a_term_asked_short_is_the_term_written_in_full():
    # 扣非净利 keeps 扣…非…净利 of 扣除非经常性损益后的净利润: the excerpt states it
    first = answer("赤松化工Q3扣非净利是多少？", [REPORT])[0]
    assert "2.7" in first and "扣除非经常性损益后的净利润" in first, first
    assert f"[[cite:{REPORT['id']}]]" in first, first


def test_a_term_the_vocabulary_does_not_hold_is_read_short_alike():
    # 应收周转天数: 应收(账款)周转天数
    first = answer("赤松化工应收周转天数多少天？", [REPORT])[0]
    assert "63.5" in first, first
    assert (
        abbreviated("归母净利", "归属于母公司股东的净利润 3.1 亿元") == "归属于母公司股东的净利润"
    )


def test_a_name_written_short_is_the_name():
    # 赤松稳利债基: the name's start, then 债基 for the rest's 债券…基金
    first = answer("赤松稳利债基三季度末利率债占净值多少？", [FUND])[0]
    assert "38.2" in first, first
    assert not first.startswith("未在"), first


def test_a_short_forms_last_word_is_its_head():
    # 净利 stands for 净利润, never for 净利润增长率: 率 does not begin 增长率
    assert abbreviated("净利率", "净利润增长率 12.2%") == ""
    assert abbreviated("毛利率", "毛利润同比增长率为 6.1%") == ""
    growth = excerpt(
        "赤松化工股份有限公司 2026 年第三季度报告",
        "报告期内，公司归属于母公司股东的净利润同比增长率为 12.2%。",
    )
    assert not_found(answer("赤松化工的净利率是多少？", [growth]))


def test_a_short_form_is_read_inside_one_noun_phrase():
    # no figure, punctuation or conjunction between a term's words: 净资产 is not 净利润和资产
    assert abbreviated("净资产", "净利润和资产") == ""
    assert abbreviated("净资产", "净利润 3.1 亿元，资产总额 80 亿元") == ""
    assert abbreviated("净资产", "归属于母公司股东的净资产") == ""  # written whole: no short form


def test_the_vocabulary_decides_its_own_words():
    # 营收 is the vocabulary's 营业收入; a report's 营业外收入 does not state it
    other = excerpt(
        "赤松化工股份有限公司 2026 年第三季度报告",
        "报告期内，公司营业外收入 0.3 亿元，主要为政府补助。",
    )
    assert not_found(answer("赤松化工Q3营收多少？", [other]))
