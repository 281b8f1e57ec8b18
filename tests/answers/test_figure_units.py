"""Scales of a unit (亿/万/千 of 元, …) are converted when a figure is matched: one rule in
knowledge/figures.py, read by anchoring, value spans and the preview's highlights."""

from decimal import Decimal

import pytest

from citations.highlights import highlight_spans
from knowledge.figures import anchor_value, figures_in, in_base_unit, same_figure, value_spans


@pytest.mark.parametrize(
    "written",
    [
        "6.2亿元",
        "6.2 亿元",
        "62,000万元",
        "62000 万元",
        "620,000,000元",
        "620000千元",
        "０.０００６２万亿元",
    ],
)
def test_six_point_two_yi_yuan_is_stated_in_any_scale(written):
    text = f"三季度归母净利润：{written}，同比增长。"
    spans = value_spans(text, Decimal("6.2"), "亿元")
    assert [text[s:e] for s, e in spans] == [written]


@pytest.mark.parametrize(
    ("value", "unit", "written"),
    [
        ("62000", "万元", "6.2亿元"),
        ("620000000", "元", "6.2 亿元"),
        ("620000000", "元", "62,000万元"),
    ],
)
def test_every_scale_of_the_fact_finds_every_scale_of_the_text(value, unit, written):
    assert value_spans(f"净利润 {written}。", Decimal(value), unit)


@pytest.mark.parametrize(
    "written",
    ["6.2亿股", "62,000万股", "6.2万元", "620,000元", "6.2%", "62,000万", "62"],
)
def test_another_base_unit_or_value_is_not_the_figure(written):
    assert value_spans(f"净利润 {written}。", Decimal("6.2"), "亿元") == []


def test_a_percentage_is_never_scaled():
    assert value_spans("占比 61.2%", Decimal("61.2"), "%") == [(3, 8)]
    assert value_spans("占比 0.00612万%", Decimal("61.2"), "%") == []
    assert not same_figure(Decimal("61.2"), "%", Decimal("0.00612"), "万%")


def test_the_base_unit_of_a_scaled_unit():
    assert in_base_unit(Decimal("6.2"), "亿元") == (Decimal("620000000"), "元")
    assert in_base_unit(Decimal("62000"), "万元") == (Decimal("620000000"), "元")
    assert in_base_unit(Decimal("1.5"), "万亿元") == (Decimal("1500000000000"), "元")
    assert in_base_unit(Decimal("61.2"), "%") == (Decimal("61.2"), "%")


def test_anchoring_binds_a_fact_to_the_chunk_that_states_it_in_another_scale():
    chunks = [(1, "营业收入 6.2 万元"), (2, "归母净利润 62,000 万元，同比增长 21.7%。")]
    anchor = anchor_value(chunks, Decimal("6.2"), "亿元", label="归母净利润")
    assert anchor is not None and anchor.index == 1
    assert chunks[1][1][anchor.start : anchor.end] == "62,000 万元"


def test_the_preview_highlights_a_figure_the_answer_wrote_in_another_scale():
    content = "报告期内归母净利润为 620,000,000元，较上年增长。"
    spans = highlight_spans(content, ["三季度归母净利润：6.2亿元"])
    assert [content[s:e] for s, e in spans] == ["620,000,000元"]
    assert highlight_spans(content, ["三季度归母净利润：6.2亿股"]) == []


# -- what a number's unit is (figures_in): a known unit, a declared one, or none ---------


def _read(text, units=()):
    figures = [f for f in figures_in(text, units) if not f.date]
    return [(str(f.value), f.unit, text[f.start : f.end]) for f in figures]


def test_a_year_followed_by_nian_is_a_date_not_a_figure_with_a_unit():
    assert _read("2026 年第三季度，公司实现营业收入 48.6 亿元") == [("48.6", "亿元", "48.6 亿元")]
    text = "2026 年 7 月 30 日，公司签署协议"
    assert _read(text) == []
    dates = [text[f.start : f.end] for f in figures_in(text) if f.date]
    assert dates == ["2026 年", "7 月", "30 日"]


def test_a_duration_in_years_is_a_figure():
    assert _read("报告期末组合久期为 3.6 年") == [("3.6", "年", "3.6 年")]
    assert _read("合同期限 3 个月") == [("3", "个月", "3 个月")]


@pytest.mark.parametrize(
    ("text", "unit"),
    [
        ("研发人员 8,412 人", "人"),
        ("出货量 96.5 GWh", "GWh"),
        ("冷链仓储面积 169.9 万平方米", "万平方米"),
        ("每股派发现金红利 3.50 元", "元"),
        ("较上年末下降 1.3 个百分点", "个百分点"),
        ("净值增长率 １８.４％", "%"),
        ("首付款 1.2 亿美元", "亿美元"),
        ("合计 62,000万", "万"),
    ],
)
def test_a_known_unit_is_read_whole(text, unit):
    (figure,) = figures_in(text)
    assert figure.unit == unit
    assert text[figure.end - len(unit) : figure.end].replace("１", "1") in (unit, "％")


@pytest.mark.parametrize(
    "text",
    ["1. 澄湖电子，占基金资产净值", "第 3 投资组合", "编号 12 号楼北侧", "共 5 期"],
)
def test_characters_that_are_no_unit_are_not_read_as_one(text):
    assert [(f.unit, f.date) for f in figures_in(text)] == [("", False)]


def test_a_declared_unit_is_read_as_the_figure_s_unit():
    assert _read("新增床位 1,200 张床") == [("1200", "张", "1,200 张")]
    assert _read("新增床位 1,200 张床", units=["张床"]) == [("1200", "张床", "1,200 张床")]
    assert _read("处理能力 35 标箱", units=["标箱"]) == [("35", "标箱", "35 标箱")]


def test_a_date_in_the_answer_highlights_the_date_not_a_fragment_after_it():
    content = "报告期为 2026 年第三季度，公司实现营业收入 48.6 亿元。"
    spans = highlight_spans(content, ["2026 年第三季度营业收入 48.6 亿元"])
    assert [content[s:e] for s, e in spans] == ["2026 年", "48.6 亿元"]
