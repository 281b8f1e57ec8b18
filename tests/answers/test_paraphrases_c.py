"""The same question in other words: rules read from paraphrases of tuned questions (a full
name where a question had an abbreviation, a polite lead, a reordered phrase). One test per
rule, each on a document of its own (not the sets' fixtures), driven without a database
(tests/answers/reader.py)."""

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
