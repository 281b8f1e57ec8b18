"""The issue's bad input, end to end through the extractive reader (tests/answers/reader.py):
an honest answer or "not found", never an exception — and never a figure its excerpt does
not write. tests/answers/test_topic_floor.py asks the same questions of real runs."""

import re

import pytest

from agents.providers.structure import units
from tests.answers.reader import answer, excerpt, not_found

REPORT = "松涛化工股份有限公司 2026 年半年度报告"
PROSE = excerpt(REPORT, "报告期内，公司实现营业收入 75.2 亿元，同比增长 6.1%。")

WIDE_HEADER = " | ".join(["项目", *(f"指标{i}" for i in range(1, 500))])
WIDE_ROW = " | ".join(["研发费用", *(f"{i}.5" for i in range(1, 500))])
WIDE = excerpt(REPORT, f"表 9 研发情况\n\n{WIDE_HEADER}\n\n{WIDE_ROW}")
# merged cells: a header cell spanning two columns repeated (python-docx), a row short of cells
MERGED = excerpt(
    REPORT,
    "表 2 分产品情况\n\n"
    "产品 | 营业收入（亿元） | 营业收入（亿元） | 毛利率\n\n"
    "环氧树脂 | 33.1 | 33.1 | 24.0%\n\n"
    "涂料 | 21.5\n\n"
    "合计 | 75.2 | 75.2 | 22.8%",
)
LONG_LIST = excerpt(
    REPORT,
    "第五节 主要客户\n主要客户包括：" + "；".join(f"客户{i}" for i in range(1000)) + "。",
)


def _figures_are_in_their_excerpt(blocks, results):
    contents = " ".join(r["content"] for r in results)
    for block in blocks:
        body = re.sub(r"\[\[[a-z]+:[^\]]*\]\]", " ", block)
        for number in re.findall(r"\d+(?:\.\d+)?", body):
            assert number in contents, (number, block)


@pytest.mark.parametrize(
    "question",
    [
        "松涛化工" * 2500,  # 10,000 characters
        "？？！！。。，，",
        "😀😀😀",
        "Songtao 化工 revenue 上半年 是 how much?",
        "松涛化工 营业收入 ％％ —— ~~ ？",
    ],
)
def test_a_bad_question_is_answered_or_not_found(question):
    blocks = answer(question, [PROSE])
    assert blocks and blocks[0]
    assert not_found(blocks) or "75.2" in blocks[0]
    _figures_are_in_their_excerpt(blocks, [PROSE])


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("松涛化工研发费用指标499是多少？", "499.5"),
        ("松涛化工研发费用的指标7是多少？", "7.5"),
        ("松涛化工市盈率是多少？", None),
    ],
)
def test_a_table_of_500_columns_is_answered_by_its_cell_or_not_found(question, expected):
    blocks = answer(question, [WIDE])
    if expected is None:
        assert not_found(blocks), blocks[0][:200]
    else:
        assert expected in blocks[0], blocks[0][:200]
    _figures_are_in_their_excerpt(blocks, [WIDE])


@pytest.mark.parametrize(
    "question",
    [
        "松涛化工涂料毛利率是多少？",
        "松涛化工环氧树脂毛利率是多少？",
        "松涛化工合计营业收入是多少？",
    ],
)
def test_a_table_with_merged_or_missing_cells_never_fails(question):
    blocks = answer(question, [MERGED])
    assert blocks and blocks[0]
    _figures_are_in_their_excerpt(blocks, [MERGED])


def test_a_list_of_a_thousand_items_is_answered_whole_or_not_found():
    blocks = answer("松涛化工的主要客户有哪些？", [LONG_LIST])
    assert "客户0" in blocks[0] and "客户999" in blocks[0]


NUMBERED_LIST = excerpt(
    REPORT,
    "第五节 主要客户\n主要客户如下：\n" + "\n".join(f"{i}. 客户{i}" for i in range(1, 1001)),
)
SPACED_WIDE = excerpt(
    REPORT,
    " ".join(["项目", *(f"指标{i}" for i in range(1, 500))])
    + "\n"
    + " ".join(["研发 费用", *(f"{i}.5" for i in range(1, 500))]),
)


def test_a_list_of_a_thousand_items_one_a_line_is_answered_whole():
    blocks = answer("松涛化工的主要客户有哪些？", [NUMBERED_LIST])
    assert "1. 客户1" in blocks[0] and "1000. 客户1000" in blocks[0], blocks[0][:200]


@pytest.mark.parametrize(
    "question",
    [
        "松涛化工研发费用指标499是多少？",
        "松涛化工" * 2500,
        "松涛化工的Выручка和الإيرادات是多少？",  # Cyrillic and Arabic between Chinese
        "松涛化工\u200b营业\u200d收入\u202e是多少？",  # zero-width and bidi controls
        " \n\t ",
    ],
)
def test_odd_questions_over_wide_and_long_layouts_are_answered_or_not_found(question):
    results = [SPACED_WIDE, NUMBERED_LIST, MERGED, PROSE]
    blocks = answer(question, results)
    assert blocks and blocks[0]
    _figures_are_in_their_excerpt(blocks, results)
    if "指标499" in question:
        # a PDF table of 500 columns, its label set with a space: the cell asked
        assert "499.5" in blocks[0], blocks[0][:200]


def test_ten_thousand_lines_of_spaced_labels_are_read_in_linear_time():
    # every line could open a PDF table: none does, and reading them is one pass
    names = excerpt(REPORT, "\n".join(f"客户{i} 客户{i}甲 客户{i}乙" for i in range(10_000)))
    assert not [u for u in units(names["content"]) if u.kind in ("header", "row")]
    blocks = answer("松涛化工的主要客户有哪些？", [names])
    assert blocks and blocks[0]
