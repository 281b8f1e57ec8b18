"""The same question in other words: rules read from paraphrases of tuned questions (a full
name where a question had an abbreviation, a polite lead, a reordered phrase). One test per
rule, each on a document of its own (not the sets' fixtures), driven without a database
(tests/answers/reader.py)."""

from agents.providers.grammar import WHICH
from tests.answers.reader import answer, excerpt, not_found

BANK = excerpt(
    "汐川银行股份有限公司 2027 年半年度报告",
    "一、经营情况\n报告期内，本行实现营业收入 41.26 亿元，同比增长 2.15%；实现归属于本行股东的"
    "净利润 12.84 亿元，同比增长 4.73%。不良贷款率 1.21%，较上年末下降 0.03 个百分点。",
)


def test_a_figure_asked_by_its_full_name_is_stated_by_another_full_name_of_the_vocabulary():
    # 归属于母公司股东的净利润 (the consolidated statements' name) over a bank's 归属于本行股东
    # 的净利润: the vocabulary's one figure (归母净利润), not a 母公司 the bank never names
    # (reading._figure_named_in_full)
    first = answer("汐川银行上半年归属于母公司股东的净利润同比增长了多少？", [BANK])[0]
    assert "4.73" in first, first
    assert f"[[cite:{BANK['id']}]]" in first, first
    # the floor still holds for a figure the report does not state
    assert not_found(answer("汐川银行上半年归属于母公司股东的扣非净利润是多少？", [BANK]))


HOLDERS = excerpt(
    "汐川银行股份有限公司 2027 年半年度报告",
    "前十名股东持股情况\n单位：股\n\n"
    "股东名称 | 股东性质 | 持股比例(%) | 持股总数 | 质押或冻结\n\n"
    "汐川市财政局 | 国家 | 14.36 | 615,200,000 | 无\n\n"
    "汐川港口集团有限公司 | 国有法人 | 8.02 | 343,600,000 | 无\n\n"
    "汐川能源投资有限公司 | 国有法人 | 5.91 | 253,180,000 | 质押 90,000,000\n\n"
    "临浦纺织股份有限公司 | 境内非国有法人 | 2.44 | 104,530,000 | 无",
)


def test_a_top_n_count_asked_as_a_bare_noun_phrase_lists_the_ranked_rows():
    # 帮我查一下…的前三大股东 asks what 前三大股东是谁 asks: a count of named things that ends
    # the question, nothing asked after it, asks which ones (grammar.WHICH)
    first = answer("帮我查一下汐川银行的前三大股东", [HOLDERS])[0]
    for holder in ("汐川市财政局", "汐川港口集团有限公司", "汐川能源投资有限公司"):
        assert holder in first, first
    assert f"[[cite:{HOLDERS['id']}]]" in first, first
    # a figure of the ranked things asked as a noun phrase is not which ones
    assert not WHICH.search("汐川银行前五大客户销售额占营收比例")
    # a figure asked after the count is still a figure (多少), not the names
    figure = answer("汐川银行第一大股东持股比例是多少？", [HOLDERS])[0]
    assert "14.36" in figure, figure


DATES = excerpt(
    "临溪精工股份有限公司 2026 年年度权益分派实施公告",
    "三、相关日期\n股份类别 | 股权登记日 | 最后交易日 | 除权（息）日 | 现金红利发放日\n"
    "A 股 | 2027/6/11 | － | 2027/6/12 | 2027/6/12",
)


def test_a_space_between_a_letter_and_a_chinese_character_is_typesetting():
    # A股的股权登记日 (A股 a phrase of its own after 的) over a table's 「A 股」
    # (reading.states)
    first = answer("临溪精工A股的股权登记日是哪天？", [DATES])[0]
    assert "2027/6/11" in first, first
    assert f"[[cite:{DATES['id']}]]" in first, first
    # the letter is still exact: B股 is not the A 股 row
    assert not_found(answer("临溪精工B股的股权登记日是哪天？", [DATES]))
