"""Cited non-answers and the figures of tables and forecasts (docs/extractive-provider.md,
"Rules read from the evaluation rounds"): a forecast's range asked as 预告区间, the year
before's figure given for the period asked, … — each rule on a small document of its own,
driven without a database (tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt, not_found

PREVIEW = excerpt(
    "汀岸材料股份有限公司公告 2027-006",
    "一、本期业绩预计情况\n\n"
    "扣除非经常性损益后的净利润：预计 12,600 万元 至 14,100 万元，比上年同期增长 20.45% 至 "
    "34.79%；上年同期为盈利 10,460.18 万元。\n\n"
    "营业收入：预计 88,000 万元 至 95,000 万元；上年同期为 79,316.52 万元。",
)


# -- a forecast's range ------------------------------------------------------------------


def test_a_forecasts_range_asked_as_its_preview_range_is_the_expected_figures():
    first = answer("汀岸材料 2026 年扣非净利润预告区间是多少？", [PREVIEW])[0]
    assert "12,600" in first and "14,100" in first
    assert "[[cite:" in first


def test_a_range_asked_of_a_figure_the_preview_does_not_forecast_is_not_found():
    assert not_found(answer("汀岸材料 2026 年经营现金流预告区间是多少？", [PREVIEW]))


def test_the_year_befores_figure_does_not_answer_the_period_asked():
    earlier = "汀岸材料 2026 年扣非净利润预告区间是多少？"
    first = answer("营收呢？", [PREVIEW], [{"question": earlier}])[0]
    assert "88,000" in first and "95,000" in first
    assert "79,316.52" not in first


def test_the_year_befores_figure_answers_when_the_year_before_is_asked():
    first = answer("汀岸材料营业收入上年同期是多少？", [PREVIEW])[0]
    assert "79,316.52" in first
