"""The floor on the thing asked (docs/extractive-provider.md, "The relevance floor"): an
answer comes only from a unit that states the question's topic and the period it names;
otherwise "not found", naming what was looked for, citing nothing. Enumerations written on
one line are read as lists; bad input never fails a run."""

import pytest

from agents.providers.reading import read_question, states, topic_phrases
from agents.providers.structure import inline_items, units
from tests.answers.conftest import cited_ids

# On-topic for a known entity, but the documents never state what is asked.
UNANSWERABLE = [
    ("星河稳健收益债券基金的基金经理是谁？", "基金经理"),
    ("北辰医药的市盈率是多少？", "市盈率"),
    ("北辰医药的董事长是谁？", "董事长"),
    ("北辰医药四季度营业收入是多少？", "四季度"),
]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("question", "asked"), UNANSWERABLE)
def test_a_question_whose_topic_no_excerpt_states_is_not_found_and_cites_nothing(
    demo, question, asked
):
    answer = demo.ask(question)
    (text,) = answer.texts
    assert text.startswith("未在可用的知识版本中找到"), text
    assert asked in text  # it says what it looked for
    assert f"检索到 {answer.run.citations.count()} 段摘录" in text
    assert cited_ids(text) == []
    assert answer.verified() == []
    assert answer.run.status == "COMPLETED"


@pytest.mark.django_db(transaction=True)
def test_the_demo_still_answers_what_its_documents_state(demo):
    answer = demo.ask("北辰医药三季度营业收入是多少？")
    assert "48.6" in answer.texts[0]
    assert answer.verified()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "question",
    [
        "北辰医药" * 2500,  # 10,000 characters
        "？？！！。。，，",
        "😀",
        "Beichen 医药 revenue 三季度 是 how much?",
    ],
)
def test_bad_questions_end_in_an_answer_or_not_found_never_a_failed_run(demo, question):
    answer = demo.ask(question)
    assert answer.run.status == "COMPLETED", answer.run.status
    assert answer.texts
    for text in answer.texts:
        if text.startswith("未在可用的知识版本中找到"):
            assert cited_ids(text) == []


def test_the_topic_is_what_remains_of_the_question_once_its_entity_is_named():
    question = read_question(
        "创新药板块收入在北辰医药营收中占多大比重？", "创新药板块收入 北辰医药"
    )
    assert topic_phrases(question, ["北辰医药"]) == ["创新药板块收入", "营收", "比重"]
    question = read_question("星河稳健收益债券基金的基金经理是谁？", "星河稳健收益债券基金 基金")
    assert topic_phrases(question, ["星河稳健收益债券基金"]) == ["基金经理"]


def test_a_phrase_is_stated_by_its_words_or_synonyms_not_by_its_modifier_alone():
    assert states("营收", "公司实现营业收入 48.6 亿元")  # a declared synonym
    assert states("三季度营收", "三季度营业收入 48.6 亿元")  # pieces and a synonym
    assert not states("董事长", "公司董事会及全体董事保证")  # 董事 is not 董事长
    assert not states("基金经理", "基金简称：星河稳健收益债券")
    assert not states("市盈率", "目标仓位上调至不超过 10%")


def test_a_word_written_with_another_one_character_modifier_is_another_thing():
    assert not states("净利率", "前三季度公司综合毛利率为 31.61%")
    assert not states("总资产", "归属于上市公司股东的净资产 52.1 亿元")
    # written as itself beside the other, it is stated
    assert states("净利率", "毛利率 31.6%，净利率 10.2%")
    assert states("净资产", "总资产 98.2 亿元，归属于上市公司股东的净资产 52.1 亿元")


def test_periods_are_compared_in_one_canonical_form():
    assert read_question("北辰医药Q3营收", "").periods == read_question("第三季度营收", "").periods
    assert read_question("四季度营收", "").periods == {"Q4"}
    assert read_question("前三季度营收", "").periods == {"YTD"}
    assert "YOY" in read_question("比上年同期增长多少", "").periods


def test_an_enumeration_on_one_line_is_a_list_under_its_heading():
    heading, risks = units(
        "第四节 风险提示。一、碳酸锂价格波动；二、海外贸易政策变化；三、行业产能扩张。"
    )
    assert heading.kind == "heading" and heading.text == "第四节 风险提示"
    assert risks.kind == "list"
    assert risks.clauses == ["一、碳酸锂价格波动", "二、海外贸易政策变化", "三、行业产能扩张。"]
    (top,) = units(
        "前三大重仓股：1. 澜海新能源，占 7.6%；2. 远帆半导体，占 6.1%；3. 青禾生物，占 5.0%"
    )
    assert [c[:4] for c in top.clauses] == ["1. 澜", "2. 远", "3. 青"]
    assert "7.6%" in top.text and "5.0%" in top.text  # figures stay verbatim


def test_items_joined_by_semicolons_after_a_colon_are_a_list():
    lead, items = inline_items(
        "公司面临的主要风险包括：需求不及预期的风险；芯片供应波动的风险；汇率波动风险。"
    )
    assert lead == "公司面临的主要风险包括："
    assert items == ["需求不及预期的风险", "芯片供应波动的风险", "汇率波动风险"]


def test_a_decimal_is_not_an_enumeration_marker():
    assert inline_items("营业收入 1.2 亿元，净利润 2.5 亿元。") is None


def test_a_list_of_a_thousand_items_and_a_table_of_500_columns_are_read_without_error():
    line = "清单：" + "；".join(f"第{i}项" for i in range(1000))
    (listing,) = units(line)
    assert len(listing.clauses) == 1000
    header = " | ".join(f"列{i}" for i in range(500))
    row = " | ".join(["研发费用"] + [str(i) for i in range(499)])
    assert len(units(f"{header}\n\n{row}")) >= 1


@pytest.mark.django_db(transaction=True)
def test_a_comparison_says_which_is_higher_and_by_how_much_each_figure_cited_to_its_own(demo):
    answer = demo.ask("对比星河稳健收益债券基金和星河医疗健康混合基金的三季度净值增长率")
    first = answer.texts[0]
    assert "星河医疗健康混合基金高于星河稳健收益债券基金，相差 6.73 个百分点" in first, first
    documents = {answer.preview(c)["documentId"] for c in cited_ids(first)}
    assert documents == {"xinghe-bond-fund-2026q3", "xinghe-health-fund-2026q3"}


@pytest.mark.django_db(transaction=True)
def test_a_compared_entity_with_no_document_says_so_on_its_line(demo):
    answer = demo.ask("星河医疗健康混合基金和宁德时代的三季度净值增长率分别是多少？")
    first = answer.texts[0]
    assert "- 宁德时代：未检索到关于「宁德时代」的文档。" in first, first
    assert "7.85" in answer.text
