"""The same question in other words: each rule here was found by asking a tuned question
of the evaluation sets the way another analyst would (reordered, abbreviated, a colloquial
ending), on a document of its own. Driven without a database (tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt, not_found

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


def test_a_verb_of_where_a_thing_is_asks_the_place():
    profile = excerpt(
        "岳川储能股份有限公司 2026 年半年度报告",
        "第一节 公司简介\n公司主营液流电池与储能系统集成，总部位于长沙，在株洲设有生产基地。",
    )
    for question in (
        "岳川储能的总部设在哪？",
        "岳川储能总部设在哪个城市？",
        "岳川储能总部坐落在哪里",
    ):
        first = answer(question, [profile])[0]
        assert "长沙" in first and f"[[cite:{profile['id']}]]" in first, (question, first)


def test_a_verb_of_reaching_a_stage_before_it_is_grammar():
    pipeline = excerpt(
        "云杉生物医药股份有限公司 2026 年半年度报告",
        "第三节 经营情况讨论与分析\n截至报告期末，公司在研项目 37 项，其中 6 项处于三期临床阶段，"
        "11 项处于二期临床阶段。",
    )
    for question in ("云杉生物进入三期临床的项目有几个", "处于三期临床的项目，云杉生物有几个？"):
        first = answer(question, [pipeline])[0]
        assert "6 项处于三期临床" in first and f"[[cite:{pipeline['id']}]]" in first, first
    # the stage is still what is asked: one the report does not write is not found
    assert not_found(answer("云杉生物进入一期临床的项目有几个", [pipeline]))


def test_a_segment_and_its_measure_are_one_phrase_with_or_without_de():
    margins = excerpt(
        "汀州电气股份有限公司 2025 年年度报告",
        "二、主营业务分析\n表 2 营业收入、营业成本及毛利率（按产品）\n"
        "产品 | 营业收入（亿元） | 营业成本（亿元） | 毛利率 | 毛利率比上年增减\n"
        "储能变流器 | 48.2 | 35.1 | 27.2% | 增加 1.3 个百分点\n"
        "工业电源 | 31.6 | 24.9 | 21.2% | 减少 0.8 个百分点\n"
        "合计 | 79.8 | 60.0 | 24.8% | 增加 0.5 个百分点\n"
        "储能变流器业务受益于海外储能装机增长，收入同比增长 18.5%；工业电源业务受下游需求疲弱影响，"
        "收入同比下降 3.2%。",
    )
    for question in (
        "汀州电气储能变流器业务的毛利率是多少？",
        "储能变流器业务的毛利率，汀州电气的是多少？",
    ):
        first = answer(question, [margins])[0]
        # the row's margin, not the segment's sentence about its revenue growth
        assert "27.2%" in first and "18.5" not in first, first
