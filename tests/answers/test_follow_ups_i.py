"""Follow-ups that ask the earlier question's form of another thing: a share of a named
whole asked alone (占营收比例呢？) is the share of the thing the conversation is on; a thing
listed beside the earlier one (信用债呢？ after 利率债占净值多少？) is asked what it was asked.
One test per rule, each on a document of its own (not the sets' fixtures), driven without a
database (tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt, not_found

REPORT = "汐湾物流股份有限公司 2027 年半年度报告"
SEGMENTS = excerpt(
    REPORT,
    "报告期内，公司实现营业收入 92.4 亿元。快递收入 40.2 亿元，占营业收入的 43.5%；"
    "仓储收入 30.1 亿元，占营业收入的 32.6%；国际货代收入 22.1 亿元，占营业收入的 23.9%。",
)
REVENUE_ASKED = [{"question": "汐湾物流仓储业务收入是多少？", "answer": "30.1 亿元"}]


def test_a_share_of_a_named_whole_asked_alone_is_the_earlier_things_share():
    # 占营收比例呢？ names the whole (营收) and nothing it is of: the thing the conversation
    # is on, 仓储收入 — not the first share the excerpt writes (reading.share_asked_alone)
    first = answer("占营收比例呢？", [SEGMENTS], history=REVENUE_ASKED)[0]
    assert "32.6%" in first, first
    assert "43.5%" not in first and "23.9%" not in first, first


def test_a_share_within_a_named_whole_asked_alone_reads_alike():
    first = answer("在营业收入中占比多少？", [SEGMENTS], history=REVENUE_ASKED)[0]
    assert "32.6%" in first and "43.5%" not in first, first


def test_a_share_of_a_whole_the_excerpts_do_not_write_is_not_found():
    # the whole named must be stated: no share of 总资产 is written, so none is quoted
    blocks = answer("占总资产比例呢？", [SEGMENTS], history=REVENUE_ASKED)
    assert not_found(blocks), blocks[0]


FUND = "汐湾稳利债券型证券投资基金 2027 年第 2 季度报告"
ALLOCATION = excerpt(
    FUND,
    "报告期末，债券投资占基金资产净值的 95.1%，其中国债 38.6%、金融债 40.2%、企业债 16.3%。\n"
    "本基金适度增配高等级金融债，减持部分企业债以控制信用风险。",
)
SHARE_ASKED = [{"question": "汐湾稳利债基二季度末国债占净值多少？", "answer": "38.6%"}]


def test_a_thing_listed_beside_the_earlier_one_is_asked_the_same():
    # 金融债 is written in one list with 国债 (其中国债 38.6%、金融债 40.2%): 金融债呢？ asks
    # its share of 净值, a figure — not the sentence that merely mentions 金融债
    # (reading.sibling_swapped)
    first = answer("金融债呢？", [ALLOCATION], history=SHARE_ASKED)[0]
    assert "40.2%" in first, first
    assert "适度增配" not in first, first


def test_a_thing_not_listed_beside_it_is_not_swapped_in():
    # 可转债 is in no list with 国债: nothing states it, so it is not found
    blocks = answer("可转债呢？", [ALLOCATION], history=SHARE_ASKED)
    assert not_found(blocks), blocks[0]
