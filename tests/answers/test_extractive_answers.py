"""The extractive provider's research answer on the demo and on a second fixture: every
figure is in the excerpt its marker opens (checked through the preview endpoint), the first
block answers the question, out-of-scope questions cite nothing, follow-ups keep their
entity, and what the answer says about itself is true."""

import re
from decimal import Decimal

import pytest

from tests.answers.conftest import cited_ids, figures_before_markers, numbers

pytestmark = pytest.mark.django_db(transaction=True)

BEICHEN, BOND, HEALTH, MEMO = (
    "beichen-pharma-2026q3",
    "xinghe-bond-fund-2026q3",
    "xinghe-health-fund-2026q3",
    "internal-memo-2026-10",
)
# question, expected figure (or phrase) in the first block, document and page it cites
DEMO_TABLE = [
    ("北辰医药三季度营业收入是多少？", "48.6", BEICHEN, 1),
    ("北辰医药三季度归母净利润是多少？", "6.2", BEICHEN, 1),
    ("北辰医药的研发费用率是多少？", "16.0", BEICHEN, 2),
    ("北辰医药扣非净利润是多少？", "5.9", BEICHEN, 1),
    ("北辰替尼海外授权的首付款是多少？", "1.2", BEICHEN, 3),
    ("北辰医药有哪些风险？", "集中带量采购", BEICHEN, 3),
    ("星河稳健收益债券基金的组合久期是多少？", "3.6", BOND, 2),
    ("星河医疗健康混合基金的股票仓位是多少？", "61.2", HEALTH, 1),
    ("星河医疗健康混合基金三季度净值增长率是多少？", "7.85", HEALTH, 1),
    ("星河医疗健康混合基金持有北辰医药的比例是多少？", "8.9", HEALTH, 2),
    ("内部投研纪要中北辰医药的目标仓位上限是多少？", "10", MEMO, 2),
    # comparisons: both entities named, each figure cited to its own document's excerpt
    ("对比星河稳健收益债券基金和星河医疗健康混合基金的三季度净值增长率", "1.12", BOND, 1),
    ("对比星河稳健收益债券基金和星河医疗健康混合基金的三季度净值增长率", "7.85", HEALTH, 1),
]
COMPARISONS = [
    (
        "对比星河稳健收益债券基金和星河医疗健康混合基金的三季度净值增长率",
        [("星河稳健收益", "1.12", BOND), ("星河医疗健康", "7.85", HEALTH)],
    ),
    (
        "星河医疗健康混合基金与星河稳健收益债券基金的三季度净值增长率分别是多少？",
        [("星河医疗健康", "7.85", HEALTH), ("星河稳健收益", "1.12", BOND)],
    ),
]
SECOND_TABLE = [
    ("青松新能源上半年营业收入是多少？", "1286.4", "qingsong-energy-2026h1", 1),
    ("青松新能源的资产负债率是多少？", "58.7", "qingsong-energy-2026h1", 1),
    ("青松新能源储能业务收入占比是多少？", "37.5", "qingsong-energy-2026h1", 2),
    ("青松新能源研发人员有多少人？", "8412", "qingsong-energy-2026h1", 2),
    ("青松沪深300指数基金的跟踪误差是多少？", "0.42", "qingsong-etf-2026q2", 1),
    ("青松沪深300指数基金前三名股票有哪些？", "东海证券", "qingsong-etf-2026q2", 1),
]
OUT_OF_SCOPE = [
    "贵州茅台2025年营业收入是多少？",
    "宁德时代的股票仓位是多少？",
    "北辰医药2024年营业收入是多少？",
]


def holds(text: str, expected: str) -> bool:
    body = re.sub(r"\[\[[a-z]+:[^\]]*\]\]", " ", text)
    if re.fullmatch(r"[\d.]+", expected):
        return Decimal(expected) in numbers(body)
    return expected in body


def assert_every_figure_is_in_its_excerpt(answer) -> int:
    checked = 0
    for text in answer.texts:
        for figure, cite in figures_before_markers(text):
            excerpt = answer.preview(cite)["content"]
            assert figure in numbers(excerpt), (figure, cite, text, excerpt)
            checked += 1
    return checked


def test_every_figure_of_every_demo_answer_is_in_the_excerpt_its_marker_opens(demo):
    questions = [q for q, *_ in DEMO_TABLE] + [
        "北辰医药营业收入同比增长多少？",
        "北辰医药年初至报告期末累计营业收入是多少？",
        "星河稳健收益债券基金报告期末基金份额净值是多少？",
        "星河医疗健康混合基金前五大重仓股有哪些？",
        *OUT_OF_SCOPE,
    ]
    checked = sum(assert_every_figure_is_in_its_excerpt(demo.ask(q)) for q in questions)
    assert checked >= 40  # the answers do write figures: the check checked something


def test_every_figure_of_every_answer_on_a_second_fixture_is_in_its_excerpt(second):
    checked = sum(assert_every_figure_is_in_its_excerpt(second.ask(q)) for q, *_ in SECOND_TABLE)
    assert checked >= 10


@pytest.mark.parametrize(("question", "expected", "document", "page"), DEMO_TABLE)
def test_the_first_block_answers_a_demo_question_from_the_page_that_states_it(
    demo, question, expected, document, page
):
    answer = demo.ask(question)
    first = answer.texts[0]
    assert first.startswith("**回答**"), first
    assert holds(first, expected), first
    pages = {
        (p["documentId"], p["sourceRef"]["page"]) for p in map(answer.preview, cited_ids(first))
    }
    assert (document, page) in pages


@pytest.mark.parametrize(("question", "expected", "document", "page"), SECOND_TABLE)
def test_the_first_block_answers_a_question_on_the_second_fixture(
    second, question, expected, document, page
):
    answer = second.ask(question)
    first = answer.texts[0]
    assert holds(first, expected), first
    pages = {
        (p["documentId"], p["sourceRef"]["page"]) for p in map(answer.preview, cited_ids(first))
    }
    assert (document, page) in pages


@pytest.mark.parametrize("question", OUT_OF_SCOPE)
def test_an_out_of_scope_question_is_answered_not_found_with_no_verified_source(demo, question):
    answer = demo.ask(question)
    assert answer.verified() == []
    (text,) = answer.texts
    assert text.startswith("未在可用的知识版本中找到")
    assert cited_ids(text) == []
    assert answer.run.status == "COMPLETED"


def test_the_not_found_answer_names_what_is_missing_and_counts_what_was_read(demo):
    answer = demo.ask("贵州茅台2025年营业收入是多少？")
    searched = answer.run.citations.count()
    assert "「贵州茅台」" in answer.text
    assert f"检索到 {searched} 段摘录" in answer.text


def test_a_follow_up_in_the_same_session_is_answered_about_the_earlier_entity(demo):
    demo.ask("星河医疗健康混合基金的股票仓位是多少？", session_id="desk-1")
    follow_up = demo.ask("那净值增长率呢？", session_id="desk-1")
    first = follow_up.texts[0]
    assert holds(first, "7.85"), first  # the health fund's, not the bond fund's 1.12
    assert not holds(first, "1.12")
    assert {follow_up.preview(c)["documentId"] for c in cited_ids(first)} == {HEALTH}
    assert "接上一问" in first


def test_without_the_session_the_same_follow_up_has_no_earlier_entity(demo):
    demo.ask("星河医疗健康混合基金的股票仓位是多少？", session_id="desk-1")
    alone = demo.ask("那净值增长率呢？", session_id="desk-2")
    assert "接上一问" not in alone.text
    assert not holds(alone.texts[0], "7.85")


def test_a_follow_up_about_net_profit_keeps_the_company(demo):
    demo.ask("北辰医药三季度营业收入是多少？", session_id="s")
    follow_up = demo.ask("那净利润呢？", session_id="s")
    assert holds(follow_up.texts[0], "6.2")
    assert {follow_up.preview(c)["documentId"] for c in cited_ids(follow_up.texts[0])} == {BEICHEN}


def test_another_owner_in_the_same_session_id_does_not_inherit_the_conversation(demo):
    from django.contrib.auth import get_user_model

    demo.ask("星河医疗健康混合基金的股票仓位是多少？", session_id="shared")
    intern = get_user_model().objects.get(username="intern")
    other = demo.ask(
        "那净值增长率呢？", session_id="shared", user=intern, token="st_demo_intern_token_0002"
    )
    assert "接上一问" not in other.text


def test_a_figure_question_is_revised_into_the_named_figure_with_the_clause_that_states_it(
    demo,
):
    from publication.models import BlockRevision

    answer = demo.ask("北辰医药三季度归母净利润是多少？")
    first_block = answer.run.blocks.order_by("delivery_ordinal").first()
    draft = BlockRevision.objects.get(block=first_block, revision=1).content["text"]
    revised = answer.texts[0]
    assert first_block.current_revision == 2
    assert draft != revised
    # The draft quotes the excerpt; the revision names the entity and the figure first.
    assert revised.startswith("**回答**：北辰医药三季度归母净利润为 6.2亿元")
    assert "原文：「归属于上市公司股东的净利润 6.2 亿元" in revised


def test_the_counts_an_answer_states_are_true(demo):
    answer = demo.ask("北辰医药三季度营业收入是多少？")
    match = re.search(r"本回答共引用 (\d+) 段摘录，来自 (\d+) 份文档", answer.text)
    assert match, answer.text
    cites = cited_ids(answer.text)
    documents = {answer.preview(c)["documentId"] for c in cites}
    assert (int(match.group(1)), int(match.group(2))) == (len(cites), len(documents))


def test_figures_listed_are_only_those_the_question_asks_about_each_named_by_its_entity(demo):
    answer = demo.ask("星河医疗健康混合基金三季度净值增长率是多少？")
    (figures,) = [t for t in answer.texts if t.startswith("**相关数据**")]
    lines = [line for line in figures.split("\n") if line.startswith("- ")]
    assert lines and all("净值增长率" in line for line in lines)
    assert all(line.startswith("- 星河医疗健康混合基金 · ") for line in lines)
    assert "1.12" not in figures  # the bond fund's figure is another entity's


def test_a_list_answer_keeps_every_item_and_headings_are_not_glued_to_text(demo):
    answer = demo.ask("星河医疗健康混合基金前五大重仓股有哪些？")
    first = answer.texts[0]
    for name in ("北辰医药", "东岳生物", "海川医疗器械", "南屏创新药业", "云帆检测"):
        assert name in first
    assert "\n1. 北辰医药" in first and "\n5. 云帆检测" in first
    everything = demo.ask("北辰医药三季度营业收入是多少？").text
    assert "季度报告2026" not in everything and "报告2026 年" not in everything
    assert "重要提示" not in everything  # the boilerplate is never the answer


def test_quoted_sentences_are_whole_sentences_of_their_excerpt(demo):
    answer = demo.ask("北辰医药创新药板块收入是多少？")
    first = answer.texts[0]
    quote = re.search(r"：(.+?) \[\[cite:(cite_[a-z0-9]+)\]\]", first)
    assert quote, first
    sentence, cite = quote.groups()
    excerpt = answer.preview(cite)["content"]
    assert sentence in excerpt
    at = excerpt.index(sentence)
    assert excerpt[at - 1] in "。\n" and sentence.endswith("。")


@pytest.mark.parametrize(("question", "entities"), COMPARISONS)
def test_a_comparison_names_both_entities_each_figure_cited_to_its_own_excerpt(
    demo, question, entities
):
    answer = demo.ask(question)
    first = answer.texts[0]
    lines = [line for line in first.splitlines() if line.startswith("- ")]
    assert len(lines) == len(entities), first
    for line, (name, figure, document) in zip(lines, entities, strict=True):
        assert name in line and holds(line, figure), line
        (cite,) = cited_ids(line)
        preview = answer.preview(cite)
        assert preview["documentId"] == document
        assert Decimal(figure) in numbers(preview["content"])
    assert first.startswith("**回答**（") and "对比" in first.splitlines()[0]
