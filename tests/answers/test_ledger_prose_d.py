"""Prose an analyst asks of in the words of the trade: a bank's spread that narrows, a
board's new term, a fund that adds to sectors, the firm that reviewed a report, a broker's
note asked by its author's name (岚峰给…的目标价, 岚峰证券这篇综述是哪位分析师写的). One test
per rule, each on a document of its own (not the sets' fixtures), driven without a database
(tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt, not_found

BANK = excerpt(
    "汀州银行股份有限公司 2027 年半年度报告摘要",
    "三、经营情况讨论与分析\n"
    "报告期内，本行净利差为 1.62%，同比下降 0.09 个百分点；净息差为 1.80%，同比下降 0.11"
    " 个百分点。本行 2027 年半年度财务报告未经审计，安永华明会计师事务所对其进行了审阅。",
)


def test_a_spread_that_narrows_is_printed_as_a_fall():
    # (knowledge/vocabulary.py: 收窄 → 下降)
    first = answer("汀州银行上半年的净利差是多少，同比收窄了多少？", [BANK])[0]
    assert "1.62" in first and "0.09" in first, first
    assert "[[cite:" in first, first
    widened = excerpt(
        "汀州银行股份有限公司 2027 年半年度报告摘要",
        "三、经营情况讨论与分析\n报告期内，本行净利差为 1.62%，同比上升 0.05 个百分点。",
    )
    assert not_found(answer("汀州银行上半年净利差同比收窄了多少？", [widened]))
