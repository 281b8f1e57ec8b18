"""Scales of a unit (亿/万/千 of 元, …) are converted when a figure is matched: one rule in
knowledge/figures.py, read by anchoring, value spans and the preview's highlights."""

from decimal import Decimal

import pytest

from citations.highlights import highlight_spans
from knowledge.figures import anchor_value, in_base_unit, same_figure, value_spans


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
