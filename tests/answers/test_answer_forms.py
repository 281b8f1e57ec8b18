"""What a question asks its answer to be, apart from what it asks about: a classifier after
the question word (什么级别, 哪个等级) names the answer's form, as a unit asked (多少万股)
does (docs/extractive-provider.md, "Reading the question")."""

from tests.answers.reader import answer, excerpt, not_found

TITLE = "澄平保险集团股份有限公司 2026 年年度报告摘要"
RATING = (
    "三、偿付能力\n本公司及主要保险子公司偿付能力充足率均满足监管要求。"
    "在最近一期风险综合评级中，澄平人寿为 AA 类，澄平财险为 A 类。"
)


def test_a_classifier_after_the_question_word_is_the_answers_form():
    for question in (
        "澄平人寿最近一期风险综合评级是什么级别？",
        "澄平财险风险综合评级是哪个等级？",
    ):
        assert "AA 类" in answer(question, [excerpt(TITLE, RATING)])[0]


def test_the_form_asked_does_not_make_another_rating_stated():
    assert not_found(answer("澄平人寿的信用评级是什么级别？", [excerpt(TITLE, RATING)]))


FORECAST_TITLE = "青梧光电科技股份有限公司 2026 年度业绩预告"
FORECAST = (
    "二、与会计师事务所沟通情况\n本次业绩预告相关的财务数据未经注册会计师审计。"
    "公司已就业绩预告有关事项与年报审计会计师事务所进行了预沟通。"
)


def test_the_document_pointed_back_to_is_grammar_not_a_modifier():
    first = answer("青梧光电这份业绩预告经过审计了吗？", [excerpt(FORECAST_TITLE, FORECAST)])[0]
    assert "未经注册会计师审计" in first
