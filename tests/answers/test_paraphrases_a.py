"""The same question in other words: each rule here was found by asking a tuned question
of the evaluation sets the way another analyst would (reordered, abbreviated, a colloquial
ending), on a document of its own. Driven without a database (tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt

REPORT = "澜岸食品股份有限公司 2026 年第三季度报告"


def test_what_a_report_mentions_is_all_it_lists():
    risks = excerpt(
        REPORT,
        "第四节 风险提示\n"
        "1. 原料奶价格上涨可能压缩乳制品毛利。\n"
        "2. 新建工厂产能爬坡不及预期。\n"
        "3. 出口业务占比 18%，汇率波动可能影响公司业绩。",
    )
    for question in ("澜岸食品的三季报里提示了什么风险", "澜岸食品三季报提到了什么风险？"):
        first = answer(question, [risks])[0]
        assert "原料奶" in first and "产能爬坡" in first and "汇率波动" in first, first
